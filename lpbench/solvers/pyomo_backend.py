"""Any solver Pyomo reaches: the LinearModel as a Pyomo ConcreteModel (one constraint per row).

Profile options: ``solver`` (a Pyomo solver name, e.g. appsi_highs, gurobi_direct, cbc, glpk, scip)
and ``solver_options`` (passed as they are). The profile's time limit and gap are mapped to the
option names of the solvers below; other solvers get them only through ``solver_options``.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..errors import InputError
from .base import BACKENDS, Backend, SolveResult

LIMIT_NAMES = {  # solver -> (time limit option, relative gap option)
    "appsi_highs": ("time_limit", "mip_rel_gap"),
    "highs": ("time_limit", "mip_rel_gap"),
    "gurobi": ("TimeLimit", "MIPGap"), "gurobi_direct": ("TimeLimit", "MIPGap"),
    "gurobi_persistent": ("TimeLimit", "MIPGap"),
    "cbc": ("seconds", "ratio"), "glpk": ("tmlim", "mipgap"), "scip": ("limits/time", "limits/gap"),
}


def to_pyomo(model):
    import pyomo.environ as pyo

    cost, lower, upper, integer, rlo, rup = model.arrays()
    start, index, value = model.csr()
    m = pyo.ConcreteModel(name=model.name)
    J = range(model.n_vars)
    m.x = pyo.Var(J, domain=lambda _, j: pyo.Integers if integer[j] else pyo.Reals,
                  bounds=lambda _, j: (None if not np.isfinite(lower[j]) else float(lower[j]),
                                       None if not np.isfinite(upper[j]) else float(upper[j])))

    def row(_, r):
        a, b = start[r], start[r + 1]
        expr = sum(float(v) * m.x[int(j)] for j, v in zip(index[a:b], value[a:b]))
        lo = None if not np.isfinite(rlo[r]) else float(rlo[r])
        hi = None if not np.isfinite(rup[r]) else float(rup[r])
        if a == b:
            return pyo.Constraint.Skip
        return (lo, expr, hi) if lo != hi else expr == lo

    m.rows = pyo.Constraint(range(model.n_rows), rule=row)
    nz = np.flatnonzero(cost)
    m.obj = pyo.Objective(expr=sum(float(cost[j]) * m.x[int(j)] for j in nz) + model.offset, sense=pyo.minimize)
    return m


def _solver_factory(pyo, name: str):
    """(Pyomo's solver ``name``, "") or (None, a short reason): Pyomo logs an unknown or missing solver as a
    warning with a full traceback; that log is captured here, not printed (the caller says it in one line)."""
    import io
    import logging

    from pyomo.common.log import LoggingIntercept

    log = io.StringIO()
    with LoggingIntercept(log, "pyomo", level=logging.WARNING):
        try:
            opt = pyo.SolverFactory(name)
            ok = opt is not None and bool(opt.available(exception_flag=False))
        except Exception as e:  # a plug-in that fails while it is created or probed
            opt, ok = None, False
            log.write(f"{type(e).__name__}: {e}\n")
    if ok:
        return opt, ""
    first = " ".join(log.getvalue().split("Traceback")[0].split())  # the message Pyomo wraps over lines
    first = first.removeprefix("WARNING:").split(" To skip this validation")[0].strip()  # Pyomo's API advice
    return None, (f" ({first[:240]})" if first else "")


@BACKENDS.register("pyomo")
class PyomoBackend(Backend):
    name = "pyomo"

    def solve(self, model, profile, warm_x=None) -> SolveResult:
        import pyomo.environ as pyo
        from pyomo.opt import TerminationCondition as TC

        name = profile.options.get("solver", "appsi_highs")
        if not isinstance(name, str) or not name:
            raise InputError(f"solver profile {profile.name!r}: options.solver: must be a Pyomo solver name, "
                             f"got {name!r}")
        opt, why = _solver_factory(pyo, name)
        if opt is None:
            raise InputError(f"--solver: Pyomo solver {name!r} is not available on this machine" + why)
        m = to_pyomo(model)
        tl, gap = LIMIT_NAMES.get(name, (None, None))
        if tl:
            opt.options[tl] = float(profile.time_limit)
        if gap and model.is_mip():
            opt.options[gap] = float(profile.rel_gap)
        for k, v in profile.options.get("solver_options", {}).items():
            opt.options[k] = v
        t0 = time.perf_counter()
        try:
            res = opt.solve(m, load_solutions=False)
        except Exception as e:  # a solver plug-in failure is reported, not raised
            return SolveResult("error", solve_seconds=time.perf_counter() - t0, message=f"Pyomo/{name}: {e}")
        secs = time.perf_counter() - t0
        tc = res.solver.termination_condition
        x = obj = None
        if len(res.solution) > 0 or tc in (TC.optimal, TC.maxTimeLimit, TC.feasible):
            try:
                m.solutions.load_from(res)
                x = np.array([pyo.value(m.x[j], exception=False) or 0.0 for j in range(model.n_vars)])
                obj = float(pyo.value(m.obj))
            except Exception:
                x = obj = None
        lb = getattr(res.problem, "lower_bound", None)
        bound = float(lb) if lb is not None and math.isfinite(float(lb)) else None
        if tc == TC.optimal:
            return SolveResult("optimal", obj, bound if model.is_mip() and bound is not None else obj, secs, x)
        if tc in (TC.infeasible, TC.infeasibleOrUnbounded):
            return SolveResult("infeasible", solve_seconds=secs)
        if tc == TC.maxTimeLimit:
            return SolveResult("time_limit", obj, bound, secs, x, "time limit reached")
        if obj is not None:
            return SolveResult("feasible", obj, bound, secs, x, f"Pyomo/{name}: {tc}")
        return SolveResult("error", solve_seconds=secs, message=f"Pyomo/{name}: {tc}")
