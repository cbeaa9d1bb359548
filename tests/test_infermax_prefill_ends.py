"""(V15) of the InferMax CSP (lpbench/formulations/infermax_csp.py): prefill ends that force an
eviction where memory binds. The lemma's counts on every verified schedule, the bound below every
verified schedule and below the proven optimum of the model without cuts, and the root proof it
gives on the memory-binding uniform family at B = 32 (issue 13)."""
from itertools import combinations

import numpy as np
import pytest
from helpers import packed_schedules

from lpbench.formulations import FORMULATIONS
from lpbench.formulations.infermax_csp import (batch_count_bound, generation_capacities, prefill_batches_by_ends,
                                               prefill_end_capacity)
from lpbench.generators import infermax
from lpbench.instance import parse_instance
from lpbench.policies import POLICIES, applicable, make_policy
from lpbench.semantics import RequestStates
from lpbench.sim import simulate
from lpbench.solve import run_policies, solve_instance
from lpbench.solvers.base import SolverProfile
from lpbench.verify import verify

FAMILY = [n for n, c in POLICIES.items() if "batch" in c.models and n not in ("mc-sf", "mc-benchmark")
          and not getattr(c, "explicit_only", False)]


def _instance(prompt, output, memory, budget):
    return parse_instance({"name": "mem", "memory": int(memory), "model": "batch", "cost_model": "infermax-llama2-7b-a100",
                           "limits": {"token_budget": int(budget)},
                           "requests": {"arrival": [0] * len(prompt), "prompt": list(map(int, prompt)),
                                        "output": list(map(int, output))}})


def _memory_binding(rng, n, prompts=(1, 4), outputs=(2, 4)):
    """Random prompts and outputs, M just above the sum of a few of the smallest prompts (and at
    least every request's peak I + O − 1), so that some prompts together fill it; a token budget of at
    least that peak (a refill of it fits in a policy's unchunked prefill)."""
    prompt, output = rng.integers(*prompts, n), rng.integers(*outputs, n)
    fill, peak = int(np.sort(prompt)[:int(rng.integers(2, n))].sum() + rng.integers(0, 3)), int(max(prompt + output - 1))
    return _instance(prompt, output, max(fill, peak), rng.integers(peak, peak + 8))  # every policy applies


def test_prefill_end_capacity_matches_brute_force():
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(1, 7))
        I, O, M = rng.integers(1, 12, n), rng.integers(1, 6, n), int(rng.integers(1, 40))
        sizes = [len(s) for k in range(1, n + 1) for s in combinations(range(n), k)
                 if I[list(s)].sum() + O[list(s)].min() - 1 <= M]
        assert prefill_end_capacity(I, O, M) == max(sizes, default=0), (I.tolist(), O.tolist(), M)


def test_prefill_batches_by_ends_is_the_least_over_the_extra_prefill_ends():
    """(V15a) against the least over X = 0..500 of max(⌈(n + X) / Kg⌉, ⌈(n − (Kg − K1 − 1) X) / K1⌉)."""
    for n in range(1, 30):
        for Kg in range(1, 9):
            for K1 in range(1, Kg + 1):
                brute = min(max(-(-(n + X) // Kg), -(-(n - (Kg - K1 - 1) * X) // K1)) for X in range(500))
                assert prefill_batches_by_ends(n, Kg, K1) <= brute, (n, Kg, K1)
                assert prefill_batches_by_ends(n, Kg, K1) >= brute - 1, (n, Kg, K1)  # rounding up the real least


def _counts(inst, sched):
    """Replay a schedule: batches Y, with a decode step y, with a prefill step Yp, decode steps D_i,
    decode-phase evictions per request, overfull batches F (prefill ends P_j with
    Σ I + min(O − 1) > M) and those without a decode step, and the generations of each batch."""
    st = RequestStates(inst.prompt, inst.output, inst.model)
    I, O = inst.prompt.astype(int), inst.output.astype(int)
    D = np.zeros(inst.n, dtype=int)
    dec_evictions = np.zeros(inst.n, dtype=int)
    y = Yp = F = F_alone = 0
    for j in range(sched.n_batches):
        req, tok, ev = sched.batch(j)
        if len(ev):
            dec_evictions[ev[st.is_decode(ev)]] += 1
            st.evict(ev)
        dec = st.is_decode(req)
        y, Yp = y + dec.any(), Yp + (~dec).any()
        D[req[dec]] += 1
        gen, fin = st.process(req, tok)
        ends = req[gen & ~dec]
        if len(ends) and I[ends].sum() + O[ends].min() - 1 > inst.memory:
            F += 1
            F_alone += not dec.any()
        st.release(req[fin])
    return sched.n_batches, int(y), int(Yp), D, dec_evictions, F, F_alone


def _schedules(inst):
    """Every verified policy schedule and every packed variant that applies."""
    return [simulate(inst, make_policy(n, inst)).schedule for n in applicable(inst) if n in FAMILY] + packed_schedules(inst)


def test_prefill_end_lemma_and_bound_hold_on_every_verified_schedule():
    """On random memory-binding instances (evictions happen): F <= X (the lemma), the prefill-end
    count (V15a) and the generation count (V15b) hold for every verified policy and packed schedule,
    and its makespan is at least the bound (V12)-(V15). Not vacuous: some schedules have overfull
    batches, and (V15) raises the bound on some instances."""
    rng = np.random.default_rng(13)
    overfull = raised = checked = 0
    for trial in range(60):  # odd trials: identical prompts, as in the memory-binding uniform family
        inst = _memory_binding(rng, int(rng.integers(3, 7)), prompts=(1, 4) if trial % 2 == 0 else (3, 4))
        n, O = inst.n, inst.output.astype(int)
        Kg, Kgd, _ = generation_capacities(inst.prompt, inst.memory)
        K1 = prefill_end_capacity(inst.prompt, inst.output, inst.memory)
        k = vars(inst.cost_model)
        bound = FORMULATIONS.get("infermax-csp")(inst, 1e9).root_bound()
        raised += batch_count_bound(inst, k) > batch_count_bound(inst, k, prefill_ends=False) * (1 + 1e-12)
        for sched in _schedules(inst):
            ver = verify(inst, sched)
            assert ver.feasible, ver.violations
            Y, y, Yp, D, dec_evictions, F, F_alone = _counts(inst, sched)
            X = int((O - 1 - D).sum())
            assert (dec_evictions <= O - 1 - D).all()
            assert F <= X
            assert n + X <= K1 * Yp + (Kg - K1) * F
            assert int(O.sum()) <= Kgd * y + K1 * (Y - y) + (Kg - K1) * F_alone
            assert ver.metrics["makespan"] >= bound * (1 - 1e-12)
            overfull += F > 0
            checked += 1
    assert checked > 200 and overfull >= 20 and raised >= 10, (checked, overfull, raised)


def test_prefill_end_bound_is_below_the_proven_optimum_of_the_plain_model():
    """(V12)-(V15) against CP-SAT's proven optimum of the model without any cut, on tiny
    memory-binding instances where (V15) raises the bound (random ones, and uniform ones whose
    prompts fill M exactly or nearly)."""
    rng = np.random.default_rng(1)
    cases = [_memory_binding(rng, int(rng.integers(3, 5)), prompts=(1, 4), outputs=(2, 4)) for _ in range(40)]
    cases += [_instance([I] * n, [O] * n, M, 64) for n, I, O, M in
              [(3, 6, 2, 12), (3, 6, 3, 13), (4, 2, 2, 4), (4, 3, 2, 6), (4, 4, 2, 8), (4, 6, 2, 12)]]
    profile = SolverProfile("t", "cpsat", time_limit=30, threads=1)
    proven = 0
    for inst in cases:
        k = vars(inst.cost_model)
        if batch_count_bound(inst, k) <= batch_count_bound(inst, k, prefill_ends=False) * (1 + 1e-12):
            continue
        ub = max(r.objective for r in run_policies(inst, None, "makespan", skipped={}))
        form = FORMULATIONS.get("infermax-csp")(inst, ub, cuts=False)
        form.build()
        res = form.solve(profile)
        assert res.status == "optimal"
        assert verify(inst, form.extract(res.x)).metrics["makespan"] == pytest.approx(res.objective, rel=1e-12)
        assert FORMULATIONS.get("infermax-csp")(inst, ub).root_bound() <= res.objective * (1 + 1e-12)
        proven += 1
    assert proven >= 10


@pytest.mark.parametrize("B", [32, 64])
def test_memory_binding_uniform_is_proven_at_the_root(B):
    """uniform I = 64, O = 16, M = 320 (Kg = 5, K1 = 4): no schedule without evictions ends more than
    4 prefills or generates more than 4 tokens in a batch, so the grouped policy schedule (groups of
    4: one prefill-only batch, 15 decode batches) is optimal; before (V15) the bound was 0.93 % (B = 32)
    and 1.4 % (B = 64) below it."""
    inst = parse_instance(infermax.uniform(64, 16, B, memory=320))
    k = vars(inst.cost_model)
    assert batch_count_bound(inst, k, prefill_ends=False) < batch_count_bound(inst, k) * (1 - 5e-3)
    rep = solve_instance(inst, "infermax-csp", "cpsat", time_limit=60)
    assert rep["status"] == "optimal" and rep["verified"] and "proven at the root" in rep["message"]
    Y, y, Yp, *_ = _counts(inst, rep["_schedule"])
    assert (Y, y, Yp) == (4 * B, 15 * B // 4, B // 4)
