"""A branch-and-bound over completion orders with the co-activity rows of Lemma 2″ (issue 12; a probe, not shipped
as a bound). Measured on 2026-12-01: it does not certify more than `chain-bound` at paper size, and at the
ladder's sizes it converges only on the easier draws (docs/seed004-certification.md, "A branch-and-bound over
completion orders").

The least LP_e over completion orders (``order_relaxation_probe.py``: the LP along a fixed order with the
co-activity rows) is about 0.97 × OPT on small instances; this searches the orders to certify it. Orders are built
from the **last** completer backwards, so that each co-activity row, which looks at later completers, is complete
once its request is placed. A node is a suffix σ = (j_1, …, j_k) (j_k completes last) and the set P of the others,
which complete no later than C_{j_1}. Its LP, over continuous C_j (and z >= 0), minimises Σ_j (C_j − a_j) subject to:

1. floors C_j >= a_j + o_j;
2. Lemma 2 for every pair whose order the node fixes: C_j − C_h >= w(h, j) for h in P and j in σ, and for j_a
   before j_b in σ (w >= 0, so these also order the suffix and put P before it);
3. co-activity (Lemma 2″) at every j_a of σ over the later members of σ: p_{j_a} + Σ_{b>a} z_ab <= M,
   z_ab >= p_{j_b}·(1 − (C_{j_b} − C_{j_a})/o_{j_b});
4. co-activity at every h in P over σ only (the later completers within P are dropped, terms >= 0 of a <= row);
5. memory-time: vol(P) + Σ_{b<=a} vol(j_b) <= M·(C_{j_a} − t0) for every a, t0 = min a (everything completing by
   C_{j_a} is processed in rounds t0 + 1 … C_{j_a}, each holding at most M);
6. P's order statistics: Σ_{h∈P} C_h >= Σ_i max(F_(i), t0 + V_i/M), F the sorted floors of P and V_i the sum of
   its i smallest volumes (the i-th completion in P is at least the i-th floor, and the i earliest completers
   hold at least V_i in rounds t0 + 1 … C_(i)).

Validity: every row holds at the completion times of every schedule whose completion order ends with σ (Lemma 2 and
Lemma 2″ are proved in ``lpbench/formulations/completion.py`` and ``order_relaxation_probe.py``), so the node's LP
is at most the latency of each of them. A child's orders are a subset of its parent's, so a node keeps at least
its parent's value; the latency is an integer, so values are rounded up. Branching prepends a member of P; with one
left, the order is complete (a leaf, whose LP is LP_e of ``order_relaxation_probe.py`` less its volume tangents).
Best-first: the least value over the open nodes is a certified lower bound at any time, and once a leaf is the
least, the search has certified the minimum over orders of the leaves' LP (not OPT: the relaxation is below OPT
where the least leaf is). Nodes at or above UB are pruned. ``tests/test_order_probe.py`` checks the rows on
verified schedules and the search against enumeration of every order.

    python benchmarks/order_branch_and_bound.py --draws jaillet-model1:0,jaillet-model2:0 --requests 8,10,12,14 --seconds 60
    python benchmarks/order_branch_and_bound.py --draws jaillet-model1:0,jaillet-model1:20,jaillet-model2:0 --seconds 120 --report-at 10,30,60,120 --depth 1,2
"""
from __future__ import annotations

import argparse
import heapq
import math
import sys
import time
from pathlib import Path

import highspy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lpbench.formulations.chain import chain_bound  # noqa: E402
from lpbench.formulations.completion import pair_separation  # noqa: E402
from lpbench.formulations.volume import VolumeBound, volumes  # noqa: E402
from lpbench.generators import jaillet  # noqa: E402
from lpbench.heuristics.slot_sgs import local_search  # noqa: E402
from lpbench.instance import parse_instance  # noqa: E402
from lpbench.solve import integral_bound, solve_instance  # noqa: E402

INF = highspy.kHighsInf


class NodeLP:
    """The LP of a node (σ, P) of the module docstring; variables C_0 … C_{n−1}, then one z per co-activity term."""

    def __init__(self, inst, order_statistics: bool = True):
        self.a, self.s, self.o = (np.asarray(v, dtype=np.int64) for v in (inst.arrival, inst.prompt, inst.output))
        self.n, self.M = len(self.a), int(inst.memory)
        self.p = self.s + self.o
        self.t0 = int(self.a.min())
        self.floor = (self.a + self.o).astype(np.float64)
        self.w = pair_separation(self.s, self.o, self.M).astype(np.float64)
        self.vol = volumes(inst).astype(np.float64)
        self.order_statistics = order_statistics
        self.highs = highspy.Highs()
        for option, value in (("output_flag", False), ("threads", 1), ("presolve", "off")):
            self.highs.setOptionValue(option, value)
        self.solved = 0

    def rows(self, sigma, P):
        """(number of columns, row lower bounds, row upper bounds, per-row column lists, per-row coefficients)."""
        n, M, p, o = self.n, self.M, self.p, self.o
        lower, upper, cols, vals = [], [], [], []
        columns = [n]

        def row(lo, up, c, v):
            lower.append(lo)
            upper.append(up)
            cols.append(c)
            vals.append(v)

        k = len(sigma)
        # (2) Lemma 2 for every pair whose order the node fixes
        for i, j_a in enumerate(sigma):
            for j_b in sigma[i + 1:]:
                row(self.w[j_a, j_b], INF, [j_b, j_a], [1.0, -1.0])
            for h in P:
                row(self.w[h, j_a], INF, [j_a, h], [1.0, -1.0])

        # (3), (4) co-activity at x over the later completers `later`: p_x + Σ z <= M, z >= p_j (1 − (C_j − C_x)/o_j)
        def coactivity(x, later):
            zs = []
            for j in later:
                z = columns[0]
                columns[0] += 1
                slope = p[j] / o[j]
                row(float(p[j]), INF, [z, j, x], [1.0, slope, -slope])
                zs.append(z)
            if zs:
                row(-INF, float(M - p[x]), zs, [1.0] * len(zs))

        for i in range(k - 1):
            coactivity(sigma[i], sigma[i + 1:])
        if k:
            for h in P:
                coactivity(h, sigma)
        # (5) memory-time by each completion of the suffix
        held = float(self.vol[list(P)].sum())
        for j_a in sigma:
            held += self.vol[j_a]
            row(held + M * self.t0, INF, [j_a], [float(M)])
        # (6) P's order statistics
        if self.order_statistics and len(P) >= 2:
            F = np.sort(self.floor[list(P)])
            V = np.cumsum(np.sort(self.vol[list(P)]))
            row(float(np.maximum(F, self.t0 + V / M).sum()), INF, list(P), [1.0] * len(P))
        return columns[0], lower, upper, cols, vals

    def value(self, sigma, P) -> float:
        """The node's LP value (total latency), or inf where the rows admit no completion times."""
        ncol, lower, upper, cols, vals = self.rows(sigma, P)
        n = self.n
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = ncol, len(lower)
        lp.col_cost_ = np.concatenate([np.ones(n), np.zeros(ncol - n)])
        lp.col_lower_ = np.concatenate([self.floor, np.zeros(ncol - n)])
        lp.col_upper_ = np.full(ncol, INF)
        lp.row_lower_, lp.row_upper_ = np.array(lower, dtype=np.float64), np.array(upper, dtype=np.float64)
        matrix = highspy.HighsSparseMatrix()
        matrix.format_ = highspy.MatrixFormat.kRowwise
        matrix.num_col_, matrix.num_row_ = ncol, len(lower)
        matrix.start_ = np.concatenate([[0], np.cumsum([len(c) for c in cols])]).astype(np.int32)
        matrix.index_ = np.concatenate([np.asarray(c, dtype=np.int32) for c in cols]) if cols else np.zeros(0, np.int32)
        matrix.value_ = np.concatenate([np.asarray(v, dtype=np.float64) for v in vals]) if vals else np.zeros(0)
        lp.a_matrix_ = matrix
        self.highs.clearModel()
        self.highs.passModel(lp)
        self.highs.run()
        self.solved += 1
        status = self.highs.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return math.inf
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"node LP: {self.highs.modelStatusToString(status)}")
        return self.highs.getInfo().objective_function_value - float(self.a.sum())


def rounded_up(value: float) -> float:
    """A node's LP value as a bound on the integer latency (``lpbench.solve.integral_bound``)."""
    return value if value == math.inf else integral_bound(value)


def branch_and_bound(inst, ub: float = math.inf, seconds: float = 60.0, order_statistics: bool = True,
                     report_at=()) -> dict:
    """Best-first search of the module docstring. ``bound`` is certified (at most OPT, and at most ``ub`` where
    ``ub`` is a schedule's latency); ``converged``: it is the least leaf value (or UB, every node pruned);
    ``trace``: (second, bound, LPs solved) at each second of ``report_at`` that the search reached (all of them
    once converged, since the bound stays)."""
    lp = NodeLP(inst, order_statistics)
    n, everyone = lp.n, frozenset(range(lp.n))
    t_start = time.perf_counter()
    root = lp.value((), list(range(n)))
    heap, pushed, trace, marks = [(max(rounded_up(root), 0), 0, ())], 1, [], list(report_at)
    converged = False

    def bound():
        return min(ub, heap[0][0]) if heap else ub

    while True:
        elapsed = time.perf_counter() - t_start
        while marks and elapsed >= marks[0]:
            trace.append((marks.pop(0), bound(), lp.solved))
        if not heap or heap[0][0] >= ub or len(heap[0][2]) == n:
            converged = True
            break
        if elapsed >= seconds:
            break
        value, _, sigma = heapq.heappop(heap)
        rest = sorted(everyone.difference(sigma))
        for h in rest:
            child, P = (h,) + sigma, [x for x in rest if x != h]
            v = max(rounded_up(lp.value(child, P)), value)
            if v < ub and len(P) == 1:                 # the last one is determined: the complete order
                child, P = (P[0],) + child, []
                v = max(rounded_up(lp.value(child, P)), v)
            if v < ub:
                heapq.heappush(heap, (v, pushed, child))
                pushed += 1
    if converged:
        trace += [(mark, bound(), lp.solved) for mark in marks]
    return {"bound": bound(), "converged": converged, "root": root, "nodes": lp.solved,
            "seconds": time.perf_counter() - t_start, "open": len(heap), "trace": trace}


def depth_limited(inst, ub: float, depth: int, order_statistics: bool = True) -> tuple[float, int]:
    """(the least value over every node of the given depth, LPs solved): certified, as every order has one."""
    lp = NodeLP(inst, order_statistics)
    level = [((), -math.inf)]
    for _ in range(depth):
        level = [(child, v) for sigma, value in level for h in range(lp.n) if h not in sigma
                 for child in [(h,) + sigma]
                 for v in [max(rounded_up(lp.value(child, [x for x in range(lp.n) if x not in child])), value)]
                 if v < ub]
    return min([ub] + [v for _, v in level]), lp.solved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", default="jaillet-model1:0,jaillet-model2:0", help="model:k of seed 0, comma-separated")
    ap.add_argument("--requests", default="", help="first n requests, comma-separated (default: the whole draw)")
    ap.add_argument("--seconds", type=float, default=60.0, help="branch-and-bound per instance")
    ap.add_argument("--ub-seconds", type=float, default=20.0,
                    help="`lpbench solve` (latency-cp on CP-SAT) per instance; UB is the best of its verified schedule "
                         "and the local search's (up to 20 requests the solve's certify step runs the exact search, so "
                         "UB is usually OPT there)")
    ap.add_argument("--report-at", default="", help="also the certified bound at these seconds (comma-separated)")
    ap.add_argument("--chain-seconds", type=float, default=10.0)
    ap.add_argument("--depth", default="", help="also the depth-limited minimum at these depths (comma-separated)")
    ap.add_argument("--no-order-statistics", action="store_true", help="without row (6)")
    args = ap.parse_args(argv)
    depths = [int(d) for d in args.depth.split(",") if d]
    marks = [float(s) for s in args.report_at.split(",") if s]
    sizes = [int(r) for r in args.requests.split(",") if r] or [None]
    print("| draw | n | UB (the solve's status) | chain-bound / UB | volume-bound / UB | root / UB | converged | LPs | seconds | "
          "certified / UB" + "".join(f" | at {s:g} s" for s in marks) + "".join(f" | depth {d} / UB" for d in depths)
          + " |")
    print("|---|---|---|---|---|---|---|---|---|---" + "|---" * (len(marks) + len(depths)) + "|")
    for size in sizes:
        for item in args.draws.split(","):
            model, k = item.split(":")
            inst = parse_instance(jaillet.instance(model, 0, int(k), first=size))
            rep = solve_instance(inst, "latency-cp", "cpsat", time_limit=args.ub_seconds)
            ub = float(min(rep["best_known"], local_search(inst, seed=0)[1]))
            chain, _ = chain_bound(inst, time.perf_counter() + args.chain_seconds)
            res = branch_and_bound(inst, ub, args.seconds, not args.no_order_statistics, report_at=marks)
            reached = {mark: value for mark, value, _ in res["trace"]}
            line = (f"| {model} k = {k} | {inst.n} | {ub:,.0f} ({rep['status']}) | {chain / ub:.3f} | "
                    f"{VolumeBound(inst).value() / ub:.3f} | {res['root'] / ub:.3f} | "
                    f"{'yes' if res['converged'] else 'no'} | {res['nodes']:,} | {res['seconds']:.1f} | "
                    f"{res['bound'] / ub:.3f}")
            line += "".join(f" | {reached[s] / ub:.3f}" if s in reached else " | —" for s in marks)
            for d in depths:
                value, _ = depth_limited(inst, ub, d, not args.no_order_statistics)
                line += f" | {value / ub:.3f}"
            print(line + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
