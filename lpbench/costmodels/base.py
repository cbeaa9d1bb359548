"""The cost-model interface: the time of one batch.

A batch is given as arrays over the requests it processes (entries with c > 0 only):
``c`` tokens processed now, ``m`` KV entries cached before the batch, ``decode`` the phase
(see :mod:`lpbench.semantics`). ``batch_time`` returns the batch time in the instance's time unit
(seconds for every shipped profile, 1 round for ``unit``).

Two bulk forms serve long schedules; each must return, bit for bit, what ``batch_time`` returns
batch by batch (the simulator and the verifier rely on it, and ``tests/test_costmodels.py`` checks
it): ``batch_times`` prices every batch of a columnar schedule, ``repeat_times`` a run of batches
that process the same tokens of the same requests. The defaults call ``batch_time`` per batch; a form whose
sums are exact (integer-valued terms, as in every form but ``tiled``) overrides them with numpy.
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

    def batch_times(self, c: np.ndarray, m: np.ndarray, decode: np.ndarray, ptr: np.ndarray) -> np.ndarray:
        """Times of the batches ``c[ptr[j]:ptr[j+1]]`` (and the same slices of m, decode), j = 0..len(ptr)-2.
        Every batch is non-empty."""
        return np.array([self.batch_time(c[a:b], m[a:b], decode[a:b]) for a, b in zip(ptr[:-1], ptr[1:])],
                        dtype=np.float64)

    def repeat_times(self, c: np.ndarray, m0: np.ndarray, decode: np.ndarray, steps: int) -> np.ndarray:
        """Times of ``steps`` consecutive batches that each process ``c`` tokens of the same requests in the
        same phases, the s-th (s = 0..steps-1) with KV m0 + s c before it."""
        return np.array([self.batch_time(c, m0 + s * c, decode) for s in range(steps)], dtype=np.float64)

    def spec(self) -> dict:
        return {"form": self.form, **self.coefficients}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v:g}" for k, v in self.coefficients.items())
        return f"{type(self).__name__}({args})"
