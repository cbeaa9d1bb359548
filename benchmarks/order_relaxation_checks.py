"""Checks of the co-activity rows (Lemma 2″) of ``order_relaxation_probe.py`` against known optima, how far they
must look, and whether CP-SAT's bound on ``completion-cp`` sees them (issue 12; docs/seed004-certification.md):

    python benchmarks/order_relaxation_checks.py small                  # 100 small instances, every order
    python benchmarks/order_relaxation_checks.py known --requests 14 --draws jaillet-model1:0,jaillet-model1:1,jaillet-model1:2,jaillet-model2:0,jaillet-model2:1
    python benchmarks/order_relaxation_checks.py window --draws jaillet-model1:0,jaillet-model2:0
    python benchmarks/order_relaxation_checks.py cpsat --requests 14 --draws jaillet-model1:0,jaillet-model1:1,jaillet-model2:0

``small``: the 100 instances of the bound tests (60 random with arrivals, 40 where Lemma 2′ binds; tests/), the least
LP_e over *all* orders, without and with the co-activity rows, over the brute-force OPT. ``known``: the first n
requests of each draw, OPT by ``latency-astar`` (60 s), the value of ``latency-lp`` (the time-indexed LP, whose
memory rows at every round imply the co-activity rows for integral starts) and the least LP_e an order search finds
(--seconds per column, from the local search's order and the volume order), each over OPT. ``window``: the rows cut to the next K
completers, LP_e on the best schedule's order and the least found (--seconds per K), over UB. ``cpsat``: CP-SAT's
own bound (--seconds, 2 workers) on ``completion-cp``'s last stage (pairs, (G), triples) of the first n requests,
without and with the rows enforced by order literals (o_j·z_hj >= p_j·(o_j − (C_j − C_h)) when C_j >= C_h, z >= 0
integer, Σ_j z_hj <= M − p_h), in total latency.
"""
from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from order_relaxation_probe import OrderLP, search_orders  # noqa: E402

from lpbench.generators import jaillet  # noqa: E402
from lpbench.heuristics.slot_sgs import local_search  # noqa: E402
from lpbench.instance import parse_instance  # noqa: E402


def draw(item: str, n: int | None):
    model, k = item.split(":")
    return parse_instance(jaillet.instance(model, 0, int(k), first=n or None))


def proven_optimum(inst) -> float | None:
    """OPT by ``latency-astar`` in 60 s, or None where it is not proven."""
    from lpbench.solve import solve_instance

    rep = solve_instance(inst, "latency-astar", None, 60, ["mc-sf"])
    return rep["objective"] if rep["status"] == "optimal" else None


def starts_of(lp: OrderLP, inst):
    """(UB of the local search, its completion order, the order by volume)."""
    starts = np.asarray(local_search(inst, seed=0)[0], dtype=np.int64)
    done = starts + lp.o
    return int((done - lp.a).sum()), np.argsort(done, kind="stable"), np.argsort(lp.vol, kind="stable")


def small() -> None:
    from test_latency import brute_force
    from test_latency_astar import random_instances, triple_instance

    cases = [inst for _, inst in random_instances()] + [triple_instance(seed) for seed in range(40)]
    without, with_rows = [], []
    for inst in cases:
        lp, opt = OrderLP(inst), brute_force(inst)
        orders = [np.array(e) for e in itertools.permutations(range(inst.n))]
        without.append(min(lp.value(e) for e in orders) / opt)
        with_rows.append(min(lp.value(e, coact=True) for e in orders) / opt)
    for name, r in (("chain + volume rows", np.array(without)), ("+ co-activity rows", np.array(with_rows))):
        print(f"{name}: least LP_e / OPT median {np.median(r):.3f}, mean {r.mean():.3f}, least {r.min():.3f}")
    higher = sum(b > a + 1e-9 for a, b in zip(without, with_rows))
    print(f"higher with the co-activity rows on {higher} of {len(cases)}")


def known(items, n: int, seconds: float) -> None:
    from lpbench.solve import solve_instance

    for item in items:
        inst = draw(item, n)
        opt = proven_optimum(inst)
        if opt is None:
            print(f"{item} n = {inst.n}: OPT not proven in 60 s")
            continue
        time_lp = solve_instance(inst, "latency-lp", None, 60, ["mc-sf"])
        lp = OrderLP(inst)
        _, e_ls, e_vol = starts_of(lp, inst)
        plain, _, s1 = search_orders(lp, [e_ls, e_vol], seconds, 0)
        rows, _, s2 = search_orders(lp, [e_ls, e_vol], seconds, 0, coact=True)
        print(f"{item} n = {inst.n}: OPT {opt:.0f}; latency-lp / OPT {time_lp['bound'] / opt:.3f} "
              f"({time_lp['status']}); least LP_e found / OPT: chain + volume {plain / opt:.3f} ({s1} steps), "
              f"+ co-activity {rows / opt:.3f} ({s2} steps)")


def window(items, seconds: float) -> None:
    for item in items:
        inst = draw(item, None)
        lp = OrderLP(inst)
        ub, e_ls, e_vol = starts_of(lp, inst)
        cells = []
        for K in (1, 2, 3, 5, 10, None):
            lp.window = K
            least, _, _ = search_orders(lp, [e_ls, e_vol], seconds, 0, coact=True)
            cells.append(f"K = {K or 'all'}: {lp.value(e_ls, coact=True) / ub:.3f} / {least / ub:.3f}")
        print(f"{item} n = {inst.n}, UB {ub}: LP_e on UB's order / least found, over UB: " + "; ".join(cells))


def cpsat(items, n: int, seconds: float) -> None:
    from lpbench.formulations.completion import CompletionCP
    from lpbench.solvers.base import SolverProfile
    from lpbench.solvers.cpsat import solve_cp

    for item in items:
        inst = draw(item, n)
        s, o, M = inst.prompt.astype(np.int64), inst.output.astype(np.int64), int(inst.memory)
        p = s + o
        bounds = []
        for rows in (False, True):
            m, C = CompletionCP(inst).cp_model(capacity=True, triples=True, floor=None)
            for h in range(inst.n if rows else 0):                  # (2″) with the order literal C_j >= C_h
                zs = []
                for j in range(inst.n):
                    if j != h:
                        later = m.NewBoolVar(f"later{h}_{j}")
                        m.Add(C[j] >= C[h]).OnlyEnforceIf(later)
                        m.Add(C[j] < C[h]).OnlyEnforceIf(later.Not())
                        z = m.NewIntVar(0, int(p[j]), f"z{h}_{j}")
                        m.Add(int(o[j]) * z >= int(p[j]) * (int(o[j]) - (C[j] - C[h]))).OnlyEnforceIf(later)
                        zs.append(z)
                m.Add(sum(zs) <= M - int(p[h]))
            res = solve_cp(m, SolverProfile("check", "cpsat", time_limit=seconds, threads=2), lambda solver: None)
            bounds.append(res.bound - float(inst.arrival.sum()))
        print(f"{item} n = {inst.n}: CP-SAT's bound without / with the rows: {bounds[0]:,.0f} / {bounds[1]:,.0f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["small", "known", "window", "cpsat"])
    ap.add_argument("--draws", default="jaillet-model1:0,jaillet-model2:0", help="model:k of seed 0, comma-separated")
    ap.add_argument("--requests", type=int, default=14, help="known: the first n requests of each draw")
    ap.add_argument("--seconds", type=float, default=None,
                    help="order search per column (default 15 for known, 10 for window); CP-SAT's limit for cpsat "
                         "(default 20)")
    args = ap.parse_args(argv)
    items = args.draws.split(",")
    if args.mode == "small":
        small()
    elif args.mode == "cpsat":
        cpsat(items, args.requests, args.seconds or 20.0)
    elif args.mode == "known":
        known(items, args.requests, args.seconds or 15.0)
    else:
        window(items, args.seconds or 10.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
