"""Bad input to generate, throughput, capacity, calibrate, import, verify and the TOML files: exit 2 with one line
naming the flag or file (never an internal error, exit 3), found by a sweep of every command on edge cases
(docs/cli-hardening.md, "Every other command on bad input")."""
import json
import tomllib

import pytest

from conftest import ROOT, TINY, run

EX2 = str(ROOT / "instances/seed001-example2.json")
SPLITWISE = ROOT.parent / "shared/data/splitwise-perf/perf_model.csv"


def _one_line_exit_2(capsys, *argv, expect: str):
    code, out, err = run(capsys, *argv)
    assert code == 2 and expect in err and len(err.strip().splitlines()) == 1, (code, err)


@pytest.mark.parametrize("content, expect", [
    ("[1, 2]", "got list of another shape"),
    ('{"prompt": 5, "output": 5}', "got dict of another shape"),
    ('{"prompt": [[1, 2]], "output": [[2, 3]]}', "prompt[0] must be a token count (an integer >= 0), got [1, 2]"),
    ('{"prompt": [1.7, 2000], "output": [2, 3]}', "prompt[0] must be a token count (an integer >= 0), got 1.7"),
    ("ContextTokens,GeneratedTokens\n-5,3\n", "ContextTokens[0] must be a token count (an integer >= 0), got -5"),
    ("ContextTokens,GeneratedTokens\n4,nan\n", "GeneratedTokens[0] must be a token count (an integer >= 0), got nan"),
    ("ContextTokens,GeneratedTokens\n1e30,3\n", "ContextTokens[0] must be a token count"),
    (None, "is a directory, not a length table"),
])
def test_generate_poisson_refuses_a_bad_length_table(capsys, tmp_path, content, expect):
    path = tmp_path / ("lengths.json" if content and content[0] in "[{" else "lengths.csv")
    if content is None:
        path.mkdir()
    else:
        path.write_text(content)
    _one_line_exit_2(capsys, "generate", "poisson", "--rate", "2", "--requests", "3", "--memory", "1000",
                     "--lengths", str(path), "--out", str(tmp_path / "out"), expect=expect)


def test_generate_poisson_counts_a_zero_length_as_one(capsys, tmp_path):
    path = tmp_path / "lengths.csv"
    path.write_text("ContextTokens,GeneratedTokens\n0,0\n")
    code, out, err = run(capsys, "generate", "poisson", "--rate", "2", "--requests", "3", "--memory", "1000",
                         "--lengths", str(path), "--out", str(tmp_path / "out"))
    assert code == 0
    reqs = json.loads(open(out.strip()).read())["requests"]
    assert reqs["prompt"] == [1, 1, 1] and reqs["output"] == [1, 1, 1]


@pytest.mark.parametrize("argv, expect", [
    (["jaillet-model1", "--rate", "5", "--horizon", "5"], "--rate, --horizon: generate jaillet-model1 does not use them"),
    (["infermax-csp51", "--count", "5"], "--count: generate infermax-csp51 does not use it"),
    (["fluid", "--types", EX2, "--horizon", "5", "--rate", "3"], "--rate: generate fluid does not use it"),
    (["jaillet-model1", "--count", "100000000000"], "--count: must be a positive integer up to 100000"),
    (["fluid", "--types", EX2, "--horizon", "1e12"], "would draw about 4e+12 requests, above 10,000,000"),
    (["fluid", "--types", EX2, "--horizon", "inf"], "--horizon: must be a positive number, got inf"),
    (["fluid", "--from", TINY, "--horizon", "5", "--bins", "0"], "--bins: must be a positive integer, got 0"),
])
def test_generate_refuses_options_it_would_ignore_or_could_not_serve(capsys, tmp_path, argv, expect):
    _one_line_exit_2(capsys, "generate", *argv, "--out", str(tmp_path / "out"), expect=expect)


def _generate_options():
    from lpbench.cli import build_parser

    parser = build_parser()
    generate = next(a for a in parser._actions if a.dest == "command")
    return [a for a in generate.choices["generate"]._actions if a.option_strings
            and a.dest not in ("help", "out", "force")]


@pytest.mark.parametrize("kind", ["jaillet-model1", "jaillet-model2", "poisson", "infermax-uniform", "infermax-mix",
                                  "infermax-csp51", "fluid"])
def test_generate_refuses_every_option_its_kind_does_not_read(capsys, tmp_path, kind):
    """Read from the parser: an option added to `generate` later is refused where it is not read, and a kind
    given no option is never refused (flags and defaults are not restated beside the parser)."""
    from lpbench.cli import GENERATE_OPTIONS

    for action in _generate_options():
        if action.dest in GENERATE_OPTIONS[kind]:
            continue
        code, out, err = run(capsys, "generate", kind, action.option_strings[0], "7", "--out", str(tmp_path / "o"))
        assert code == 2 and f"{action.option_strings[0]}: generate {kind} does not use it" in err, (action, err)
    assert not (tmp_path / "o").exists()


@pytest.fixture(scope="module")
def example2_requests(tmp_path_factory):
    from lpbench.generators import fluid
    from lpbench.instance import load_instance

    base = load_instance(EX2)
    path = tmp_path_factory.mktemp("ex2") / "ex2.json"
    path.write_text(json.dumps(fluid.instance(base, base.types, 50, 1)))
    return str(path)


@pytest.mark.parametrize("argv, expect", [
    (["--policy", "fcfs", "--horizon", "inf"], "--horizon: must be a positive number, got inf"),
    (["--policy", "fcfs", "--warmup", "-1"], "--warmup: must be a finite number >= 0, got -1"),
    (["--policy", "wait", "--param", "B=1e300"], "--param B: must be a number in [1, 1099511627776], got 1e+300"),
])
def test_throughput_refuses_windows_and_thresholds_out_of_range(capsys, example2_requests, argv, expect):
    _one_line_exit_2(capsys, "throughput", example2_requests, *argv, expect=expect)


def test_throughput_says_the_default_window_is_empty(capsys, write_json):
    one = write_json({"memory": 12, "cost_model": {"form": "linear", "d0": 0.25, "d1": 0.0625},
                      "requests": [{"arrival": 0, "prompt": 1, "output": 2}]})
    _one_line_exit_2(capsys, "throughput", one, "--policy", "fcfs",
                     expect="the window ends at the last arrival 0 by default")


def test_capacity_of_a_slot_instance_keeps_its_arrivals_in_rounds(capsys):
    code, out, err = run(capsys, "capacity", TINY, "--policy", "mc-sf", "--requests", "60", "--iters", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["capacity"] > 0


@pytest.mark.parametrize("body, expect", [(b"\xff\xfe[x]\n", "not UTF-8 text (byte 0xff at offset 0)"),
                                          (None, "is a directory, not a TOML file")])
def test_toml_files_that_are_not_text_are_bad_input(capsys, tmp_path, monkeypatch, body, expect):
    path = tmp_path / "solvers.toml"
    if body is None:
        path.mkdir()
    else:
        path.write_bytes(body)
    monkeypatch.setenv("LPBENCH_SOLVERS", str(path))
    _one_line_exit_2(capsys, "list", "solvers", expect=expect)


def test_calibrate_writes_a_profile_that_parses_whatever_the_note(capsys, tmp_path):
    if not SPLITWISE.exists():
        pytest.skip("needs ../shared/data (splitwise timings)")
    out = tmp_path / "p.toml"
    code, _, err = run(capsys, "calibrate", str(SPLITWISE), "--where", "model=llama2-70b", "--where",
                       "hardware=a100-80gb", "--where", "tensor_parallel=2", "--layers", "80", "--out", str(out),
                       "--note", "line1\nline2", "--description", "d1\td2")
    assert code == 0, err
    text = out.read_text()
    assert tomllib.loads(text)["description"] == "d1\td2"
    assert "# Note: line1\\u000aline2\n" in text
    _one_line_exit_2(capsys, "calibrate", str(tmp_path), "--out", str(tmp_path / "q.toml"),
                     expect="is a directory, not a timings CSV")


@pytest.mark.parametrize("name, content, extra, expect", [
    ("huge.csv", "t,p,o\n0,10,5\n1e300,10,5\n", [], "the imported arrivals reach 1e+300 s, above the instance format's limit"),
    ("ok.csv", "t,p,o\n0,10,5\n3,4,4\n", ["--rate-scale", "1e-300"], "the imported arrivals reach 3e+300 s"),
    ("ok.csv", "t,p,o\n0,10,5\n", ["--memory", "99999999999999999999"], "--memory: must be a positive integer up to"),
    ("deep.jsonl", "[" * 100_000 + "\n", [], "line 1: not JSON: JSON nested too deeply"),
    ("bytes.csv", None, [], "line 4: not UTF-8 text"),
])
def test_import_refuses_what_validate_would_refuse_and_names_the_line(capsys, tmp_path, name, content, extra, expect):
    path = tmp_path / name
    if content is None:
        path.write_bytes(b"t,p,o\n0,1,1\n1,2,2\n2,\xff,3\n")
    else:
        path.write_text(content)
    cols = ["--arrival", "a", "--prompt", "p", "--output", "o"] if name.endswith("jsonl") else \
        ["--arrival", "t", "--prompt", "p", "--output", "o"]
    fmt = "jsonl" if name.endswith("jsonl") else "csv"
    _one_line_exit_2(capsys, "import", fmt, str(path), *cols, *extra, "--out", str(tmp_path / "x.json"),
                     expect=expect)


def test_import_reads_a_header_with_a_byte_order_mark(capsys, tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbft,p,o\n0,10,5\n")
    code, out, err = run(capsys, "import", "csv", str(path), "--arrival", "t", "--prompt", "p", "--output", "o",
                         "--out", str(tmp_path / "x.json"))
    assert code == 0, err


def test_verify_takes_no_boolean_for_a_request_id(capsys, write_json):
    sched = write_json({"format": "lpbench-schedule-v1", "batches": [{"start": 0, "requests": [True], "tokens": [1]}]},
                       "sched.json")
    _one_line_exit_2(capsys, "verify", TINY, sched, expect="batches[0].requests[0]: unknown request id True")


@pytest.mark.parametrize("argv", [
    ["capacity", TINY, "--policy", "mc-sf", "--requests", "20", "--iters", "1"],
    ["throughput", EX2, "--policy", "fcfs"],
    ["import", "csv", TINY, "--arrival", "t", "--prompt", "p", "--output", "o"],
    ["plot", "memory", "--instance", TINY, "--policy", "mc-sf"],
], ids=["capacity", "throughput", "import", "plot"])
def test_a_single_file_out_needs_its_directory(capsys, tmp_path, argv):
    """As `solve`, `simulate` and `export` do (docs/cli-hardening.md, "One output layer"): a typo in a directory
    name is refused before any work, not created. (`calibrate` makes a new models/ folder on purpose.)"""
    out = tmp_path / "no-such-dir" / "x.json"
    _one_line_exit_2(capsys, *argv, "--out", str(out), expect=f"--out: directory {out.parent} does not exist")
    assert not out.parent.exists()
