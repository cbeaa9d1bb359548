"""Seed 003: every scheduler variant verifies; every policy schedule fixed into the CSP is feasible
with the same makespan (one semantics); the CSP optimum verifies and beats every policy."""
import json

import numpy as np
import pytest
from helpers import packed_schedules

from lpbench.formulations import FORMULATIONS
from lpbench.generators import infermax
from lpbench.instance import parse_instance
from lpbench.policies import POLICIES, applicable, make_policy
from lpbench.sim import simulate
from lpbench.solve import run_policies, solve_instance
from lpbench.solvers.base import SolverProfile
from lpbench.verify import verify

FAMILY = [n for n, c in POLICIES.items() if "batch" in c.models and n not in ("mc-sf", "mc-benchmark")
          and not getattr(c, "explicit_only", False)]  # seed-001 policies need a types model
PROFILE = SolverProfile("test", "cpsat", time_limit=300, threads=2)  # stops at the proof


def test_all_variants_are_registered():
    names = set(POLICIES.names())
    for base in ("vllm", "vllm-hy", "sarathi", "sarathi-pc", "sarathi-nocp", "sarathi-nohy"):
        assert base in names and base + "-ef" in names
    assert {"rank-i", "rank-o", "rank-org", "infermax-sort-hist"} <= names


@pytest.mark.parametrize("pair", infermax.PAIRS)
def test_every_policy_verifies_on_the_mixes(pair):
    inst = parse_instance(infermax.mix(pair, 16, seed=1, memory=4000))
    for name in applicable(inst):
        res = simulate(inst, make_policy(name, inst))
        ver = verify(inst, res.schedule)
        assert ver.feasible, (name, ver.violations)
        if name.endswith("-ef"):
            assert ver.metrics["evictions"] == 0, name


@pytest.mark.parametrize("pair", infermax.PAIRS)
def test_policy_schedules_fixed_into_the_csp_are_feasible_with_the_same_makespan(pair):
    """Each distinct schedule of the family (4-8 of its 26 policies' schedules per pair differ; one CSP solve
    each, about 1.4 s) fixed into the CSP: feasible, at the same makespan."""
    inst = parse_instance(infermax.mix(pair, 2, seed=0, memory=1600))
    checked = set()
    for name in FAMILY:
        sched = simulate(inst, make_policy(name, inst)).schedule
        key = json.dumps(sched.to_dict(inst), sort_keys=True, default=str)
        if key in checked:                   # the same schedule as an earlier policy's: the same CSP point
            continue
        checked.add(key)
        ver = verify(inst, sched)
        form = FORMULATIONS.get("infermax-csp")(inst, batches=sched.n_batches)
        form.build()
        assert form.fix(sched)
        res = form.solve(PROFILE)
        assert res.status == "optimal", (name, res.status)
        assert res.objective == pytest.approx(ver.metrics["makespan"], rel=1e-12), name


def test_fixed_eviction_schedule_in_the_csp():
    """csp51 with I=1 (M=4): non-EF schedulers evict; their schedules are CSP points too."""
    inst = parse_instance(infermax.csp51(1))
    for name in ("vllm", "sarathi", "rank-i", "infermax-sort-hist"):
        sched = simulate(inst, make_policy(name, inst)).schedule
        ver = verify(inst, sched)
        assert ver.metrics["evictions"] > 0, name
        form = FORMULATIONS.get("infermax-csp")(inst, batches=sched.n_batches)
        form.build()
        form.fix(sched)
        res = form.solve(PROFILE)
        assert res.status == "optimal" and res.objective == pytest.approx(ver.metrics["makespan"], rel=1e-12)


@pytest.mark.parametrize("I", [1, 2, 4])
def test_csp_optimum_verifies_and_beats_every_policy(I):
    inst = parse_instance(infermax.csp51(I))
    rep = solve_instance(inst, "infermax-csp", "cpsat", time_limit=300)  # checks the proof, not the speed
    assert rep["status"] == "optimal" and rep["verified"]
    for name, r in rep["ratios"].items():
        assert r["objective"] >= rep["objective"] * (1 - 1e-12), name
        assert r["lower"] == r["upper"] >= 1
    best_ef = min(r["objective"] for n, r in rep["ratios"].items() if n.endswith("-ef"))
    assert rep["objective"] < best_ef  # with short inputs, evicting beats every eviction-free schedule


def test_generation_capacities_match_brute_force():
    from itertools import combinations

    from lpbench.formulations.infermax_csp import generation_capacities
    rng = np.random.default_rng(7)
    for _ in range(200):
        I = rng.integers(1, 12, size=rng.integers(1, 6))
        M = int(rng.integers(1, 40))
        sets = [s for k in range(len(I) + 1) for s in combinations(range(len(I)), k)]
        Kg = max(len(s) for s in sets if sum(I[list(s)]) <= M)
        Kd = max(len(s) for s in sets if sum(I[list(s)] + 1) <= M)
        Kgd = max([len(s) for s in sets for d in s if sum(I[list(s)]) + 1 <= M] or [1])
        assert generation_capacities(I, M) == (Kg, min(Kgd, Kg), Kd), (I.tolist(), M)


def _tiny(memory, prompt, output):
    """Heterogeneous prompts whose optimum evicts once; the first has Kg = 2, Kgd = Kd = 1."""
    return lambda: parse_instance({"name": "tiny", "memory": memory, "model": "batch",
                                   "cost_model": "infermax-llama2-7b-a100", "limits": {"token_budget": 8},
                                   "requests": {"arrival": [0] * len(prompt), "prompt": prompt, "output": output}})


@pytest.mark.parametrize("make", [lambda: parse_instance(infermax.csp51(1)), lambda: parse_instance(infermax.csp51(2, B=2)),
                                  lambda: parse_instance(infermax.csp51(8, B=2)),
                                  _tiny(7, [4, 4, 3], [3, 2, 3]), _tiny(7, [4, 3, 3], [3, 3, 2])],
                         ids=["csp51-I1", "csp51-I2-B2", "csp51-I8-B2", "mixed-a", "mixed-b"])
def test_valid_inequalities_keep_the_optimum(make):
    """(V1)-(V3) are valid: the plain model and the cut model have the same optimum."""
    inst = make()
    best = min(verify(inst, simulate(inst, make_policy(n, inst)).schedule).metrics["makespan"]
               for n in applicable(inst) if n in FAMILY)
    objs = []
    for cuts in (False, True):
        form = FORMULATIONS.get("infermax-csp")(inst, best, cuts=cuts)
        form.build()
        res = form.solve(PROFILE)
        assert res.status == "optimal"
        assert verify(inst, form.extract(res.x)).metrics["makespan"] == pytest.approx(res.objective, rel=1e-12)
        objs.append(res.objective)
    assert objs[0] == pytest.approx(objs[1], rel=1e-12)
    assert form.root_bound() <= objs[1] * (1 + 1e-12)  # (V12)-(V14) below the proven optimum
    assert objs[1] <= best * (1 + 1e-12)


def _random_batch_instance(rng, n):
    return parse_instance({"name": "rand", "memory": int(rng.integers(12, 40)), "model": "batch",
                           "cost_model": "infermax-llama2-7b-a100", "limits": {"token_budget": int(rng.integers(8, 20))},
                           "requests": {"arrival": [0] * n, "prompt": rng.integers(1, 6, n).tolist(),
                                        "output": rng.integers(1, 5, n).tolist()}})


def test_new_cuts_hold_on_every_verified_policy_schedule():
    """(V6)-(V10) on random small instances: the batches, prefill batches, the KV held after the
    generating batches, the keys read by decode steps and the makespan of every verified policy
    schedule are at least the bounds."""
    from lpbench.formulations.infermax_csp import decode_keys, memory_area, min_batches, unavoidable_work
    from lpbench.semantics import RequestStates

    rng = np.random.default_rng(3)
    for _ in range(12):
        inst = _random_batch_instance(rng, int(rng.integers(2, 6)))
        for name in applicable(inst):
            if name not in FAMILY:
                continue
            sched = simulate(inst, make_policy(name, inst)).schedule
            assert verify(inst, sched).feasible
            assert sched.n_batches >= min_batches(inst), name
            st = RequestStates(inst.prompt, inst.output, inst.model)
            area, keys, decodes = np.zeros(inst.n), np.zeros(inst.n), np.zeros(inst.n, dtype=int)
            n_dec = n_pre = 0
            for j in range(sched.n_batches):
                req, tok, ev = sched.batch(j)
                st.evict(ev)
                dec = st.is_decode(req)
                n_dec, n_pre = n_dec + dec.any(), n_pre + (~dec).any()
                keys[req[dec]] += st.m[req[dec]] + 1
                decodes[req[dec]] += 1
                gen, fin = st.process(req, tok)
                area[req[gen]] += st.m[req[gen]]
                st.release(req[fin])
            assert n_pre >= -(-int(inst.prompt.sum()) // inst.limits.token_budget), name
            cm = inst.cost_model
            v10 = cm.layers * 1e-3 * (unavoidable_work(inst, vars(cm)) + cm.b_o * sched.n_batches
                                      + cm.b_d * n_dec + cm.b_p * n_pre)
            assert verify(inst, sched).metrics["makespan"] >= v10 * (1 - 1e-12), name
            for i in range(inst.n):
                I, O = int(inst.prompt[i]), int(inst.output[i])
                assert area[i] >= memory_area(I, O), name
                assert keys[i] >= decode_keys(I, decodes[i]), name
                assert keys[i] >= decode_keys(I, O - 1) - (I + O - 1) * (O - 1 - decodes[i]), name


def test_batch_count_bound_is_below_every_verified_schedule():
    """(V12)-(V14) on random small instances, memory binding (evictions) or not: the makespan of every
    verified policy schedule and of every packed schedule is at least the closed-form bound."""
    rng = np.random.default_rng(11)
    packed = 0
    for trial in range(16):
        inst = _random_batch_instance(rng, int(rng.integers(2, 7)))
        if trial % 2:  # memory that never binds: the packed schedules apply
            inst = parse_instance({"name": "rand", "memory": 1000, "model": "batch", "cost_model": "infermax-llama2-7b-a100",
                                   "limits": {"token_budget": int(inst.limits.token_budget)},
                                   "requests": {"arrival": [0] * inst.n, "prompt": inst.prompt.tolist(),
                                                "output": inst.output.tolist()}})
        bound = FORMULATIONS.get("infermax-csp")(inst, 1e9).root_bound()
        schedules = [simulate(inst, make_policy(n, inst)).schedule for n in applicable(inst) if n in FAMILY]
        variants = packed_schedules(inst)
        schedules += variants
        packed += len(variants)
        for sched in schedules:
            ver = verify(inst, sched)
            assert ver.feasible, ver.violations
            assert ver.metrics["makespan"] >= bound * (1 - 1e-12)
    assert packed > 0


def test_batch_count_bound_is_below_the_proven_optimum_of_the_plain_model():
    """(V12)-(V14) against CP-SAT's proven optimum of the model without any cut, on 40 random tiny
    instances with tight token budgets or memory (where (V14) counts), evictions included."""
    rng = np.random.default_rng(5)
    profile = SolverProfile("t", "cpsat", time_limit=20, threads=1)
    proven = tight = 0
    for trial in range(40):
        n = int(rng.integers(2, 4))
        prompt, output = rng.integers(1, 5, n), rng.integers(1, 4, n)
        # even trials: tight token budgets; odd ones: memory below the budget (the M caps of (V14))
        memory, budget = (int(rng.integers(6, 30)), int(rng.integers(2, 7))) if trial % 2 == 0 else \
            (int(max(prompt + output - 1) + rng.integers(0, 6)), int(rng.integers(6, 30)))
        inst = parse_instance({"name": "r", "memory": memory, "model": "batch",
                               "cost_model": "infermax-llama2-7b-a100", "limits": {"token_budget": budget},
                               "requests": {"arrival": [0] * n, "prompt": prompt.tolist(), "output": output.tolist()}})
        runs = run_policies(inst, None, "makespan", skipped={})  # (policies that cannot serve it are skipped)
        ub = max(r.objective for r in runs)
        form = FORMULATIONS.get("infermax-csp")(inst, ub, cuts=False)
        form.build()
        res = form.solve(profile)
        if res.status != "optimal":
            continue
        bound = FORMULATIONS.get("infermax-csp")(inst, ub).root_bound()
        assert bound <= res.objective * (1 + 1e-12)
        proven += 1
        tight += bound >= res.objective * (1 - 1e-12)
    assert proven >= 30 and tight >= 1  # the bound is the optimum on some of them


def test_packed_incumbent_proves_a_long_output_mix_at_the_root():
    """SILO+LISO at B = 32: no policy reaches (V12)-(V14) (the best, slai, uses 1026 batches); the
    packed schedule (1024 batches) does, so the CSP proves it optimal without building the model."""
    inst = parse_instance(infermax.mix("SILO+LISO", 32))
    rep = solve_instance(inst, "infermax-csp", "cpsat", time_limit=60)
    assert rep["status"] == "optimal" and rep["verified"] and "proven at the root" in rep["message"]
    assert rep["incumbent_search"]["name"].startswith("packed")
    assert rep["objective"] < min(r["objective"] for r in rep["ratios"].values()) * (1 - 1e-4)
    assert rep["_schedule"].n_batches == 1024


def test_packed_schedules_need_memory_that_does_not_bind():
    from lpbench.heuristics.infermax_pack import best_packed_schedule

    assert best_packed_schedule(parse_instance(infermax.uniform(64, 16, 8, memory=320))) is None


def test_warm_start_is_a_complete_feasible_hint():
    """The best policy schedule becomes a hint of every variable (identical requests relabelled to
    meet the symmetry break): CP-SAT fixed to the hint finds it, with the policy's makespan."""
    inst = parse_instance(infermax.uniform(4, 3, 5, memory=14))
    runs = [(verify(inst, s).metrics["makespan"], s) for s in
            (simulate(inst, make_policy(n, inst)).schedule for n in applicable(inst) if n in FAMILY)]
    for makespan, sched in runs:
        form = FORMULATIONS.get("infermax-csp")(inst, max(r[0] for r in runs))
        form.build()
        assert form.complete_hint(sched)
        assert len(form.cp.Proto().solution_hint.vars) == len(form.cp.Proto().variables)
        res = form.solve(SolverProfile("fixed", "cpsat", time_limit=30, threads=1,
                                       options={"fix_variables_to_their_hinted_value": True}))
        assert res.status == "optimal" and res.objective == pytest.approx(makespan, rel=1e-12)


@pytest.mark.parametrize("pair, B", [("SISO+LISO", 4), ("SILO+LISO", 3)])
def test_root_proof_agrees_with_the_cp_sat_proof(pair, B):
    """Where the best policy schedule reaches (V12), the CSP returns it unbuilt as optimal; building
    the model anyway, CP-SAT proves the same optimum. (SILO+LISO with B = 3 requests: CP-SAT's proof takes
    9.5 s there, 32.6 s at B = 4; the root proof holds at both.)"""
    rep = solve_instance(parse_instance(infermax.mix(pair, B)), "infermax-csp", "cpsat", time_limit=300)
    assert rep["status"] == "optimal" and rep["verified"] and "proven at the root" in rep["message"]
    inst = parse_instance(infermax.mix(pair, B))
    form = FORMULATIONS.get("infermax-csp")(inst, rep["best_known"])
    form.build(root=False)
    res = form.solve(PROFILE)
    # CP-SAT stops within the profile's relative gap (1e-6); nothing it finds beats the root proof
    assert res.status == "optimal" and res.objective == pytest.approx(rep["objective"], rel=PROFILE.rel_gap)
    assert res.objective >= rep["objective"] * (1 - 1e-12) and res.bound <= rep["objective"] * (1 + 1e-12)


def test_csp_proves_i64_where_eviction_is_avoided():
    """§5.1 at I = 64 (M = 2I): the optimum is proven (this needs (V1)-(V3); the time limit is generous
    so the test checks the proof, not the speed) and it evicts nothing, as the paper reports."""
    inst = parse_instance(infermax.csp51(64))
    rep = solve_instance(inst, "infermax-csp", "cpsat", time_limit=300)
    assert rep["status"] == "optimal" and rep["verified"]
    assert verify(inst, rep["_schedule"]).metrics["evictions"] == 0
    best_ef = min(r["objective"] for n, r in rep["ratios"].items() if n.endswith("-ef"))
    assert rep["objective"] == pytest.approx(best_ef, rel=1e-12)


def test_csp_rejects_other_cost_models():
    from lpbench.errors import InputError

    inst = parse_instance({"memory": 100, "cost_model": {"form": "linear", "d0": 1, "d1": 0},
                           "requests": [{"arrival": 0, "prompt": 2, "output": 2}]})
    with pytest.raises(InputError, match="infermax-csp prices batches with the 'infermax' cost model"):
        FORMULATIONS.get("infermax-csp")(inst, incumbent_objective=1.0)


def test_generators():
    d = infermax.csp51(64)
    assert d["memory"] == 128 and d["requests"]["output"] == [4] * 4
    assert infermax.csp51(1)["memory"] == 4  # max(2I, I+O-1) = max(2, 4)
    m = infermax.mix("LILO+SISO", 9, seed=5)
    p, o = np.array(m["requests"]["prompt"]), np.array(m["requests"]["output"])
    assert set(p.tolist()) <= {8, 16, 512, 1024} and (p >= 512).sum() == 5 and ((p >= 512) == (o >= 512)).all()
    assert infermax.mix("LILO+SISO", 9, seed=5) == m
    u = infermax.uniform(64, 32, 8)
    assert u["requests"]["prompt"] == [64] * 8 and u["limits"]["token_budget"] == 4096
