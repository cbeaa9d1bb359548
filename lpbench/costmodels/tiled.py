from __future__ import annotations

import numpy as np

from .base import FORMS, CostModel


def _ceil_div(x, y):
    return np.ceil(np.asarray(x, dtype=np.float64) / y)


@FORMS.register("tiled")
class TiledCost(CostModel):
    """Seed 000 eq. (7), the tiling cost model (notes §1.4)::

        t_b = ceil(n/T_col)/nu_lin + n/nu_nlin + N * Σ_decode t_datt(i_q)
              + N/(S*nu_gemm) * Σ_prefill [ceil((i+c-1)/T_row) ceil(c/T_col) d/T_red
                                           + (d/T_row) ceil(c/T_col) ceil((i+c-1)/T_red)]
        t_datt(i) = [(d/T_col_v) ceil(i/T_row_v) + ceil(i/T_col_v) (d/T_row_v)] / nu_gemv   (eq. 5)

    n = tokens in the batch. A decode DI(r, i) processes token index i = m + 1; a prefill
    PI(r, i, c) starts at i = m + 1, so i + c - 1 = m + c keys. ``t0`` is a constant per-batch
    overhead that eq. (7) does not have (default 0); the paper's measurements show a floor.
    """

    form = "tiled"
    params = {
        "nu_lin": None, "T_col": None, "nu_nlin": None, "N": None,
        "nu_gemv": None, "d": None, "T_row_v": None, "T_col_v": None,
        "S": None, "nu_gemm": None, "T_row": None, "T_red": None,
        "t0": 0.0,
    }
    positive = ("nu_lin", "T_col", "nu_nlin", "N", "nu_gemv", "d",  # divisors, tile sizes, dimensions
                "T_row_v", "T_col_v", "S", "nu_gemm", "T_row", "T_red")

    def batch_time(self, c, m, decode) -> float:
        c = np.asarray(c, dtype=np.float64)
        m = np.asarray(m, dtype=np.float64)
        n = c.sum()
        t = self.t0 + _ceil_div(n, self.T_col) / self.nu_lin + n / self.nu_nlin
        if decode.any():
            i = m[decode] + 1.0
            t_att = ((self.d / self.T_col_v) * _ceil_div(i, self.T_row_v)
                     + _ceil_div(i, self.T_col_v) * (self.d / self.T_row_v)) / self.nu_gemv
            t += self.N * t_att.sum()
        pre = ~np.asarray(decode)
        if pre.any():
            cp, keys = c[pre], m[pre] + c[pre]
            tiles = (_ceil_div(keys, self.T_row) * _ceil_div(cp, self.T_col) * (self.d / self.T_red)
                     + (self.d / self.T_row) * _ceil_div(cp, self.T_col) * _ceil_div(keys, self.T_red))
            t += self.N / (self.S * self.nu_gemm) * tiles.sum()
        return float(t)
