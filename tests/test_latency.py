"""Seed 004: the latency IP against brute force, backends against each other, every bound against
the optimum, policies against the optimum, and MC-SF schedules as feasible points of the IP."""
import numpy as np
import pytest

from lpbench.formulations import FORMULATIONS
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.solve import solve_instance
from lpbench.verify import verify


def slot_instance(seed, n, max_o=4, max_s=3, max_a=3, memory=None):
    rng = np.random.default_rng(seed)
    s = rng.integers(1, max_s + 1, n)
    o = rng.integers(1, max_o + 1, n)
    memory = memory or int((s + o).max() + rng.integers(0, 6))
    return parse_instance({"memory": memory, "requests": {"arrival": rng.integers(0, max_a + 1, n).tolist(),
                                                          "prompt": s.tolist(), "output": o.tolist()}})


def brute_force(inst, weights=None) -> int:
    """Independent of the IP code: DFS over start times with the paper's memory profile
    s_i + (t - k) at t = k+1..k+o_i (seed 004 §2), pruned by the incumbent. With ``weights`` (positive integers):
    the least Σ_i weights_i·(C_i − a_i)."""
    a = inst.arrival.astype(int)
    s, o, M = inst.prompt.astype(int), inst.output.astype(int), inst.memory
    w = np.ones(inst.n, dtype=int) if weights is None else np.asarray(weights, dtype=int)
    T = int(a.max() + o.sum())
    mem = np.zeros(T + 2, dtype=int)
    best = [10**9]

    def rec(i, cost):
        if cost + int((w * o)[i:].sum()) >= best[0]:
            return
        if i == inst.n:
            best[0] = cost
            return
        for k in range(a[i], T - o[i] + 1):
            prof = s[i] + np.arange(1, o[i] + 1)
            window = mem[k + 1:k + o[i] + 1]
            if np.all(window + prof <= M):
                window += prof
                rec(i + 1, cost + int(w[i]) * (k + o[i] - a[i]))
                window -= prof

    rec(0, 0)
    return best[0]


def solve(inst, formulation, backend, **kw):
    return solve_instance(inst, formulation, backend, time_limit=30, **kw)


@pytest.mark.parametrize("seed", range(8))
def test_ip_optimum_equals_brute_force(seed):
    inst = slot_instance(seed, n=4 + seed % 2)
    opt = brute_force(inst)
    for formulation, backend in (("latency-ip", "highs"), ("latency-ip", "cpsat"), ("latency-cp", "cpsat")):
        rep = solve(inst, formulation, backend)
        assert rep["status"] == "optimal" and rep["verified"], (formulation, backend, rep)
        assert rep["objective"] == opt, (formulation, backend)


@pytest.mark.parametrize("seed", range(6))
def test_backends_agree_up_to_10_requests_and_bounds_order(seed):
    inst = slot_instance(100 + seed, n=10, max_o=5, max_a=4)
    highs = solve(inst, "latency-ip", "highs")
    cpsat = solve(inst, "latency-ip", "cpsat")
    cp = solve(inst, "latency-cp", "cpsat")
    for rep in (highs, cpsat, cp):
        assert rep["status"] == "optimal" and rep["verified"]
    opt = highs["objective"]
    assert cpsat["objective"] == opt == cp["objective"]
    for f in ("latency-lp", "volume-lp", "volume-bound"):
        bound = solve(inst, f, "highs")
        assert bound["status"] == "optimal" and bound["objective"] <= opt + 1e-6, f
        assert bound["objective"] >= inst.output.sum() - 1e-6 or f == "latency-lp"
    for name, r in highs["ratios"].items():  # every policy is at least the optimum
        assert r["objective"] >= opt and r["lower"] == r["upper"] >= 1


def test_gurobi_agrees_or_reports_licence_limit():
    pytest.importorskip("gurobipy")
    inst = slot_instance(3, n=5)
    rep = solve(inst, "latency-ip", "gurobi")
    if rep["status"] == "licence_limit":
        pytest.skip("gurobipy licence does not allow even this model")
    assert rep["status"] == "optimal" and rep["objective"] == brute_force(inst)
    big = parse_instance(jaillet.instance("jaillet-model1", 0, 0))
    rep = solve(big, "latency-ip", "gurobi")
    assert rep["status"] in ("licence_limit", "optimal", "time_limit")
    if rep["status"] == "licence_limit":
        # no solver result: the report is the best verified schedule (never null) beside the certified bound
        assert "size-limited licence" in rep["message"] and rep["objective_source"] != "solver"
        assert rep["verified"] and rep["objective"] == rep["best_known"] and rep["bound"] <= rep["objective"]
        r = rep["ratios"]["mc-sf"]
        assert r["lower"] == pytest.approx(r["objective"] / rep["objective"])
        assert r["upper"] == pytest.approx(r["objective"] / rep["bound"])


def test_pyomo_backend_agrees():
    inst = slot_instance(5, n=5)
    rep = solve(inst, "latency-ip", "pyomo-highs")
    assert rep["status"] == "optimal" and rep["objective"] == brute_force(inst)


@pytest.mark.parametrize("model", ["jaillet-model1", "jaillet-model2"])
@pytest.mark.parametrize("k", range(3))
@pytest.mark.parametrize("policy", ["mc-sf", "mc-benchmark"])
def test_policy_schedule_is_a_feasible_ip_point_with_the_same_objective(model, k, policy):
    inst = parse_instance(jaillet.instance(model, 7, k))
    res = simulate(inst, make_policy(policy, inst))
    ver = verify(inst, res.schedule)
    assert ver.feasible
    form = FORMULATIONS.get("latency-ip")(inst, incumbent_objective=ver.metrics["total_latency"])
    lp = form.build()
    x = form.warm_start(res.schedule)
    assert x is not None and lp.max_violation(x) == 0
    assert lp.objective_value(x) == ver.metrics["total_latency"]
    # and back: the schedule extracted from that point is the same schedule
    again = verify(inst, form.extract(x))
    assert again.metrics["total_latency"] == ver.metrics["total_latency"]


@pytest.mark.parametrize("s, o, n, M", [(2, 3, 12, 12), (1, 4, 20, 10), (3, 2, 30, 20), (1, 1, 25, 4)])
def test_theorem_4_3_equal_requests_at_time_0(s, o, n, M):
    """Equal (s, o), all at 0, s + o <= M/2: MC-SF <= 4 OPT, and TEL <= o(s+o)n^2/M + 5on/8 (App. B.3)."""
    assert s + o <= M / 2
    inst = parse_instance({"memory": M, "requests": {"arrival": [0] * n, "prompt": [s] * n, "output": [o] * n}})
    mcsf = verify(inst, simulate(inst, make_policy("mc-sf", inst)).schedule).metrics["total_latency"]
    # OPT >= every certified bound, so MC-SF <= 4 * bound proves MC-SF <= 4 * OPT; otherwise solve exactly
    bound = max(solve(inst, f, "highs", policies=["mc-sf"])["objective"] for f in ("latency-lp", "volume-bound"))
    if mcsf > 4 * bound:
        rep = solve(inst, "latency-cp", "cpsat", policies=["mc-sf"])
        assert rep["status"] == "optimal"
        bound = rep["objective"]
    assert mcsf <= 4 * bound
    assert mcsf <= o * (s + o) * n**2 / M + 5 * o * n / 8


def test_reported_bound_is_the_better_of_solver_and_volume_bound():
    inst = parse_instance(jaillet.instance("jaillet-model1", 0, 1))
    rep = solve_instance(inst, "latency-ip", "highs", time_limit=1, policies=["mc-sf"])
    vb = solve_instance(inst, "volume-bound", "highs", policies=["mc-sf"])["objective"]
    assert rep["bound"] >= vb and rep["bound_source"] in ("highs", "volume-bound", "chain-bound", "lagrange-bound")
    assert rep["bound"] <= rep["best_known"]


def test_solve_reports_certified_interval_when_not_proven():
    inst = parse_instance(jaillet.instance("jaillet-model1", 0, 1))
    rep = solve_instance(inst, "latency-ip", "highs", time_limit=2, policies=["mc-sf"])
    assert rep["status"] in ("time_limit", "optimal")
    r = rep["ratios"]["mc-sf"]
    assert r["lower"] >= 1
    if rep["status"] != "optimal":
        assert rep["bound"] is None or r["upper"] >= r["lower"]
