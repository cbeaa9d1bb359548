from __future__ import annotations

import numpy as np

from .base import FORMS, CostModel


@FORMS.register("unit")
class UnitCost(CostModel):
    """Every batch takes one time unit (seed 004 §2: "each batch's processing time is one unit")."""

    form = "unit"
    params = {}

    def batch_time(self, c, m, decode) -> float:
        return 1.0

    def batch_times(self, c, m, decode, ptr):
        return np.ones(len(ptr) - 1, dtype=np.float64)

    def repeat_times(self, c, m0, decode, steps):
        return np.ones(steps, dtype=np.float64)
