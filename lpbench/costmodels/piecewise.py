from __future__ import annotations

import math

import numpy as np

from .base import FORMS, CostModel


@FORMS.register("piecewise")
class PiecewiseCost(CostModel):
    """Seed 002 eq. (2.3) (v2): t_b = c + a * max(0, b - b0), b = tokens in the batch (Σ c)."""

    form = "piecewise"
    params = {"c": None, "a": None, "b0": None}

    def batch_time(self, c, m, decode) -> float:
        b = float(c.sum())
        return self.c + self.a * max(0.0, b - self.b0)

    def batch_times(self, c, m, decode, ptr):
        b = np.add.reduceat(np.asarray(c, dtype=np.int64), ptr[:-1]).astype(np.float64)
        return self.c + self.a * np.maximum(0.0, b - self.b0)

    def repeat_times(self, c, m0, decode, steps):  # b = Σ c in every step
        return np.full(steps, self.batch_time(np.asarray(c), m0, decode), dtype=np.float64)


@FORMS.register("staircase")
class StaircaseCost(CostModel):
    """Seed 002 v3, Assumption 1: t_b = c + a * ceil(b / b0), b = tokens in the batch (Σ c)."""

    form = "staircase"
    params = {"c": None, "a": None, "b0": None}
    positive = ("b0",)  # a divisor

    def batch_time(self, c, m, decode) -> float:
        return self.c + self.a * math.ceil(float(c.sum()) / self.b0)

    def batch_times(self, c, m, decode, ptr):
        b = np.add.reduceat(np.asarray(c, dtype=np.int64), ptr[:-1]).astype(np.float64)
        return self.c + self.a * np.ceil(b / self.b0)

    def repeat_times(self, c, m0, decode, steps):  # b = Σ c in every step
        return np.full(steps, self.batch_time(np.asarray(c), m0, decode), dtype=np.float64)
