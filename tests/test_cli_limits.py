"""Audit 8, F4-F8: unbounded sizes, the local models/ folder, solver profile ranges, `plot --out DIR/` and misleading
messages. Every case is bad input: exit 2 with one line naming the option or field, never an internal error (exit
3) or a traceback; nothing here allocates a big instance (each size is refused before anything is drawn)."""
import json
import shutil

import pytest

from conftest import BATCH, ROOT, TINY, run

BIG = str(2**40)   # 1099511627776, the audit's size


def _one_line_exit_2(capsys, *argv, expect: str) -> str:
    code, _, err = run(capsys, *argv)
    assert code == 2 and expect in err and len(err.strip().splitlines()) == 1, (code, err)
    assert "Traceback" not in err
    return err


def _lengths(tmp_path, text="ContextTokens,GeneratedTokens\n10,5\n20,7\n"):
    p = tmp_path / "lens.csv"
    p.write_text(text)
    return str(p)


# -- F4: sizes -------------------------------------------------------------------------------------------------

def test_generate_infermax_uniform_refuses_a_huge_B(capsys, tmp_path):
    _one_line_exit_2(capsys, "generate", "infermax-uniform", "--out", str(tmp_path / "g"), "--I", "10", "--O", "10",
                     "--B", BIG, expect="--B: must be a number of requests in [1, 10,000,000], got 1099511627776")


def test_generate_poisson_refuses_huge_requests(capsys, tmp_path):
    _one_line_exit_2(capsys, "generate", "poisson", "--out", str(tmp_path / "g"), "--rate", "5", "--requests", BIG,
                     "--memory", "100000", "--lengths", _lengths(tmp_path), expect="--requests: must be a number of "
                     "requests in [1, 10,000,000]")


def test_capacity_refuses_huge_requests(capsys):
    _one_line_exit_2(capsys, "capacity", BATCH, "-q", "--policy", "sarathi", "--requests", BIG, "--seeds", "1",
                     "--iters", "1", expect="--requests: must be at most 10,000,000")


def test_bench_refuses_a_suite_generator_with_a_huge_B(capsys, tmp_path):
    suite = tmp_path / "s1.toml"
    suite.write_text(f'[suite]\nname = "x"\ntime_limit = 2\ninstances = [{json.dumps(TINY)}]\npolicies = ["mc-sf"]\n'
                     '[[suite.generate]]\nkind = "infermax-uniform"\nI = [10]\nO = 10\nB = 4611686018427387904\n')
    _one_line_exit_2(capsys, "bench", str(suite), "--out", str(tmp_path / "res"), "-q",
                     expect="suite.generate[0].B: must be a number of requests in [1, 10,000,000]")


def test_solve_refuses_a_huge_output_as_simulate_does(capsys, tmp_path):
    """batch-bound ran before the simulator's check and allocated one entry per output token (MemoryError)."""
    inst = tmp_path / "huge-out-b.json"
    inst.write_text(json.dumps({"memory": 2**40, "cost_model": "unit", "requests": [
        {"arrival": 0, "prompt": 1, "output": 549755813888}, {"arrival": 3, "prompt": 1, "output": 5}]}))
    expect = "requests[0].output: 549,755,813,888 tokens need as many batches, above the 100,000,000"
    solve = _one_line_exit_2(capsys, "solve", str(inst), "--time-limit", "2", "-q", expect=expect)
    simulate = _one_line_exit_2(capsys, "simulate", str(inst), "--policy", "sarathi", expect=expect)
    assert solve == simulate


def test_batch_bound_block_sums_equal_one_pass(monkeypatch):
    """The per-token arrays are built a block of requests at a time; the bounds are the same to the last bit."""
    from lpbench.formulations import batch_bound
    from lpbench.instance import load_instance

    inst = load_instance(BATCH)
    whole = batch_bound.BatchBound(inst).bounds()
    monkeypatch.setattr(batch_bound, "TOKEN_BLOCK", 5)
    assert batch_bound.BatchBound(inst).bounds() == whole


def test_generate_infermax_mix_refuses_1e8_and_announces_a_large_instance(capsys, tmp_path, monkeypatch):
    _one_line_exit_2(capsys, "generate", "infermax-mix", "--out", str(tmp_path / "g"), "--B", "100000000",
                     expect="--B: must be a number of requests in [1, 10,000,000], got 100000000")
    import lpbench.generators

    monkeypatch.setattr(lpbench.generators, "ANNOUNCE_REQUESTS", 20)  # "large" for this test
    code, out, err = run(capsys, "generate", "infermax-mix", "--out", str(tmp_path / "g"), "--B", "24",
                         "--mix", "SISO+LILO")
    assert code == 0 and out.strip().endswith(".json")
    assert err.startswith("lpbench: generating mix-SISO+LILO-B24-s0 (24 requests;") and len(err.splitlines()) == 1
    code, out, err = run(capsys, "generate", "infermax-mix", "--out", str(tmp_path / "h"), "--B", "10",
                         "--mix", "SISO+LILO")
    assert code == 0 and err == ""  # small instances stay silent


# -- F5: a local models/ folder is searched first, the shipped profiles after it ----------------------------------

def test_a_local_models_folder_does_not_hide_the_shipped_profiles(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("LPBENCH_MODELS", raising=False)
    (tmp_path / "models").mkdir()
    shutil.copy(ROOT / "models/infermax-llama2-7b-a100.toml", tmp_path / "models/m1.toml")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "validate", BATCH)
    assert code == 0 and err == "", err
    code, out, _ = run(capsys, "list", "models")
    assert code == 0 and " m1 " in out and "infermax-llama2-7b-a100" in out
    # a local profile with a shipped name shadows it, and says so in one line
    unit = tmp_path / "models/infermax-llama2-7b-a100.toml"
    unit.write_text('form = "unit"\nsource = "test"\n')
    from lpbench import costmodels, tomlfile

    monkeypatch.setattr(tomlfile, "_NOTED", set())
    with pytest.warns(UserWarning, match="shadows the shipped"):
        assert costmodels.load_profile("infermax-llama2-7b-a100").form == "unit"
    assert costmodels.load_profile("li-llama3-70b-2xa100").form != "unit"  # another shipped one, unshadowed


# -- F6: solver profile fields -------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, expect", [
    ('backend = "cpsat"\nseed = 100000000000000000000\n', "solver.x.seed: must be an integer in [0, 2147483647]"),
    ('backend = "cpsat"\nthreads = 100000\n', "solver.x.threads: must be an integer in [1, 1024], got 100000"),
    ('backend = "highs"\ntime_limit = 0\n', "solver.x.time_limit: must be a positive number of seconds, at most "
                                           "604800 (a week), got 0"),
    ('backend = "highs"\ntime_limit = 1e30\n', "solver.x.time_limit: must be a positive number of seconds, at most "
                                              "604800 (a week), got 1e+30"),
    ('backend = "highs"\nrel_gap = 1e300\n', "solver.x.rel_gap: must be a relative gap in [0, 1]"),
])
def test_a_solver_profile_out_of_range_is_bad_input(capsys, tmp_path, body, expect, solvers_toml):
    solvers_toml("[solver.x]\n" + body)
    inst = tmp_path / "c.json"
    from lpbench.generators import infermax

    inst.write_text(json.dumps(infermax.csp51(8)))
    _one_line_exit_2(capsys, "solve", str(inst), "-q", "--formulation", "infermax-csp", "--solver", "x",
                     "--time-limit", "3", expect=expect)


def test_a_missing_pyomo_solver_is_one_line_without_pyomos_traceback(capsys, tmp_path, solvers_toml):
    pytest.importorskip("pyomo")
    solvers_toml('[solver.pyo]\nbackend = "pyomo"\noptions = { solver = "nope" }\n')
    inst = tmp_path / "c.json"
    from lpbench.generators import infermax

    inst.write_text(json.dumps(infermax.csp51(8)))
    _one_line_exit_2(capsys, "solve", str(inst), "-q", "--formulation", "infermax-milp", "--solver", "pyo",
                     "--time-limit", "3", expect="--solver: Pyomo solver 'nope' is not available on this machine")


# -- F7: plot --out DIR/ ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("slash", ["/", ""])
def test_plot_refuses_a_directory_out(capsys, tmp_path, slash):
    target = tmp_path / "pl"
    if not slash:
        target.mkdir()
    _one_line_exit_2(capsys, "plot", "memory", "--instance", TINY, "--policy", "mc-sf", "--out", str(target) + slash,
                     expect="is a directory; give a file name")
    assert not list(tmp_path.glob("pl.*"))


# -- F8: messages --------------------------------------------------------------------------------------------------

def test_a_text_cell_of_the_length_table_is_named_with_its_row(capsys, tmp_path):
    lengths = _lengths(tmp_path, "ContextTokens,GeneratedTokens\n10,5\n20,abc\n")
    _one_line_exit_2(capsys, "generate", "poisson", "--out", str(tmp_path / "g"), "--rate", "5", "--requests", "10",
                     "--memory", "100000", "--lengths", lengths,
                     expect="GeneratedTokens[1] must be a token count (an integer >= 0), got 'abc' (data row 2 of the CSV)")


def test_a_tiny_rate_is_one_line_naming_rate(capsys, tmp_path):
    _one_line_exit_2(capsys, "generate", "poisson", "--out", str(tmp_path / "g"), "--rate", "1e-300", "--requests",
                     "10", "--memory", "100000", "--lengths", _lengths(tmp_path), expect="--rate: 1e-300 arrivals per "
                     "second spread the 10 requests over about")


def test_calibrate_refuses_a_huge_phi_before_numpy_warns(capsys, tmp_path):
    from lpbench import costmodels
    from test_calibrate import synthetic

    src = synthetic(tmp_path, costmodels.build({"form": "linear", "d0": 0.02, "d1": 3e-6}))
    err = _one_line_exit_2(capsys, "calibrate", str(src), "--phi", "1e300", "--form", "infermax",
                           expect="--phi: must be a finite number in [0, 1e+12]")
    assert "RuntimeWarning" not in err
