"""Seed 001 Nested WAIT's default thresholds meet every condition of Theorem 2: (12)'s first line
d0 + d1 M^π < n_1 / Λ_1, its second line n_{k+1}/n_k > p_k = Λ_{k+1}/Λ_k, Lemma 8's n_{k+1} < n_k, and (14)
(notes seed-001 §3.5, §4.3). The conditions are checked here from the paper's formulas, not through the policy's
own checker, so that the old rule n_k = ceil(n_1 Λ_k / Λ_1) fails them: on the §5.2 setup it gave (9, 9, 8, 5),
n_4/n_3 = 0.625 < p_3 = 2/3, and the boundary queue before segment 4 grew without bound."""
import math
import re
import warnings

import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.fluid import memory_work
from lpbench.generators import fluid as gen
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.policies.nested import BlindView, memory_requirement, segment_memory
from lpbench.semantics import RequestStates
from lpbench.sim import simulate
from lpbench.verify import verify

VIDUR = {"form": "linear", "d0": 0.276, "d1": 1.15e-5}   # benchmarks/bench_fluid.py's cost model and memory
C_A100 = 29_952 * 16


def fluid_instance(prompt, output, ratio, load, horizon, seed=1, memory=C_A100):
    """Types with rates in ``ratio``, scaled to d1 Σ λ a = ``load`` (as benchmarks/bench_fluid.py), and Poisson
    requests over ``horizon``."""
    a = memory_work(np.array(prompt), np.array(output))
    r = np.array(ratio, dtype=float)
    rate = r * load / (VIDUR["d1"] * float(r @ a))
    base = parse_instance({"memory": memory, "cost_model": VIDUR,
                           "types": [{"prompt": p, "output": o, "rate": float(x)}
                                     for p, o, x in zip(prompt, output, rate)]})
    return parse_instance(gen.instance(base, base.types, horizon, seed))


def s52(horizon=1500, seed=1, memory=C_A100):
    """The §5.2 setup of benchmarks/bench_fluid.py: l = 10, l' = (20, 40, 80, 160), rates 20:40:80:160, load 0.7."""
    return fluid_instance([10] * 4, [20, 40, 80, 160], [20, 40, 80, 160], 0.7, horizon, seed, memory)


def thresholds(inst, **params):
    pol = make_policy("nested-wait", inst, **params)
    pol.reset(inst, RequestStates.of(inst))
    return pol, np.asarray(pol.thresholds)


def violated(inst, n, delta=0.01):
    """Theorem 2's conditions, from the paper's formulas: the names of those ``n`` violates."""
    v = BlindView.of(inst)
    Lam = np.cumsum(v.rates[::-1])[::-1]
    l = float(v.prompt.max())
    M_pi = float(np.asarray(n) @ segment_memory(v.lengths, l))
    bad = []
    if not v.d0 + v.d1 * M_pi < n[0] / Lam[0]:
        bad.append("(12) line 1")
    for k in range(1, len(n)):
        if not n[k] * Lam[k - 1] > n[k - 1] * Lam[k] * (1 + 1e-9):   # n_{k+1}/n_k > p_k, strictly (float rates)
            bad.append(f"(12) line 2, k = {k}")
        if not n[k] < n[k - 1]:
            bad.append(f"Lemma 8, k = {k}")
    B = 1 + float(v.arrival.max()) / v.d0                           # iterations over the horizon, each >= d0
    if not memory_requirement(v, n, B, delta)["total"] <= v.memory:
        bad.append("(14)")
    return bad


def test_s52_default_thresholds_keep_n4_over_n3_above_p3():
    """Fails on the old rule, (9, 9, 8, 5): n_4/n_3 = 5/8 = 0.625 < p_3 = Λ_4/Λ_3 = 160/240."""
    _, n = thresholds(s52())
    assert n[3] / n[2] > 160 / 240


def test_s52_default_thresholds_meet_every_condition_of_theorem_2():
    inst = s52()
    _, n = thresholds(inst)
    assert violated(inst, n) == []
    assert n.tolist() == [16, 15, 13, 9]  # the least n_1 (Lemma 8 needs n_1 >= 16 at p_1 = 14/15), least n_k


CASES = {  # (prompts, outputs, rate ratios, load): 2 to 5 segments, rates rising, falling, equal, skewed
    "2 segments 1:1 (§5.1 low demand)": ([10, 10], [10, 20], [1, 1], 0.5),
    "3 segments 6:4:2 (§5.1 high demand)": ([20] * 3, [100, 200, 300], [6, 4, 2], 0.85),
    "3 segments 1:1:8": ([16] * 3, [8, 32, 64], [1, 1, 8], 0.6),
    "4 segments 8:4:2:1": ([10] * 4, [20, 40, 80, 160], [8, 4, 2, 1], 0.7),
    "4 segments 1:2:3:50": ([10] * 4, [5, 10, 20, 40], [1, 2, 3, 50], 0.6),
    "5 segments 23:11:8:7:6 (LMSYS bins 1-5)": ([60] * 5, [50, 100, 150, 200, 250], [23, 11, 8, 7, 6], 0.7),
    "5 segments equal rates": ([30] * 5, [10, 30, 60, 100, 150], [1] * 5, 0.5),
}


@pytest.mark.parametrize("case", list(CASES))
def test_default_thresholds_meet_every_condition_on_other_type_sets(case):
    inst = fluid_instance(*CASES[case], horizon=60)
    pol, n = thresholds(inst)
    assert len(n) == len(CASES[case][0]) and violated(inst, n) == []
    assert pol.threshold_violations == []
    # the least n_1: one less has no chain meeting every condition (n_1 - 1 with its own least chain)
    if n[0] > 1:
        with pytest.warns(Warning, match="violate"):
            _, less = thresholds(inst, n1=float(n[0] - 1))
        assert violated(inst, less) != []


def test_s52_boundary_queue_before_segment_4_does_not_grow():
    """Simulated 900 s: the mean boundary queue E_4 at batch starts over the last third of the arrivals is
    no larger than over the middle third (the first third fills the pipeline) and stays within 2 n_4. The old
    thresholds (9, 9, 8, 5) give 44 then 103 here."""
    inst = s52(horizon=900)
    pol = make_policy("nested-wait", inst)
    seen = []
    batch = pol.next_batch

    def record(t):
        seen.append((t, len(pol.entry[3])))
        return batch(t)

    pol.next_batch = record
    res = simulate(inst, pol)
    assert verify(inst, res.schedule).feasible
    T = float(inst.arrival.max())
    t, q = np.array(seen).T
    middle = q[(t >= T / 3) & (t < 2 * T / 3)].mean()
    last = q[(t >= 2 * T / 3) & (t < T)].mean()
    n4 = pol.thresholds[3]
    assert last <= 1.25 * middle + 1 and last <= 2 * n4, (middle, last)


def test_given_thresholds_that_violate_12_run_with_a_warning():
    from lpbench.policies.nested import ThresholdWarning

    inst = s52(horizon=300)
    pol = make_policy("nested-wait", inst, n1=9, n2=9, n3=8, n4=5)   # the old default
    with pytest.warns(ThresholdWarning, match=r"\(12\) second line: n_4/n_3 = 5/8"):
        res = simulate(inst, pol)
    assert pol.thresholds.tolist() == [9, 9, 8, 5] and verify(inst, res.schedule).feasible
    assert any(v.startswith("Lemma 8: n_2 = 9") for v in pol.threshold_violations)
    # the paper's own §5.2 ratios 15:14:12:8 sit on the boundary n_{k+1}/n_k = p_k of every line
    pol = make_policy("nested-wait", inst, n1=15, n2=14, n3=12, n4=8)
    with pytest.warns(ThresholdWarning):
        simulate(inst, pol)
    assert sum(v.startswith("(12) second line") for v in pol.threshold_violations) == 3


def test_n1_alone_takes_the_least_chain_and_warns_only_when_it_breaks_a_condition():
    inst = s52(horizon=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pol, n = thresholds(inst, n1=24)
    assert n.tolist() == [24, 23, 20, 14] and pol.threshold_violations == [] and violated(inst, n) == []
    with pytest.warns(Warning, match="Lemma 8: n_2 = 9 is not < n_1 = 9"):
        _, n = thresholds(inst, n1=9)
    assert n.tolist() == [9, 9, 8, 6]       # (12)'s second line still holds: 9/9, 8/9, 6/8 above p_k


def test_bad_threshold_params_are_refused():
    inst = s52(horizon=100)
    with pytest.raises(InputError, match="without n1"):
        make_policy("nested-wait", inst, n2=3)
    with pytest.raises(InputError, match="n1 alone or all of n1..n4"):
        thresholds(inst, n1=9, n2=8)
    with pytest.raises(InputError, match="positive integer"):
        make_policy("nested-wait", inst, n1=16, n2=15, n3=13, n4=0.5)


@pytest.mark.parametrize("memory, load, names", [
    (5_000, 0.7, "Lemma 8"),                  # the least strictly decreasing chain (16, 15, 13, 9) does not fit
    (155_000, 0.7, "meet (14)"),              # (12) and Lemma 8 fit, but not (14)'s high-probability term
    (C_A100, 0.95, "(12)'s first line"),      # near saturation no n_1 within memory waits long enough
])
def test_no_thresholds_meeting_the_conditions_is_an_input_error_naming_the_condition(memory, load, names):
    inst = fluid_instance([10] * 4, [20, 40, 80, 160], [20, 40, 80, 160], load, 100, memory=memory)
    with pytest.raises(InputError, match=re.escape(names)) as e:
        thresholds(inst)
    assert len(e.value.lines()) == 1 and "--param n1=" in str(e.value)


def test_p_k_matches_the_paper():
    """p_k = Σ_{j>k} λ_j / Σ_{j>=k} λ_j (the main text's (12)); on §5.2, (280, 240, 160) / (300, 280, 240)."""
    from lpbench.policies.nested import thinning

    p = thinning(BlindView.of(s52(horizon=50)))
    assert p == pytest.approx([14 / 15, 6 / 7, 2 / 3]) and all(0 < x < 1 for x in p)
    assert math.isclose(p[2], 160 / 240)


def test_the_cli_prints_a_threshold_warning_as_one_line(tmp_path):
    """Outside pytest's warning capture: `lpbench simulate` prints lpbench's warnings as `lpbench: warning: ...`
    (one line, no Python source location), and the run still ends with exit 0."""
    import json
    import subprocess
    import sys

    types = {"memory": 40, "cost_model": {"form": "linear", "d0": 0.4375, "d1": 0.0625},
             "types": [{"prompt": 1, "output": 1, "rate": 1}, {"prompt": 1, "output": 2, "rate": 1}]}
    inst = tmp_path / "two.json"
    inst.write_text(json.dumps(gen.instance(parse_instance(types), parse_instance(types).types, 30, seed=1)))
    done = subprocess.run([sys.executable, "-m", "lpbench.cli", "simulate", str(inst), "--policy", "nested-wait",
                           "--param", "n1=2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lpbench: warning: policy 'nested-wait': thresholds [2, ")
