"""HiGHS through highspy: the model is passed in one call as a column-wise sparse matrix."""
from __future__ import annotations

import time

import highspy
import numpy as np

from ..errors import InputError
from ..interrupt import REQUESTED, Abandoned, run_interruptible
from .base import BACKENDS, UNBOUNDED, Backend, SolveResult


def to_highs(model) -> highspy.Highs:
    """The model passed to HiGHS in one call, as numpy arrays: on a 4 M-entry latency-ip (jaillet-model2 draw 28)
    0.04 s, where filling a ``HighsLp``'s fields took 0.7 s of the solver's time limit."""
    cost, lower, upper, integer, rlo, rup = model.arrays()
    start, index, value = model.csc()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    integrality = integer.astype(np.int32)   # 1 = kInteger, 0 = kContinuous; one per column, even for an LP
    status = h.passModel(int(model.n_vars), int(model.n_rows), int(len(value)), int(highspy.MatrixFormat.kColwise),
                         int(highspy.ObjSense.kMinimize), float(model.offset), cost, lower, upper, rlo, rup,
                         start.astype(np.int32), index.astype(np.int32), value, integrality)
    if status == highspy.HighsStatus.kError:
        raise ValueError(f"HiGHS refused the model {model.name!r}")
    return h


#: above this many matrix entries HiGHS's presolve is switched off unless a profile sets ``presolve``:
#: it does not check the time limit (measured on a jaillet-model1 latency-ip with 63,157 columns and
#: 1.26 M entries: 16.7 s in presolve under a 3 s limit, "Not reduced"), while on small models it pays
#: (3 of 3 eight-request draws proved faster with it)
PRESOLVE_MAX_NONZEROS = 250_000


def set_options(h: highspy.Highs, options: dict, where: str) -> None:
    """Set a profile's HiGHS ``options`` on ``h``; one that HiGHS refuses (an unknown option, or a value of the
    wrong type or range) is bad input (``InputError`` naming ``where``.KEY), as in every backend."""
    for k, v in options.items():
        if h.setOptionValue(k, v) != highspy.HighsStatus.kOk:
            raise InputError(f"{where}.{k}: HiGHS rejects {v!r} (an unknown option or a value of the wrong type or "
                             "range; see HiGHS's option list)")


def stop_at_deadline(h: highspy.Highs, deadline: float) -> None:
    """Interrupt HiGHS on Ctrl-C (``interrupt.REQUESTED``) or once ``deadline`` (a perf_counter time)
    has passed: the kCallbackSimplexInterrupt, kCallbackIpmInterrupt and kCallbackMipInterrupt
    callbacks check both (HiGHS's own time_limit is checked less often)."""
    def check(event):
        if REQUESTED.is_set() or time.perf_counter() > deadline:
            event.interrupt()

    h.cbSimplexInterrupt.subscribe(check)
    h.cbIpmInterrupt.subscribe(check)
    h.cbMipInterrupt.subscribe(check)


@BACKENDS.register("highs")
class HighsBackend(Backend):
    name = "highs"

    @staticmethod
    def check_options(where: str, options: dict) -> None:
        """Each option set on a fresh HiGHS when the profile is read, so that a bad one is refused even by a
        solve that never reaches the solver (the optimum proven before the model is built)."""
        if options:
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            set_options(h, options, f"{where}.options")

    def solve(self, model, profile, warm_x=None) -> SolveResult:
        t0 = time.perf_counter()  # passing the model counts against the time limit
        h = to_highs(model)
        h.setOptionValue("time_limit", max(float(profile.time_limit) - (time.perf_counter() - t0), 1.0))
        deadline = t0 + float(profile.time_limit)
        stop_at_deadline(h, deadline)
        if h.getNumNz() > PRESOLVE_MAX_NONZEROS and "presolve" not in profile.options:
            h.setOptionValue("presolve", "off")
        h.setOptionValue("mip_rel_gap", float(profile.rel_gap))
        h.setOptionValue("threads", int(profile.threads))
        h.setOptionValue("random_seed", int(profile.seed))
        set_options(h, profile.options, f"solver profile {profile.name!r}: options")
        if warm_x is not None and model.is_mip():
            sol = highspy.HighsSolution()
            sol.col_value = list(map(float, warm_x))
            sol.value_valid = True
            h.setSolution(sol)
        try:  # the callbacks read REQUESTED and the deadline; run_interruptible bounds the wait
            run_interruptible(h.run, stop=lambda: None, deadline=deadline)
        except Abandoned as e:  # e.g. inside MIP presolve, which polls no callback
            return SolveResult("time_limit" if e.timed_out else "interrupted",
                               solve_seconds=time.perf_counter() - t0, message=f"HiGHS: {e}")
        secs = time.perf_counter() - t0
        st = h.getModelStatus()
        info = h.getInfo()
        MS = highspy.HighsModelStatus
        has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.array(h.getSolution().col_value) if has_sol else None
        obj = info.objective_function_value if has_sol else None
        mip = model.is_mip()
        if st == MS.kOptimal:
            bound = info.mip_dual_bound if mip else obj
            return SolveResult("optimal", obj, bound, secs, x)
        if st == MS.kInfeasible:
            return SolveResult("infeasible", solve_seconds=secs)
        if st in (MS.kUnbounded, MS.kUnboundedOrInfeasible):  # no verdict, no objective: the model has a bug
            return SolveResult("error", solve_seconds=secs, message=f"HiGHS: {UNBOUNDED}")
        bound = info.mip_dual_bound if mip and np.isfinite(info.mip_dual_bound) else None
        if REQUESTED.is_set():
            return SolveResult("interrupted", obj, bound, secs, x, "interrupted (Ctrl-C)")
        if st == MS.kTimeLimit or (st == MS.kInterrupt and time.perf_counter() > deadline):
            return SolveResult("time_limit", obj, bound, secs, x, "time limit reached")
        if has_sol and st in (MS.kSolutionLimit, MS.kIterationLimit, MS.kObjectiveBound):
            return SolveResult("feasible", obj, bound, secs, x, h.modelStatusToString(st))
        return SolveResult("error", obj, bound, secs, x, f"HiGHS: {h.modelStatusToString(st)}")
