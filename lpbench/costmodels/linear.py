from __future__ import annotations

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
