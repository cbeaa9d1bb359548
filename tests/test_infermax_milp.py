"""Seed 003 CSP as a MILP (telescoped prefill attention): every policy schedule is a feasible point
with its verified makespan; the MILP optimum equals the CP-SAT CSP optimum; bad inputs are refused."""
import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.formulations import FORMULATIONS
from lpbench.generators import infermax
from lpbench.instance import parse_instance
from lpbench.policies import POLICIES, applicable, make_policy
from lpbench.sim import simulate
from lpbench.solve import solve_instance
from lpbench.verify import verify

FAMILY = [n for n, c in POLICIES.items() if "batch" in c.models]


def _schedules(inst):
    out = []
    for name in applicable(inst):
        if name in FAMILY:
            sched = simulate(inst, make_policy(name, inst)).schedule
            out.append((name, sched, verify(inst, sched).metrics["makespan"]))
    return out


def _tiny(memory, prompt, output, **extra):
    return parse_instance({"name": "tiny", "memory": memory, "model": "batch", "cost_model": "infermax-llama2-7b-a100",
                           "limits": {"token_budget": 8},
                           "requests": {"arrival": [0] * len(prompt), "prompt": prompt, "output": output}, **extra})


@pytest.mark.parametrize("make", [lambda: parse_instance(infermax.mix(p, 2, 0)) for p in infermax.PAIRS]
                         + [lambda: parse_instance(infermax.csp51(1)), lambda: parse_instance(infermax.csp51(4))],
                         ids=infermax.PAIRS + ["csp51-I1", "csp51-I4"])
def test_policy_schedules_are_milp_points_with_their_makespan(make):
    """One semantics: the point of every policy schedule (evicting ones included) satisfies every row,
    and the telescoped objective equals the verifier's makespan."""
    inst = make()
    runs = _schedules(inst)
    form = FORMULATIONS.get("infermax-milp")(inst, max(r[2] for r in runs))
    model = form.build()
    evicting = 0
    for name, sched, makespan in runs:
        x = form.warm_start(sched)
        assert x is not None, name
        assert model.max_violation(x) <= 1e-9, name
        assert model.objective_value(x) == pytest.approx(makespan, rel=1e-12), name
        evicting += verify(inst, sched).metrics["evictions"] > 0
    if inst.name.startswith("csp51-I1"):
        assert evicting > 0


def test_a_wrong_point_is_rejected():
    """The rows can fail: a schedule's point with one token count changed violates (2)/(3)."""
    inst = parse_instance(infermax.csp51(1))
    name, sched, makespan = _schedules(inst)[0]
    form = FORMULATIONS.get("infermax-milp")(inst, makespan)
    model = form.build()
    x = form.warm_start(sched)
    x[form.vars["c"][0, 0]] += 1
    assert model.max_violation(x) >= 1


CASES = {"csp51-I2-B2": lambda: parse_instance(infermax.csp51(2, B=2)),
         "csp51-I8-B2": lambda: parse_instance(infermax.csp51(8, B=2)),
         "mixed-b": lambda: _tiny(7, [4, 3, 3], [3, 3, 2])}


@pytest.mark.parametrize("case", list(CASES))
def test_milp_optimum_equals_the_csp_optimum(case):
    inst = CASES[case]()
    csp = solve_instance(inst, "infermax-csp", "cpsat", time_limit=300)
    milp = solve_instance(inst, "infermax-milp", "highs", time_limit=300)
    for rep in (csp, milp):
        assert rep["status"] == "optimal" and rep["verified"]
    assert milp["objective"] == pytest.approx(csp["objective"], rel=1e-9)
    assert milp["bound"] <= milp["objective"] * (1 + 1e-9)


def test_milp_valid_inequalities_keep_the_optimum():
    inst = CASES["csp51-I2-B2"]()
    from lpbench.solvers import BACKENDS, get_profile
    best = min(r[2] for r in _schedules(inst))
    objs = []
    for cuts in (False, True):
        form = FORMULATIONS.get("infermax-milp")(inst, best, cuts=cuts)
        model = form.build()
        res = model.reported(BACKENDS.get("highs")().solve(model, get_profile("highs", 120)))
        assert res.status == "optimal"
        assert verify(inst, form.extract(res.x)).metrics["makespan"] == pytest.approx(res.objective, rel=1e-9)
        objs.append(res.objective)
    assert objs[0] == pytest.approx(objs[1], rel=1e-9)


def test_gurobi_agrees_or_reports_licence_limit():
    pytest.importorskip("gurobipy")
    inst = CASES["csp51-I2-B2"]()
    rep = solve_instance(inst, "infermax-milp", "gurobi", time_limit=300)
    if rep["status"] == "licence_limit":
        pytest.skip("gurobipy licence does not allow this model")
    csp = solve_instance(inst, "infermax-csp", "cpsat", time_limit=300)
    assert rep["status"] == "optimal" and rep["objective"] == pytest.approx(csp["objective"], rel=1e-9)


def test_milp_refuses_what_it_cannot_model():
    data = infermax.csp51(2, B=2)
    online = dict(data, requests=dict(data["requests"], arrival=[0, 0.01]))
    with pytest.raises(InputError, match="offline"):
        FORMULATIONS.get("infermax-milp")(parse_instance(online), 1.0)
    gqa = dict(data, cost_model="infermax-llama3-70b-tp4-a100")
    with pytest.raises(InputError, match="phi"):
        FORMULATIONS.get("infermax-milp")(parse_instance(gqa), 1.0)
    with pytest.raises(InputError, match="continuous"):
        solve_instance(parse_instance(data), "infermax-milp", "cpsat")
    with pytest.raises(InputError, match="incumbent"):
        FORMULATIONS.get("infermax-milp")(parse_instance(data)).build()
