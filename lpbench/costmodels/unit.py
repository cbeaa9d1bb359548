from __future__ import annotations

from .base import FORMS, CostModel


@FORMS.register("unit")
class UnitCost(CostModel):
    """Every batch takes one time unit (seed 004 §2: "each batch's processing time is one unit")."""

    form = "unit"
    params = {}

    def batch_time(self, c, m, decode) -> float:
        return 1.0
