"""``wait-thresholds``: WAIT's threshold polytope (seed 001 eq. (11) with App. B (19)) as an LP
[the LP is DERIVED: the paper states the conditions, notes seed-001 §2.5, and leaves threshold choice open].

    (11)  λ_j ΔT(n) <= n_j  for every j,   ΔT(n) = d_0 + d_1 M^π,   M^π = Σ_j a_j n_j
    (19)  M* <= M^π <= C   (the lower bound is implied by (11): multiply row j by a_j and sum)

Objective (one of the notes' candidates): **minimise M^π**, subject to (11) with a required time slack
n_j / λ_j - ΔT(n) >= t_min for every j (t_min = 0 by default). Why: WAIT holds a type back until n_j
prompts wait, so the smallest thresholds that keep every type's expected arrivals per full batch within
its threshold give the shortest waits and the least memory; the alternatives (max-min slack, max slack
with M^π <= C) push the thresholds up until C binds, and with C >> M* a type then waits for thousands of
arrivals (measured: no completion at all within 60 s in the §5.1 low-demand setting). The LP optimum
is n* itself (M^π >= M* on the polytope, notes §2.5 fact 1), for every C >= M*. Theorem 1's O(1) latency needs
strict slack in every row; least-M^π thresholds do not guarantee it: when n* is integral the integer point below
is n* with zero slack (the zero-drift case of fact 3, latency growing like √T; Example 2: n = 4), and where n* is
fractional the rounding up gives some. t_min > 0 (WAIT's ``--param slack=``) requires it. Rows (11) become
λ_j d_1 Σ_i a_i n_i - n_j <= -λ_j (d_0 + t_min). The polytope is empty iff C < M* (fact 2; with t_min = 0):
reported as status ``infeasible``, never an exception.

Integer thresholds (WAIT counts prompts): the same model with n_j integer >= 1, solved by HiGHS as a
MIP, so every integer point it returns satisfies (11) and (19) exactly (no rounding that could break
a row); it may be infeasible although the LP is not (then pass WAIT the practical rule, ``--param B=``).
HiGHS solves it whatever solver the LP had (HiGHS is always installed; the report names it), within what is
left of the solve's time limit (at least ``INTEGER_MIN_SECONDS``) and at most ``INTEGER_SECONDS``.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import InputError
from ..fluid import linear_coefficients, memory_work, require_types
from ..semantics import BATCH
from .base import FORMULATIONS, Formulation, LinearModel


def threshold_model(types, d0: float, d1: float, C: float, integer: bool = False, t_min: float = 0.0) -> LinearModel:
    lam, a = types.rate, memory_work(types.prompt, types.output)
    m = types.m
    lp = LinearModel("wait-thresholds")
    n = lp.add_vars("n", m, lower=1.0 if integer else 0.0, integer=integer, cost=a,   # min M^π
                    names=[f"n[{j}]" for j in range(m)])
    rows, cols, vals = [], [], []
    for j in range(m):                                   # (11) with time slack t_min
        rows += [j] * m
        cols += n.tolist()
        coef = lam[j] * d1 * a
        coef[j] -= 1.0
        vals += coef.tolist()
    lp.add_rows("(11) lambda_j (dT(n) + t_min) <= n_j", m, rows, cols, vals, upper=-lam * (d0 + t_min),
                names=[f"eq11[{j}]" for j in range(m)])
    lp.add_rows("(19) M^pi <= C", 1, [0] * m, n, a, upper=float(C), names=["eq19"])
    return lp


def min_slack(types, d0: float, d1: float, n) -> float:
    """min_j n_j / λ_j - ΔT(n): the time slack of thresholds n in (11)."""
    dT = d0 + d1 * float(memory_work(types.prompt, types.output) @ np.asarray(n, dtype=np.float64))
    return float(np.min(np.asarray(n) / types.rate) - dT)


#: the integer point's HiGHS solve: at most this long (it takes milliseconds on the shipped instances) ...
INTEGER_SECONDS = 10.0
#: ... and at least this long, even when the LP used up the solve's time limit
INTEGER_MIN_SECONDS = 0.5


def _solve(lp, time_limit: float = INTEGER_SECONDS):
    from ..solvers import BACKENDS
    from ..solvers.base import SolverProfile

    return BACKENDS.get("highs")().solve(lp, SolverProfile("highs", "highs", time_limit=time_limit))


def integer_thresholds(inst, types, t_min: float = 0.0) -> np.ndarray:
    """WAIT's default thresholds: the integer point of (11)+(19) with the least M^π, with time slack ``t_min``."""
    d0, d1 = linear_coefficients(inst)
    res = _solve(threshold_model(types, d0, d1, inst.memory, integer=True, t_min=t_min))
    if res.x is None:
        slack = f" and time slack {t_min:g}" if t_min else ""
        raise InputError(f"policy 'wait': no integer thresholds satisfy (11){slack} and (19) with memory "
                         f"{inst.memory} (HiGHS: {res.status}); the fluid needs C >= M*, see `lpbench solve "
                         "--formulation fluid`; or pass the practical rule --param B=<batch prompts>")
    return np.rint(res.x[:types.m]).astype(np.int64)


@FORMULATIONS.register("wait-thresholds")
class WaitThresholds(Formulation):
    name = "wait-thresholds"
    models = (BATCH,)
    exact = False
    runs_policies = False
    needs_requests = False
    objective_metric = "M_pi"
    summary = "seed 001 (11)+(19): WAIT thresholds with the least M^pi (LP = n*; integer point reported)"

    def build(self) -> LinearModel:
        self.types = require_types(self.inst)
        self.d0, self.d1 = linear_coefficients(self.inst)
        return threshold_model(self.types, self.d0, self.d1, self.inst.memory)

    def report(self, res) -> dict:
        a = memory_work(self.types.prompt, self.types.output)
        out = {"status": res.status}
        if res.x is not None:
            n = res.x[:self.types.m]
            out.update(n=n.tolist(), slack=min_slack(self.types, self.d0, self.d1, n), M_pi=float(a @ n))
        left = INTEGER_SECONDS if self.build_deadline is None else self.build_deadline - time.perf_counter()
        ires = _solve(threshold_model(self.types, self.d0, self.d1, self.inst.memory, integer=True),
                      time_limit=min(INTEGER_SECONDS, max(INTEGER_MIN_SECONDS, left)))
        integer = {"status": ires.status, "solver": "highs"}
        if ires.x is not None:
            n = np.rint(ires.x[:self.types.m])
            integer.update(n=n.astype(int).tolist(), slack=min_slack(self.types, self.d0, self.d1, n),
                           M_pi=float(a @ n))
        out["integer"] = integer
        return {"thresholds": out}
