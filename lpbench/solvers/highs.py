"""HiGHS through highspy: the model is passed in one call as a column-wise sparse matrix."""
from __future__ import annotations

import time

import highspy
import numpy as np

from ..interrupt import REQUESTED, Abandoned, run_interruptible
from .base import BACKENDS, Backend, SolveResult


def to_highs(model) -> highspy.Highs:
    cost, lower, upper, integer, rlo, rup = model.arrays()
    start, index, value = model.csc()
    lp = highspy.HighsLp()
    lp.num_col_ = model.n_vars
    lp.num_row_ = model.n_rows
    lp.col_cost_ = cost
    lp.col_lower_ = lower
    lp.col_upper_ = upper
    lp.row_lower_ = rlo
    lp.row_upper_ = rup
    lp.offset_ = model.offset
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = start.astype(np.int32)
    lp.a_matrix_.index_ = index.astype(np.int32)
    lp.a_matrix_.value_ = value
    if integer.any():
        lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous for b in integer]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(lp)
    return h


@BACKENDS.register("highs")
class HighsBackend(Backend):
    name = "highs"

    def solve(self, model, profile, warm_x=None) -> SolveResult:
        h = to_highs(model)
        h.setOptionValue("time_limit", float(profile.time_limit))
        h.setOptionValue("mip_rel_gap", float(profile.rel_gap))
        h.setOptionValue("threads", int(profile.threads))
        h.setOptionValue("random_seed", int(profile.seed))
        for k, v in profile.options.items():
            h.setOptionValue(k, v)
        if warm_x is not None and model.is_mip():
            sol = highspy.HighsSolution()
            sol.col_value = list(map(float, warm_x))
            sol.value_valid = True
            h.setSolution(sol)
        def interrupt(event):  # called by HiGHS inside simplex, IPM and branch-and-bound
            if REQUESTED.is_set():
                event.interrupt()

        h.cbSimplexInterrupt.subscribe(interrupt)  # kCallbackSimplexInterrupt
        h.cbIpmInterrupt.subscribe(interrupt)      # kCallbackIpmInterrupt
        h.cbMipInterrupt.subscribe(interrupt)      # kCallbackMipInterrupt
        t0 = time.perf_counter()
        try:
            run_interruptible(h.run, stop=lambda: None)  # the callbacks read REQUESTED
        except Abandoned as e:  # e.g. inside MIP presolve, which polls no callback
            return SolveResult("interrupted", solve_seconds=time.perf_counter() - t0, message=f"HiGHS: {e}")
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
        bound = info.mip_dual_bound if mip and np.isfinite(info.mip_dual_bound) else None
        if st == MS.kInterrupt or REQUESTED.is_set():
            return SolveResult("interrupted", obj, bound, secs, x, "interrupted (Ctrl-C)")
        if st == MS.kTimeLimit:
            return SolveResult("time_limit", obj, bound, secs, x, "time limit reached")
        if has_sol and st in (MS.kSolutionLimit, MS.kIterationLimit, MS.kObjectiveBound):
            return SolveResult("feasible", obj, bound, secs, x, h.modelStatusToString(st))
        return SolveResult("error", obj, bound, secs, x, f"HiGHS: {h.modelStatusToString(st)}")
