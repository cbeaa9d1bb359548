"""OR-Tools CP-SAT: the linear model row by row (integer coefficients required), hinted with the
warm start. Continuous variables are refused with a clear error (CP-SAT solves integer models).

``cp_model`` is imported lazily (on its first attribute access): it loads pandas, and the two take about
0.6 s, which every ``lpbench`` command paid at start-up although most never build a CP-SAT model. The
formulations that do take ``cp_model`` from here."""
from __future__ import annotations

import importlib.util
import sys
import time
from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..interrupt import REQUESTED, Abandoned, run_interruptible
from .base import BACKENDS, UNBOUNDED, Backend, SolveResult


def _lazy_module(name: str):
    """The module ``name``, executed on its first attribute access (the LazyLoader recipe of importlib's
    documentation); an already imported module is returned as it is."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


cp_model = _lazy_module("ortools.sat.python.cp_model")


#: tolerance of a bound or right-hand side that is an integer up to float error (1 - 1e-12 is 1, not 0)
INT_TOL = 1e-9
#: CP-SAT's domains are int64, and its objective is kept exact only below 2^53: a free or huge bound is clamped
#: there, and an optimum at the clamp is reported unbounded (:func:`_at_clamp`)
BIG = 2**53


def int_bounds(lower, upper):
    """Integer bounds of integer variables: lower bounds rounded up, upper bounds down (within INT_TOL), clamped
    to [-BIG, BIG]. Truncation made [0.5, 2.5] into [0, 2] and [-5, -0.5] into [-5, 0] (audit 10 F10)."""
    lo = np.ceil(np.asarray(lower, dtype=np.float64) - INT_TOL)
    up = np.floor(np.asarray(upper, dtype=np.float64) + INT_TOL)
    return np.clip(lo, -BIG, BIG), np.clip(up, -BIG, BIG)


def _as_int(arr, what):
    r = np.round(arr)
    finite = np.isfinite(arr)
    if np.any(np.abs(arr[finite] - r[finite]) > INT_TOL):
        raise InputError(f"--solver: CP-SAT needs integer {what}; this formulation has fractional ones")
    return r


def set_parameters(params, options: dict, where: str) -> None:
    """Set a profile's CP-SAT ``options`` on ``params`` (SatParameters); one that CP-SAT refuses (no such parameter, or
    a value it does not take) is bad input (``InputError`` naming ``where``.KEY), as HiGHS's ``set_options``."""
    for k, v in options.items():
        try:
            setattr(params, k, v)
        except (AttributeError, TypeError, ValueError):
            raise InputError(f"{where}.{k}: CP-SAT has no such parameter or it does not take {v!r} (see "
                             "sat_parameters.proto)") from None


@BACKENDS.register("cpsat")
class CpSatBackend(Backend):
    name = "cpsat"
    integer_only = True

    @staticmethod
    def check_options(where: str, options: dict) -> None:
        """Each option set on fresh SatParameters when the profile is read (as :meth:`HighsBackend.check_options`)."""
        if options:                              # no import of ortools (pandas) for a profile without options
            set_parameters(cp_model.CpSolver().parameters, options, f"{where}.options")

    def solve(self, model, profile, warm_x=None) -> SolveResult:
        t_enter = time.perf_counter()
        cost, lower, upper, integer, rlo, rup = model.arrays()
        if not integer.all():
            raise InputError(f"--solver: CP-SAT solves integer models only; formulation {model.name.split(':')[0]!r} "
                             "has continuous variables (use highs, gurobi or a Pyomo LP solver)")
        cost = _as_int(cost, "objective coefficients")
        start, index, value = model.csr()
        value = _as_int(value, "constraint coefficients")
        lo_int, up_int = int_bounds(lower, upper)
        if np.any(lo_int > up_int):  # an integer variable whose range holds no integer, e.g. [0.2, 0.8]
            j = int(np.flatnonzero(lo_int > up_int)[0])
            return SolveResult("infeasible", solve_seconds=time.perf_counter() - t_enter,
                               message=f"variable {j} is integer with bounds [{lower[j]:g}, {upper[j]:g}], "
                                       "which hold no integer")
        m = cp_model.CpModel()
        xs = [m.NewIntVar(int(lo_int[j]), int(up_int[j]), f"x{j}") for j in range(model.n_vars)]
        deadline = t_enter + float(profile.time_limit)
        for r in range(model.n_rows):
            if r % 64 == 0 and time.perf_counter() > deadline:
                return SolveResult("time_limit", solve_seconds=time.perf_counter() - t_enter,
                                   message=f"passing the model to CP-SAT row by row took the whole time limit "
                                           f"({r} of {model.n_rows} rows); a native CP-SAT formulation is faster")
            a, b = start[r], start[r + 1]
            if a == b:
                continue
            expr = cp_model.LinearExpr.WeightedSum([xs[j] for j in index[a:b]], [int(v) for v in value[a:b]])
            lo, hi = rlo[r], rup[r]
            if np.isfinite(lo) and np.isfinite(hi) and lo == hi and abs(lo - round(lo)) <= INT_TOL:
                m.Add(expr == int(round(lo)))
            else:  # a fractional equality of integer terms becomes an empty range: infeasible, as it should
                if np.isfinite(hi):
                    m.Add(expr <= int(np.floor(hi + INT_TOL)))
                if np.isfinite(lo):
                    m.Add(expr >= int(np.ceil(lo - INT_TOL)))
        nz = np.flatnonzero(cost)
        m.Minimize(cp_model.LinearExpr.WeightedSum([xs[j] for j in nz], [int(cost[j]) for j in nz]))
        if warm_x is not None:
            for j in range(model.n_vars):
                m.AddHint(xs[j], int(round(warm_x[j])))
        off = model.offset
        convert = time.perf_counter() - t_enter  # row-by-row conversion counts against the time limit
        if convert >= profile.time_limit:
            return SolveResult("time_limit", solve_seconds=convert,
                               message="passing the model to CP-SAT took the whole time limit")
        profile = replace(profile, time_limit=profile.time_limit - convert)
        res = solve_cp(m, profile, lambda solver: np.array([solver.Value(v) for v in xs], dtype=np.float64),
                        to_objective=lambda v: v + off)
        if res.x is not None:
            at_clamp = (np.abs(res.x) >= BIG) & ((np.abs(lower) > BIG) | (np.abs(upper) > BIG))
            if at_clamp.any() and cost[at_clamp].any():
                # a variable with an infinite bound that the objective drove to CP-SAT's clamp: the model is
                # unbounded (it used to come back "optimal" at -2^53)
                return SolveResult("error", solve_seconds=res.solve_seconds + convert, message=f"CP-SAT: {UNBOUNDED}")
        return replace(res, solve_seconds=res.solve_seconds + convert)


def solve_cp(m: cp_model.CpModel, profile, read_solution, to_objective=lambda v: v, stop_when=None) -> SolveResult:
    """Solve a CP-SAT model under a solver profile and map its status to a SolveResult.
    ``read_solution(solver)`` extracts the solution; ``to_objective`` maps CP-SAT's objective
    (and bound) to the reported units (offset, scale); ``stop_when`` (a threading.Event) stops the
    search early, keeping its incumbent and bound (a portfolio partner finished)."""
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.max_time_in_seconds = float(profile.time_limit)
    p.num_workers = int(profile.threads)
    p.relative_gap_limit = float(profile.rel_gap)
    p.random_seed = int(profile.seed)
    set_parameters(p, profile.options, f"solver profile {profile.name!r}: options")
    p.catch_sigint_signal = False  # lpbench.interrupt handles Ctrl-C and calls stop_search()
    t0 = time.perf_counter()
    # Ctrl-C calls stop_search(); so does the deadline itself, because CP-SAT does not check its own limit
    # inside every presolve step (CP-SAT's search log, scratch probe: 1.2 s of presolve under a 1 s limit
    # on a 1.3M-term latency-ip).
    # No slack beyond it: a solve returns within the limit plus interrupt.deadline_grace, or is abandoned.
    try:
        st = run_interruptible(lambda: solver.Solve(m), stop=solver.stop_search,
                               deadline=t0 + float(profile.time_limit), stop_when=stop_when)
    except Abandoned as e:
        return SolveResult("time_limit" if e.timed_out else "interrupted", solve_seconds=time.perf_counter() - t0,
                           message=f"CP-SAT: {e}")
    secs = time.perf_counter() - t0
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        obj = to_objective(solver.ObjectiveValue())
        bound = to_objective(solver.BestObjectiveBound())
        if st == cp_model.OPTIMAL:
            return SolveResult("optimal", obj, bound, secs, read_solution(solver))
        if REQUESTED.is_set():
            return SolveResult("interrupted", obj, bound, secs, read_solution(solver), "interrupted (Ctrl-C)")
        status = "time_limit" if secs >= profile.time_limit * 0.98 else "feasible"
        return SolveResult(status, obj, bound, secs, read_solution(solver))
    if st == cp_model.INFEASIBLE:
        return SolveResult("infeasible", solve_seconds=secs)
    if st == cp_model.MODEL_INVALID and "overflow" in (solver.SolutionInfo() or "").lower():
        return SolveResult("error", solve_seconds=secs, message=f"CP-SAT: {UNBOUNDED} ({solver.SolutionInfo()})")
    if st == cp_model.UNKNOWN:
        bound = to_objective(solver.BestObjectiveBound())
        if REQUESTED.is_set():
            return SolveResult("interrupted", None, bound if np.isfinite(bound) else None, secs,
                               message="interrupted (Ctrl-C) before a solution was found")
        return SolveResult("time_limit", None, bound if np.isfinite(bound) else None, secs,
                           message="no solution found within the time limit")
    return SolveResult("error", solve_seconds=secs, message=f"CP-SAT: {solver.StatusName(st)}")
