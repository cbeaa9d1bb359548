"""The verifier against hand-made schedules with hand-computed metrics."""
import pytest

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
