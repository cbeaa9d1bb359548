"""mc-sf-backfill (lpbench/policies/mcsf_backfill.py): MC-SF's order and check (5) without the prefix rule."""
import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.policies.mcsf_backfill import MCSFBackfill
from lpbench.sim import simulate
from lpbench.verify import verify

from test_sim import assert_runs_change_nothing


def same_schedule(a, b) -> bool:
    return a.n_batches == b.n_batches and all(
        np.array_equal(x, y) for x, y in zip((a.start, a.ptr, a.req, a.tokens), (b.start, b.ptr, b.req, b.tokens)))


def test_hand_case_backfills_past_a_refused_head():
    """M = 12; A (s 6, o 2), B (s 5, o 3), C (s 1, o 4) at round 0. MC-SF admits A, refuses B (at A's last
    round 8 + 6 > 12) and stops: B and C start at round 2, latencies 2 + 5 + 6 = 13. Backfilling admits C
    beside A (8 + 3 <= 12, and 5 <= 12 at C's own end); B then starts at round 2 (7 + 5 = 12 at C's last
    round): 2 + 4 + 5 = 11."""
    inst = parse_instance({"name": "hol", "memory": 12, "model": "slot",
                           "requests": {"arrival": [0, 0, 0], "prompt": [6, 5, 1], "output": [2, 3, 4]}})
    totals = {}
    for name in ("mc-sf", "mc-sf-backfill"):
        ver = verify(inst, simulate(inst, make_policy(name, inst)).schedule)
        assert ver.feasible
        totals[name] = ver.metrics["total_latency"]
    assert totals == {"mc-sf": 13, "mc-sf-backfill": 11}


@pytest.mark.parametrize("k", range(6))
def test_depth_one_is_mcsf_and_every_schedule_verifies(k):
    model = ("jaillet-model1", "jaillet-model2")[k % 2]
    inst = parse_instance(jaillet.instance(model, 0, k))
    mcsf = simulate(inst, make_policy("mc-sf", inst)).schedule
    assert same_schedule(mcsf, simulate(inst, make_policy("mc-sf-backfill", inst, depth=1)).schedule)
    for depth in (2, 16, 1000):
        assert verify(inst, simulate(inst, make_policy("mc-sf-backfill", inst, depth=depth)).schedule).feasible


@pytest.mark.parametrize("seed", range(4))
def test_runs_change_nothing_under_load_with_arrivals(seed):
    """Slot instances with arrivals spread over fewer rounds than the work takes, so runs start with a full
    queue and arrivals land inside and behind the refused window."""
    rng = np.random.default_rng(seed)
    n, M = 120, 60
    s, o = rng.integers(1, 12, n), rng.integers(1, 40, n)
    inst = parse_instance({"name": f"load{seed}", "memory": M, "model": "slot", "requests": {
        "arrival": np.sort(rng.integers(0, 400, n)).tolist(), "prompt": s.tolist(), "output": o.tolist()}})
    for depth in (1, 3, 16):
        MCSFBackfill.default_depth = depth
        try:
            assert_runs_change_nothing(inst, "mc-sf-backfill")
        finally:
            MCSFBackfill.default_depth = 16
    policy = make_policy("mc-sf-backfill", inst, depth=3)
    promised, survived = [], []
    steady, survives = policy.steady_batches, policy.run_survives_arrival
    policy.steady_batches = lambda *a: promised.append(steady(*a)[0]) or (promised[-1], True)
    policy.run_survives_arrival = lambda i: survived.append(survives(i)) or survived[-1]
    simulate(inst, policy)
    assert max(promised) > 1 and any(survived) and not all(survived)  # the equality above tested both paths


def test_bad_depth_is_refused():
    inst = parse_instance(jaillet.instance("jaillet-model1", 0, 0))
    for bad in (0, -3, 2.5):
        with pytest.raises(InputError, match="--param depth: must be a positive integer"):
            make_policy("mc-sf-backfill", inst, depth=bad)


class PlainBackfill(MCSFBackfill):
    """The rule as written, one check (5) per scanned request, no window test and no runs."""

    def next_batch(self, t):
        from lpbench.policies.mcsf import peak_memory_at_completions
        inst, r = self.inst, self.round
        last, w, n_run = self.run_last, self.run_w, len(self.run_idx)
        admitted, taken, refused = [], [], 0
        for q, (*_, i) in enumerate(self.queue):
            cand_last, cand_w = self.with_request(last, w, i, r)
            if peak_memory_at_completions(cand_last, cand_w) > inst.memory:
                refused += 1
                if refused == self.depth:
                    break
                continue
            last, w = cand_last, cand_w
            admitted.append(i)
            taken.append(q)
        for q in reversed(taken):
            del self.queue[q]
        return self.start(admitted, last, w, n_run)

    def steady_batches(self, req, tokens, decode):
        return 0, True


@pytest.mark.parametrize("seed", range(3))
def test_fast_scan_equals_the_plain_rule(seed):
    rng = np.random.default_rng(10 + seed)
    n, M = 150, 50
    s, o = rng.integers(1, 15, n), rng.integers(1, 35, n)
    inst = parse_instance({"name": f"plain{seed}", "memory": M, "model": "slot", "requests": {
        "arrival": np.sort(rng.integers(0, 300, n)).tolist(), "prompt": s.tolist(), "output": o.tolist()}})
    for depth in (2, 5, 40):
        plain = PlainBackfill(depth=depth)
        plain.check(inst)
        assert same_schedule(simulate(inst, make_policy("mc-sf-backfill", inst, depth=depth)).schedule,
                             simulate(inst, plain).schedule)
