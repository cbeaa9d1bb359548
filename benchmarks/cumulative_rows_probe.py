"""Eq. (3) of ``latency-lp`` written with cumulative variables: 20-60 times fewer matrix entries, a slower LP
(issue 12; measured, not adopted: docs/seed004-certification.md, "The memory rows with cumulative variables").

The plain row (3) holds o_i entries per start variable x_{i,k}. With Y_{i,u} = Σ_{k<=u} x_{i,k} (started by u) and
W_{i,u} = Σ_{v<=u} Y_{i,v}, request i's memory at round t (u = t − 1) is

    m_i(t) = s_i·(Y_{i,u} − Y_{i,u−o_i}) + W_{i,u} − W_{i,u−o_i} − o_i·Y_{i,u−o_i},

since Σ_{k=u−o+1}^{u} (u − k + 1)·x_k = W_u − W_{u−o} − o·Y_{u−o} (each x_k with k <= u − o is counted o times in
W_u − W_{u−o}). So row (3) has at most 4 entries per request, and the definitions Y_u = Y_{u−1} + x_u,
W_u = W_{u−1} + Y_u two rows of 3 entries per x; (2) is Y at the last start = 1. For u past the last start k̄_i,
Y = 1 and W = W_{k̄} + (u − k̄), moved to the right-hand side. Y and W are linear in x, so the LP is the same
polyhedron in x: its value equals ``latency-lp``'s, which the probe checks on every instance.

    python benchmarks/cumulative_rows_probe.py F.json [F2.json ...] [--time-limit 120] [--ipm] [--ub UB]

F: slot instance files (e.g. ``bench_slot_load.py --rho 0.8 --requests N --write-instances DIR``). The horizon
(b) uses MC-SF's verified total latency, or ``--ub``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from lpbench.formulations.base import LinearModel
from lpbench.formulations.latency_ip import LatencyLP
from lpbench.instance import load_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.solvers.base import SolverProfile
from lpbench.solvers.highs import HighsBackend
from lpbench.verify import verify


def cumulative_model(form: LatencyLP) -> LinearModel:
    """``form``'s LP with (2) and (3) in the cumulative variables of the module docstring."""
    inst = form.inst
    a = inst.arrival.astype(np.int64)
    s, o, M = inst.prompt.astype(np.int64), inst.output.astype(np.int64), int(inst.memory)
    last = form.horizon()
    size = last - a + 1
    first_var = np.concatenate([[0], np.cumsum(size)])
    nx = int(size.sum())
    lp = LinearModel(f"cumulative:{inst.name}", offset=float((o - a).sum()))
    x = lp.add_vars("x", nx, lower=0, upper=1, cost=np.concatenate([np.arange(a[i], last[i] + 1)
                                                                     for i in range(inst.n)]))
    Y = lp.add_vars("Y", nx, lower=0, upper=1)
    W = lp.add_vars("W", nx, lower=0)
    later = np.ones(nx, dtype=bool)
    later[first_var[:-1]] = False                      # the first start of each request has no predecessor
    rows, prev = np.arange(nx), np.flatnonzero(later)
    for name, v, u in (("Y_u = Y_{u-1} + x_u", Y, x), ("W_u = W_{u-1} + Y_u", W, Y)):
        lp.add_rows(name, nx, np.concatenate([rows, rows, prev]), np.concatenate([v, u, v[prev - 1]]),
                    np.concatenate([np.ones(nx), -np.ones(nx), -np.ones(len(prev))]), lower=0, upper=0)
    # (2) each request starts exactly once: started by its last start
    lp.add_rows("(2) start once", inst.n, np.arange(inst.n), Y[first_var[1:] - 1], np.ones(inst.n), lower=1, upper=1)
    # (3) memory at every time t, by the identity of the docstring (u = t − 1)
    t0, t1 = int(a.min()) + 1, int((last + o).max())
    r, c, v = [], [], []
    rhs = np.full(t1 - t0 + 1, float(M))
    for i in range(inst.n):
        t = np.arange(a[i] + 1, last[i] + o[i] + 1)
        for lag, coef_Y, coef_W in ((1, s[i], 1), (1 + o[i], -(s[i] + o[i]), -1)):
            u = t - lag
            held = (u >= a[i]) & (u <= last[i])
            past = u > last[i]
            at = first_var[i] + u[held] - a[i]
            r += [t[held] - t0, t[held] - t0, t[past] - t0]
            c += [Y[at], W[at], np.full(int(past.sum()), W[first_var[i + 1] - 1])]
            v += [np.full(len(at), float(coef_Y)), np.full(len(at), float(coef_W)),
                  np.full(int(past.sum()), float(coef_W))]
            np.subtract.at(rhs, t[past] - t0, coef_Y + coef_W * (u[past] - last[i]))
    lp.add_rows("(3) memory at every time t", t1 - t0 + 1, np.concatenate(r), np.concatenate(c), np.concatenate(v),
                upper=rhs)
    return lp


def entries(lp: LinearModel) -> int:
    return len(lp.coo()[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--ipm", action="store_true", help="HiGHS's interior point for the cumulative form")
    ap.add_argument("--ub", type=float, help="the incumbent of horizon (b) (default: MC-SF's total latency)")
    args = ap.parse_args()
    print("| instance | n | form | entries | rows | build s | LP status | LP value | solve s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path in args.instances:
        inst = load_instance(path)
        ub = args.ub or verify(inst, simulate(inst, make_policy("mc-sf", inst)).schedule).metrics["total_latency"]
        form = LatencyLP(inst, incumbent_objective=ub)
        values = []
        for name, build, options in (("plain", form.build, {}),
                                     ("cumulative", lambda: cumulative_model(form),
                                      {"solver": "ipm"} if args.ipm else {})):
            t = time.perf_counter()
            lp = build()
            built = time.perf_counter() - t
            res = HighsBackend().solve(lp, SolverProfile("highs", "highs", time_limit=args.time_limit,
                                                         options=options))
            values.append(res.objective)
            value = "—" if res.objective is None else f"{res.objective:,.2f}"
            print(f"| {inst.name} | {inst.n} | {name}{' (ipm)' if options else ''} | {entries(lp):,} | {lp.n_rows:,} "
                  f"| {built:.2f} | {res.status} | {value} | {res.solve_seconds:.2f} |", flush=True)
        if None not in values and abs(values[0] - values[1]) > 1e-6 * max(1.0, abs(values[0])):
            raise SystemExit(f"{inst.name}: the two forms disagree ({values[0]} against {values[1]}): a bug")


if __name__ == "__main__":
    main()
