"""``wait-thresholds``: WAIT's threshold polytope (seed 001 eq. (11) with App. B (19)) as an LP
[the LP is DERIVED: the paper states the conditions, notes seed-001 §2.5, and leaves threshold choice open].

    (11)  λ_j ΔT(n) <= n_j  for every j,   ΔT(n) = d_0 + d_1 M^π,   M^π = Σ_j a_j n_j
    (19)  M* <= M^π <= C   (the lower bound is implied by (11): multiply row j by a_j and sum)

Objective (one of the notes' candidates): **maximise the minimum time slack t**,
n_j / λ_j - ΔT(n) >= t >= 0 for every j, i.e. every type's expected fill time of its threshold exceeds a
full-batch iteration by at least t. Why: Theorem 1's O(1) latency needs strict slack for every type,
and the Kingman bound E[W_j] <= 2n_j + λ_jΔT / (2(n_j - λ_jΔT)) improves with the slack n_j - λ_jΔT = λ_j t;
max-min gives every type the same time margin instead of favouring one. Rows (11) become
λ_j d_1 Σ_i a_i n_i - n_j + λ_j t <= -λ_j d_0. The polytope is empty iff C < M* (notes §2.5, fact 2):
reported as status ``infeasible``, never an exception. At C = M* its only point is n = n*, t = 0.

Integer thresholds (WAIT counts prompts): the same model with n_j integer >= 1, solved by HiGHS as a
MIP, so every integer point it returns satisfies (11) and (19) exactly (no rounding that could break
a row); it may be infeasible although the LP is not (then pass WAIT the practical rule, ``--param B=``).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..fluid import linear_coefficients, memory_work, require_types
from ..semantics import BATCH
from .base import FORMULATIONS, Formulation, LinearModel


def threshold_model(types, d0: float, d1: float, C: float, integer: bool = False) -> LinearModel:
    lam, a = types.rate, memory_work(types.prompt, types.output)
    m = types.m
    lp = LinearModel("wait-thresholds", unit=-1.0)      # minimise -t; reported objective = t
    n = lp.add_vars("n", m, lower=1.0 if integer else 0.0, integer=integer,
                    names=[f"n[{j}]" for j in range(m)])
    t = lp.add_vars("t", 1, cost=-1.0, names=["t"])
    rows, cols, vals = [], [], []
    for j in range(m):                                   # (11) with time slack t
        rows += [j] * (m + 1)
        cols += n.tolist() + [int(t[0])]
        coef = lam[j] * d1 * a
        coef[j] -= 1.0
        vals += coef.tolist() + [lam[j]]
    lp.add_rows("(11) lambda_j dT(n) + lambda_j t <= n_j", m, rows, cols, vals, upper=-lam * d0,
                names=[f"eq11[{j}]" for j in range(m)])
    lp.add_rows("(19) M^pi <= C", 1, [0] * m, n, a, upper=float(C), names=["eq19"])
    return lp


def _solve(lp, time_limit: float = 10.0):
    from ..solvers import BACKENDS
    from ..solvers.base import SolverProfile

    return BACKENDS.get("highs")().solve(lp, SolverProfile("highs", "highs", time_limit=time_limit))


def integer_thresholds(inst, types) -> np.ndarray:
    """WAIT's default thresholds: the integer max-min-slack point of (11)+(19)."""
    d0, d1 = linear_coefficients(inst)
    res = _solve(threshold_model(types, d0, d1, inst.memory, integer=True))
    if res.x is None:
        raise InputError(f"policy 'wait': no integer thresholds satisfy (11) and (19) with memory {inst.memory} "
                         f"(HiGHS: {res.status}); the fluid needs C >= M*, see `lpbench solve --formulation "
                         "fluid`; or pass the practical rule --param B=<batch prompts>")
    return np.rint(res.x[:types.m]).astype(np.int64)


@FORMULATIONS.register("wait-thresholds")
class WaitThresholds(Formulation):
    name = "wait-thresholds"
    models = (BATCH,)
    exact = False
    runs_policies = False
    objective_metric = "threshold_slack"
    summary = "seed 001 (11)+(19): WAIT thresholds maximising the minimum time slack (LP; integer point reported)"

    def build(self) -> LinearModel:
        self.types = require_types(self.inst)
        self.d0, self.d1 = linear_coefficients(self.inst)
        return threshold_model(self.types, self.d0, self.d1, self.inst.memory)

    def report(self, res) -> dict:
        a = memory_work(self.types.prompt, self.types.output)
        out = {"status": res.status}
        if res.x is not None:
            n = res.x[:self.types.m]
            out.update(n=n.tolist(), slack=float(res.x[-1]) + 0.0, M_pi=float(a @ n))
        ires = _solve(threshold_model(self.types, self.d0, self.d1, self.inst.memory, integer=True))
        integer = {"status": ires.status}
        if ires.x is not None:
            n = np.rint(ires.x[:self.types.m])
            integer.update(n=n.astype(int).tolist(), slack=float(ires.x[-1]), M_pi=float(a @ n))
        out["integer"] = integer
        return {"thresholds": out}
