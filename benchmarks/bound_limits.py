"""What limits the seed-004 lower bounds (issue 12; docs/seed004-certification.md): three directions measured.

    python benchmarks/bound_limits.py config-lp --requests 4 --draws jaillet-model1:0,jaillet-model1:1,jaillet-model1:2,jaillet-model1:3,jaillet-model2:0,jaillet-model2:1,jaillet-model2:2
    python benchmarks/bound_limits.py qpath-gap --draws jaillet-model1:0,jaillet-model1:20,jaillet-model1:40,jaillet-model2:0,jaillet-model2:20,jaillet-model2:40
    python benchmarks/bound_limits.py vchain-dual --draws jaillet-model1:0,jaillet-model1:48 --seconds 240

``config-lp``: the configuration LP, the strongest bound any family of per-round cuts on the memory rows (3)
can give (cover and multiple-choice-knapsack cuts, conflict cliques of (request, age) pairs), against OPT
(``latency-astar``), the time-indexed LP ``latency-lp`` on the same horizon, and ``chain-bound``. The model:
``latency-lp``'s (the starts y_{i,k}, eqs. (1)-(3), (4) relaxed) and, per round t, a unit flow through a DAG over
(request, memory used) whose arcs choose one age d of each request or none, with weight s_i + d (the
multiple-choice knapsack of round t; a DAG's path polytope is integral, so the flows project onto the hull of
the memory-feasible sets of (request, age) pairs). z_{t,i,d} (the flow on i's arcs of age d) >= y_{i,t−d}.
*Validity*: in a schedule, the pairs active at t fit in M by (3) and hold one age per request, so their path
and the starts satisfy every row: the LP optimum is <= OPT. It is >= ``latency-lp``, whose rows it keeps; they
are implied anyway: every path weighs <= M, so Σ (s_i + d)·y_{i,t−d} <= Σ (s_i + d)·z_{t,i,d} <= M. The horizon is ``latency-ip``'s, with tightening (b)
at UB = OPT (which keeps every optimal schedule). Exact, so only tiny prefixes fit (n = 4: up to 0.24 M columns
and 150 s in HiGHS).

``qpath-gap``: how far ``chain-bound``'s Lagrangian q-path relaxation is from the minimum over true completion
orders of the chain it relaxes, at paper size. For the set U that gave the bound: the relaxation's value
L_U(λ) at the best λ after a long ascent (exact evaluation), how many members of U its minimising sequence
misses or repeats, and the least chain_U(e) over orders e of U that a simulated annealing (swap and insert
moves, --seconds per start) finds from the local search's completion order and from the order by c. The
least found is >= the minimum over orders >= L_U, so (least found − L_U) bounds the duality gap from above.

``vchain-dual``: how far ``volume-chain-bound``'s subgradient ascent is from the best multipliers of its own
Lagrangian. Each evaluation of its programme at (λ, ν) returns a minimising sequence s, and L(λ', ν') <= A_s +
λ'·(visits_s − 1) + ν'·(vol'_s − φ(δ_s)) for all (λ', ν') (the programme minimises over s; A_s = Σ W_l·δ_l). Kelley's
cutting planes: maximise the least of these planes over λ ∈ [−B, B]^U and ν non-increasing in [0, B] (an LP), evaluate
the programme there, add its plane, repeat until the LP's value meets the best evaluation (--seconds at most). The
planes start with the shipped ascent's (--ascent-seconds, 8 s). Where it meets, the LP's value is the Lagrangian dual's optimum within
the box (λ is free along the all-ones direction, on which the programme does not depend, so a λ at the box is no sign
that the box binds). B = 2,000; the ascent's best multipliers were within |λ| <= 330, ν <= 2 on draws 0 and 48 of Model 1.
"""
from __future__ import annotations

import argparse
import sys
import time

import highspy
import numpy as np

from order_relaxation_checks import draw, proven_optimum  # benchmarks/, the script's own folder

from lpbench.formulations import chain as chain_module
from lpbench.formulations.chain import chain_bound
from lpbench.formulations.completion import separation, triple_bonus
from lpbench.formulations.latency_ip import LatencyIP, LatencyLP, starts_from_schedule
from lpbench.solvers.highs import to_highs


def lp_value(model) -> float:
    """The optimum of a LinearModel by HiGHS, its offset included."""
    h = to_highs(model)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS: {h.modelStatusToString(h.getModelStatus())}")
    return h.getInfo().objective_function_value


def time_indexed_and_config_lp(inst, ub: float) -> tuple[float, float, int]:
    """(``latency-lp``'s value, the configuration LP's value, its columns) on ``latency-ip``'s horizon at UB. The
    configuration LP is ``latency-lp``'s model with one knapsack flow per round added (its rows (3) are then
    implied, and kept)."""
    a, s, o = (x.astype(np.int64) for x in (inst.arrival, inst.prompt, inst.output))
    n, M = inst.n, int(inst.memory)
    form = LatencyLP(inst, incumbent_objective=ub)
    model = form.build()
    plain = lp_value(model)

    def y(i, k):                                          # the column of x_{i,k}
        return int(form.var_start[i] + k - a[i])

    rows, cols, vals, lower, upper = [], [], [], [], []
    arcs = 0

    def row(lo, hi):
        lower.append(lo)
        upper.append(hi)
        return len(lower) - 1

    def arc(entries):
        nonlocal arcs
        for r, v in entries:
            rows.append(r)
            cols.append(model.n_vars + arcs)
            vals.append(v)
        arcs += 1

    for t in range(int(a.min()) + 1, int((form.last + o).max()) + 1):
        layers = [(i, [d for d in range(1, o[i] + 1) if a[i] <= t - d <= form.last[i]]) for i in range(n)]
        layers = [(i, ds) for i, ds in layers if ds]
        if not layers:
            continue
        L = len(layers)
        node = {(l, c): row(0.0, 0.0) for l in range(1, L) for c in range(M + 1)}   # conservation
        source = row(1.0, 1.0)                                                    # one unit leaves (0, 0)

        def ends(l, c, w):
            out = [(source, 1.0)] if l == 0 else [(node[l, c], -1.0)]
            return out + ([(node[l + 1, c + w], 1.0)] if l + 1 < L else [])

        for l, (i, ds) in enumerate(layers):
            used = [0] if l == 0 else range(M + 1)
            for d in ds:
                cover = row(0.0, np.inf)                                          # z_{t,i,d} >= x_{i,t−d}
                rows.append(cover)
                cols.append(y(i, t - d))
                vals.append(-1.0)
                w = int(s[i] + d)
                for c in used:
                    if c + w <= M:
                        arc([(cover, 1.0)] + ends(l, c, w))
            for c in used:                                                        # request i not active
                arc(ends(l, c, 0))
    model.add_vars("knapsack arcs", arcs)
    model.add_rows("knapsack flow per round, covers z >= x", len(lower), rows, cols, vals, lower, upper)
    return plain, lp_value(model), model.n_vars


def config_lp(items, n: int) -> None:
    print("| draw | n | OPT | latency-lp / OPT | configuration LP / OPT (columns, s) | chain-bound / OPT |")
    print("|---|---|---|---|---|---|")
    for item in items:
        inst = draw(item, n)
        opt = proven_optimum(inst)
        if opt is None:
            print(f"| {item} | {inst.n} | not proven in 60 s | | | |")
            continue
        t = time.perf_counter()
        plain, config, columns = time_indexed_and_config_lp(inst, opt)
        seconds = time.perf_counter() - t
        chain, _ = chain_bound(inst, time.perf_counter() + 20)
        print(f"| {item} | {inst.n} | {opt:,.0f} | {plain / opt:.3f} | {config / opt:.3f} ({columns:,}, "
              f"{seconds:.0f} s) | {chain / opt:.3f} |", flush=True)


def chain_of_order(seq: np.ndarray, c3: np.ndarray, w3: np.ndarray, B3U: np.ndarray, unit: int) -> float:
    """chain_U(e) of ``chain-bound``'s docstring for the order ``seq`` (first completer first) of U's members, from
    c, w and the bonuses in units of 1/unit."""
    m = len(seq)
    i = np.arange(1, m)
    j = np.arange(1, m - 1)
    return (m * c3[seq[0]] + ((m - i) * w3[seq[i - 1], seq[i]]).sum()
            + B3U[m - j, seq[j - 1], seq[j], seq[j + 1]].sum()) / unit


def anneal(seq: np.ndarray, value, seconds: float, rng) -> float:
    """The least value(e) that simulated annealing with swap and insert moves meets in ``seconds`` from ``seq``."""
    m = len(seq)
    current = best = value(seq)
    end, steps = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        steps += 1
        i, j = (int(x) for x in rng.integers(0, m, 2))
        if i == j:
            continue
        cand = seq.copy()
        if rng.random() < 0.5:
            cand[i], cand[j] = cand[j], cand[i]
        else:
            cand = np.insert(np.delete(cand, i), j, seq[i])
        v = value(cand)
        temperature = 2.0 * (1 - (steps % 20000) / 20000)
        if v <= current or rng.random() < np.exp(-(v - current) / max(temperature, 1e-9)):
            seq, current = cand, v
            best = min(best, v)
    return best


def qpath_gap(items, seconds: float) -> None:
    print("| draw | n | chain-bound (set U) | |U| | L_U at the best λ | missed / repeated on its sequence | "
          "least chain_U over orders found | gap above L_U |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for item in items:
        inst = draw(item, None)
        a, s, o = (x.astype(np.int64) for x in (inst.arrival, inst.prompt, inst.output))
        n, M = inst.n, int(inst.memory)
        trace: list = []
        bound, which = chain_bound(inst, time.perf_counter() + 20, trace)
        key, r, _, _ = max(trace, key=lambda row: row[3])
        orders = {"shortest": np.argsort(o, kind="stable"), "smallest-peak": np.argsort(s + o, kind="stable")}
        keep = np.sort(orders[key][r:])
        m = len(keep)
        c = a - int(a.min()) + o
        w = separation(inst)
        unit = chain_module.UNIT
        B3 = triple_bonus(s + o, o, w, M, n, dtype=np.int64, split=chain_module.SPLIT)
        q = chain_module._QPath(c[keep], w[np.ix_(keep, keep)], B3.astype(np.int32),
                                chain_module.search_table(B3.astype(np.int32)), keep, unit=unit)
        lam, theta = np.zeros(m), 1.0
        for _ in range(4):                                   # a long ascent: restarts from the best λ
            lam, theta = chain_module._ascent(q, lam, max(theta, 2.0 ** -6), 3000, time.perf_counter() + 15)
        num, den = q.exact(lam)
        L_U = num / den
        _, visits = q.value(lam)
        B3U = B3[:m][:, keep[:, None, None], keep[None, :, None], keep[None, None, :]]
        c3, w3 = unit * c[keep], unit * w[np.ix_(keep, keep)]
        _, schedule, _ = LatencyIP.search_incumbent(inst, time.perf_counter() + 10)
        done = starts_from_schedule(inst, schedule) + o
        position = {j: i for i, j in enumerate(keep)}
        starts = [np.array([position[j] for j in sorted(keep, key=lambda j: (done[j], j))]),
                  np.argsort(c[keep], kind="stable")]
        least = min(anneal(e, lambda e: chain_of_order(e, c3, w3, B3U, unit), seconds, rng) for e in starts)
        print(f"| {item} | {n} | {bound:,} ({which}) | {m} | {L_U:,.1f} | {int((visits == 0).sum())} / "
              f"{int((visits > 1).sum())} | {least:,.1f} | {100 * (least / L_U - 1):.2f} % |", flush=True)


def vchain_dual(items, seconds: float, ascent_seconds: float = 8.0, box: float = 2000.0) -> None:
    from lpbench.formulations.volume import VolumeBound
    from lpbench.formulations.volume_chain import GRID, MergedChain, phi

    print("| draw | n | \\|U\\| | ascent: bound (evaluations) | Kelley: best evaluation | Kelley: LP value | planes | "
          "seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for item in items:
        inst = draw(item, None)
        a, s, o = (np.asarray(x, dtype=np.int64) for x in (inst.arrival, inst.prompt, inst.output))
        M = int(inst.memory)
        programme = MergedChain(a, s, o, M, 2 * (s + o) > M)
        m, n = programme.m, programme.n
        planes = []
        evaluate = programme.evaluate

        def recorded(lam, nu_i):
            value, visits, delta, vol_p = out = evaluate(lam, nu_i)
            g_lam, g_nu = visits - 1.0, vol_p - phi(delta, M)
            planes.append((value - (nu_i / GRID) @ g_nu - lam @ g_lam, g_lam, g_nu))
            return out

        programme.evaluate = recorded
        ascent, evaluations = programme.ascent(time.perf_counter() + ascent_seconds, 1.25 * VolumeBound(inst).value())
        h = highspy.Highs()                           # columns: the plane's level, λ (m), ν (n); maximise the level
        h.setOptionValue("output_flag", False)
        inf = highspy.kHighsInf
        h.addVars(1 + m + n, np.concatenate([[-inf], np.full(m, -box), np.zeros(n)]),
                  np.concatenate([[inf], np.full(m, box), np.full(n, box)]))
        h.changeColCost(0, -1.0)
        for l in range(n - 1):                        # ν non-increasing
            h.addRow(0.0, inf, 2, np.array([1 + m + l, 2 + m + l], dtype=np.int32), np.array([1.0, -1.0]))
        columns = np.arange(1 + m + n, dtype=np.int32)
        added, best, level, t0 = 0, -np.inf, np.inf, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for A, g_lam, g_nu in planes[added:]:
                coefficients = np.concatenate([[1.0], -g_lam, -g_nu])
                keep = coefficients != 0
                h.addRow(-inf, float(A), int(keep.sum()), columns[keep], coefficients[keep])
            added = len(planes)
            h.run()
            x = np.array(h.getSolution().col_value)
            level = x[0]                                  # the LP's value: the least plane at its optimum
            nu_i = np.minimum.accumulate(np.floor(np.maximum(x[1 + m:], 0) * GRID + 1e-9).astype(np.int64))
            best = max(best, programme.evaluate(np.round(x[1:1 + m] * GRID) / GRID, nu_i)[0])
            if level - best < 1e-6 * abs(level):
                break
        offset = programme.offset
        print(f"| {item} | {n} | {m} | {ascent:,} ({evaluations}) | {int(np.ceil(best - 1e-9)) - offset:,} | "
              f"{level - offset:,.1f} | {len(planes):,} | {time.perf_counter() - t0:.0f} |", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["config-lp", "qpath-gap", "vchain-dual"])
    ap.add_argument("--draws", default="jaillet-model1:0,jaillet-model2:0", help="model:k of seed 0, comma-separated")
    ap.add_argument("--requests", type=int, default=4, help="config-lp: the first n requests of each draw")
    ap.add_argument("--ascent-seconds", type=float, default=8.0, help="vchain-dual: the shipped ascent's time")
    ap.add_argument("--seconds", type=float, default=30.0,
                    help="qpath-gap: annealing per start order; vchain-dual: Kelley's planes at most")
    args = ap.parse_args(argv)
    items = args.draws.split(",")
    if args.mode == "config-lp":
        config_lp(items, args.requests)
    elif args.mode == "qpath-gap":
        qpath_gap(items, args.seconds)
    else:
        vchain_dual(items, args.seconds, args.ascent_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
