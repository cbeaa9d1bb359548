"""Seed 001 Nested WAIT: blind to every request's own output length (enforced by what it is given),
segments and prefix rule, corrected M^π and θ_k of (20), verified schedules."""
import math

import numpy as np
import pytest

from lpbench.generators import fluid as gen
from lpbench.instance import Instance, parse_instance
from lpbench.policies import make_policy
from lpbench.policies.nested import BlindView, NestedWait, memory_requirement, segment_memory, theta_root
from lpbench.semantics import RequestStates
from lpbench.sim import simulate
from lpbench.verify import verify

S52 = {"memory": 3000, "cost_model": {"form": "linear", "d0": 1.0, "d1": 0.0005},
       "types": [{"prompt": 4, "output": 2, "rate": 0.2}, {"prompt": 4, "output": 4, "rate": 0.4},
                 {"prompt": 4, "output": 8, "rate": 0.8}]}


def drawn(horizon=300, seed=2):
    base = parse_instance(S52)
    return parse_instance(gen.instance(base, base.types, horizon, seed))


class Forbidden:
    """A proxy that lets through only the named attributes."""

    def __init__(self, obj, allowed):
        self._obj, self._allowed = obj, set(allowed)

    def __getattr__(self, name):
        if name not in self._allowed:
            raise AssertionError(f"nested-wait read {name!r}")
        return getattr(self._obj, name)


class Audited(NestedWait):
    name = "nested-wait-audited"

    def reset(self, inst, st):
        # the instance without requests' outputs (its batch limits and eviction rule, refused, are not theirs); no
        # simulator state
        super().reset(Forbidden(inst, {"arrival", "prompt", "memory", "types", "cost_model", "limits", "eviction"}),
                      Forbidden(st, ()))


def test_nested_wait_never_reads_a_requests_own_output_length():
    inst = drawn()
    pol = Audited()
    res = simulate(inst, pol)                       # raises AssertionError on any forbidden read
    assert verify(inst, res.schedule).feasible
    plain = simulate(inst, make_policy("nested-wait", inst))
    assert np.array_equal(plain.schedule.start, res.schedule.start)
    kept = [v for v in vars(pol).values() if isinstance(v, (Instance, RequestStates, Forbidden))]
    assert kept == [] and not any(isinstance(v, np.ndarray) and v is inst.output for v in vars(pol.view).values())


def test_nested_wait_verifies_and_runs_the_prefix_rule():
    inst = drawn()
    pol = make_policy("nested-wait", inst)
    res = simulate(inst, pol)
    ver = verify(inst, res.schedule)
    assert ver.feasible and ver.metrics["evictions"] == 0
    n = pol.thresholds
    p = np.array([1.2, 0.8]) / np.array([1.4, 1.2])          # p_k = Λ_{k+1} / Λ_k, Λ = (1.4, 1.2, 0.8)
    assert np.all(n[1:] > n[:-1] * p) and np.all(n[1:] < n[:-1]) and pol.threshold_violations == []
    # before the flush, every batch admits exactly n_1 fresh prompts (segment 1 must be ready)
    last_arrival = inst.arrival.max()
    for j in range(res.schedule.n_batches):
        if res.schedule.start[j] >= last_arrival:
            break
        r, c, _ = res.schedule.batch(j)
        fresh = np.count_nonzero(c == inst.prompt[r])
        assert fresh == n[0]


def test_corrected_memory_and_theta_root():
    # corrected (13): segment 1 = stages 0..l'_1 (l'_1 + 1 of them), segment k = l'_{k-1}+1..l'_k
    assert segment_memory(np.array([2, 4, 8]), 4).tolist() == [3 * 5.0, 2 * 7.5, 4 * 10.5]
    th = theta_root(10, 6, 0.5)
    assert 10 * math.log(0.5 + 0.5 * math.exp(th)) - 6 * th == pytest.approx(0, abs=1e-9) and th > 0
    assert th >= 8 * (6 - 10 * 0.5) / 10          # (22) with the corrected denominator n_{k-1}
    assert theta_root(10, 5, 0.5) == 0.0          # zero drift: outside Lemma 8
    view = BlindView.of(drawn())
    req = memory_requirement(view, [6, 5, 4], iterations=1000, delta=0.01)
    assert req["M_pi"] == 6 * 15 + 5 * 15 + 4 * 42 and req["term2_queue"] == 5 * (4 + 2) + 4 * (4 + 4)
    assert req["total"] > req["M_pi"] + req["term2_queue"]


def test_nested_wait_needs_types():
    inst = parse_instance({"memory": 100, "cost_model": {"form": "linear", "d0": 1, "d1": 0.01},
                           "requests": [{"arrival": 0, "prompt": 1, "output": 3}]})
    with pytest.raises(Exception, match="types block"):
        simulate(inst, make_policy("nested-wait", inst))
