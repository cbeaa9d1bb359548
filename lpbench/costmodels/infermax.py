from __future__ import annotations

import numpy as np

from .base import FORMS, CostModel


@FORMS.register("infermax")
class InferMaxCost(CostModel):
    """Seed 003 §3.2 cost model with the artifact's per-layer coefficients (notes §1.2-1.4).

    Per layer, in milliseconds, for decode set D and prefill/refill set P of the batch::

        other = a_o * Σ_B c + b_o
        dec   = [D≠∅] * ((a_d * Σ_D kv + b_d) * (1 + phi*[|D|>1]) + s_d * |D|)
        pre   = [P≠∅] * ((a_p * Σ_P (c² + 2 c m) + b_p) * (1 + phi*[|P|>1]) + s_p * |P| + m_p * Σ_P m)

    batch time = layers * (other + dec + pre) / 1000 seconds. Decisions (notes §1.3, §3.9.8):
    a decode reads kv = m + 1 keys (its cached KV plus the token being processed; the artifact's
    ``num_processed_tokens``); no KV rounding (granularity 1, as the paper's §6 run); the small
    sklearn ``add_time`` term of the artifact is dropped (it has no closed form); phi is the GQA
    batching overhead (0.1 for Llama-3-70B, 0 for Llama-2-7B).
    """

    form = "infermax"
    params = {
        "a_o": None, "b_o": None,
        "a_d": None, "b_d": None, "s_d": None,
        "a_p": None, "b_p": None, "s_p": None, "m_p": None,
        "layers": None, "phi": 0.0,
    }
    positive = ("layers",)

    def batch_time(self, c, m, decode) -> float:
        c, m = np.asarray(c), np.asarray(m)
        if c.dtype.kind in "iu" and m.dtype.kind in "iu":  # the simulator's and the verifier's: exact sums
            n_d, kv, _, n_p, work, _, m_sum, _, c_sum = self._integer_sums(c, m, np.asarray(decode, dtype=bool))
            return self._time_of_sums(c_sum, n_d, kv, n_p, work, m_sum)
        c = np.asarray(c, dtype=np.float64)
        m = np.asarray(m, dtype=np.float64)
        decode = np.asarray(decode, dtype=bool)
        n_d = int(np.count_nonzero(decode))
        cp, mp = c[~decode], m[~decode]
        return self._time_of_sums(c.sum(), n_d, (m[decode] + 1.0).sum(), len(c) - n_d,
                                  (cp * cp + 2.0 * cp * mp).sum(), mp.sum())

    @staticmethod
    def _integer_sums(c, m, decode):
        """The integer sums of batch_time, as Python integers, and how each grows per repeat of the batch
        (m += c): n_d, Σ_D (m + 1), Σ_D c; n_p, Σ_P (c² + 2 c m), Σ_P 2 c², Σ_P m, Σ_P c; Σ c. For integer c
        and m (the simulator's and the verifier's) batch_time combines these instead of float sums, with fewer
        numpy calls: below 2**53 the float sums are exact too, so the result is the same float.
        (np.add.reduce is ndarray.sum without its Python-level wrapper, nonzero()[0] np.flatnonzero's.)"""
        n_d = int(np.count_nonzero(decode))
        n_p = len(c) - n_d
        c_sum = int(np.add.reduce(c))
        work = d_work = m_sum = c_pre = 0
        if n_p:  # a few prefill chunks: one loop over them
            pre = (~decode).nonzero()[0]
            for x, y in zip(c[pre].tolist(), m[pre].tolist()):
                work += x * x + 2 * x * y
                d_work += 2 * x * x
                m_sum += y
                c_pre += x
        kv = int(np.add.reduce(m)) - m_sum + n_d if n_d else 0
        return n_d, kv, c_sum - c_pre, n_p, work, d_work, m_sum, c_pre, c_sum

    def _time_of_sums(self, c_sum, n_d, kv, n_p, work, m_sum):
        """batch_time's expression on its sums Σ c, n_d, Σ_D (m + 1), n_p, Σ_P (c² + 2 c m), Σ_P m: integers
        (exact as floats below 2**53), float sums, or float64 arrays over a run's batches (repeat_times).
        The same operations in the same order, so the same floats whichever the caller."""
        per_layer = self.a_o * c_sum + self.b_o
        if n_d:
            per_layer = per_layer + ((self.a_d * kv + self.b_d) * (1.0 + self.phi * (n_d > 1)) + self.s_d * n_d)
        if n_p:
            per_layer = per_layer + ((self.a_p * work + self.b_p) * (1.0 + self.phi * (n_p > 1))
                                     + self.s_p * n_p + self.m_p * m_sum)
        return self.layers * per_layer * 1e-3

    def batch_times(self, c, m, decode, ptr):
        # every sum is of integer-valued float64 terms below 2**53, so exact in any order: the same
        # values as batch_time's, combined by the same expression
        starts = ptr[:-1]
        c = np.asarray(c, dtype=np.float64)
        m = np.asarray(m, dtype=np.float64)
        decode = np.asarray(decode, dtype=bool)
        n_d = np.add.reduceat(decode.astype(np.int64), starts)
        n_p = np.diff(ptr) - n_d
        per_layer = self.a_o * np.add.reduceat(c, starts) + self.b_o
        kv = np.add.reduceat(np.where(decode, m + 1.0, 0.0), starts)
        dec = (self.a_d * kv + self.b_d) * (1.0 + self.phi * (n_d > 1)) + self.s_d * n_d
        per_layer = np.where(n_d > 0, per_layer + dec, per_layer)
        work = np.add.reduceat(np.where(decode, 0.0, c * c + 2.0 * c * m), starts)
        mp = np.add.reduceat(np.where(decode, 0.0, m), starts)
        pre = (self.a_p * work + self.b_p) * (1.0 + self.phi * (n_p > 1)) + self.s_p * n_p + self.m_p * mp
        per_layer = np.where(n_p > 0, per_layer + pre, per_layer)
        return self.layers * per_layer * 1e-3

    SHORT_RUN = 16  # repeat_times prices a run up to this long batch by batch, in Python floats

    def repeat_times(self, c, m0, decode, steps):
        # batch s has m = m0 + s c: each sum of batch_time is an integer, linear in s, computed exactly
        # (_integer_sums), then combined by batch_time's expression: per batch in Python floats for a short run
        # (_time_of_sums, as batch_time), else over s in int64, converted once (exact below 2**53)
        c, m0, decode = np.asarray(c, dtype=np.int64), np.asarray(m0, dtype=np.int64), np.asarray(decode, dtype=bool)
        n_d, kv, d_kv, n_p, work, d_work, m_sum, d_m, c_sum = self._integer_sums(c, m0, decode)
        if steps <= self.SHORT_RUN:
            return np.array([self._time_of_sums(c_sum, n_d, kv + d_kv * s, n_p, work + d_work * s, m_sum + d_m * s)
                             for s in range(steps)], dtype=np.float64)
        s = np.arange(steps, dtype=np.int64)
        # an array: a batch has a decode or a prefill, so one of the two terms is an array
        return self._time_of_sums(c_sum, n_d, (kv + d_kv * s).astype(np.float64), n_p,
                                  (work + d_work * s).astype(np.float64), (m_sum + d_m * s).astype(np.float64))
