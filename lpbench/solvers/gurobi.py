"""Gurobi through gurobipy (optional extra ``lpbench[gurobi]``). The pip package carries a
size-limited licence: a model above its limit is reported as status ``licence_limit``."""
from __future__ import annotations

import time

import numpy as np

from ..errors import InputError
from ..interrupt import REQUESTED, Abandoned, run_interruptible
from .base import BACKENDS, Backend, SolveResult

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
            m.Params.TimeLimit = float(profile.time_limit)
            m.Params.MIPGap = float(profile.rel_gap)
            m.Params.Threads = int(profile.threads)
            m.Params.Seed = int(profile.seed)
            for k, v in profile.options.items():
                m.setParam(k, v)
            if warm_x is not None and integer.any():
                for j, v in enumerate(warm_x):
                    xs[j].Start = float(v)
            try:
                run_interruptible(m.optimize, stop=m.terminate)
            except Abandoned as e:
                return SolveResult("interrupted", solve_seconds=time.perf_counter() - t0, message=f"Gurobi: {e}")
        except gp.GurobiError as e:
            secs = time.perf_counter() - t0
            if getattr(e, "errno", None) == LICENCE_ERRNO or "size-limited" in str(e):
                return SolveResult("licence_limit", solve_seconds=secs,
                                   message=f"Gurobi: model too large for the size-limited licence "
                                           f"({model.n_vars} variables, {model.n_rows} rows)")
            return SolveResult("error", solve_seconds=secs, message=f"Gurobi: {e}")
        secs = time.perf_counter() - t0
        has = m.SolCount > 0
        xv = np.array([v.X for v in xs]) if has else None
        obj = m.ObjVal if has else None
        mip = bool(integer.any())
        bound = (m.ObjBound if mip else obj) if has or mip else None
        if m.Status == GRB.OPTIMAL:
            return SolveResult("optimal", obj, bound, secs, xv)
        if m.Status in (GRB.INFEASIBLE, GRB.INF_OR_UNBD):
            return SolveResult("infeasible", solve_seconds=secs)
        if m.Status == GRB.INTERRUPTED or REQUESTED.is_set():
            return SolveResult("interrupted", obj, m.ObjBound if mip else None, secs, xv, "interrupted (Ctrl-C)")
        if m.Status == GRB.TIME_LIMIT:
            return SolveResult("time_limit", obj, m.ObjBound if mip else None, secs, xv, "time limit reached")
        if has:
            return SolveResult("feasible", obj, m.ObjBound if mip else None, secs, xv, f"Gurobi status {m.Status}")
        return SolveResult("error", solve_seconds=secs, message=f"Gurobi status {m.Status}")
