"""Several engines (lpbench.sim.multi, lpbench.verify_engines): routing, the one-engine identity, the
verifier's engine and memory rules, and the capacity bounds with K engines."""
import dataclasses
import json

import numpy as np
import pytest

from helpers import random_batch_instance
from lpbench.errors import InputError
from lpbench.formulations.batch_bound import BatchBound
from lpbench.formulations.capacity import TiledCapacity, WorkConservingCapacity
from lpbench.instance import parse_instance
from lpbench.policies import applicable, make_policy
from lpbench.schedule import Schedule
from lpbench.sim import simulate, simulate_multi, simulate_one_engine
from lpbench.verify import verify

LINEAR = {"form": "linear", "d0": 1.0, "d1": 0.01}  # batch time 1 + 0.01 Σ (m + c)


def with_limits(inst, **kw):
    return dataclasses.replace(inst, limits=dataclasses.replace(inst.limits, **kw))


def three_requests(routing, r2_arrival=1.3):
    return parse_instance({"memory": 1000, "model": "batch", "cost_model": LINEAR,
                           "limits": {"token_budget": 100, "engines": 2, "routing": routing},
                           "requests": [{"arrival": 0, "prompt": 10, "output": 2},
                                        {"arrival": 0, "prompt": 20, "output": 1},
                                        {"arrival": r2_arrival, "prompt": 10, "output": 1}]})


def batches(s):
    return [(int(s.engine[j]), round(float(s.start[j]), 9), dict(zip(s.batch(j)[0].tolist(), s.batch(j)[1].tolist())))
            for j in range(s.n_batches)]


def test_round_robin_by_hand():
    """r0 -> engine 0, r1 -> engine 1, r2 -> engine 0 (in turn). Engine 0: [r0: 10] 0..1.1 (1 + 0.01·10),
    [r0: 1] 1.1..2.21 (1 + 0.01·11, r0 completes), [r2: 10] 2.21..3.31 (r2 arrived at 1.3 while engine 0 was
    busy). Engine 1: [r1: 20] 0..1.2."""
    inst = three_requests("round-robin")
    s = simulate(inst, make_policy("sarathi-serve", inst)).schedule
    assert batches(s) == [(0, 0.0, {0: 10}), (1, 0.0, {1: 20}), (0, 1.1, {0: 1}), (0, 2.21, {2: 10})]
    ver = verify(inst, s)
    assert ver.feasible
    assert ver.completion == pytest.approx([2.21, 1.2, 3.31])
    assert ver.first_token - inst.arrival == pytest.approx([1.1, 1.2, 3.31 - 1.3])


def test_least_loaded_reads_completions_up_to_the_arrival():
    """At r2's arrival (1.3) engine 0 holds r0 (completes at 2.21) and engine 1 is empty (r1 completed at
    1.2), so least-loaded sends r2 to engine 1: [r2: 10] 1.3..2.4. Had r2 arrived at 1.15, before r1's
    completion, both engines would hold one request and the tie goes to engine 0."""
    inst = three_requests("least-loaded")
    s = simulate(inst, make_policy("sarathi-serve", inst)).schedule
    assert batches(s) == [(0, 0.0, {0: 10}), (1, 0.0, {1: 20}), (0, 1.1, {0: 1}), (1, 1.3, {2: 10})]
    assert verify(inst, s).completion == pytest.approx([2.21, 1.2, 2.4])
    early = three_requests("least-loaded", r2_arrival=1.15)
    s = simulate(early, make_policy("sarathi-serve", early)).schedule
    assert [b[0] for b in batches(s) if 2 in b[2]] == [0]


def test_random_routing_is_seeded_and_uses_every_engine():
    inst = with_limits(random_batch_instance(5, n=60), engines=3, routing="random")
    a = simulate(inst, make_policy("sarathi", inst, seed=1)).schedule
    b = simulate(inst, make_policy("sarathi", inst, seed=1)).schedule
    assert np.array_equal(a.engine, b.engine) and np.array_equal(a.req, b.req)
    assert set(a.engine.tolist()) == {0, 1, 2}
    assert verify(inst, a).feasible


def test_one_engine_through_the_event_loop_is_the_one_engine_simulation_bit_for_bit():
    """K = 1: lpbench.sim.multi builds the schedule of lpbench.sim.engine (which also takes repeated-batch
    runs), and the several-engine verifier computes the same metrics as the one-engine verifier."""
    checked = 0
    for seed in range(3):
        for limits in (None, {"token_budget": 64}):
            inst = random_batch_instance(seed, n=40, limits=limits, memory=600 if seed % 2 else None)
            for name in applicable(inst):
                try:
                    a = simulate_one_engine(inst, make_policy(name, inst)).schedule
                except InputError:  # e.g. a whole-prompt policy and a prompt above the budget
                    continue
                b = simulate_multi(inst, make_policy(name, inst)).schedule
                for k in ("start", "ptr", "req", "tokens", "eptr", "evict"):
                    assert np.array_equal(getattr(a, k), getattr(b, k)), (seed, name, k)
                b.engine = np.zeros(b.n_batches, dtype=np.int64)  # sends it to lpbench.verify_engines
                va, vb = verify(inst, a), verify(inst, b)
                assert vb.feasible and va.metrics == vb.metrics, (seed, name)
                checked += 1
    assert checked > 50


def test_engine_by_engine_is_the_event_loop_and_the_fast_check_is_the_replay():
    """Routing that reads no engine state: simulating each engine on its own requests (with the one-engine
    loop's runs) and merging gives the event loop's schedule bit for bit; without moves the verifier's
    engine-by-engine check gives the replay's metrics exactly (and both accept)."""
    from lpbench.verify_engines import replay_engines, verify_by_engine

    checked = 0
    for seed in range(2):
        for limits in (None, {"token_budget": 64}):
            inst = random_batch_instance(seed, n=50, limits=limits, memory=600 if seed % 2 else None)
            for K, routing in ((2, "round-robin"), (3, "random"), (3, "least-loaded")):
                multi = with_limits(inst, engines=K, routing=routing)
                for name in ("sarathi", "vllm", "rank-i", "orca", "rad", "slai", "mc-sf"):
                    try:
                        a = simulate_multi(multi, make_policy(name, multi)).schedule
                    except InputError:
                        continue
                    if routing != "least-loaded":
                        b = simulate_multi(multi, make_policy(name, multi), split=False).schedule
                        for k in ("start", "ptr", "req", "tokens", "eptr", "evict", "engine"):
                            assert np.array_equal(getattr(a, k), getattr(b, k)), (seed, K, name, k)
                    fast, slow = verify_by_engine(multi, a), replay_engines(multi, a)
                    assert fast is not None and slow.feasible and fast.metrics == slow.metrics, (seed, K, name)
                    checked += 1
    assert checked > 30


def test_limits_are_validated_with_field_value_expected():
    base = {"memory": 100, "model": "batch", "cost_model": LINEAR, "requests": [{"arrival": 0, "prompt": 5, "output": 2}]}
    for limits, field in (({"engines": 0}, "limits.engines"), ({"engines": 2.5}, "limits.engines"),
                          ({"routing": "fastest"}, "limits.routing"), ({"routing": ["random"]}, "limits.routing"), ({"kv_transfer_per_token": -1}, "limits.kv_transfer_per_token"),
                          ({"kv_transfer_per_token": "fast"}, "limits.kv_transfer_per_token")):
        with pytest.raises(InputError) as e:
            parse_instance({**base, "limits": limits})
        assert e.value.problems[0].startswith(field + ":"), e.value.problems
    with pytest.raises(InputError, match="limits.routing: must be one of least-loaded, random, round-robin, got \"fastest\""):
        parse_instance({**base, "limits": {"routing": "fastest"}})
    plain = parse_instance(base)
    assert plain.limits.K == 1 and plain.limits.to_dict() == {}  # unset: content hash unchanged


def test_verifier_engine_order_and_memory_per_engine():
    """The round-robin schedule verifies (also after a JSON round trip); r0's decode moved to engine 1 does
    not (its KV is on engine 0); every batch declared on engine 0 overlaps ([order]). Memory is per engine:
    with M = 25, r0 (10) and r1 (20) fit on two engines, not together on one."""
    inst = three_requests("round-robin")
    s = simulate(inst, make_policy("sarathi-serve", inst)).schedule
    data = s.to_dict(inst)
    assert verify(inst, Schedule.from_dict(json.loads(json.dumps(data)), inst)).feasible  # JSON round trip
    bad = json.loads(json.dumps(data))
    bad["batches"][2].update(engine=1, start=1.2)  # r0's decode on engine 1, once engine 1 is free
    v = verify(inst, Schedule.from_dict(bad, inst))
    assert not v.feasible and "[engine] request 0: processed on engine 1, but its KV is on engine 0" in v.violations[0]
    one = json.loads(json.dumps(data))
    for b in one["batches"]:
        b["engine"] = 0
    v = verify(inst, Schedule.from_dict(one, inst))
    assert not v.feasible and "[order]" in v.violations[0]
    tight = dataclasses.replace(inst, memory=25)
    data.pop("instance_sha256")  # the same batches against the instances with other memory
    assert verify(tight, Schedule.from_dict(data, tight)).feasible  # 10 + 1 on engine 0, 20 on engine 1
    merged = dataclasses.replace(with_limits(tight, engines=None), memory=25)
    both = {"batches": [{"start": 0, "requests": [0, 1], "tokens": [10, 20]}]}
    assert "[memory]" in verify(merged, Schedule.from_dict(both, merged)).violations[0]
    empty = Schedule.from_dict(data, tight)
    empty.ptr = np.r_[empty.ptr[:1], empty.ptr]  # an empty batch in front, on engine 0
    empty.start, empty.engine = np.r_[0.0, empty.start], np.r_[0, empty.engine]
    empty.eptr = np.r_[0, empty.eptr]
    assert "[empty]" in verify(tight, empty).violations[0]
    outside = Schedule.from_dict(data, tight)
    outside.engine = outside.engine + 1  # engine 2 of 2
    assert "[engine] runs on engine 2, but limits.engines = 2" in verify(tight, outside).violations[0]
    with pytest.raises(InputError, match=r"batches\[0\].engine: must be an integer in 0..1"):
        Schedule.from_dict({"batches": [{"start": 0, "requests": [0], "tokens": [10], "engine": 2}]}, inst)


def test_one_engine_formulations_refuse_several_engines():
    from lpbench.solve import solve_instance

    inst = three_requests("round-robin")
    with pytest.raises(InputError, match="limits.engines: formulation 'infermax-csp' models one engine, but the "
                                         "instance has 2; with several engines: batch-bound, tiled-capacity, "
                                         "wc-capacity"):
        solve_instance(inst, "infermax-csp")


@pytest.mark.parametrize("K", [2, 3])
def test_random_instances_verify_and_respect_the_k_engine_bounds(K):
    """Every policy on K engines, every routing rule: the schedule verifies, the makespan is no shorter than
    the K-engine drain bound, and the token rate over the busy time of all engines is within one engine's
    best rate (so the throughput is within K times it: wc-capacity's K λ*)."""
    costs = [{"form": "piecewise", "c": 0.02, "a": 0.0003, "b0": 32}, "li-llama3-70b-2xa100"]
    for seed in range(4):
        rng = np.random.default_rng(seed)
        budget = int(rng.choice([64, 128]))
        prompt = rng.integers(1, budget + 1, 30)
        output = rng.integers(1, budget - prompt + 2)  # prompt + output - 1 <= budget: whole-prompt policies apply
        inst = parse_instance({"memory": int(rng.choice([600, 10**6])), "model": "batch", "cost_model": costs[seed % 2],
                               "limits": {"token_budget": budget, "engines": K,
                                          "routing": ["round-robin", "random", "least-loaded"][seed % 3]},
                               "requests": {"arrival": np.sort(rng.uniform(0, 0.5, 30)).round(4).tolist(),
                                            "prompt": prompt.tolist(), "output": output.tolist()}})
        form = WorkConservingCapacity(inst)
        assert form.K == K
        rate = float((np.arange(1, budget + 1) / form.t).max())
        latency = BatchBound(inst).bounds()
        for name in ("sarathi-serve", "orca", "vllm-vanilla", "rad", "slai", "sarathi", "vllm"):
            res = simulate(inst, make_policy(name, inst))
            ver = verify(inst, res.schedule)
            assert ver.feasible, (seed, name, ver.violations[:1])
            assert ver.metrics["makespan"] >= form.drain() - 1e-9, (seed, name)
            assert res.schedule.tokens.sum() / ver.metrics["busy_time"] <= rate * (1 + 1e-9), (seed, name)
            assert ver.metrics["total_latency"] >= latency["total_latency"] - 1e-9, (seed, name)
            assert ver.metrics["makespan"] >= latency["makespan"] - 1e-9, (seed, name)


def test_k_engine_latency_bound_needs_its_rate_k_server():
    """batch-bound with K engines (SRPT on one server of rate K) is below every verified schedule on K
    engines, while the one-engine bound is above some: the division by K is what keeps it valid. K = 1
    through limits.engines = 1 is the one-engine bound."""
    inst = random_batch_instance(3, n=60, horizon=0.2, cost={"form": "piecewise", "c": 0.02, "a": 0.0003, "b0": 32},
                                 limits={"token_budget": 128, "engines": 3, "routing": "least-loaded"})
    one = with_limits(inst, engines=None)
    assert BatchBound(with_limits(inst, engines=1)).bounds() == BatchBound(one).bounds()
    k_bound, one_bound = BatchBound(inst).value(), BatchBound(one).value()
    best = min(verify(inst, simulate(inst, make_policy(name, inst)).schedule).metrics["total_latency"]
               for name in ("sarathi-serve", "orca", "sarathi"))
    assert k_bound <= best < one_bound


def test_tiled_bound_with_k_engines():
    """Σ t*_q <= the busy time of all engines together, and the K-engine drain bound <= the makespan, for
    routed policies and for distserve (the bound's planner moves KV for free)."""
    from test_capacity import TILED, inst_of

    for seed in range(3):
        inst = with_limits(inst_of(seed, TILED, 256, n=25, max_prompt=256), engines=2)
        form = TiledCapacity(inst)
        assert form.K == 2
        moving = with_limits(inst, kv_transfer_per_token=1e-5)
        for name in ("sarathi-serve", "rad", "slai", "distserve"):
            ver = verify(moving, simulate(moving, make_policy(name, moving)).schedule)
            assert ver.feasible
            assert form.t_star().sum() <= ver.metrics["busy_time"] * (1 + 1e-9)
            assert form.drain() <= ver.metrics["makespan"] + 1e-9


def test_multi_engine_replay_checks_a_batch_entries_as_the_one_engine_replay():
    """The entry checks both replays share (verify.entry_problems): a request twice in a batch, an eviction
    of a request that holds no KV, one evicted and processed in the same batch: named, on several engines too."""
    inst = three_requests("round-robin")
    data = simulate(inst, make_policy("sarathi-serve", inst)).schedule.to_dict(inst)
    twice = json.loads(json.dumps(data))
    twice["batches"][0].update(requests=[0, 0], tokens=[5, 5])
    assert "[duplicate] request 0: appears more than once" in verify(inst, Schedule.from_dict(twice, inst)).violations[0]
    no_kv = json.loads(json.dumps(data))
    no_kv["batches"][0]["evict"] = [2]
    assert "[evict] request 2: evicted but holds no KV" in verify(inst, Schedule.from_dict(no_kv, inst)).violations[0]
    both = json.loads(json.dumps(data))
    both["batches"][1]["evict"] = both["batches"][1]["requests"][:1]
    v = verify(inst, Schedule.from_dict(both, inst))
    assert not v.feasible and any("evicted and processed in the same batch" in x for x in v.violations)
