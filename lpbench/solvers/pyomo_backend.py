"""Any LP/MIP solver Pyomo reaches: the LinearModel as a Pyomo ConcreteModel (one constraint per row).

Profile options (checked when the profile is read, :meth:`PyomoBackend.check_options`): ``solver`` (a Pyomo
solver name; default appsi_highs) and ``solver_options`` (a table of solver option names to strings, numbers or
booleans, passed as they are; for the HiGHS plug-ins each is first checked against HiGHS's option list). Any other
key is refused (exit 2).

Time limit: the whole call counts against the profile's ``time_limit``, building the Pyomo model included (it
stops, with status ``time_limit`` and no objective, once the deadline passes). The solver gets what is left
through its own time-limit option (:data:`LIMIT_NAMES`), and the solve runs under
:func:`lpbench.interrupt.run_interruptible` with that deadline, so a phase that ignores the option is abandoned
``deadline_grace`` after it, as HiGHS and CP-SAT are; on the HiGHS plug-ins the HiGHS interrupt callbacks also
check the deadline and Ctrl-C (:func:`lpbench.solvers.highs.stop_at_deadline`). A solver whose time-limit option
lpbench does not know is refused (exit 2) rather than run without a limit. ``solver_options`` may not set the
time-limit option itself (the profile's ``time_limit`` is the one limit).

What is reported:
* objective: only when a feasible solution is loaded: the termination condition is optimal, or a limit was hit
  with a solution the solver marks feasible (HiGHS plug-ins: ``primal_solution_status`` feasible), and in every
  case the loaded point violates no bound or row by more than 1e-6 (a simplex iterate at a time limit is not a
  feasible point: audit 10 F8).
* bound: for a MIP, the solver's own lower bound when it gives a finite one. The objective is used as the bound only for an
  LP (no integer variable) whose termination condition is optimal (an LP/MIP solver of :data:`LIMIT_NAMES` proves
  an LP optimum). A MIP at ``optimal`` without a solver bound reports bound None: its optimum is proven only up to
  the solver's gap, so the objective is no bound (F9). An LP short of optimal reports no bound (appsi_highs gives
  its current primal value there). Never a non-finite bound.
* unbounded or infeasible-or-unbounded: status ``error``, "unbounded (or infeasible): a formulation bug".
* Pyomo's log (warnings about loading solutions, etc.) is captured during the solve, never printed; its last line
  is added to the message of a failed solve.
"""
from __future__ import annotations

import io
import logging
import math
import time

import numpy as np

from ..errors import InputError
from ..interrupt import REQUESTED, Abandoned, expired, run_interruptible
from .base import BACKENDS, UNBOUNDED, Backend, SolveResult

LIMIT_NAMES = {  # solver -> (time limit option, relative gap option)
    "appsi_highs": ("time_limit", "mip_rel_gap"),
    "highs": ("time_limit", "mip_rel_gap"),
    "gurobi": ("TimeLimit", "MIPGap"), "gurobi_direct": ("TimeLimit", "MIPGap"),
    "gurobi_persistent": ("TimeLimit", "MIPGap"),
    "cbc": ("seconds", "ratio"), "glpk": ("tmlim", "mipgap"), "scip": ("limits/time", "limits/gap"),
}
#: plug-ins driving HiGHS through highspy: their solver_options are checked against HiGHS's option list
HIGHS_PLUGINS = ("appsi_highs", "highs")
OPTION_KEYS = ("solver", "solver_options")
#: the largest bound or row violation of a point reported as feasible (solve.py's TOL)
FEAS_TOL = 1e-6


def _limit_value(solver: str, seconds: float):
    """The time left as the solver's option takes it: glpsol's --tmlim is whole seconds (rounded up, at least
    1), the others take a float (at least 0.01)."""
    return max(1, math.ceil(seconds)) if solver == "glpk" else max(seconds, 0.01)


class _BuildTimeout(Exception):
    def __init__(self, done: int):
        super().__init__(done)
        self.done = done


def to_pyomo(model, deadline: float | None = None):
    """The model as a Pyomo ConcreteModel ``m`` (variables ``m.x[j]``, rows ``m.rows``, objective ``m.obj``).
    Rows are built as LinearExpression objects (half the time of sums of terms); with a ``deadline``
    (perf_counter) the build stops once it passes (:class:`_BuildTimeout`, carrying the rows done)."""
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    cost, lower, upper, integer, rlo, rup = model.arrays()
    start, index, value = model.csr()
    m = pyo.ConcreteModel(name=model.name)
    J = range(model.n_vars)
    m.x = pyo.Var(J, domain=lambda _, j: pyo.Integers if integer[j] else pyo.Reals,
                  bounds=lambda _, j: (None if not np.isfinite(lower[j]) else float(lower[j]),
                                       None if not np.isfinite(upper[j]) else float(upper[j])))
    xs = [m.x[j] for j in J]
    if expired(deadline):
        raise _BuildTimeout(0)
    m.rows = pyo.ConstraintList()
    idx, val = index.tolist(), value.tolist()
    for r in range(model.n_rows):
        if r % 64 == 0 and expired(deadline):
            raise _BuildTimeout(r)
        a, b = int(start[r]), int(start[r + 1])
        if a == b:
            continue
        expr = LinearExpression(constant=0.0, linear_coefs=val[a:b], linear_vars=[xs[j] for j in idx[a:b]])
        lo = None if not np.isfinite(rlo[r]) else float(rlo[r])
        hi = None if not np.isfinite(rup[r]) else float(rup[r])
        m.rows.add((lo, expr, hi) if lo != hi else expr == lo)
    nz = np.flatnonzero(cost)
    m.obj = pyo.Objective(expr=LinearExpression(constant=float(model.offset),
                                                linear_coefs=[float(cost[j]) for j in nz],
                                                linear_vars=[xs[int(j)] for j in nz]), sense=pyo.minimize)
    return m


def _solver_factory(pyo, name: str):
    """(Pyomo's solver ``name``, "") or (None, a short reason): Pyomo logs an unknown or missing solver as a
    warning with a full traceback; that log is captured here, not printed (the caller says it in one line)."""
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


def _last_line(log: io.StringIO) -> str:
    lines = [ln.strip() for ln in log.getvalue().splitlines() if ln.strip()]
    return f" (Pyomo: {lines[-1][:200]})" if lines else ""


def _highs_of(opt):
    """The highspy.Highs object behind a persistent HiGHS plug-in (after set_instance), or None."""
    import highspy

    h = getattr(opt, "_solver_model", None)
    return h if isinstance(h, highspy.Highs) else None


@BACKENDS.register("pyomo")
class PyomoBackend(Backend):
    name = "pyomo"

    @staticmethod
    def check_options(where: str, options: dict) -> None:
        """Refuse (InputError) a Pyomo profile's options that cannot work: unknown keys (a typo such as
        ``solvr`` used to run the default solver), a solver name that is not a string, solver_options that are
        not a table of scalars, or solver_options that set the solver's time-limit option."""
        for k in options:
            if k not in OPTION_KEYS:
                raise InputError(f"{where}.options.{k}: unknown key for the pyomo backend; expected one of "
                                 f"{', '.join(OPTION_KEYS)}")
        name = options.get("solver", "appsi_highs")
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"{where}.options.solver: must be a Pyomo solver name (e.g. appsi_highs), got {name!r}")
        sopts = options.get("solver_options", {})
        if not isinstance(sopts, dict):
            raise InputError(f"{where}.options.solver_options: must be a table of solver options "
                             f"(e.g. {{ presolve = \"off\" }}), got {sopts!r}")
        for k, v in sopts.items():
            if isinstance(v, (dict, list)) or v is None or (isinstance(v, float) and not math.isfinite(v)):
                raise InputError(f"{where}.options.solver_options.{k}: must be a string, number or boolean, "
                                 f"got {v!r}")
        tl = LIMIT_NAMES.get(name, (None, None))[0]
        if tl is not None and tl in sopts:
            raise InputError(f"{where}.options.solver_options.{tl}: the time limit is the profile's time_limit; "
                             "remove it from solver_options")

    def solve(self, model, profile, warm_x=None) -> SolveResult:
        t0 = time.perf_counter()  # everything below counts against the time limit, the Pyomo build included
        deadline = t0 + float(profile.time_limit)
        self.check_options(f"solver profile {profile.name!r}: solver.{profile.name}", profile.options)
        import pyomo.environ as pyo
        from pyomo.common.log import LoggingIntercept
        from pyomo.opt import SolutionStatus as SS
        from pyomo.opt import TerminationCondition as TC

        name = profile.options.get("solver", "appsi_highs")
        sopts = dict(profile.options.get("solver_options", {}))
        opt, why = _solver_factory(pyo, name)
        if opt is None:
            raise InputError(f"--solver: Pyomo solver {name!r} is not available on this machine" + why)
        if name not in LIMIT_NAMES:
            raise InputError(f"solver profile {profile.name!r}: options.solver: lpbench does not know the time-limit "
                             f"option of Pyomo solver {name!r}, so it could not keep the time limit; expected one of "
                             f"{', '.join(LIMIT_NAMES)}")
        if name in HIGHS_PLUGINS:
            import highspy

            from .highs import PRESOLVE_MAX_NONZEROS, set_options

            probe = highspy.Highs()
            probe.setOptionValue("output_flag", False)
            set_options(probe, sopts, f"solver profile {profile.name!r}: options.solver_options")
            if model.csr()[0][-1] > PRESOLVE_MAX_NONZEROS and "presolve" not in sopts:
                sopts["presolve"] = "off"  # HiGHS's MIP presolve checks no time limit (highs.py)

        def left() -> float:
            return deadline - time.perf_counter()

        def out_of_time(what: str) -> SolveResult:
            return SolveResult("time_limit", solve_seconds=time.perf_counter() - t0,
                               message=f"Pyomo/{name}: {what} took the whole time limit")

        try:
            m = to_pyomo(model, deadline)
        except _BuildTimeout as e:
            return out_of_time(f"building the Pyomo model ({e.done} of {model.n_rows} rows)")
        if left() <= 0:
            return out_of_time("building the Pyomo model")
        tl, gap = LIMIT_NAMES[name]
        if gap and model.is_mip():
            opt.options[gap] = float(profile.rel_gap)
        for k, v in sopts.items():
            opt.options[k] = v
        opt.options[tl] = _limit_value(name, left())
        log = io.StringIO()

        def work():
            if name in HIGHS_PLUGINS and callable(getattr(opt, "set_instance", None)):
                opt.set_instance(m)  # the plug-in's own model walk; the solve below then only updates
                h = _highs_of(opt)
                if expired(deadline):
                    return None
                if h is not None:
                    from .highs import stop_at_deadline
                    stop_at_deadline(h, deadline)  # HiGHS's callbacks check the deadline and Ctrl-C
                opt.options[tl] = _limit_value(name, left())
            return opt.solve(m, load_solutions=False)

        def stop():
            h = _highs_of(opt)
            if h is not None and hasattr(h, "cancelSolve"):
                h.cancelSolve()

        with LoggingIntercept(log, "pyomo", level=logging.WARNING):
            try:
                res = run_interruptible(work, stop=stop, deadline=deadline)
            except Abandoned as e:
                return SolveResult("time_limit" if e.timed_out else "interrupted",
                                   solve_seconds=time.perf_counter() - t0, message=f"Pyomo/{name}: {e}")
            except Exception as e:  # a solver plug-in failure is reported, not raised
                return SolveResult("error", solve_seconds=time.perf_counter() - t0,
                                   message=f"Pyomo/{name}: {type(e).__name__}: {e}"[:300] + _last_line(log))
            secs = time.perf_counter() - t0
            if res is None:
                return out_of_time("passing the model to the solver")
            tc = res.solver.termination_condition
            mip = model.is_mip()
            if tc in (TC.unbounded, TC.infeasibleOrUnbounded):
                return SolveResult("error", solve_seconds=secs, message=f"Pyomo/{name}: {UNBOUNDED}")
            if tc == TC.infeasible:
                return SolveResult("infeasible", solve_seconds=secs)
            x = obj = None
            why_dropped = ""
            sol_status = res.solution(0).status if len(res.solution) > 0 else None
            claims = tc == TC.optimal or sol_status in (SS.optimal, SS.feasible, SS.bestSoFar, SS.stoppedByLimit,
                                                         SS.locallyOptimal, SS.globallyOptimal)
            h = _highs_of(opt)
            if claims and tc != TC.optimal and h is not None and h.getInfo().primal_solution_status != 2:
                claims, why_dropped = False, "; its point at the limit is not primal feasible (not reported)"
            if claims and len(res.solution) > 0:
                try:
                    m.solutions.load_from(res)
                    x = np.array([pyo.value(m.x[j], exception=False) or 0.0 for j in range(model.n_vars)])
                    obj = float(pyo.value(m.obj))
                except Exception:
                    x = obj = None
            if x is not None and tc != TC.optimal and model.max_violation(x) > FEAS_TOL:
                why_dropped = f"; its point violates the model by {model.max_violation(x):.3g} (not reported)"
                x = obj = None
            lb = getattr(res.problem, "lower_bound", None)
            try:
                bound = float(lb) if lb is not None and math.isfinite(float(lb)) else None
            except (TypeError, ValueError):
                bound = None
            if not mip:  # an LP plug-in's "bound" short of optimal is its current primal value (appsi_highs), no bound
                bound = None
            if tc == TC.optimal:
                if obj is None:
                    return SolveResult("error", solve_seconds=secs,
                                       message=f"Pyomo/{name}: optimal, but no solution could be loaded"
                                               + _last_line(log))
                if bound is None and not mip:
                    bound = obj  # an LP optimum proven by an LP/MIP solver (LIMIT_NAMES): its objective is the bound
                return SolveResult("optimal", obj, bound, secs, x)
            if REQUESTED.is_set():
                return SolveResult("interrupted", obj, bound, secs, x, "interrupted (Ctrl-C)")
            if tc == TC.maxTimeLimit or (tc in (TC.userInterrupt, TC.resourceInterrupt, TC.unknown)
                                         and time.perf_counter() > deadline):
                return SolveResult("time_limit", obj, bound, secs, x, "time limit reached" + why_dropped)
            if obj is not None:
                return SolveResult("feasible", obj, bound, secs, x, f"Pyomo/{name}: {tc}")
            return SolveResult("error", solve_seconds=secs, message=f"Pyomo/{name}: {tc}" + why_dropped
                               + _last_line(log))
