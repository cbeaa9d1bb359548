"""What a block over the first FOUR completions would add to chain-bound (issue 12; a probe, not a test).

``chain-bound`` charges its first three completers x, y, l exactly, over the schedules of the three alone from t0
(lpbench/formulations/chain.py, "The first three completions in absolute time"), and the fourth, e, through the
triple bonus B(m − 2, y, l, e). This probe measures what charging the four together would add. It takes the programme
with the fixed split and no own floors on the set U and at the λ of the highest value (X left out) that
``chain_bound`` evaluated exactly. For every quadruple (x, y, l, e) it writes the programme's value as

    V(x, y, l, e) = top(x, y, l) + B(m − 2, y, l, e) + the rest of the chain from (l, e),

and then raises the minimising quadruples one by one, lazily, until the least one is raised. Each is raised to
Q(x, y, l, e) + the same rest, where Q is the least of A1·u + A2·δ1 + W_{m−2}·(δ2 − w(y, l)) + b·(δ3 − w(l, e)) over
the schedules of the four alone from t0 that complete in that order (CP-SAT on the cumulative model of
``latency-cp``). Here b is triple (y, l, e)'s share of δ3.

Validity: top(x, y, l) and B(m − 2, y, l, e) bound two parts of that same sum, the first over the three alone and
the second over the triple's relative gaps. Q bounds the whole sum over the four alone. A schedule of U restricted to
the four is a schedule of the four alone, so the larger of (top + B) and Q is a bound on each quadruple. The printed
count of quadruples where Q < top + B checks the model: it must be 0, since Q minimises over a subset of what the two
parts minimise over. Every raised entry is valid, so the value is a bound even when the lazy loop stops early, and
every order of U is still a sequence of the programme.

    python benchmarks/four_block_probe.py --draws jaillet-model1:0,jaillet-model2:40 --seconds 8 --calls 4000

It prints, per draw, the programme's value before and after, in the chain's units (before the left-out requests'
bound and the waits), the CP-SAT calls, and whether the lazy loop converged.

The block is built since cffa4eb (``chain.FIRST_FOUR``, with a compiled exact kernel for the four requests in place of
CP-SAT); this probe measures it the independent way, with the block itself off in ``chain_bound``'s run.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from ortools.sat.python import cp_model

from lpbench.formulations import chain
from lpbench.formulations.latency_cp import memory_ramps
from lpbench.generators import jaillet
from lpbench.instance import parse_instance


def best_programme(inst, seconds: float):
    """(q, λ): of the programmes with the fixed split and the block that ``chain_bound`` evaluated exactly, the one
    and λ of the highest value (without X), or (None, None)."""
    seen = {"value": -np.inf}
    exact = chain._QPath.exact

    def capture(q, lam):
        value = exact(q, lam)
        if q.top is not None and q.weight_unit == 1 and q.plain / value[1] > seen["value"]:
            seen.update(q=q, lam=lam.copy(), value=q.plain / value[1])
        return value

    chain._QPath.exact = capture
    four, chain.FIRST_FOUR = chain.FIRST_FOUR, False
    try:
        chain.chain_bound(inst, time.perf_counter() + seconds)
    finally:
        chain._QPath.exact = exact
        chain.FIRST_FOUR = four
    return seen.get("q"), seen.get("lam")


def four_alone(a, s, o, M: int, order: np.ndarray, coef: tuple, wyl: int, wle: int) -> int:
    """Q: the least coef · (u, δ1, δ2 − wyl, δ3 − wle) over the schedules of the four requests ``order`` alone from
    t0 = 0 that complete in that order (ties allowed); ``a`` are arrivals less t0."""
    model = cp_model.CpModel()
    last = int(a[order].max() + o[order].sum())
    S = [model.NewIntVar(int(a[i]), last, f"S{i}") for i in order]
    memory_ramps(model, S, s[order], o[order], M)
    C = [S[k] + int(o[order[k]]) for k in range(4)]
    for k in range(3):
        model.Add(C[k] <= C[k + 1])
    A1, A2, A3, A4 = coef
    model.Minimize(A1 * C[0] + A2 * (C[1] - C[0]) + A3 * (C[2] - C[1] - wyl) + A4 * (C[3] - C[2] - wle))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 10
    if solver.Solve(model) != cp_model.OPTIMAL:
        raise RuntimeError(f"four requests {order.tolist()} not solved within 10 s")
    return int(round(solver.ObjectiveValue()))


def probe(q, lam, calls: int) -> dict:
    """The programme's value before and after raising the minimising quadruples (at most ``calls`` CP-SAT calls)."""
    m, S, unit = q.m, chain.LAMBDA_SCALE, q.unit
    assert q.weight[m] == m and not q.node.any() and unit == chain.UNIT, "fixed split, no own floors"
    lamq = np.round(unit * S * lam).astype(np.int64)
    w = S * q.wu.astype(np.int64)
    rest = chain._exact_tail(q.B3, q.keep, w, lamq, q.weight, S * q.node, S, m - 3)        # F_{m−3}(l, e)
    _, _, top = q.top
    B = np.where(chain.repeats(m), chain.EXACT_BIG, S * q.B3[m - 2][np.ix_(q.keep, q.keep, q.keep)].astype(np.int64))
    head = S * top + lamq[:, None, None] + lamq[None, :, None] + (q.weight[m - 2] * w + lamq[None, :])[None]
    V = np.minimum(head[:, :, :, None] + B[None] + rest[None, None], chain.EXACT_BIG)          # [x, y, l, e]
    V[np.arange(m), :, :, np.arange(m)] = chain.EXACT_BIG                                       # x = e
    before = int(V.min()) - int(lamq.sum())
    p, o, M = q.requests
    s, a = p - o, q.c - o                                   # prompts; arrivals less t0 (c = a − t0 + o)
    # in the programme's units (1/UNIT, times S): the weights of u, δ1, δ2 (whole) and triple (y, l, e)'s share of δ3
    coef = (S * unit * m, S * unit * (m - 1), S * unit * (m - 2), S * (unit - chain.SPLIT[0]) * (m - 3))
    raised, below, t0 = set(), 0, time.perf_counter()
    while len(raised) < calls:
        x, y, l, e = np.unravel_index(int(np.argmin(V)), V.shape)
        if (x, y, l, e) in raised:
            break
        Q = four_alone(a, s, o, M, np.array([x, y, l, e]), coef, int(q.w[y, l]), int(q.w[l, e]))
        parts = S * int(top[x, y, l]) + int(B[y, l, e])
        below += Q < parts
        V[x, y, l, e] += max(0, Q - parts)
        raised.add((x, y, l, e))
    after = int(V.min()) - int(lamq.sum())
    converged = tuple(np.unravel_index(int(np.argmin(V)), V.shape)) in raised
    return {"m": m, "before": before / (unit * S), "after": after / (unit * S), "calls": len(raised),
            "below": below, "converged": converged, "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", default="jaillet-model1:0,jaillet-model2:40", help="model:k, comma-separated")
    ap.add_argument("--seconds", type=float, default=8.0, help="chain_bound's time before the probe")
    ap.add_argument("--calls", type=int, default=4000, help="at most this many CP-SAT calls per draw")
    args = ap.parse_args()
    print("| draw | n | m | programme | with the four-block | gain | CP-SAT calls | converged | Q < top + B | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.draws.split(","):
        model, k = spec.split(":")
        inst = parse_instance(jaillet.instance(model, 0, int(k)))
        q, lam = best_programme(inst, args.seconds)
        if q is None:
            print(f"| {spec} | {inst.n} | no programme with the block was evaluated | | | | | | | |")
            continue
        r = probe(q, lam, args.calls)
        gain = (r["after"] - r["before"]) / abs(r["before"])
        print(f"| {spec} | {inst.n} | {r['m']} | {r['before']:,.1f} | {r['after']:,.1f} | {100 * gain:+.2f} % | "
              f"{r['calls']} | {r['converged']} | {r['below']} | {r['seconds']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
