"""Seed 004 experiments for issue 12 (numbers in the README): the incumbent search against MC-SF, and
the lower-bound ideas measured and rejected. Not a test.

    python benchmarks/slot_bound_experiments.py local-search   # serial-SGS local search vs MC-SF, draws 0/20/40

    python benchmarks/slot_bound_experiments.py level-cuts     # latency-lp with level (clique) cuts, n = 8..20
    python benchmarks/slot_bound_experiments.py threshold      # threshold-SRPT bound vs volume-bound, 8 draws
    python benchmarks/slot_bound_experiments.py cp-redundant   # latency-cp with redundant top-part constraints, 20 s each
    python benchmarks/slot_bound_experiments.py small-opt      # OPT, MC-SF and the latency-lp bound on 8 requests
    python benchmarks/slot_bound_experiments.py waste          # unused memory of a local-search schedule, draw 0

level-cuts: at time t at most floor(M/(theta+1)) requests have footprint >= theta+1, added to latency-lp
for K = 1, 2, 3 (theta = M // (K+1)). threshold: above theta those requests' last rounds form a
K-machine problem, bounded by SRPT on one machine of speed K; per order statistic, max over theta.
cp-redundant: a NoOverlap of the footprint-above-M/2 parts (K = 1) and Cumulatives of capacity K = 2, 3.
"""
import argparse
import heapq
import time

import numpy as np

from lpbench.formulations import FORMULATIONS
from lpbench.formulations.volume import VolumeBound
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.solve import run_policies
from lpbench.solvers.base import SolverProfile
from lpbench.solvers.highs import to_highs


def draw(k, n=None, model="jaillet-model1"):
    return parse_instance(jaillet.instance(model, 0, k, first=n))


# -- level cuts on latency-lp ------------------------------------------------------------------------
def lp_value(inst, levels, ub):
    form = FORMULATIONS.get("latency-lp")(inst, ub)
    lp = form.build()
    a = inst.arrival.astype(np.int64)
    s, o, M = inst.prompt, inst.output, inst.memory
    t0 = int(a.min()) + 1
    t1 = int((form.last + o).max())
    for K in levels:
        theta = M // (K + 1)   # footprints >= theta+1 > M/(K+1): at most K at once
        rows, cols = [], []
        for i in range(inst.n):
            d = np.arange(1, o[i] + 1)
            d = d[s[i] + d >= theta + 1]
            if not len(d):
                continue
            ks = np.arange(a[i], form.last[i] + 1)
            rows.append((ks[:, None] + d[None, :]).ravel() - t0)
            cols.append(np.repeat(np.arange(form.var_start[i], form.var_start[i + 1]), len(d)))
        if rows:
            nnz = sum(len(r) for r in rows)
            lp.add_rows(f"level K={K}", t1 - t0 + 1, np.concatenate(rows), np.concatenate(cols), np.ones(nnz), upper=K)
    h = to_highs(lp)
    h.setOptionValue("time_limit", 120.0)
    t = time.time()
    h.run()
    return h.getInfo().objective_function_value, time.time() - t


def level_cuts():
    for k, n in [(0, 8), (1, 8), (2, 8), (0, 12), (0, 20)]:
        inst = draw(k, n)
        ub = run_policies(inst, ["mc-sf"], "total_latency")[0].objective
        base, cut1, cutm = lp_value(inst, [], ub), lp_value(inst, [1], ub), lp_value(inst, [1, 2, 3], ub)
        print(k, n, "M", inst.memory, "mcsf", ub, "lp", round(base[0], 1), "lp+K1", round(cut1[0], 1),
              "lp+K123", round(cutm[0], 1), f"{cutm[1]:.1f}s", flush=True)


# -- threshold SRPT bound ----------------------------------------------------------------------------
def srpt_completions(r, p, speed):
    """Completion times of SRPT on one machine of the given speed (preemptive, releases r, work p)."""
    order = np.argsort(r, kind="stable")
    n, t, heap, out, k = len(r), 0.0, [], [], 0
    while k < n or heap:
        if not heap:
            t = max(t, r[order[k]])
        while k < n and r[order[k]] <= t + 1e-12:
            heapq.heappush(heap, p[order[k]])
            k += 1
        rem = heapq.heappop(heap)
        nxt = r[order[k]] if k < n else np.inf
        if t + rem / speed <= nxt + 1e-12:
            t += rem / speed
            out.append(t)
        else:
            heapq.heappush(heap, rem - (nxt - t) * speed)
            t = nxt
    return np.array(out)


def level_bound(inst):
    a = inst.arrival.astype(float)
    s, o, M = inst.prompt.astype(int), inst.output.astype(int), inst.memory
    best_k = np.sort(a + o)
    for theta in range(0, int((s + o).max())):
        K = M // (theta + 1)
        if K < 1:
            break
        h = np.clip(o - np.maximum(theta - s, 0), 0, o)   # rounds with s + d >= theta + 1 (the last ones)
        m = h > 0
        comp = np.sort(srpt_completions((a + o - h)[m], h[m].astype(float), K))
        lb = np.ceil(np.concatenate([np.zeros(int((~m).sum())), comp]) - 1e-9)
        best_k = np.maximum(best_k, lb)
    return best_k.sum() - a.sum()


def threshold():
    for model in ("jaillet-model1", "jaillet-model2"):
        for k in range(4):
            inst = draw(k, model=model)
            print(model, k, "volume-bound", VolumeBound(inst).value(), "threshold-SRPT", level_bound(inst), flush=True)


# -- redundant constraints in latency-cp -------------------------------------------------------------
def cp_run(inst, levels, tl):
    ub = run_policies(inst, ["mc-sf"], "total_latency")[0].objective
    form = FORMULATIONS.get("latency-cp")(inst, ub)
    form.build()
    m, S = form.cp, form.S
    s, o, M = inst.prompt.astype(int), inst.output.astype(int), inst.memory
    for K in levels:
        theta = M // (K + 1)
        ivs = []
        for i in range(inst.n):
            h = int(np.clip(o[i] - max(theta - s[i], 0), 0, o[i]))
            if h > 0:
                ivs.append(m.NewFixedSizeIntervalVar(S[i] + int(o[i]) - h + 1, h, f"hi{K}_{i}"))
        if K == 1:
            m.AddNoOverlap(ivs)
        else:
            m.AddCumulative(ivs, [1] * len(ivs), K)
    res = form.solve(SolverProfile("x", "cpsat", time_limit=tl, threads=2), None)
    return res.status, res.objective, res.bound, res.solve_seconds


def cp_redundant():
    for k, n in [(0, 8), (0, 10), (0, 12), (2, 20), (0, 53)]:
        inst = draw(k, n)
        vb = VolumeBound(inst).value()
        for lv in ([], [1], [1, 2, 3]):
            st, obj, bd, sec = cp_run(inst, lv, 20)
            print(k, n, lv, st, obj, round(bd, 1), "volume-bound", vb, f"{sec:.1f}s", flush=True)


def local_search_vs_mcsf():
    from lpbench.heuristics.slot_sgs import local_search

    for k in (0, 20, 40):
        inst = draw(k)
        mc = run_policies(inst, ["mc-sf"], "total_latency")[0].objective
        t = time.time()
        _, value, done = local_search(inst)
        print(f"jaillet-model1 k={k} n={inst.n}: MC-SF {mc:g}, local search {value} ({(mc - value) / mc:.2%} better, "
              f"{done} moves in {time.time() - t:.1f}s)", flush=True)


def small_opt():
    from lpbench.solve import solve_instance

    inst = draw(0, 8)
    rep = solve_instance(inst, "latency-ip", "highs", 120, ["mc-sf"])
    lp = solve_instance(inst, "latency-lp", "highs", 120, ["mc-sf"])
    print(f"draw 0, first 8 requests: latency-ip {rep['status']} {rep['objective']:g}, MC-SF "
          f"{rep['ratios']['mc-sf']['objective']:g}, latency-lp bound {lp['bound']:.1f}")


def waste():
    """Unused memory-rounds of the best local-search schedule of full draw 0, and the part of them that
    Lemma 3 of lpbench.formulations.completion forces: min(M, C+(t) - t) at every round t."""
    from lpbench.heuristics.slot_sgs import local_search

    inst = draw(0)
    start, value, _ = local_search(inst, iterations=1500, seed=0)
    s, o, M = inst.prompt.astype(int), inst.output.astype(int), inst.memory
    C = start + o
    T = int(C.max())
    U = np.zeros(T + 1, dtype=int)
    for i in range(inst.n):
        U[start[i] + 1:C[i] + 1] += s[i] + np.arange(1, o[i] + 1)
    t = np.arange(1, T + 1)
    Cs = np.sort(C)
    forced = np.minimum(M, Cs[np.searchsorted(Cs, t)] - t).sum()
    unused = M * T - U[1:].sum()
    print(f"draw 0 (n = {inst.n}, M = {M}): local search {value}, utilisation {U[1:].sum() / (M * T):.0%}, "
          f"unused {unused} memory-rounds, of which Lemma 3 forces {forced} ({forced / unused:.0%})")


MODES = {"waste": waste, "local-search": local_search_vs_mcsf, "small-opt": small_opt, "level-cuts": level_cuts,
         "threshold": threshold, "cp-redundant": cp_redundant}
parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("mode", choices=MODES, help="which experiment (see the module docstring)")
MODES[parser.parse_args().mode]()
