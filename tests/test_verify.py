"""The verifier against hand-made schedules with hand-computed metrics."""
import pytest
from helpers import same_verification as _same

from lpbench.errors import InputError
from lpbench.instance import parse_instance
from lpbench.schedule import Schedule
from lpbench.verify import verify

# A(a0,s2,o3), B(a0,s1,o2), C(a1,s1,o1), memory 10 (slot model, seed 004)
SLOT = {"memory": 10, "requests": [{"arrival": 0, "prompt": 2, "output": 3, "id": "A"},
                                   {"arrival": 0, "prompt": 1, "output": 2, "id": "B"},
                                   {"arrival": 1, "prompt": 1, "output": 1, "id": "C"}]}
GOOD = [{"start": 0, "requests": ["A", "B"], "tokens": [2, 1]},
        {"start": 1, "requests": ["A", "B", "C"], "tokens": [1, 1, 1]},
        {"start": 2, "requests": ["A"], "tokens": [1]}]


def check(inst_data, batches):
    inst = parse_instance(inst_data)
    return verify(inst, Schedule.from_dict({"batches": batches}, inst))


def test_good_slot_schedule_metrics_by_hand():
    res = check(SLOT, GOOD)
    assert res.feasible, res.violations
    m = res.metrics
    # A: start 0, done 3 (latency 3); B: done 2 (2); C: start 1, done 2 (1)
    assert m["total_latency"] == 6 and m["mean_latency"] == 2 and m["makespan"] == 3
    # footprints: t=1: A 3 + B 2 = 5; t=2: A 4 + B 3 + C 2 = 9; t=3: A 5
    assert m["peak_memory"] == 9
    assert m["ttft_p50"] == 1 and m["batches"] == 3
    assert m["throughput"] == pytest.approx(6 / 3)


def test_overflow_names_batch_and_rule():
    res = check({**SLOT, "memory": 8}, GOOD)
    assert not res.feasible
    assert res.violations[0].startswith("batch 1 (start 1): [memory]")
    assert "KV footprint after the batch 9 exceeds memory 8" in res.violations[0]


def test_early_start():
    bad = [{"start": 0, "requests": ["A", "B", "C"], "tokens": [2, 1, 1]}] + GOOD[1:]
    res = check(SLOT, bad)
    assert res.violations == ["batch 0 (start 0): [arrival] request C: processed at 0 before its arrival 1"]


def test_missing_token():
    res = check(SLOT, GOOD[:2])
    assert res.violations == ["end of schedule: [incomplete] request A: generated 2 of 3 output tokens"]


def test_slot_non_preemption():
    paused = [GOOD[0], {"start": 1, "requests": ["A", "C"], "tokens": [1, 1]}]
    assert "[non_preemption] 1 started request(s) are left out" in check(SLOT, paused).violations[0]
    gap = [GOOD[0], {**GOOD[1], "start": 2}]
    assert "[non_preemption] 2 started request(s) are paused from 1 to 2" in check(SLOT, gap).violations[0]
    chunk = [{"start": 0, "requests": ["A", "B"], "tokens": [1, 1]}]
    assert "[non_preemption] request A: processes 1 of 2 pending" in check(SLOT, chunk).violations[0]


BATCH = {"memory": 10, "model": "batch", "cost_model": {"form": "linear", "d0": 1, "d1": 0},
         "limits": {"token_budget": 3, "prefill_budget": 2},
         "requests": [{"arrival": 0, "prompt": 2, "output": 3, "id": "A"},
                      {"arrival": 0, "prompt": 1, "output": 2, "id": "B"}]}


def test_budgets():
    res = check(BATCH, [{"start": 0, "requests": ["A", "B"], "tokens": [2, 2]}])
    assert "[tokens] request B: processes 2 tokens, pending 1" in res.violations[0]
    res = check({**BATCH, "limits": {"token_budget": 2}}, [{"start": 0, "requests": ["A", "B"], "tokens": [2, 1]}])
    assert res.violations == ["batch 0 (start 0): [token_budget] processes 3 tokens > token_budget 2"]
    res = check(BATCH, [{"start": 0, "requests": ["A", "B"], "tokens": [2, 1]}])
    assert res.violations == ["batch 0 (start 0): [prefill_budget] processes 3 prefill tokens > prefill_budget 2"]


def test_chunked_prefill_and_recompute_eviction():
    """Notes seed-003 §3.8: I=2, O=3 evicted after its first token; the refill recomputes S=3 tokens."""
    sched = [
        {"start": 0, "requests": ["A"], "tokens": [1]},                 # chunk 1 of prompt: no token
        {"start": 1, "requests": ["A", "B"], "tokens": [1, 1]},         # A finishes prefill -> token 1
        {"start": 2, "requests": ["B"], "tokens": [1], "evict": ["A"]},  # A evicted (m=0, S=3), B token 2 -> done
        {"start": 3, "requests": ["A"], "tokens": [2]},                 # partial refill: no token
        {"start": 4, "requests": ["A"], "tokens": [1]},                 # refill complete -> token 2
        {"start": 5, "requests": ["A"], "tokens": [1]},                 # decode -> token 3, done
    ]
    res = check({**BATCH, "limits": {}}, sched)
    assert res.feasible, res.violations
    m = res.metrics
    assert m["evictions"] == 1 and m["makespan"] == 6 and m["total_latency"] == 6 + 3
    # KV after each batch: 1, 2+1, 2 (B completes at batch 2 holding m=2 (I+O-1=2)), 2, 3, 4 = I+O-1
    assert m["peak_memory"] == 4
    # A's tokens appear at 2, 5, 6: TTFT 2; B's at 2, 3
    assert m["ttft_p50"] == 2 and m["tbt_p50"] == 1


def test_eviction_rules():
    res = check({**BATCH, "limits": {}}, [{"start": 0, "requests": ["B"], "tokens": [1], "evict": ["A"]}])
    assert res.violations == ["batch 0 (start 0): [evict] request A: evicted but holds no KV"]
    res = check({**BATCH, "limits": {}}, [{"start": 0, "requests": ["A", "A"], "tokens": [1, 1]}])
    assert res.violations == ["batch 0 (start 0): [duplicate] request A: appears more than once"]
    res = check({**BATCH, "limits": {}}, [{"start": 1, "requests": ["A"], "tokens": [2]},
                                          {"start": 1.5, "requests": ["A"], "tokens": [1]}])
    assert res.violations == ["batch 1 (start 1.5): [order] starts before the previous batch ends at 2"]


def _corrupt(sched, rng):
    """One random corruption of a schedule: a token count, a start, a dropped batch or entry, a duplicate,
    a spurious eviction (every rule of the flat check gets hit over the seeds)."""
    import numpy as np
    from lpbench.schedule import ScheduleBuilder
    batches = [list(sched.batch(j)) for j in range(sched.n_batches)]
    starts = sched.start.copy()
    j = int(rng.integers(len(batches)))
    r, c, e = (x.copy() for x in batches[j])
    kind = int(rng.integers(7))
    if kind == 0:
        c[rng.integers(len(c))] += int(rng.choice([-1, 1, 5]))
    elif kind == 1:
        starts[j] -= float(rng.choice([1e-3, 1.0]))
    elif kind == 2:
        del batches[j]
        starts = np.delete(starts, j)
    elif kind == 3:
        r, c = np.r_[r, r[:1]], np.r_[c, c[:1]]
    elif kind == 4:
        e = np.r_[e, r[:1]]
        r, c = r[1:], c[1:]
    elif kind == 5:
        e = np.r_[e, rng.integers(0, sched.req.max() + 1, 1)]
    else:
        r, c = r[:-1], c[:-1]
    if kind != 2:
        batches[j] = [r, c, e]
    b = ScheduleBuilder()
    for s, (r, c, e) in zip(starts, batches):
        b.add(s, r, c, e)
    return b.build()


@pytest.mark.parametrize("seed", range(6))
def test_flat_check_agrees_with_the_replay(seed):
    """The batch-model flat check returns exactly the replay's result on valid schedules, and on
    corrupted ones hands over to the replay (same violations)."""
    import numpy as np
    from helpers import random_batch_instance
    from lpbench.policies import applicable, make_policy
    from lpbench.sim import simulate
    from lpbench.verify import _verify_flat, _verify_replay
    rng = np.random.default_rng(seed)
    limits = [None, {"token_budget": 256}, {"token_budget": 300, "prefill_budget": 128, "max_batch_requests": 6}]
    inst = random_batch_instance(seed, n=25, limits=limits[seed % 3],
                                 cost=["infermax-llama2-7b-a100", {"form": "linear", "d0": 0.01, "d1": 1e-5}][seed % 2])
    for p in applicable(inst)[::2]:
        try:
            sched = simulate(inst, make_policy(p, inst)).schedule
        except InputError:  # a policy that cannot serve the instance (unchunked prompt above the budget)
            continue
        ref = _verify_replay(inst, sched)
        assert ref.feasible, (p, ref.violations)
        _same(_verify_flat(inst, sched), ref)
        for _ in range(6):
            bad = _corrupt(sched, rng)
            ref = _verify_replay(inst, bad)
            flat = _verify_flat(inst, bad)
            if ref.feasible:
                _same(flat, ref)
            else:
                assert flat is None, (p, ref.violations)
            _same(verify(inst, bad), ref)


def _slot_corrupt(sched, rng):
    """A slot-model corruption beside :func:`_corrupt`'s: every batch from one on a round later (valid only when
    no request runs across that point), or one batch a round later (a pause)."""
    from dataclasses import replace
    starts = sched.start.copy()
    j = int(rng.integers(1, sched.n_batches)) if sched.n_batches > 1 else 0
    if rng.integers(2):
        starts[j:] += 1.0
    else:
        starts[j] += 1.0
    return replace(sched, start=starts)


@pytest.mark.parametrize("seed", range(4))
def test_slot_flat_check_agrees_with_the_replay(seed):
    """The slot-model flat check returns exactly the replay's result on every valid schedule without evictions
    (the policies and the local search on Jaillet prefixes, and each of them a round later), and None on every
    invalid one (corrupted, or with the memory one below its peak), so the replay names the violations."""
    from dataclasses import replace
    import numpy as np
    from lpbench.generators import jaillet
    from lpbench.errors import PolicyDiverged
    from lpbench.formulations.latency_ip import schedule_from_starts
    from lpbench.heuristics.slot_sgs import local_search
    from lpbench.policies import applicable, make_policy
    from lpbench.sim import simulate
    from lpbench.verify import _verify_flat_slot, _verify_replay
    rng = np.random.default_rng(seed)
    inst = parse_instance(jaillet.instance(["jaillet-model1", "jaillet-model2"][seed % 2], 0, seed, first=25))
    schedules = [schedule_from_starts(inst, local_search(inst, iterations=200, seed=seed)[0])]
    for p in applicable(inst):
        try:
            schedules.append(simulate(inst, make_policy(p, inst)).schedule)
        except PolicyDiverged:  # the alpha policies' clearing can loop on these draws
            continue
    invalid = 0
    for sched in schedules:
        ref = _verify_replay(inst, sched)
        assert ref.feasible, ref.violations
        if len(sched.evict):   # a restart: the replay's alone
            assert _verify_flat_slot(inst, sched) is None
            _same(verify(inst, sched), ref)
            continue
        _same(_verify_flat_slot(inst, sched), ref)
        later = replace(sched, start=sched.start + 1.0)   # everything a round later: valid, other metrics
        ref_later = _verify_replay(inst, later)
        assert ref_later.feasible and ref_later.metrics["total_latency"] == ref.metrics["total_latency"] + inst.n
        _same(_verify_flat_slot(inst, later), ref_later)
        tight = replace(inst, memory=ref.metrics["peak_memory"] - 1)
        assert _verify_flat_slot(tight, sched) is None and not _verify_replay(tight, sched).feasible
        for k in range(12):
            bad = (_corrupt if k % 2 else _slot_corrupt)(sched, rng)
            ref = _verify_replay(inst, bad)
            flat = _verify_flat_slot(inst, bad)
            if ref.feasible and len(bad.evict) == 0:
                _same(flat, ref)
            else:
                assert flat is None, ref.violations
                invalid += not ref.feasible
            _same(verify(inst, bad), ref)
    assert invalid >= 10, invalid
