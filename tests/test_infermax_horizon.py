"""The batch horizon J of infermax-csp / infermax-milp (lpbench/formulations/infermax_csp.py, *Horizon J*).

Two faults found by an audit: (1) J divided by b_o + min(b_d, b_p), which is 0 on the shipped splitwise
profiles (b_o = b_p = 0), so the solve died with ZeroDivisionError (exit 3); (2) J subtracted the work W of
schedules in which every request makes O_i − 1 decode steps, but with evictions a token can come from a
re-prefill (κ_i < 0), so J cut off the optimum (reported optimal at 132 ms where a 4 ms schedule exists)."""
import json

import numpy as np
import pytest
from conftest import run

from lpbench.formulations.infermax_csp import (InferMaxCSP, batch_horizon, horizon_batch_cost, refill_kappa,
                                               valid_work)
from lpbench.errors import InputError
from lpbench.instance import parse_instance
from lpbench.policies import POLICIES
from lpbench.sim.engine import simulate
from lpbench.solve import solve_instance
from lpbench.solvers.base import SolverProfile
from lpbench.verify import verify

SPLITWISE = [f"splitwise-llama2-70b-tp{tp}-a100" for tp in (2, 4, 8)]

#: the audit's instance (scratch h003/t5): a re-prefill of any length is free, a decode step costs 10 per key
NEG_KAPPA_COST = {"form": "infermax", "a_o": 0, "b_o": 1, "a_d": 10, "b_d": 0, "s_d": 0,
                  "a_p": 0, "b_p": 0, "s_p": 0, "m_p": 0, "layers": 1}


def sw_instance(cost_model="splitwise-llama2-70b-tp2-a100"):
    return {"name": "sw", "memory": 12, "model": "batch", "cost_model": cost_model,
            "requests": [{"arrival": 0.0, "prompt": p, "output": o} for p, o in ((4, 3), (5, 2), (3, 3))]}


def neg_kappa_instance():
    return {"name": "negkappa", "memory": 100, "model": "batch", "cost_model": NEG_KAPPA_COST,
            "requests": [{"arrival": 0.0, "prompt": 10, "output": 2}, {"arrival": 0.0, "prompt": 1, "output": 2}]}


def verified_policy_schedules(inst, names=("vllm", "sarathi", "rank-i", "rank-o", "infermax-sort-hist")):
    out = []
    for name in names:
        r = simulate(inst, POLICIES.get(name)())
        v = verify(inst, r.schedule)
        assert v.feasible, (name, v.violations)
        out.append((name, float(v.metrics["makespan"]), r.schedule))
    return out


def plain_csp(inst, J, incumbent, warm=None, time_limit=30.0):
    """The CSP without cuts at a fixed horizon J (no horizon argument involved)."""
    form = InferMaxCSP(inst, incumbent_objective=incumbent, batches=J, cuts=False)
    form.build(root=False)
    res = form.solve(SolverProfile("t", "cpsat", time_limit=time_limit, threads=1), warm)
    return form, res


# -- fault 1: b_o = b_p = 0 -----------------------------------------------------------------------------

@pytest.mark.parametrize("cost_model", SPLITWISE)
def test_horizon_finite_on_splitwise_profiles(cost_model):
    """J is a finite integer (no ZeroDivisionError) and keeps every verified policy schedule."""
    inst = parse_instance(sw_instance(cost_model))
    runs = verified_policy_schedules(inst)
    best = min(ms for _, ms, _ in runs)
    J = batch_horizon(inst, best)
    assert isinstance(J, int) and int(inst.output.max()) <= J < 1000
    for _, ms, sched in runs:
        if ms <= best * (1 + 1e-12):
            assert sched.n_batches <= J


@pytest.mark.parametrize("formulation", ["infermax-csp", "infermax-milp"])
def test_splitwise_instance_solves_from_cli(capsys, write_json, formulation):
    """The audit's reproduction (scratch sw.json): exit 0 and a proven optimum, never exit 3."""
    path = write_json(sw_instance())
    # a limit for the proof, not the speed (5 s alone, 10 s beside two other processes)
    code, out, err = run(capsys, "solve", path, "--formulation", formulation, "--time-limit", "120", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["status"] == "optimal"
    assert rep["bound"] <= rep["objective"] * (1 + 1e-6)


def test_unpriced_prefill_refused_with_one_line(capsys, write_json):
    """Where nothing prices a prefill step (b_o = b_p = s_p = a_o = a_p = 0) no J can be argued. The instance
    validator already refuses such a cost model (a one-token prefill batch would take no time): exit 2 and one
    line, for both formulations; and batch_horizon itself refuses it with an InputError naming why, not a
    ZeroDivisionError (exit 3), should a cost model reach it another way."""
    cm = {"form": "infermax", "a_o": 0, "b_o": 0, "a_d": 1, "b_d": 1, "s_d": 1,
          "a_p": 0, "b_p": 0, "s_p": 0, "m_p": 0, "layers": 1}
    path = write_json(dict(sw_instance(), cost_model=cm))
    for formulation in ("infermax-csp", "infermax-milp"):
        code, out, err = run(capsys, "solve", path, "--formulation", formulation, "--time-limit", "10")
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "prefill" in err and "Traceback" not in err, err
    inst = parse_instance(sw_instance())
    for name in ("a_o", "b_o", "a_p", "b_p", "s_p"):
        setattr(inst.cost_model, name, 0.0)
    with pytest.raises(InputError, match=r"splitwise-llama2-70b-tp2-a100.*prefill"):
        batch_horizon(inst, 1.0)


# -- fault 2: negative κ (a re-prefill cheaper than a decode step) -----------------------------------------

def test_valid_work_bounds_the_evicting_optimum():
    """κ_i < 0 on the audit's instance; W_V + B(N) is below the verified 4 ms, 4-batch schedule the CSP
    finds at a large fixed J, while W alone (every request decoding O_i − 1 tokens) is 130 ms."""
    inst = parse_instance(neg_kappa_instance())
    k = vars(inst.cost_model)
    assert (refill_kappa(inst, k) < 0).all()
    form, res = plain_csp(inst, 10, 0.2)
    assert res.status == "optimal"
    sched = form.extract(res.x)
    v = verify(inst, sched)
    assert v.feasible and abs(v.metrics["makespan"] - 0.004) < 1e-12
    assert (valid_work(inst, k) + horizon_batch_cost(inst, k, sched.n_batches)) * 1e-3 <= v.metrics["makespan"] + 1e-12


@pytest.mark.parametrize("formulation", ["infermax-csp", "infermax-milp"])
def test_negative_kappa_optimum_not_cut_off(formulation):
    """The solve's optimum is the large-J optimum (4 ms: prefill one request, prefill the other and evict the
    first, refill it and evict the second, refill that -- four batches, no decode step); was 132 ms, with
    bound 132 ms, because J was 2."""
    inst = parse_instance(neg_kappa_instance())
    runs = verified_policy_schedules(inst)
    best = min(ms for _, ms, _ in runs)
    _, big = plain_csp(inst, 12, best)
    assert big.status == "optimal" and abs(big.objective - 0.004) < 1e-12
    rep = solve_instance(inst, formulation, time_limit=120)     # checks the proof, not the speed (HiGHS: 12-15 s
    assert rep["status"] == "optimal"                          # alone, 30-45 s beside two other processes)
    assert abs(rep["objective"] - big.objective) <= 1e-9
    assert rep["bound"] <= big.objective + 1e-9
    for _, ms, _ in runs:                    # the bound is below every verified schedule
        assert rep["bound"] <= ms + 1e-9
    assert batch_horizon(inst, best) >= 4    # the optimum's four batches fit


def test_horizon_keeps_every_cheaper_schedule_random():
    """Soundness of layers · (W_V + B(N)) <= makespan − t0 on verified schedules of small random instances with
    the shipped and the audit's cost models (the horizon J is then never below a schedule at least as good
    as the incumbent)."""
    rng = np.random.default_rng(3)
    models = ["infermax-llama2-7b-a100", "measured-llama2-7b-h100", *SPLITWISE, NEG_KAPPA_COST]
    for trial in range(12):
        n = int(rng.integers(2, 5))
        I = rng.integers(1, 9, n)
        O = rng.integers(1, 5, n)
        M = int(max((I + O - 1).max(), rng.integers(int(I.min()) + 1, int(I.sum()) + 5)))
        inst = parse_instance({"name": f"r{trial}", "memory": M, "model": "batch",
                               "cost_model": models[trial % len(models)],
                               "requests": [{"arrival": 0.0, "prompt": int(a), "output": int(b)}
                                            for a, b in zip(I, O)]})
        cm = inst.cost_model
        k = vars(cm)
        for name, ms, sched in verified_policy_schedules(inst):
            lower = cm.layers * 1e-3 * (valid_work(inst, k) + horizon_batch_cost(inst, k, sched.n_batches))
            assert lower <= ms * (1 + 1e-9), (trial, name)
            assert batch_horizon(inst, ms) >= sched.n_batches, (trial, name)
