"""Probe for issue 12 (not shipped as a bound): ``chain-bound`` with a split per position *and pair*.

The split per position of ``lpbench/formulations/chain.py`` gives gap δ_r a share α_r of its weight r in the triple
where it is the first gap. The same argument holds with a share α_r(h, j) for the gap and its two requests h = e_{r+1},
j = e_r: both triples that hold δ_r see that pair, so triple (h, j, k) at position r carries a = α_r(h, j)·r and
b = (1 − α_{r−1}(j, k))(r − 1) (b = 1 at r = 2), its bonus is still read from (r, h, j, k), and for α in [1/2, 1]
(the first gap's at 1) a >= b as ``triple_excess`` needs. L_U stays concave in the m³ shares. This script takes
the best set U of a ``chain-bound`` run, starts from α = 5/8 and λ = 0, and runs the same alternating ascent as
``chain.split_search`` (λ steps, then a Polyak step in α) for ``--seconds``; every value it prints is a valid
lower bound. docs/seed004-certification.md, "A split per position", records what it measured:

    python benchmarks/split_pair_probe.py --seconds 30 jaillet-model1:0 jaillet-model2:0 jaillet-model1:40
"""
import argparse
import time

import numpy as np

from lpbench.formulations import chain
from lpbench.formulations.chain import search_layout
from lpbench.formulations.compiled import compiled
from lpbench.formulations.completion import SPLIT, separation, triple_excess
from lpbench.generators import jaillet
from lpbench.instance import parse_instance


@compiled
def pair_tables(D1, D2, shares, unit, Bx, Bt):
    """``chain._split_tables`` with shares[r, h, j] for the gap r between h and j (in units of 1/unit)."""
    X, m = D1.shape[0], D1.shape[1]
    for r in range(2, m):
        for x in range(X):
            for h in range(m):
                for j in range(m):
                    a = shares[r, h, j] * r
                    for k in range(m):
                        b = unit if r == 2 else (unit - shares[r - 1, j, k]) * (r - 1)
                        v = a * D1[x, h, j, k] + b * D2[x, h, j, k]
                        if x == 0 or v < Bx[r, h, j, k]:
                            Bx[r, h, j, k] = v
        search_layout(Bx, r, Bt)


def pair_search(inst, keep: np.ndarray, seconds: float) -> tuple[int, int]:
    """(⌈best exact L_U⌉ over λ and the shares α_r(h, j), evaluations) for U = ``keep``."""
    a, s, o = (x.astype(np.int64) for x in (inst.arrival, inst.prompt, inst.output))
    M, m, fine = int(inst.memory), len(keep), chain.SPLIT_FINE
    c = (a - int(a.min()) + o)[keep]
    w = separation(inst)[np.ix_(keep, keep)]
    D1, D2 = triple_excess((s + o)[keep], o[keep], w, M)
    Bx = np.zeros((m,) * 4, dtype=np.int64)
    Bt = np.full((m,) * 4, np.inf, dtype=np.float32)
    q = chain._QPath(c, w, Bx, Bt, np.arange(m), unit=fine)
    alpha = np.full((m, m, m), SPLIT[0] / SPLIT[1])
    alpha[m - 1] = 1.0
    lam, lam_theta, theta, stall = np.zeros(m), 1.0, 1.0, 0
    best, best_alpha, evaluations, ceiling = -np.inf, alpha.copy(), 0, None
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        evaluations += 1
        shares = np.rint(alpha * fine).astype(np.int64)
        pair_tables(D1, D2, shares, fine, Bx, Bt)
        lam, lam_theta = chain._ascent(q, lam, max(lam_theta, chain.SPLIT_LAMBDA_THETA), chain.SPLIT_LAMBDA_STEPS, end)
        num, den = q.exact(lam)
        value = num / den
        if value > best + 1e-9:
            best, best_alpha, stall, ceiling = value, alpha.copy(), 0, -(-num // den)
        else:
            stall += 1
            if stall >= chain.PATIENCE:
                theta, stall, alpha = theta * chain.SHRINK, 0, best_alpha.copy()
                if theta < chain.THETA_MIN:
                    break
                continue
        q.value(lam)
        e = q.sequence
        g = np.zeros((m, m, m))
        for r in range(2, m):
            h, j, k = e[m - r - 1], e[m - r], e[m - r + 1]
            b = fine if r == 2 else (fine - shares[r - 1, j, k]) * (r - 1)
            x = int(np.argmin(shares[r, h, j] * r * D1[:, h, j, k] + b * D2[:, h, j, k]))
            g[r, h, j] += r * D1[x, h, j, k]
            if r > 2:
                g[r - 1, j, k] -= (r - 1) * D2[x, h, j, k]
        g[m - 1] = 0.0
        norm = float((g * g).sum())
        if norm == 0:
            break
        goal = (1 + chain.TARGET_MARGIN) * abs(best) + 1
        alpha = np.clip(alpha + chain.SPLIT_STEP * theta * (goal - value) / norm * g, 0.5, 1.0)
        alpha[m - 1] = 1.0
    return ceiling, evaluations


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("draws", nargs="+", help="model:k, e.g. jaillet-model1:0 (seed 0)")
    ap.add_argument("--seconds", type=float, default=30.0, help="the pair search's time")
    ap.add_argument("--chain-seconds", type=float, default=10.0, help="chain-bound's time (it picks U)")
    args = ap.parse_args()
    print("| draw | n | chain-bound | m | split per position and pair | evaluations |")
    print("|---|---|---|---|---|---|")
    for item in args.draws:
        model, k = item.split(":")
        inst = parse_instance(jaillet.instance(model, 0, int(k)))
        trace: list = []
        bound, _ = chain.chain_bound(inst, time.perf_counter() + args.chain_seconds, trace)
        key, r = max(trace, key=lambda row: row[3])[:2]
        order = chain.drop_orders(inst.prompt.astype(np.int64), inst.output.astype(np.int64))[key]
        keep = np.sort(order[r:])
        value, evaluations = pair_search(inst, keep, args.seconds)
        a = inst.arrival.astype(np.int64)
        total = value - int((a[keep] - a.min()).sum()) + chain.bound_alone(inst, order[:r])
        print(f"| {item} | {inst.n} | {bound:,} | {len(keep)} | {total:,} | {evaluations} |", flush=True)


if __name__ == "__main__":
    main()
