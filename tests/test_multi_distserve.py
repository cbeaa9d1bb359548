"""DistServe (lpbench.policies.distserve) on prefill and decode engines, and the verifier's move rules."""
import dataclasses
import json

import numpy as np
import pytest

from helpers import random_batch_instance
from lpbench.errors import InputError
from lpbench.formulations.batch_bound import BatchBound
from lpbench.formulations.capacity import WorkConservingCapacity
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.schedule import Schedule
from lpbench.sim import simulate
from lpbench.verify import verify

LINEAR = {"form": "linear", "d0": 1.0, "d1": 0.01}  # batch time 1 + 0.01 Σ (m + c)


def two_requests(memory=1000, tau=0.1):
    limits = {"engines": 2}
    if tau is not None:
        limits["kv_transfer_per_token"] = tau
    return parse_instance({"memory": memory, "model": "batch", "cost_model": LINEAR, "limits": limits,
                           "requests": [{"arrival": 0, "prompt": 10, "output": 3},
                                        {"arrival": 0, "prompt": 20, "output": 2}]})


def batches(s):
    return [(int(s.engine[j]), round(float(s.start[j]), 9), dict(zip(s.batch(j)[0].tolist(), s.batch(j)[1].tolist())))
            for j in range(s.n_batches)]


def test_distserve_by_hand():
    """Engine 0 prefills, engine 1 decodes; τ = 0.1 s per KV token. Engine 0: [r0: 10] 0..1.1 (r0's first
    token), [r1: 20] 1.1..2.3 (r1's first token). Moves: r0 (10 entries) 1.1..2.1, r1 (20) 2.3..4.3.
    Engine 1: [r0: 1] 2.1..3.21 (1 + 0.01·11), [r0: 1] 3.21..4.33 (1 + 0.01·12, r0 completes), then r1,
    arrived at 4.3 while engine 1 was busy: [r1: 1] 4.33..5.54 (1 + 0.01·21)."""
    inst = two_requests()
    s = simulate(inst, make_policy("distserve", inst)).schedule
    assert batches(s) == [(0, 0.0, {0: 10}), (0, 1.1, {1: 20}), (1, 2.1, {0: 1}), (1, 3.21, {0: 1}), (1, 4.33, {1: 1})]
    assert s.moves.req.tolist() == [0, 1] and s.moves.to.tolist() == [1, 1]
    assert s.moves.start == pytest.approx([1.1, 2.3])
    ver = verify(inst, s)
    assert ver.feasible, ver.violations
    assert ver.first_token == pytest.approx([1.1, 2.3])      # on the prefill engine: TTFT excludes the transfer
    assert ver.completion == pytest.approx([4.33, 5.54])
    req, gap = ver.tbt
    assert sorted(gap.tolist()) == pytest.approx([1.12, 2.11, 3.24])  # the first gap includes the transfer


def test_prefill_engine_holds_the_prompt_until_its_transfer_ends():
    """M = 29: r1's prompt (20) does not fit next to r0's (10) until r0's transfer ends at 2.1, so r1's
    prefill starts at 2.1, not 1.1; and the memory-1000 schedule fails on engine 0 under M = 29."""
    tight = two_requests(memory=29)
    s = simulate(tight, make_policy("distserve", tight)).schedule
    assert batches(s)[:2] == [(0, 0.0, {0: 10}), (0, 2.1, {1: 20})]
    assert verify(tight, s).feasible
    loose = simulate(two_requests(), make_policy("distserve", two_requests())).schedule.to_dict(two_requests())
    loose.pop("instance_sha256")
    v = verify(tight, Schedule.from_dict(loose, tight))
    assert not v.feasible and "[memory] engine 0" in v.violations[0] and "30 exceeds memory 29" in v.violations[0]


def test_tampered_schedules_are_rejected():
    inst = two_requests()
    good = simulate(inst, make_policy("distserve", inst)).schedule.to_dict(inst)

    def check(edit, *needles, on=inst):
        data = json.loads(json.dumps(good))
        data.pop("instance_sha256")
        edit(data)
        v = verify(on, Schedule.from_dict(data, on))
        assert not v.feasible
        for needle in needles:
            assert needle in v.violations[0], v.violations

    # decode before the transfer ends: r0's KV reaches engine 1 at 2.1
    check(lambda d: d["batches"][2].update(start=2.0), "[move] request 0: processed at 2, before its KV (10 entries, "
          "moving from 1.1) reaches engine 1 at 2.1")
    # a transfer that starts before the prefill ends
    check(lambda d: d["moves"][0].update(start=1.0), "[move] request 0: its move to engine 1 starts at 1, before its "
          "last batch on engine 0 ends at 1.1")
    # a decode on the decode engine without a move
    check(lambda d: d.update(moves=d["moves"][1:]), "[engine] request 0: processed on engine 1, but its KV is on engine 0")
    # the decode engine's memory: r1's 20 entries are held from 2.3, so after r0's first decode (2.1..3.21,
    # r0 then holds 11) engine 1 holds 31
    check(lambda d: None, "batch 2 (engine 1, start 2.1): [memory] engine 1", "31 exceeds memory 30",
          on=dataclasses.replace(inst, memory=30))
    # no moves without a transfer time
    check(lambda d: None, "no limits.kv_transfer_per_token", on=two_requests(tau=None))
    # at most one move per request
    check(lambda d: d["moves"].append({"request": 1, "to": 0, "start": 9.0}), "[move] request 1: moves more than once")


def test_distserve_needs_engines_and_a_transfer_time():
    one = random_batch_instance(0, n=5)
    with pytest.raises(InputError, match=r"limits.engines: policy 'distserve' needs at least 2 engines .*got 1"):
        make_policy("distserve", one)
    two = dataclasses.replace(one, limits=dataclasses.replace(one.limits, engines=2))
    with pytest.raises(InputError, match="limits.kv_transfer_per_token: policy 'distserve'"):
        make_policy("distserve", two)
    ok = dataclasses.replace(two, limits=dataclasses.replace(two.limits, kv_transfer_per_token=1e-5))
    with pytest.raises(InputError, match=r"--param prefill_engines: must be an integer in 1..1 \(limits.engines = 2\), got 2"):
        make_policy("distserve", ok, prefill_engines=2)
    with pytest.raises(InputError, match="--param pack: must be 0 .* or 1, got 2"):
        make_policy("distserve", ok, pack=2)


def test_distserve_on_random_instances_verifies_and_respects_the_bound():
    """Prefill batches are prefill only, decode batches decode only, every request moves once (or completes
    in its prefill), every schedule verifies, and the token rate over all engines' busy time stays within
    one engine's best rate (wc-capacity's K λ*)."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        K = int(rng.integers(2, 5))
        inst = random_batch_instance(seed, n=40, cost={"form": "piecewise", "c": 0.02, "a": 0.0003, "b0": 32},
                                     limits={"token_budget": 128, "engines": K, "kv_transfer_per_token": 1e-4,
                                             "routing": ["round-robin", "random", "least-loaded"][seed % 3]},
                                     memory=700 if seed % 2 else None)
        form = WorkConservingCapacity(inst)
        rate = float((np.arange(1, 129) / form.t).max())
        latency = BatchBound(inst).bounds()
        for pack in (0, 1):
            s = simulate(inst, make_policy("distserve", inst, pack=pack, prefill_engines=1 + seed % (K - 1))).schedule
            ver = verify(inst, s)
            assert ver.feasible, (seed, pack, ver.violations[:1])
            P = 1 + seed % (K - 1)
            for j in range(s.n_batches):
                r, c, _ = s.batch(j)
                if s.engine[j] >= P:
                    assert np.all(c == 1)
                elif not pack:
                    assert len(r) == 1
            assert sorted(s.moves.req.tolist()) == np.flatnonzero(inst.output > 1).tolist()
            assert s.tokens.sum() / ver.metrics["busy_time"] <= rate * (1 + 1e-9)
            assert ver.metrics["makespan"] >= form.drain() - 1e-9
            assert ver.metrics["total_latency"] >= latency["total_latency"] - 1e-9   # batch-bound, K engines
            assert ver.metrics["makespan"] >= latency["makespan"] - 1e-9


def test_cli_simulate_verify_and_capacity_run_distserve(capsys, tmp_path, write_json):
    """`lpbench simulate` writes a schedule with engines and moves that `lpbench verify` accepts; `lpbench
    capacity` searches distserve (with a --param) against the two-engine bound; a bad parameter and a
    one-engine instance exit 2."""
    from conftest import run

    rng = np.random.default_rng(0)
    data = {"memory": 10**6, "model": "batch", "cost_model": "li-llama3-70b-2xa100",
            "limits": {"token_budget": 256, "engines": 2, "kv_transfer_per_token": 1e-5},
            "requests": {"arrival": np.round(np.arange(60) * 0.1, 3).tolist(),
                         "prompt": rng.integers(1, 300, 60).tolist(), "output": rng.integers(1, 60, 60).tolist()}}
    path = write_json(data)
    out_path = str(tmp_path / "s.json")
    code, _, _ = run(capsys, "simulate", path, "--policy", "distserve", "--out", out_path, "--json")
    assert code == 0
    saved = json.loads(open(out_path).read())
    assert {b["engine"] for b in saved["batches"]} == {0, 1} and len(saved["moves"]) > 0
    code, _, _ = run(capsys, "verify", path, out_path)
    assert code == 0
    code, out, _ = run(capsys, "capacity", path, "--policy", "distserve", "--param", "pack=1", "--json",
                       "--requests", "200", "--seeds", "1", "--iters", "3", "-q")
    rep = json.loads(out)
    assert code == 0 and rep["bound_detail"]["engines"] == 2 and 0 < rep["capacity"] < rep["bound"]
    assert rep["params"] == {"pack": 1.0}
    code, _, err = run(capsys, "capacity", path, "--policy", "distserve", "--param", "prefill_engines=2")
    assert code == 2 and "--param prefill_engines: must be an integer in 1..1" in err
    one = write_json({**data, "limits": {"token_budget": 256}})
    code, _, err = run(capsys, "simulate", one, "--policy", "distserve")
    assert code == 2 and "limits.engines: policy 'distserve' needs at least 2 engines" in err
