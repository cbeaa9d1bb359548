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

    def decode_run_times(self, m0, steps):
        k = len(m0)
        kv = int(np.sum(m0)) + k + k * np.arange(steps, dtype=np.int64)  # Σ (m0 + s + 1)
        return self.d0 + self.d1 * kv.astype(np.float64)
