"""How far `chain-bound`'s q-path relaxation is from the chain's minimum over orders (issue 12; not a test).

`chain-bound` minimises the chain (L) over sequences in which no request repeats among three consecutive ones, priced
by λ (Lagrangian q-path relaxation, :mod:`lpbench.formulations.chain`). Its minimising sequence at the end of the
search still visits some requests twice and others never, so the minimum over true orders of U may lie above the
value L(λ) it certifies. This script runs ``chain_bound`` on each draw and, after its last step (the split per
position and pair), reads the tables it ended with (shares, own floors) and the best λ: it prints L(λ) and the least
chain value over orders that an insertion local search finds on those same tables (from the minimising sequence made
an order, and from 19 other starts: 10 near the order of c, 9 random), and their ratio. That least value is an upper
estimate of the minimum over orders, so the ratio is an upper estimate of what any tighter relaxation of the
sequences (k-cycle elimination, ng-routes) could add to the chain on these tables. Values are in latency units of U's
part (before the requests left out and the arrival offsets), float32 as the search computes them.

    python benchmarks/qpath_gap.py --draws jaillet-model1:0,jaillet-model1:20,jaillet-model2:0,jaillet-model2:40 --seconds 10
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from lpbench.formulations import chain
from lpbench.formulations.compiled import compiled
from lpbench.generators import jaillet
from lpbench.instance import parse_instance


@compiled
def order_value(e, Bt, cu, wu, weight, node):
    """The programme's value of the sequence e (first completer first) without λ: the chain of that order."""
    m = e.shape[0]
    v = weight[m] * cu[e[0]] + node[m, e[0]]
    for r in range(1, m):
        h, j = e[m - r - 1], e[m - r]                   # e_{r+1}, e_r
        v += weight[r] * wu[h, j] + node[r, j]
        if r >= 2:
            v += Bt[r, e[m - r + 1], h, j]              # B(r, e_{r+1}, e_r, e_{r-1}) in the search's layout
    return v


@compiled
def insertion_search(e, Bt, cu, wu, weight, node):
    """Move one request to another position while that lowers the order's value; e is left at the local minimum."""
    m = e.shape[0]
    best = order_value(e, Bt, cu, wu, weight, node)
    f = e.copy()
    improved = True
    while improved:
        improved = False
        for i in range(m):
            for j in range(m):
                if i == j:
                    continue
                k = 0
                for t in range(m):
                    if t == i:
                        continue
                    if k == j:
                        f[k] = e[i]
                        k += 1
                    f[k] = e[t]
                    k += 1
                if k == j:
                    f[k] = e[i]
                v = order_value(f, Bt, cu, wu, weight, node)
                if v < best - 1e-6:
                    best = v
                    e[:] = f[:]
                    improved = True
    return best


def least_order(q, c: np.ndarray, seed: int = 0) -> float:
    """The least order value found from 20 starts (module docstring), in units of 1/q.unit."""
    made = list(dict.fromkeys(int(x) for x in q.sequence))
    made += [k for k in range(q.m) if k not in made]
    rng = np.random.default_rng(seed)
    starts = [made] + [sorted(range(q.m), key=lambda k: c[k] + 5 * rng.random()) for _ in range(10)]
    starts += [list(rng.permutation(q.m)) for _ in range(9)]
    cu = q.cu.astype(np.float32)
    return min(insertion_search(np.array(e, dtype=np.int64), q.Bt, cu, q.wuf, q.weightf, q.nodef) for e in starts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", default="jaillet-model1:0,jaillet-model1:20,jaillet-model2:0,jaillet-model2:40")
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    rows: list = []
    search = chain._share_ascent

    def measured(q, c, D1, D2, alpha, mu, lam, deadline, trace, step):
        found = search(q, c, D1, D2, alpha, mu, lam, deadline, trace, step)
        if step == "pair":
            value, visits = q.value(found[3])
            rows.append((q.m, int((visits == 0).sum()), int((visits >= 2).sum()), value / q.unit,
                         least_order(q, c) / q.unit))
        return found

    chain._share_ascent = measured
    print("| draw | n | chain-bound | m | never visited | visited twice or more | L(λ) | least order found | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for item in args.draws.split(","):
        model, k = item.split(":")
        inst = parse_instance(jaillet.instance(model, 0, int(k)))
        rows.clear()
        bound, _ = chain.chain_bound(inst, time.perf_counter() + args.seconds)
        for m, never, twice, value, order in rows:
            print(f"| {item} | {inst.n} | {bound} | {m} | {never} | {twice} | {value:.1f} | {order:.1f} | "
                  f"{order / value:.4f} |", flush=True)
        if not rows:
            print(f"| {item} | {inst.n} | {bound} | — | the pair step did not run | | | | |", flush=True)


if __name__ == "__main__":
    main()
