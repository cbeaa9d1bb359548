"""``fluid``: seed 001's fluid equilibrium as a closed-form throughput benchmark (notes seed-001 §2).

Reports stability d_1 Σλa < 1, M* (8), ΔT* (9), n*_j = λ_j ΔT*, Θ* (10) and the capacity-aware bound
Θ_UB(C) (notes §2.5, [DERIVED]: equals Θ* when C >= M*, stays a valid throughput upper bound when
C < M*). The stage mapping and every formula are in :mod:`lpbench.fluid`. The objective and bound are
Θ_UB(C), in decode tokens per time unit (a *maximum*: no online policy's throughput exceeds it).
"""
from __future__ import annotations

import time

from ..fluid import equilibrium, linear_coefficients, require_types
from ..semantics import BATCH
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm


@FORMULATIONS.register("fluid")
class FluidEquilibrium(ClosedForm):
    name = "fluid"
    models = (BATCH,)
    exact = False
    runs_policies = False  # a throughput bound: compare policies with `lpbench throughput`
    needs_requests = False
    objective_metric = "throughput"
    summary = "seed 001 fluid equilibrium (8)-(10) and capacity-aware bound Θ_UB(C): throughput upper bound"

    def build(self):
        super().build()
        self.types = require_types(self.inst)
        self.d0, self.d1 = linear_coefficients(self.inst)
        self.eq = equilibrium(self.types, self.d0, self.d1, self.inst.memory)  # exit 2 when unstable
        return self

    def solve(self, profile, warm=None) -> SolveResult:
        t0 = time.perf_counter()
        v = self.eq.throughput_bound
        return SolveResult("optimal", v, v, time.perf_counter() - t0)

    def report(self, res) -> dict:
        return {"fluid": self.eq.to_dict()}
