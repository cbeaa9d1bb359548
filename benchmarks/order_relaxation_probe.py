"""How much would a bound gain if it saw memory volume *along* the completion order? (issue 12; a probe, not a bound)

For a fixed completion order e (e_1 first), every schedule completing in that order has gaps
δ_l = C_(l) − C_(l−1) (δ_1 = C_(1) − t0, t0 = min a) with total latency Σ_l (n − l + 1)·δ_l − Σ (a_j − t0), and:

* floors: Σ_{i<=l} δ_i >= a_{e_l} − t0 + o_{e_l};
* the chain rows of ``chain-bound`` (Lemmas 2, 2′ of ``completion.py``) between consecutive completions:
  δ_l >= w(e_{l−1}, e_l), δ_{l−1} + δ_l >= w(e_{l−2}, e_l), 2δ_{l−1} + δ_l >= T(e_{l−2}, e_{l−1}, e_l);
* the volume rows (Lemma 3 along the order): the first k completions hold their whole volume in (t0, C_(k)], and
  the stretch (C_(l−1), C_(l)] holds at most φ(δ_l) = Σ_{d<δ_l} max(M − d, 0) memory-rounds, so
  Σ_{l<=k} vol_{e_l} <= Σ_{l<=k} φ(δ_l) for every k (φ concave: its tangents in the LP).

* with ``coact``, the co-activity rows (Lemma 2″, below) at every completion: p_{e_l} + Σ_{m>l} z_{lm} <= M,
  z_{lm} >= p_j·(1 − x_{lm}/o_j), z >= 0, for j = e_m and x_{lm} = C_(m) − C_(l) = δ_{l+1} + … + δ_m.

**Lemma 2″ (co-activity at a completion).** At C_h every request j with C_j >= C_h that is active holds
s_j + age = p_j − (C_j − C_h) (active means C_j − C_h < o_j), the others hold 0, and h holds p_h; eq. (3) at
C_h bounds the sum by M. The memory of j as a function of x = C_j − C_h >= 0 (p_j − x below o_j, 0 from
o_j on) is at least its convex minorant max(0, p_j·(1 − x/o_j)) (the chord from (0, p_j) to (o_j, 0); at
x = o_j − 1 it gives p_j/o_j <= s_j + 1), so the rows above hold for every schedule in its completion order
(ties in any order: x = 0 for the later one). Lemma 2 is the row with one j and the exact footprint;
Lemma 2′ with two; this one sums every later completer, large or small, in a convex (LP) form.

LP_e is the least total latency under these rows (δ continuous), so min over e of LP_e <= OPT. This script
computes LP_e for the order of the best schedule the local search finds, then searches orders (swap and
insert moves, first improvement) for a low LP_e. The minimum it finds is an *estimate from above* of the
relaxation's value, not a bound: it says how much a certified minimum over orders could add to
``chain-bound``, which has the chain rows but no volume rows (and minimises over orders by a Lagrangian
q-path relaxation). Scratch attempts to certify the minimum by the same q-path relaxation with the volume
rows priced (Lagrangian multipliers) are recorded in docs/seed004-certification.md.

    python benchmarks/order_relaxation_probe.py --draws jaillet-model1:0,jaillet-model1:20 --seconds 60
    python benchmarks/order_relaxation_probe.py --draws jaillet-model1:0 --seconds 90 --coact
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lpbench.formulations.chain import chain_bound  # noqa: E402
from lpbench.formulations.completion import pair_separation, triple_separation  # noqa: E402
from lpbench.formulations.volume import volumes  # noqa: E402
from lpbench.generators import jaillet  # noqa: E402
from lpbench.heuristics.slot_sgs import local_search, neighbour  # noqa: E402
from lpbench.instance import parse_instance  # noqa: E402


class OrderLP:
    """LP_e of the module docstring for any order e of one instance (variables δ_1..δ_n, y_1..y_n)."""

    def __init__(self, inst):
        self.a, self.s, self.o = (np.asarray(v, dtype=np.int64) for v in (inst.arrival, inst.prompt, inst.output))
        self.n, self.M = n, M = len(self.s), int(inst.memory)
        self.t0 = int(self.a.min())
        self.c = self.a - self.t0 + self.o
        self.w = pair_separation(self.s, self.o, M).astype(np.int64)
        self.T = triple_separation(self.s + self.o, self.o, self.w, M).astype(np.int64)
        self.vol = volumes(inst).astype(np.int64)
        self.cost = np.concatenate([np.arange(n, 0, -1, dtype=np.float64), np.zeros(n)])
        g = np.arange(M + 1)
        self.tangent_rhs = (M - g) * g - (M * g - g * (g - 1) / 2)   # (M − g)·δ − y >= (M − g)·g − φ(g)
        self.g = g

    #: the co-activity rows keep only the next ``window`` completers (None: all; fewer is a relaxation, since
    #: every term dropped is >= 0)
    window: int | None = None

    def value(self, e: np.ndarray, volume: bool = True, coact: bool = False) -> float:
        n, M = self.n, self.M
        rows, cols, vals, rhs = [], [], [], []
        r = 0
        reach = n if self.window is None else self.window
        pairs = [(l, m) for l in range(n) for m in range(l + 1, min(n, l + 1 + reach))] if coact else []
        z_of = {lm: 2 * n + i for i, lm in enumerate(pairs)}        # variables z_lm after δ and y

        def row(idx, coef, b):   # Σ coef·x >= b, stored as −Σ coef·x <= −b
            nonlocal r
            rows.extend([r] * len(idx)); cols.extend(idx); vals.extend(-np.asarray(coef, dtype=np.float64))
            rhs.append(-b)
            r += 1

        for l in range(n):                                             # floors
            row(list(range(l + 1)), [1] * (l + 1), self.c[e[l]])
        for l in range(1, n):                                          # chain rows
            row([l], [1], self.w[e[l - 1], e[l]])
            if l >= 2:
                row([l - 1, l], [1, 1], self.w[e[l - 2], e[l]])
                row([l - 1, l], [2, 1], self.T[e[l - 2], e[l - 1], e[l]])
        if volume:
            for l in range(n):                                         # y_l <= φ(δ_l), by tangents
                for g in self.g:
                    row([l, n + l], [M - g, -1], self.tangent_rhs[g])
            cum = np.cumsum(self.vol[e])
            for k in range(n):                                         # Σ_{l<=k} y_l >= Σ_{l<=k} vol
                row(list(range(n, n + k + 1)), [1] * (k + 1), cum[k])
        p = self.s + self.o
        for (l, m), z in z_of.items():                               # (2″) z_lm >= p_j·(1 − x_lm/o_j)
            j = e[m]
            row([z] + list(range(l + 1, m + 1)), [1.0] + [p[j] / self.o[j]] * (m - l), float(p[j]))
        for l in range(n - 1 if coact else 0):                         # (2″) p_h + Σ_m z_lm <= M at C_(l)
            zs = [z_of[(l, m)] for m in range(l + 1, min(n, l + 1 + reach))]
            row(zs, [-1.0] * len(zs), -float(M - p[e[l]]))
        A = coo_matrix((vals, (rows, cols)), shape=(r, 2 * n + len(pairs))).tocsr()
        bounds = [(0, None)] * n + [(None, None) if volume else (0, 0)] * n + [(0, None)] * len(pairs)
        cost = np.concatenate([self.cost, np.zeros(len(pairs))])
        res = linprog(cost, A_ub=A, b_ub=np.array(rhs, dtype=np.float64), bounds=bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"LP_e: {res.message}")
        return float(res.fun) - float((self.a - self.t0).sum())


def search_orders(lp: OrderLP, starts: list[np.ndarray], seconds: float, seed: int,
                  volume: bool = True, coact: bool = False) -> tuple[float, np.ndarray, int]:
    """First-improvement search over orders (the local search's move, :func:`~lpbench.heuristics.slot_sgs.neighbour`,
    per step) for a low LP_e."""
    rng = np.random.default_rng(seed)
    scored = [(lp.value(e, volume, coact), e) for e in starts]
    best, best_e = min(scored, key=lambda x: x[0])
    steps, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        e, _ = neighbour(best_e, rng)
        v = lp.value(e, volume, coact)
        steps += 1
        if v < best - 1e-9:
            best, best_e = v, e
    return best, best_e, steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", default="jaillet-model1:0,jaillet-model1:20,jaillet-model2:0",
                    help="model:k of seed 0, comma-separated")
    ap.add_argument("--seconds", type=float, default=120.0,
                    help="order search per draw (half without, half with the volume rows; thirds with --coact)")
    ap.add_argument("--coact", action="store_true", help="also the co-activity rows of Lemma 2″ (a third search)")
    ap.add_argument("--chain-seconds", type=float, default=10.0, help="chain-bound per draw")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    share = args.seconds / (3 if args.coact else 2)
    extra = (" | LP_e on the UB's order: + co-activity rows | least LP_e found: + co-activity rows (/ UB)"
             if args.coact else "")
    print("| draw | n | best schedule UB | chain-bound (/ UB) | LP_e on the UB's order: chain rows / + volume rows | "
          "least LP_e found: chain rows (/ UB) | least LP_e found: + volume rows (/ UB)" + extra + " |")
    print("|---|---|---|---|---|---|---" + ("|---|---" if args.coact else "") + "|")
    for item in args.draws.split(","):
        model, k = item.split(":")
        inst = parse_instance(jaillet.instance(model, 0, int(k)))
        lp = OrderLP(inst)
        starts = np.asarray(local_search(inst, seed=args.seed)[0], dtype=np.int64)
        done = starts + lp.o
        ub = int((done - lp.a).sum())
        e_best = np.argsort(done, kind="stable")
        chain, _ = chain_bound(inst, time.perf_counter() + args.chain_seconds)
        on_best = (lp.value(e_best, volume=False), lp.value(e_best))
        by_volume = np.argsort(lp.vol, kind="stable")
        rows_only, _, steps0 = search_orders(lp, [e_best, by_volume], share, args.seed, volume=False)
        least, _, steps1 = search_orders(lp, [e_best, by_volume], share, args.seed)
        line = (f"| {model} k = {k} | {lp.n} | {ub:,} | {chain:,} ({chain / ub:.3f}) | {on_best[0]:,.0f} / "
                f"{on_best[1]:,.0f} | {rows_only:,.0f} ({rows_only / ub:.3f}; {steps0:,} steps) | "
                f"{least:,.0f} ({least / ub:.3f}; {steps1:,} steps)")
        if args.coact:
            least_co, _, steps2 = search_orders(lp, [e_best, by_volume], share, args.seed, coact=True)
            line += (f" | {lp.value(e_best, coact=True):,.0f} | {least_co:,.0f} ({least_co / ub:.3f}; "
                     f"{steps2:,} steps)")
        print(line + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
