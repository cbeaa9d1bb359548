"""Every CLI path, through main() and once through the installed console script."""
import json
import subprocess
import sys

import pytest

from lpbench.cli import main

from conftest import ROOT, run, BATCH, TINY as SLOT



def test_validate_shipped(capsys):
    code, out, _ = run(capsys, "validate", *[str(p) for p in sorted((ROOT / "instances").glob("*.json"))])
    assert code == 0 and out.count(": ok") >= 2


@pytest.mark.parametrize("content, expect", [
    ('{"memory": 4, ', "invalid JSON at line 1"),
    ({"memory": 9, "requests": [{"arrival": 0, "prompt": 1, "output": -3}]},
     "requests[0].output: must be a positive integer, got -3"),
    ({"memory": 9, "requests": [{"arrival": 0, "prompt": 1, "output": 3, "colour": 1}]},
     "requests[0].colour: unknown key"),
    ({"memory": 9, "requests": [{"arrival": 0, "prompt": 5, "output": 5}]},
     "requests[0].output: request can never run"),
])
def test_validate_errors_one_line_exit_2(capsys, write_json, content, expect):
    path = write_json(content)
    code, _, err = run(capsys, "validate", path)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(path + ": ") and expect in lines[0]


def test_simulate_json_contract(capsys):
    code, out, _ = run(capsys, "simulate", BATCH, "--policy", "sarathi", "--json")
    assert code == 0
    rep = json.loads(out)
    assert rep["verified"] is True and rep["policy"] == "sarathi" and rep["instance"] == "infermax-7b-mix40"
    for k in ("total_latency", "mean_latency", "makespan", "peak_memory", "ttft_p50", "throughput"):
        assert isinstance(rep["metrics"][k], (int, float))


def test_simulate_out_then_verify_and_never_overwrite(capsys, tmp_path):
    out = str(tmp_path / "s.json")
    assert run(capsys, "simulate", BATCH, "--policy", "vllm", "--out", out)[0] == 0
    code, _, err = run(capsys, "simulate", BATCH, "--policy", "vllm", "--out", out)
    assert code == 2 and "already exists" in err
    assert run(capsys, "simulate", BATCH, "--policy", "vllm", "--out", out, "--force")[0] == 0
    code, out_text, _ = run(capsys, "verify", BATCH, out, "--json")
    rep = json.loads(out_text)
    assert code == 0 and rep["feasible"] is True and rep["violations"] == []
    sim = json.loads(open(out).read())
    assert rep["metrics"]["total_latency"] == sim["metrics"]["total_latency"]


def test_verify_overflow_exit_1_names_batch_and_rule(capsys, tmp_path, write_json):
    sched = {"batches": [{"start": 0, "requests": [0, 1], "tokens": [2, 1]},
                         {"start": 1, "requests": [0, 1], "tokens": [1, 1]},
                         {"start": 2, "requests": [0], "tokens": [1]}]}
    inst = write_json({"memory": 6, "requests": [{"arrival": 0, "prompt": 2, "output": 3},
                                                 {"arrival": 0, "prompt": 1, "output": 2}]})
    code, _, err = run(capsys, "verify", inst, write_json(sched, "sched.json"))
    assert code == 1 and "batch 1 (start 1): [memory]" in err and "exceeds memory 6" in err
    code, out, _ = run(capsys, "verify", inst, write_json(sched, "sched.json"), "--json")
    assert code == 1 and json.loads(out)["feasible"] is False


def test_cli_input_errors_exit_2(capsys, write_json, tmp_path):
    assert "unknown policy 'nope'" in run(capsys, "simulate", BATCH, "--policy", "nope")[2]
    code, _, err = run(capsys, "simulate", SLOT, "--policy", "vllm")
    assert code == 2 and "policy 'vllm' is defined for model 'batch'" in err
    code, _, err = run(capsys, "verify", BATCH, write_json({"batches": [{"start": 0, "requests": [99], "tokens": [1]}]}))
    assert code == 2 and "batches[0].requests[0]: unknown request id 99" in err
    code, _, err = run(capsys, "verify", BATCH, str(tmp_path / "none.json"))
    assert code == 2 and "no such schedule file" in err
    assert main(["simulate"]) == 2  # a usage error is a return code, not a SystemExit (issue 14)


def test_list(capsys):
    code, out, _ = run(capsys, "list", "models")
    assert code == 0 and "infermax-llama2-7b-a100" in out and "tiled" in out
    code, out, _ = run(capsys, "list", "policies")
    assert code == 0 and "vllm" in out and "sarathi" in out


def test_console_script_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"memory": 1e999, "requests": []}')
    exe = ROOT / ".venv/bin/lpbench"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "lpbench.cli"]
    p = subprocess.run(cmd + ["validate", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "memory" in p.stderr
