"""The cost-model interface: the time of one batch.

A batch is given as arrays over the requests it processes (entries with c > 0 only):
``c`` tokens processed now, ``m`` KV entries cached before the batch, ``decode`` the phase
(see :mod:`lpbench.semantics`). ``batch_time`` returns the batch time in the instance's time unit
(seconds for every shipped profile, 1 round for ``unit``).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..registry import Registry

FORMS: Registry[type["CostModel"]] = Registry("cost-model form")


class CostModel:
    form: ClassVar[str]
    #: coefficient names with defaults (None = required)
    params: ClassVar[dict[str, float | None]] = {}
    #: coefficients that must be strictly positive (divisors, tile sizes, layer counts); every
    #: other coefficient must be non-negative (a time or a rate per token cannot be negative)
    positive: ClassVar[tuple[str, ...]] = ()
    source: ClassVar[str] = ""

    def __init__(self, **coefficients: float):
        for name, default in self.params.items():
            value = coefficients.get(name, default)
            setattr(self, name, float(value))
        self.coefficients = {k: getattr(self, k) for k in self.params}

    def batch_time(self, c: np.ndarray, m: np.ndarray, decode: np.ndarray) -> float:
        raise NotImplementedError

    def spec(self) -> dict:
        return {"form": self.form, **self.coefficients}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v:g}" for k, v in self.coefficients.items())
        return f"{type(self).__name__}({args})"
