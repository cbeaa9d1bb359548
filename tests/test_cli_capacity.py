"""`lpbench capacity` and `lpbench solve --formulation wc-capacity` through main()."""
import json

import numpy as np
import pytest

from conftest import ROOT, run

CAP = str(ROOT / "instances" / "li-llama3-70b-b512.json")
FAST = ("--requests", "600", "--seeds", "2", "--iters", "4", "-q")


def classed(write_json, drop_slo_of=None):
    rng = np.random.default_rng(0)
    reqs = []
    for i in range(50):
        c = "paying" if i % 5 == 0 else "free"
        r = {"arrival": round(i * 0.1, 3), "prompt": int(rng.integers(1, 200)), "output": int(rng.integers(2, 60)),
             "class": c}
        if c != drop_slo_of:
            r["tbt_slo"] = 0.1 if c == "paying" else 0.5
        reqs.append(r)
    return write_json({"memory": 10**6, "model": "batch", "cost_model": "li-llama3-70b-2xa100",
                       "limits": {"token_budget": 256}, "requests": reqs})


def test_capacity_json_contract_and_ranking(capsys):
    """The report has capacity, bound, ratio and stability evidence; the work-conserving Sarathi-Serve
    ranks above FasterTransformer, and no capacity exceeds the bound."""
    caps = {}
    for policy, n in (("sarathi-serve", "500"), ("fastertransformer", "200")):
        code, out, _ = run(capsys, "capacity", CAP, "--policy", policy, "--json", *FAST, "--requests", n)
        assert code == 0
        rep = json.loads(out)
        assert {"capacity", "bound", "ratio", "stability"} <= set(rep)
        assert 0 < rep["capacity"] < rep["bound"] and 0 < rep["ratio"] < 1
        probes = rep["stability"]["probes"]
        assert len(probes) >= 4 and all(len(p["runs"]) == 2 for p in probes)
        assert all((p["mean_relative_slope"] <= 0.02) == p["stable"] for p in probes)
        caps[policy] = rep["capacity"]
    assert caps["sarathi-serve"] > 5 * caps["fastertransformer"]


def test_capacity_slo_variant(capsys, write_json):
    code, out, err = run(capsys, "capacity", classed(write_json), "--policy", "sarathi-serve", "--slo", "0.5", "--json",
                         "--requests", "300", "--seeds", "1", "--iters", "3")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["slo"]["tbt_p99_targets"] == {"paying": 0.1, "free": 0.5}
    assert all("ttft_p50" in p and set(p["tbt_p99"]) == {"paying", "free"} for p in rep["stability"]["probes"])
    assert "multiplier" in err  # progress on stderr


def test_capacity_bad_slo_and_class_without_slo_exit_2(capsys, write_json):
    for bad in ("fast", "-1", "nan"):
        code, _, err = run(capsys, "capacity", CAP, "--policy", "orca", "--slo", bad)
        assert code == 2 and "--slo" in err and bad in err and "Traceback" not in err
    code, _, err = run(capsys, "capacity", classed(write_json, drop_slo_of="free"), "--policy", "orca", "--slo", "0.5")
    assert code == 2 and "class 'free' has no tbt_slo" in err and len(err.strip().splitlines()) == 1


def test_solve_wc_capacity_reports_capacity_object(capsys):
    code, out, _ = run(capsys, "solve", CAP, "--formulation", "wc-capacity", "--policies", "orca,vllm-vanilla",
                       "--json", "-q")
    assert code == 0
    cap = json.loads(out)["capacity"]
    assert cap["lp_requests_per_s"] == cap["closed_form_requests_per_s"] == cap["bound_requests_per_s"]
    assert cap["bound_tokens_per_s"] == cap["bound_requests_per_s"] * (cap["m_p"] + cap["m_d"])
    assert all(r["ratio"] >= 1 for r in cap["policies"].values())


def test_backlog_slope_measures_the_fluid_growth():
    """Arrivals at 10/s and completions at 8/s (after a 1 s delay): N(t) grows at 2/s over [H/2, H]."""
    from lpbench.capacity import backlog_slope

    arrival = np.arange(0, 100, 0.1)
    completion = 1.0 + np.arange(len(arrival)) / 8.0
    assert backlog_slope(arrival, completion) == pytest.approx(2.0, rel=0.02)
    assert abs(backlog_slope(arrival, arrival + 0.5)) < 0.05   # keeps up: no growth


def test_capacity_workers_give_the_same_report(capsys):
    args = ("capacity", CAP, "--policy", "orca", "--json", "--requests", "300", "--seeds", "2", "--iters", "2", "-q")
    reps = []
    for w in ("1", "2"):
        code, out, _ = run(capsys, *args, "--workers", w)
        assert code == 0
        rep = json.loads(out)
        for p in rep["stability"]["probes"]:
            for r in p["runs"]:
                r.pop("simulate_seconds")
        reps.append(rep)
    assert reps[0] == reps[1]
