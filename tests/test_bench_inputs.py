"""Bad input to bench, compare, table and plot: exit 2 with one line naming it, nothing created or overwritten."""
import json
import os
import shutil

import pandas as pd
import pytest

from lpbench.bench.store import read_run
from lpbench.cli import main

from test_bench import BASE, ROOT

TINY = str(ROOT / "instances" / "tiny-slot.json")
SUITE = BASE.replace("ROOT/instances/tiny-slot.json", TINY)   # test_bench's tiny suite, with its real path


def one_line_exit_2(capsys, argv, named):
    """``lpbench argv`` exits 2 with one line (no traceback) that contains ``named``."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert named in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A good run of one task (tiny-slot, latency-ip, mc-sf): one formulation row and one policy row."""
    base = tmp_path_factory.mktemp("run")
    (base / "s.toml").write_text(SUITE)
    assert main(["bench", str(base / "s.toml"), "--out", str(base / "results"), "-q"]) == 0
    (run,) = (base / "results").iterdir()
    return run


# 1. plot: the output layer, --force, options the kind does not use

@pytest.mark.parametrize("setup, out, named", [
    (lambda d: (d / "fig.pdf").write_text("keep"), "fig", "fig.pdf already exists"),
    (lambda d: (d / "fig.png").symlink_to(d / "target.txt"), "fig", "fig.png already exists"),
    (lambda d: (d / "fig.png").mkdir(), "fig", "fig.png is a directory"),
    (lambda d: (d / "afile").write_text("x"), "afile/fig", "afile is not a directory"),
])
def test_plot_checks_both_targets_before_drawing(tmp_path, capsys, setup, out, named):
    (tmp_path / "target.txt").write_text("target")
    setup(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    one_line_exit_2(capsys, ["plot", "memory", "--instance", TINY, "--policy", "mc-sf", "--out",
                             str(tmp_path / out)], named)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "target.txt").read_text() == "target"


def test_plot_force_replaces_a_link_not_its_target_and_keeps_other_suffixes(tmp_path, capsys):
    (tmp_path / "target.txt").write_text("target")
    (tmp_path / "fig.png").symlink_to(tmp_path / "target.txt")
    argv = ["plot", "gantt", "--instance", TINY, "--policy", "mc-sf"]
    assert main([*argv, "--out", str(tmp_path / "fig"), "--force"]) == 0
    assert not (tmp_path / "fig.png").is_symlink() and (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "target.txt").read_text() == "target"
    assert main([*argv, "--out", str(tmp_path / "data.json")]) == 0  # OUT.png, not data.png
    assert (tmp_path / "data.json.png").exists() and (tmp_path / "data.json.pdf").exists()
    assert not (tmp_path / "data.png").exists()


@pytest.mark.parametrize("argv, named", [
    (["memory", "--instance", TINY, "--policy", "mc-sf", "--formulation", "latency-ip"], "got both"),
    (["gantt", "--instance", TINY, "--policy", "mc-sf", "--solver", "highs"], "--solver: only with --formulation"),
    (["ratio", "--run", "RUN", "--instance", TINY], "--instance: plot ratio does not use it"),
    (["latency", "--run", "RUN", "--policy", "mc-sf"], "--policy: plot latency does not use it"),
    (["gantt", "--instance", TINY, "--policy", "mc-sf", "--x", "requests"], "--x: plot gantt does not use it"),
])
def test_plot_refuses_an_option_its_kind_does_not_use(tmp_path, capsys, argv, named):
    argv = [a.replace("RUN", str(tmp_path)) for a in argv]
    one_line_exit_2(capsys, ["plot", *argv, "--out", str(tmp_path / "fig")], named)
    assert list(tmp_path.iterdir()) == []


# 2. suite values, checked at load, before any directory is created

def _set(line):
    """The suite with ``line`` added to its [suite] table."""
    return SUITE + line + "\n"


def _sub(old, new):
    return SUITE.replace(old, new)


GENERATE = '[[suite.generate]]\nkind = "jaillet-model1"\ncount = '


@pytest.mark.parametrize("suite, named", [
    (_sub("time_limit = 2", "time_limit = nan"), "suite.time_limit: must be a positive number of seconds"),
    (_sub("time_limit = 2", "time_limit = inf"), "got inf"),
    (_sub("time_limit = 2", "time_limit = 1e300"), "got 1e+300"),
    (_set("seed = 99999999999999999999"), "suite.seed: must be an integer in [0, 2^63)"),
    (_set("seed = -1"), "suite.seed"),
    (_set("grace = -5"), "suite.grace"),
    (_set('metric = "nope"'), "suite.metric: expected one of total_latency"),
    (_set("repetitions = 1000000000"), "suite.repetitions: must be an integer in [1, 1000]"),
    (_set(GENERATE + "-1"), "suite.generate[0].count"),
    (_set(GENERATE + "0"), "suite.generate[0].count"),
    (_sub(f'instances = ["{TINY}"]', "instances = [1, 2]"), "suite.instances: must be a list of strings"),
    (_sub("tiny-slot.json", "seed001-example2.json"), "the instance has no requests"),
    (_sub('name = "t"', 'name = "x/y"'), "suite.name"),
    (_sub('name = "t"', 'name = "../evil"'), "suite.name"),
    (_sub('name = "t"', 'name = ""'), "suite.name"),
    (_sub(f'instances = ["{TINY}"]', f'instances = ["{TINY}", "{TINY}"]'), "hold the same instance"),
])
def test_bad_suite_value_exits_2_before_any_directory(tmp_path, capsys, suite, named):
    (tmp_path / "s.toml").write_text(suite)
    out = tmp_path / "results"
    one_line_exit_2(capsys, ["bench", str(tmp_path / "s.toml"), "--out", str(out), "-q"], named)
    assert not out.exists()


# 3. bench: every check before the run directory

def test_bench_checks_executor_and_out_before_creating_a_run(tmp_path, capsys, monkeypatch):
    from lpbench.bench import executors

    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    out = tmp_path / "results"
    one_line_exit_2(capsys, ["bench", str(suite), "--out", str(out), "--scheduler", "tcp://127.0.0.1:1", "-q"],
                    "--scheduler: only with --executor dask")
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", "1s")
    one_line_exit_2(capsys, ["bench", str(suite), "--out", str(out), "--executor", "dask", "--scheduler",
                             "tcp://127.0.0.1:1", "-q"], "--scheduler: cannot reach 'tcp://127.0.0.1:1'")
    assert not out.exists()
    (tmp_path / "empty.json").write_text("")
    one_line_exit_2(capsys, ["bench", str(suite), "--out", str(tmp_path / "empty.json"), "-q"],
                    "empty.json is not a directory")


@pytest.mark.parametrize("manifest, named", [
    ("{\n", "is not a readable run manifest"), ("{}", "is not a run manifest"), ("[]", "is not a run manifest"),
])
def test_resume_of_a_bad_manifest_exits_2_naming_it(tmp_path, capsys, manifest, named):
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    (tmp_path / "results" / "r").mkdir(parents=True)
    (tmp_path / "results" / "r" / "manifest.json").write_text(manifest)
    one_line_exit_2(capsys, ["bench", str(suite), "--out", str(tmp_path / "results"), "--resume", "r", "-q"],
                    f"{tmp_path / 'results' / 'r' / 'manifest.json'} {named}")


# 4. a bad run given to compare, table, plot; compare's tolerances

def _bad_runs(run_dir, tmp_path):
    damaged = tmp_path / "damaged"
    shutil.copytree(run_dir, damaged)
    next(damaged.glob("part-*.parquet")).write_bytes(b"not parquet")
    (tmp_path / "sched.json").write_text("{}")
    pd.DataFrame({"a": [1, 2]}).to_parquet(tmp_path / "other.parquet")
    pd.DataFrame({"a": []}).to_parquet(tmp_path / "emptyrows.parquet")
    return {damaged: "is a damaged part", tmp_path / "sched.json": "is not an lpbench results store",
            tmp_path / "other.parquet": "is not an lpbench results store",
            tmp_path / "emptyrows.parquet": "is not an lpbench results store"}


@pytest.mark.parametrize("command", ["compare", "table", "plot"])
def test_a_run_that_is_no_results_store_exits_2(run_dir, tmp_path, capsys, command):
    for bad, named in _bad_runs(run_dir, tmp_path).items():
        argv = {"compare": ["compare", str(run_dir), str(bad)], "table": ["table", str(bad)],
                "plot": ["plot", "ratio", "--run", str(bad), "--out", str(tmp_path / "fig")]}[command]
        one_line_exit_2(capsys, argv, named)


@pytest.mark.parametrize("flag, value", [("--time-tol", "nan"), ("--time-tol", "inf"), ("--time-floor", "nan"),
                                         ("--time-floor", "-1")])
def test_compare_refuses_a_tolerance_that_is_not_finite_and_non_negative(run_dir, capsys, flag, value):
    one_line_exit_2(capsys, ["compare", str(run_dir), str(run_dir), flag, value], f"{flag}: must be a finite number")


# 5. table: any --by column, a run of failed rows, LaTeX escaping

@pytest.mark.parametrize("by", ["instance", "status", "solver", "formulation", "method", "instance,method"])
@pytest.mark.parametrize("fmt", ["md", "latex", "csv"])
def test_table_groups_by_a_key_the_table_has_too(run_dir, capsys, by, fmt):
    assert main(["table", str(run_dir), "--format", fmt, "--by", by]) == 0
    out = capsys.readouterr().out
    assert "mc-sf" in out and "latency-ip" in out


def test_table_of_a_run_without_table_rows_says_what_it_holds(run_dir, tmp_path, capsys):
    frame = read_run(run_dir)
    frame = frame[frame["kind"] == "policy"].assign(status="timeout", objective=None, ratio_lower=None,
                                                   mean_latency=None)
    frame.to_parquet(tmp_path / "failed.parquet")
    assert main(["table", str(tmp_path / "failed.parquet")]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "has no rows for any table: 1 rows (1 timeout)" in err


def test_latex_table_escapes_names(run_dir, tmp_path, capsys):
    read_run(run_dir).assign(instance="my_inst&1").to_parquet(tmp_path / "named.parquet")
    assert main(["table", str(tmp_path / "named.parquet"), "--kind", "solves", "--format", "latex"]) == 0
    assert r"my\_inst\&1" in capsys.readouterr().out
