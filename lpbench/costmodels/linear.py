from __future__ import annotations

import numpy as np

from .base import FORMS, CostModel


@FORMS.register("linear")
class LinearCost(CostModel):
    """Seed 001 eq. (1): tau = d0 + d1 * (total KV cache size in the batch).

    The KV of a processed request after this batch is m + c: the prompt l_j for a prefill and
    l_j + s for a decode at stage s, as in the paper's "Σ l_j + Σ (l_j + s_i)".
    """

    form = "linear"
    params = {"d0": None, "d1": None}

    def batch_time(self, c, m, decode) -> float:
        return self.d0 + self.d1 * float((m + c).sum())

    def batch_times(self, c, m, decode, ptr):
        kv = np.add.reduceat(np.asarray(m, dtype=np.int64) + np.asarray(c, dtype=np.int64), ptr[:-1])
        return self.d0 + self.d1 * kv.astype(np.float64)

    def repeat_times(self, c, m0, decode, steps):
        c = np.asarray(c, dtype=np.int64)
        kv = int((np.asarray(m0, dtype=np.int64) + c).sum()) + int(c.sum()) * np.arange(steps, dtype=np.int64)
        return self.d0 + self.d1 * kv.astype(np.float64)
