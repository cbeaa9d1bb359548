"""The completion-time relaxations (lpbench/formulations/completion.py): each lemma checked on verified
schedules, each bound against the proven optimum of the plain IP, and the proof-by-bound path of solve."""
import numpy as np
import pytest

from lpbench.formulations.completion import CompletionCP, least_span, separation, triple_separation
from lpbench.formulations.latency_ip import LatencyIP, starts_from_schedule
from lpbench.formulations.volume import VolumeBound, volumes
from lpbench.generators import jaillet
from lpbench.heuristics.slot_sgs import local_search
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.solve import solve_instance
from lpbench.verify import verify

from test_latency import brute_force, slot_instance
from test_latency_astar import triple_instance


def jaillet_prefix(model, k, n):
    return parse_instance(jaillet.instance(model, 0, k, first=n))


def verified_starts(inst):
    """Start rounds of every verified schedule we can make: two policies and the local search."""
    out = []
    for name in ("mc-sf", "mc-benchmark"):
        sched = simulate(inst, make_policy(name, inst)).schedule
        assert verify(inst, sched).feasible
        out.append(starts_from_schedule(inst, sched))
    for seed in range(3):
        out.append(local_search(inst, iterations=60, seed=seed)[0])
    return out


def memory_profile(inst, start):
    s, o = inst.prompt.astype(int), inst.output.astype(int)
    U = np.zeros(int((start + o).max()) + 2, dtype=int)
    for i in range(inst.n):
        U[start[i] + 1:start[i] + o[i] + 1] += s[i] + np.arange(1, o[i] + 1)
    return U


@pytest.mark.parametrize("seed", range(8))
def test_lemmas_2_and_3_hold_on_every_verified_schedule(seed):
    inst = slot_instance(300 + seed, n=14, max_o=9, max_s=4, max_a=6)
    M, o = inst.memory, inst.output.astype(int)
    w = separation(inst)
    for start in verified_starts(inst):
        C = start + o
        # Lemma 2: C_j - C_h >= w(h, j) whenever C_h <= C_j
        for h in range(inst.n):
            for j in range(inst.n):
                if h != j and C[h] <= C[j]:
                    assert C[j] - C[h] >= w[h, j], (h, j)
        # Lemma 2': (C_j - C_h) + (C_k - C_h) >= T(h, j, k) whenever C_h <= C_j, C_k
        s = inst.prompt.astype(int)
        T = triple_separation(s + o, o, w, M)
        for h in range(inst.n):
            later = [j for j in range(inst.n) if j != h and C[h] <= C[j]]
            for x, j in enumerate(later):
                for k in later[x + 1:]:
                    assert C[j] + C[k] - 2 * C[h] >= T[h, j, k], (h, j, k)
        # Lemma 3: U(t) <= M - min(M, C+(t) - t) up to the makespan
        U = memory_profile(inst, start)
        Cs = np.sort(C)
        for t in range(1, int(C.max()) + 1):
            nxt = Cs[np.searchsorted(Cs, t)]
            assert U[t] <= M - min(M, nxt - t), t


def test_least_span_inverts_the_gap_capacity():
    M = 40
    for m in (1, 3, 10):
        for x in (0.5, 3.0, 17.0, 40.0):
            cap = m * ((M + 0.5) * (x / m) - (x / m) ** 2 / 2)
            assert least_span(np.array([cap]), np.array([m]), M)[0] == pytest.approx(x)


@pytest.mark.parametrize("seed", range(6))
def test_bounds_are_below_the_proven_optimum_of_the_plain_ip(seed):
    """The plain latency IP (HiGHS, proven) is the reference for both new bounds."""
    inst = slot_instance(400 + seed, n=8, max_o=6, max_s=3, max_a=4)
    opt = solve_instance(inst, "latency-ip", "highs", policies=["mc-sf"], time_limit=60)
    assert opt["status"] == "optimal" and opt["bound_source"] in ("highs", "completion-cp", "volume-bound",
                                                                  "latency-astar", "latency-event", "cpsat")
    relax = solve_instance(inst, "completion-cp", "cpsat", policies=["mc-sf"], time_limit=20)
    vb = solve_instance(inst, "volume-bound", policies=["mc-sf"])
    assert relax["bound"] <= opt["objective"] and vb["bound"] <= opt["objective"]
    assert relax["bound"] >= vb["bound"]  # the relaxation never reports less than the closed form


def test_completion_cp_with_triples_is_below_brute_force():
    """Lemma 2' rows on instances where they bind (peaks fit pairwise, not three at a time): the relaxation
    stays below the brute-force optimum on every one, and the rows are in the model (a relaxation
    without them would see only the pairs, which are all w = 0 on most of these)."""
    rows = 0
    for seed in range(20):
        inst = triple_instance(seed)
        opt = brute_force(inst)
        form = CompletionCP(inst)
        model, _ = form.cp_model(capacity=True, triples=True, floor=None)
        rows += sum(len(c.enforcement_literal) == 2 for c in model.Proto().constraints)
        relax = solve_instance(inst, "completion-cp", "cpsat", policies=["mc-sf"], time_limit=10)
        assert relax["bound"] <= opt, seed
    assert rows > 100


def test_volume_bound_gap_term_is_valid_and_can_only_raise_the_bound():
    """Against the volume-only order statistics (computed here), on draws where the gaps matter."""
    for k in range(4):
        inst = parse_instance(jaillet.instance("jaillet-model1", 0, k))
        vol = np.sort(volumes(inst))
        plain = float(np.maximum(np.ceil(np.cumsum(vol) / inst.memory - 1e-9), np.sort(inst.output)).sum())
        best = min(int(sum(local_search(inst, iterations=30, seed=0)[1:2])), 10**9)
        assert plain <= VolumeBound(inst).value() <= best
    # jaillet-model1 draw 0: the gap term lifts the bound from 7902 to 8448 (measured in the README)
    inst = parse_instance(jaillet.instance("jaillet-model1", 0, 0))
    assert VolumeBound(inst).value() == 8448


def test_relaxation_equals_the_optimum_on_the_first_8_requests_of_draw_0():
    """OPT = 701 (proven by HiGHS on latency-ip; README); latency-lp gives 557.3, volume-bound 447."""
    inst = jaillet_prefix("jaillet-model1", 0, 8)
    rep = solve_instance(inst, "completion-cp", "cpsat", policies=["mc-sf"], time_limit=20)
    assert rep["status"] == "optimal" and rep["bound"] == 701


def test_solve_proves_optimality_by_the_relaxation_bound(monkeypatch):
    monkeypatch.setattr(LatencyIP, "astar_max_requests", 0)   # the A* search would prove it first
    monkeypatch.setattr(LatencyIP, "chain_max_requests", 0)   # the step's chain-bound runs before completion-cp
    inst = jaillet_prefix("jaillet-model1", 0, 8)
    rep = solve_instance(inst, "latency-ip", "highs", policies=["mc-sf"], time_limit=20)
    assert rep["status"] == "optimal" and rep["objective"] == 701 and rep["verified"]
    assert rep["bound_source"] == "completion-cp" and rep["gap"] == 0
    assert rep["objective_source"].startswith(("heuristic", "policy"))
    assert rep["ratios"]["mc-sf"]["lower"] == rep["ratios"]["mc-sf"]["upper"] == 725 / 701


def test_completion_cp_refuses_instances_above_its_size():
    inst = slot_instance(1, n=CompletionCP.max_requests + 1)
    with pytest.raises(Exception, match="completion-cp has one order literal per pair"):
        CompletionCP(inst).check_size()


@pytest.mark.parametrize("seed", [0, 5, 7, 9])  # the SRPT term is the binding one on 5, 7 and 9
def test_volume_bound_with_all_windows_at_once_is_below_the_optimum_under_load(seed):
    """Arrivals spread so that the SRPT (all windows) and gap terms bind; OPT from the plain IP."""
    rng = np.random.default_rng(500 + seed)
    n, M = 9, 12
    s = rng.integers(1, 4, n)
    o = rng.integers(3, M - s + 1)
    a = np.sort(rng.integers(0, 3 * n, n))
    inst = parse_instance({"memory": M, "requests": {"arrival": a.tolist(), "prompt": s.tolist(), "output": o.tolist()}})
    opt = solve_instance(inst, "latency-ip", "highs", policies=["mc-sf"], time_limit=60)
    assert opt["status"] == "optimal"
    assert VolumeBound(inst).value() <= opt["objective"]


def test_row_count_without_building_equals_the_model():
    """build() counts the last stage's rows without building it (it used to build it: 8.4 s at 102 requests);
    the count equals the built model's on Jaillet prefixes of both models and on a triple-binding instance."""
    insts = [jaillet_prefix("jaillet-model1", 0, 18), jaillet_prefix("jaillet-model2", 5, 30), triple_instance(3)]
    for inst in insts:
        form = CompletionCP(inst)
        form.build()
        assert form.n_rows == len(form.cp_model(True, True, None)[0].Proto().constraints)


def test_a_stage_that_cannot_be_built_in_time_is_skipped(monkeypatch):
    """The triple stage stops building at its deadline; the bound of the stages before stands, named so."""
    import time
    from lpbench.formulations.base import Formulation

    original = Formulation.check_build_deadline

    def late_for_triples(self, done):
        if "triple" in done:
            self.build_deadline = time.perf_counter() - 1.0
        original(self, done)

    monkeypatch.setattr(CompletionCP, "check_build_deadline", late_for_triples)
    inst = jaillet_prefix("jaillet-model1", 0, 12)
    rep = solve_instance(inst, "completion-cp", time_limit=10, policies=["mc-sf"])
    assert "pairs+gaps+triples: not built in the time left (0 triple rows built)" in rep["message"]
    assert rep["status"] == "time_limit" and VolumeBound(inst).value() <= rep["bound"] <= rep["best_known"]
