"""Gurobi through gurobipy (optional extra ``lpbench[gurobi]``). The pip package carries a
size-limited licence: a model above its limit is reported as status ``licence_limit``."""
from __future__ import annotations

import time

import numpy as np

from ..errors import InputError
from ..interrupt import REQUESTED, Abandoned, run_interruptible
from .base import BACKENDS, UNBOUNDED, Backend, SolveResult

LICENCE_ERRNO = 10010  # "Model too large for size-limited license"


@BACKENDS.register("gurobi")
class GurobiBackend(Backend):
    name = "gurobi"

    def solve(self, model, profile, warm_x=None) -> SolveResult:
        try:
            import gurobipy as gp
            from gurobipy import GRB
        except ImportError:
            raise InputError("--solver: gurobipy is not installed; pip install 'lpbench[gurobi]'") from None
        cost, lower, upper, integer, rlo, rup = model.arrays()
        start, index, value = model.csr()
        t0 = time.perf_counter()
        try:
            env = gp.Env(empty=True)
            env.setParam("OutputFlag", 0)
            env.start()
            m = gp.Model(model.name, env=env)
            vtype = np.where(integer, GRB.INTEGER, GRB.CONTINUOUS)
            x = m.addVars(model.n_vars, lb=lower.tolist(), ub=[GRB.INFINITY if not np.isfinite(u) else u for u in upper],
                          obj=cost.tolist(), vtype=vtype.tolist())
            xs = [x[j] for j in range(model.n_vars)]
            for r in range(model.n_rows):
                a, b = start[r], start[r + 1]
                expr = gp.LinExpr(value[a:b].tolist(), [xs[j] for j in index[a:b]])
                lo, hi = rlo[r], rup[r]
                if lo == hi:
                    m.addLConstr(expr, GRB.EQUAL, lo)
                else:
                    if np.isfinite(hi):
                        m.addLConstr(expr, GRB.LESS_EQUAL, hi)
                    if np.isfinite(lo):
                        m.addLConstr(expr, GRB.GREATER_EQUAL, lo)
            m.ObjCon = model.offset
            deadline = t0 + float(profile.time_limit)  # building row by row counts against the limit
            m.Params.TimeLimit = max(deadline - time.perf_counter(), 0.01)
            m.Params.MIPGap = float(profile.rel_gap)
            m.Params.Threads = int(profile.threads)
            m.Params.Seed = int(profile.seed)
            for k, v in profile.options.items():
                try:
                    m.setParam(k, v)
                except gp.GurobiError as e:  # an unknown parameter or a value out of its range: bad input, as in
                    # highs.py and cpsat.py (it used to be reported as a solver error, exit 1)
                    raise InputError(f"solver profile {profile.name!r}: options.{k}: Gurobi rejects {v!r} ({e}; "
                                     "see Gurobi's parameter list)") from None
            if warm_x is not None and integer.any():
                for j, v in enumerate(warm_x):
                    xs[j].Start = float(v)
            try:
                run_interruptible(m.optimize, stop=m.terminate, deadline=deadline)
                if m.Status == GRB.INF_OR_UNBD and time.perf_counter() < deadline and not REQUESTED.is_set():
                    # presolve's dual reductions leave infeasible and unbounded apart; Gurobi's advice: solve again
                    # without them
                    m.Params.DualReductions = 0
                    m.Params.TimeLimit = max(deadline - time.perf_counter(), 0.01)
                    run_interruptible(m.optimize, stop=m.terminate, deadline=deadline)
            except Abandoned as e:
                return SolveResult("time_limit" if e.timed_out else "interrupted",
                                   solve_seconds=time.perf_counter() - t0, message=f"Gurobi: {e}")
        except gp.GurobiError as e:
            secs = time.perf_counter() - t0
            if getattr(e, "errno", None) == LICENCE_ERRNO or "size-limited" in str(e):
                return SolveResult("licence_limit", solve_seconds=secs,
                                   message=f"Gurobi: model too large for the size-limited licence "
                                           f"({model.n_vars} variables, {model.n_rows} rows)")
            return SolveResult("error", solve_seconds=secs, message=f"Gurobi: {e}")
        secs = time.perf_counter() - t0
        status = m.Status
        mip = bool(integer.any())
        if status in (GRB.UNBOUNDED, GRB.INF_OR_UNBD):
            # INF_OR_UNBD is no proof of infeasibility (it used to be reported "infeasible"), and an unbounded
            # model's "solution" is a ray's point at -1e30 (it used to be reported "feasible")
            return SolveResult("error", solve_seconds=secs, message=f"Gurobi: {UNBOUNDED}")
        if status == GRB.INFEASIBLE:
            return SolveResult("infeasible", solve_seconds=secs)
        has = m.SolCount > 0
        xv = np.array([v.X for v in xs]) if has else None
        obj = m.ObjVal if has else None
        bound = _finite(m.ObjBound) if mip else None  # -inf before the root, +inf where no bound: None, never ±inf
        if status == GRB.OPTIMAL:
            return SolveResult("optimal", obj, bound if mip else obj, secs, xv)
        if REQUESTED.is_set():
            return SolveResult("interrupted", obj, bound, secs, xv, "interrupted (Ctrl-C)")
        # INTERRUPTED without Ctrl-C: the deadline watchdog terminated it a moment before its own TimeLimit
        if status in (GRB.TIME_LIMIT, GRB.INTERRUPTED):
            return SolveResult("time_limit", obj, bound, secs, xv, "time limit reached")
        if has:
            return SolveResult("feasible", obj, bound, secs, xv, f"Gurobi status {status}")
        return SolveResult("error", solve_seconds=secs, message=f"Gurobi status {status}")


def _finite(v) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError, AttributeError):
        return None
    return v if np.isfinite(v) and abs(v) < 1e30 else None  # Gurobi writes "no bound" as ±1e100 or ±inf
