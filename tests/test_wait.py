"""Seed 001: WAIT and FCFS on the shared simulator, the threshold LP, throughput measurement."""
import json
import subprocess
import sys

import numpy as np
import pytest

from lpbench.fluid import equilibrium, memory_work
from lpbench.formulations.wait_thresholds import _solve, threshold_model
from lpbench.generators import fluid as gen
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.semantics import RequestStates
from lpbench.sim import simulate
from lpbench.throughput import measure
from lpbench.verify import verify

EX2 = {"memory": 12, "cost_model": {"form": "linear", "d0": 0.25, "d1": 0.0625},
       "types": [{"prompt": 1, "output": 1, "rate": 4}]}
PROP3 = {"memory": 9, "cost_model": {"form": "linear", "d0": 0.4375, "d1": 0.0625},
         "types": [{"prompt": 1, "output": 1, "rate": 1}, {"prompt": 1, "output": 2, "rate": 1}]}


def run(inst, policy, **params):
    res = simulate(inst, make_policy(policy, inst, **params))
    ver = verify(inst, res.schedule)
    assert ver.feasible, ver.violations
    return res.schedule, ver


def memory_after_each_batch(inst, sched):
    st = RequestStates(inst.prompt, inst.output, inst.model)
    out = []
    for j in range(sched.n_batches):
        r, c, e = sched.batch(j)
        if len(e):
            st.evict(e)
        _, fin = st.process(r, c)
        out.append(st.kv_total)
        st.release(r[fin])
    return np.array(out)


@pytest.mark.parametrize("data", [EX2, PROP3], ids=["example2", "prop3"])
def test_wait_at_equilibrium_thresholds_with_deterministic_arrivals_measures_m_star_and_theta_star(data):
    """n*_j arrivals of each type at every multiple of ΔT*: every steady-state batch holds exactly M*,
    lasts exactly ΔT*, and the window throughput is exactly Θ* (fluid formulas == simulator)."""
    base = parse_instance(data)
    eq = equilibrium(base.types, base.cost_model.d0, base.cost_model.d1, base.memory)
    N = 60
    arrival, prompt, output = [], [], []
    for k in range(N):
        for j in range(base.types.m):
            n_j = int(eq.n_star[j])
            arrival += [k * eq.dT_star] * n_j
            prompt += [int(base.types.prompt[j])] * n_j
            output += [int(base.types.output[j]) + 1] * n_j
    inst = parse_instance({**data, "requests": {"arrival": arrival, "prompt": prompt, "output": output}})
    sched, ver = run(inst, "wait")
    assert ver.metrics["peak_memory"] == eq.M_star and ver.metrics["evictions"] == 0
    warm = int(base.types.output.max())                  # batches before every stage is populated
    steady = slice(warm, N - 1)
    assert np.all(memory_after_each_batch(inst, sched)[steady] == eq.M_star)
    assert np.all(np.diff(sched.start)[steady] == eq.dT_star)
    m = measure(inst, ver, horizon=(N - 1) * eq.dT_star, warmup=warm * eq.dT_star)
    assert m["throughput"] == eq.throughput_star and m["ratio"] == 1.0


def test_example2_wait_keeps_98_percent_of_theta_star_and_fcfs_falls_short():
    base = parse_instance(EX2)
    inst = parse_instance(gen.instance(base, base.types, 10_000, seed=1))
    _, ver_w = run(inst, "wait")
    _, ver_f = run(inst, "fcfs")
    wait, fcfs = measure(inst, ver_w), measure(inst, ver_f)
    assert ver_w.metrics["batches"] >= 10_000
    assert wait["ratio"] >= 0.98 and wait["throughput"] >= 0.98 * 4
    assert fcfs["throughput"] < wait["throughput"] and fcfs["evictions"] > 0 and wait["evictions"] == 0


def test_threshold_polytope_empty_iff_memory_below_m_star_lp_point_is_n_star_integer_points_satisfy_11_19():
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(40):
        m = int(rng.integers(1, 4))
        data = {"memory": 10_000, "cost_model": {"form": "linear", "d0": 1.0, "d1": 0.002},
                "types": [{"prompt": int(rng.integers(1, 10)), "output": int(rng.integers(1, 12)),
                           "rate": float(rng.uniform(0.2, 2))} for _ in range(m)]}
        t = parse_instance(data).types
        a = memory_work(t.prompt, t.output)
        if 0.002 * (t.rate * a).sum() >= 0.9:
            continue
        eq = equilibrium(t, 1.0, 0.002, 10_000)
        assert _solve(threshold_model(t, 1.0, 0.002, eq.M_star * 0.99)).status == "infeasible"
        for C in (eq.M_star * (1 + 1e-9), eq.M_star * 3):  # the least-M^pi point is n* for every C >= M*
            at = _solve(threshold_model(t, 1.0, 0.002, C))
            assert at.status == "optimal" and at.x[:m] == pytest.approx(eq.n_star, rel=1e-5, abs=1e-6)
        C = eq.M_star * 2 + a.sum()
        res = _solve(threshold_model(t, 1.0, 0.002, C, integer=True))
        assert res.status == "optimal"
        n = np.rint(res.x[:m])
        dT = 1.0 + 0.002 * (a @ n)
        assert np.all(t.rate * dT <= n + 1e-9) and a @ n <= C + 1e-9 and np.all(n >= 1)
        checked += 1
    assert checked >= 10


def test_wait_never_evicts_and_stays_within_m_pi_on_multi_type_poisson():
    data = {"memory": 400, "cost_model": {"form": "linear", "d0": 1.0, "d1": 0.01},
            "types": [{"prompt": 5, "output": 3, "rate": 0.8}, {"prompt": 2, "output": 9, "rate": 0.4},
                      {"prompt": 8, "output": 1, "rate": 1.1}]}
    base = parse_instance(data)
    inst = parse_instance(gen.instance(base, base.types, 400, seed=3))
    pol = make_policy("wait", inst)
    res = simulate(inst, pol)
    ver = verify(inst, res.schedule)
    assert ver.feasible and ver.metrics["evictions"] == 0
    M_pi = float(pol.thresholds @ memory_work(base.types.prompt, base.types.output))
    assert ver.metrics["peak_memory"] <= M_pi <= inst.memory
    for B in (4, 20):  # the practical rule's schedules verify too
        run(inst, "wait", B=B)
    _, ver_f = run(inst, "fcfs")
    assert measure(inst, ver_f)["completed"] > 0


def test_cli_throughput_and_generate_fluid(tmp_path):
    src = tmp_path / "types.json"
    src.write_text(json.dumps(EX2))
    cli = [sys.executable, "-m", "lpbench.cli"]
    r = subprocess.run(cli + ["generate", "fluid", "--types", str(src), "--horizon", "200", "--seed", "4",
                              "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip()
    again = subprocess.run(cli + ["generate", "fluid", "--types", str(src), "--horizon", "200", "--seed", "4",
                                  "--out", str(tmp_path)], capture_output=True, text=True)
    assert again.returncode == 2 and "already exists" in again.stderr
    r = subprocess.run(cli + ["throughput", path, "--policy", "wait", "--json"], capture_output=True, text=True)
    rep = json.loads(r.stdout)
    assert rep["verified"] and rep["throughput_bound"] == 4.0 and 0.8 < rep["ratio"] <= 1.0 + 1e-9
    sched = tmp_path / "s.json"
    subprocess.run(cli + ["simulate", path, "--policy", "fcfs", "--out", str(sched)], check=True, capture_output=True)
    assert subprocess.run(cli + ["verify", path, str(sched)], capture_output=True).returncode == 0


def test_derived_types_bin_output_lengths():
    inst = parse_instance({"memory": 2000, "cost_model": {"form": "linear", "d0": 1.0, "d1": 0.001},
                           "requests": {"arrival": [0, 1, 2, 3, 10], "prompt": [10, 20, 30, 40, 50],
                                        "output": [2, 40, 60, 700, 51]}})
    t = gen.derive_types(inst)
    # l' = 1, 39, 59, 699, 50 -> bins 1, 1, 2, 10 (capped), 1
    assert t.output.tolist() == [30, 59, 699] and t.prompt.tolist() == [27, 30, 40]
    assert t.rate.tolist() == [0.3, 0.1, 0.1]


@pytest.mark.parametrize("limits", [{"token_budget": 4}, {"prefill_budget": 2}, {"max_batch_requests": 2},
                                    {"token_budget": 3, "prefill_budget": 2, "max_batch_requests": 3}])
def test_every_batch_policy_keeps_the_limits_or_refuses_them(limits):
    """Every batch-model policy, those run only when named included (``fcfs`` gave batches over token_budget on
    instances/li-llama3-70b-b512.json, and WAIT too, both reported as infeasible schedules): on seed 001's Prop 3
    workload with batch limits, the schedule verifies, or the policy refuses the instance (exit 2)."""
    from lpbench.errors import InputError, PolicyError
    from lpbench.policies import POLICIES

    base = parse_instance(PROP3)
    inst = parse_instance({**gen.instance(base, base.types, 40.0, 3), "limits": limits})
    kept = []
    for name, cls in POLICIES.items():
        if "batch" not in cls.models:
            continue
        try:
            res = simulate(inst, make_policy(name, inst))
        except (InputError, PolicyError):
            continue
        ver = verify(inst, res.schedule)
        assert ver.feasible, (name, ver.violations[:1])
        kept.append(name)
    assert len(kept) >= 15     # most policies run here: the test is not passing by refusals
    assert ("fcfs" in kept) == ("prefill_budget" not in limits)     # a refill of I + O - 1 = 3 exceeds 2


def test_wait_slack_gives_theorem_1_strict_slack_that_least_memory_thresholds_lack():
    """Example 2 with C = 20: the least-M^pi integer point is n* = 4 with zero slack in (11); --param slack=0.1
    asks n/4 − (1/4 + 3n/16) >= 0.1, so n >= 5.6: n = 6 (M^pi = 18 <= 20). At C = M* = 12 no slack is possible."""
    from lpbench.errors import InputError
    from lpbench.formulations.wait_thresholds import min_slack

    base = parse_instance({**EX2, "memory": 20})
    inst = parse_instance(gen.instance(base, base.types, 200, seed=1))
    for slack, expect in ((0.0, 4), (0.1, 6)):
        policy = make_policy("wait", inst, slack=slack)
        simulate(inst, policy)
        assert policy.thresholds.tolist() == [expect]
        assert min_slack(base.types, 0.25, 0.0625, policy.thresholds) == pytest.approx(0.0625 * expect - 0.25)
    _, ver = run(inst, "wait", slack=0.1)
    assert ver.metrics["evictions"] == 0
    tight = parse_instance(gen.instance(parse_instance(EX2), parse_instance(EX2).types, 50, seed=1))
    with pytest.raises(InputError, match="time slack 0.1"):
        simulate(tight, make_policy("wait", tight, slack=0.1))
    with pytest.raises(InputError, match="--param slack"):
        make_policy("wait", tight, slack=0.1, B=8)


def test_integer_thresholds_in_a_solve_take_what_is_left_of_its_time_limit(monkeypatch):
    """The integer point reported by ``wait-thresholds`` is found by HiGHS (the report says so) within what the
    solve's time limit leaves, at least INTEGER_MIN_SECONDS and at most INTEGER_SECONDS; before, a fixed 10 s."""
    import time

    from lpbench.formulations import wait_thresholds as wt
    from lpbench.solve import solve_instance

    limits = []
    real = wt._solve

    def spy(lp, time_limit=wt.INTEGER_SECONDS):
        if lp.is_mip():
            limits.append(time_limit)
        return real(lp, time_limit=time_limit)

    monkeypatch.setattr(wt, "_solve", spy)
    inst = parse_instance(EX2)
    rep = solve_instance(inst, "wait-thresholds", "highs", time_limit=3)
    integer = rep["thresholds"]["integer"]
    assert integer["status"] == "optimal" and integer["solver"] == "highs" and integer["n"] == [4]
    assert len(limits) == 1 and 2.0 < limits[0] <= 3.0, limits
    form = wt.WaitThresholds(inst)
    for deadline, expect in ((None, wt.INTEGER_SECONDS), (time.perf_counter() - 5, wt.INTEGER_MIN_SECONDS),
                             (time.perf_counter() + 1e4, wt.INTEGER_SECONDS)):
        form.build_deadline = deadline
        limits.clear()
        form.report(real(form.build()))
        assert limits == [pytest.approx(expect)], (deadline, limits)
