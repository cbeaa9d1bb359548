"""Seed 000's schedulers (notes seed-000 §3): RAD (Algorithm 1), its companion (Algorithm 2, App. D)
and SLAI (§6). Batch model, one engine.

Tile sizes. RAD runs optimally tiled batches: a prefill chunk of T*_lcm = LCM(T_row, T_col, T_red)
tokens alone in its batch, decode batches of T*_col requests. With the ``tiled`` cost model these come
from its coefficients (its one tile configuration is T*, Assumption 1); otherwise from the parameters
``T_col`` (default 128) and ``T_lcm`` (default 256: A100, T* = 128 x 256, T_red = 32). Both are capped by
the instance's limits (token_budget and prefill_budget cap the chunk; token_budget and max_batch_requests cap T_col).

Decisions on the ambiguities (notes §2.5, §5.4):
* chunk size c = min(T_lcm, l^p − i + 1), the remaining prompt (the paper's l^p − i is off by one).
* Assumption 4 (memory for T*_col worst-case requests) is replaced by an admission gate: a request
  enters the cycle only if its peak KV I + O − 1 fits in memory next to the peaks already reserved
  (no eviction, so every schedule verifies). When the gate refuses, RAD behaves as if |D| = T*_col
  (decode mode) and Algorithm 2 ends its prefill mode. The gate reads the output length O, which the paper's
  schedulers do not know (seed 000 §2.1): RAD here is clairvoyant about memory, as SLAI's admission is
  (:mod:`lpbench.policies.slai`), and comparisons with non-clairvoyant policies carry that advantage.
* ``M`` (requests started per cycle; Theorem 2 wants M > (T*_col − 1) t_max/(δ t̄)) defaults to 1024.
* A request whose prefill produces its only output token (O = 1) completes without entering D; it
  still counts in requests_in_cycle.
"""
from __future__ import annotations

import math
from collections import deque

import numpy as np

from ..sim import Batch
from .base import POLICIES, Param, Policy


class _CycleScheduler(Policy):
    """Shared pieces of Algorithms 1 and 2: tile sizes, the FCFS prefill queue P, the decode set D,
    whole-request prefills in T_lcm chunks, each chunk alone in its batch."""

    #: T_col, T_lcm: default from the tiled cost model, else 128 and 256; capped by the instance's limits
    params = {"M": Param("int", "the number of requests started per cycle", lo=1),
              "T_col": Param("int", "the decode batch size T*_col in requests", lo=1),
              "T_lcm": Param("int", "the prefill chunk size T*_lcm in tokens", lo=1)}

    def __init__(self, M: float = 1024, T_col: float | None = None, T_lcm: float | None = None, **kw):
        super().__init__(**kw)
        self.M_cycle, self.T_col_param, self.T_lcm_param = int(M), T_col, T_lcm

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        cm, lim = inst.cost_model, inst.limits
        if cm.form == "tiled":
            T_col = int(cm.T_col)
            T_lcm = math.lcm(int(cm.T_row), int(cm.T_col), int(cm.T_red))
        else:
            T_col, T_lcm = 128, 256
        T_col = int(self.T_col_param or T_col)
        T_lcm = int(self.T_lcm_param or T_lcm)
        caps = [v for v in (lim.token_budget, lim.max_batch_requests) if v is not None]
        self.T_col = min([T_col] + caps)
        self.T_lcm = min([T_lcm] + [v for v in (lim.token_budget, lim.prefill_budget) if v is not None])
        self.P: deque[int] = deque()
        self.D: list[int] = []
        self.current: int | None = None     # request whose prefill is under way
        self.reserved = 0
        self.peak = (inst.prompt + inst.output - 1).astype(np.int64)

    def on_arrivals(self, idx) -> None:
        self.P.extend(idx.tolist())

    def can_admit(self) -> bool:
        return bool(self.P) and self.reserved + int(self.peak[self.P[0]]) <= self.inst.memory

    def prefill_chunk(self) -> Batch:
        """Start (if needed) and continue the FCFS head's prefill: one chunk alone in a batch."""
        if self.current is None:
            self.current = self.P.popleft()
            self.reserved += int(self.peak[self.current])
        i = self.current
        c = min(self.T_lcm, int(self.st.S[i] - self.st.m[i]))
        return Batch(np.array([i], dtype=np.int64), np.array([c], dtype=np.int64))

    def decode_batch(self, members: list[int]) -> Batch:
        return Batch(np.array(members, dtype=np.int64), np.ones(len(members), dtype=np.int64))

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        done = set(finished.tolist())
        if done:
            self.reserved -= int(self.peak[list(done)].sum())
        cur = self.current  # (a request completed by this batch has had its KV released: m = 0)
        if cur is not None and (cur in done or self.st.m[cur] >= self.st.L[cur]):
            i, self.current = self.current, None   # prefill complete: move r from P to D
            self.prefilled(i, i in done)
        if done:
            self.retire(done)

    def steady_batches(self, req, tokens, decode):
        """Two batches repeat. (1) The chunk of the request whose prefill is under way: both algorithms
        return it first, and it stays T_lcm tokens while more than that remain. (2) A decode batch of the
        whole decode window, up to the batch in which a member completes (decided before it completes):
        the window changes only by completions (``retire``), the reservations are peaks (nothing grows per
        step), and the mode test looks at arrivals only as ``steady_sensitive`` says."""
        st = self.st
        if self.current is not None:
            i = self.current
            return int(st.L[i] - st.m[i] - 1) // int(tokens[0]), False
        if not decode.all() or not self.steady_window(req):
            return 0, True
        return int((self.inst.output[req] - st.generated[req]).min()), self.steady_sensitive()

    def advance_run(self, req, tokens, decode, steps, starts):
        pass  # neither a chunk nor a decode step changes the cycle schedulers' bookkeeping

    def steady_window(self, req) -> bool:
        """B ran the decode window (all of it)."""
        raise NotImplementedError

    def steady_sensitive(self) -> bool:
        """An arrival may change the mode test's answer."""
        raise NotImplementedError

    def prefilled(self, i: int, finished: bool) -> None:
        raise NotImplementedError

    def retire(self, done: set) -> None:
        raise NotImplementedError


@POLICIES.register("rad")
class RAD(_CycleScheduler):
    """Algorithm 1, RAD (Resource-Aware Dynamic): prefill mode completes whole prefills FCFS, one
    T_lcm chunk per batch, until |D| = T*_col; decode mode runs one DI for every request of D; once M
    requests have started in the cycle it drains D, and the cycle ends when D empties (lines 6-9)."""

    name = "rad"
    summary = "seed 000 Alg. 1 RAD: FCFS whole prefills in T_lcm chunks alone, decode batches of T_col, cycles of M"

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        self.requests_in_cycle = 0

    def next_batch(self, t):
        if self.current is not None:                                    # lines 12-16: finish r's prefill
            return self.prefill_chunk()
        if not self.P and not self.D:                                   # line 5
            return None
        if (len(self.D) >= self.T_col or not self.P or self.requests_in_cycle >= self.M_cycle
                or not self.can_admit()):                               # line 6 (+ memory gate)
            if not self.D:
                return None  # only the memory gate blocks: nothing runs, so nothing frees -- wait
            return self.decode_batch(self.D)                            # line 7
        self.requests_in_cycle += 1                                     # line 18 (counted at the start)
        return self.prefill_chunk()                                     # lines 11-14

    def prefilled(self, i, finished) -> None:
        if not finished:
            self.D.append(i)

    def steady_window(self, req) -> bool:
        return len(req) == len(self.D)  # line 7 ran D

    def steady_sensitive(self) -> bool:
        # line 6's test holds until a completion; an arrival can only flip its "P empty" part
        return not self.P

    def retire(self, done) -> None:
        self.D = [i for i in self.D if i not in done]                   # line 8
        if not self.D and self.current is None:
            self.requests_in_cycle = 0                                  # line 9: end of cycle


@POLICIES.register("rad-alg2")
class RADAlg2(_CycleScheduler):
    """Algorithm 2 (App. D): prefill mode completes up to M whole prefills (FCFS, T_lcm chunks alone);
    decode mode keeps min(T*_col, |D|) requests active, refilling from D as they finish, until D and
    D_active are empty; then the next cycle. Low TBT, high TTFT (the complement of RAD)."""

    name = "rad-alg2"
    summary = "seed 000 Alg. 2: up to M whole prefills, then decode D in active windows of T_col until empty"

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        self.mode = "prefill"
        self.requests_in_cycle = 0
        self.active: list[int] = []

    def next_batch(self, t):
        if self.current is not None:                                    # lines 6-10
            return self.prefill_chunk()
        if self.mode == "prefill":
            if self.P and self.requests_in_cycle < self.M_cycle and self.can_admit():   # line 4 (+ memory)
                self.requests_in_cycle += 1
                return self.prefill_chunk()
            if not self.D:                                              # nothing to decode: stay in prefill
                self.requests_in_cycle = 0
                return None
            self.mode = "decode"                                        # lines 14-15
            k = min(self.T_col, len(self.D))
            self.active, self.D = self.D[:k], self.D[k:]
        return self.decode_batch(self.active)                           # line 17

    def prefilled(self, i, finished) -> None:
        if not finished:
            self.D.append(i)

    def steady_window(self, req) -> bool:
        return self.mode == "decode" and len(req) == len(self.active)  # line 17 ran the active window

    def steady_sensitive(self) -> bool:
        return False  # decode mode does not look at P

    def retire(self, done) -> None:
        if self.mode != "decode":
            return
        self.active = [i for i in self.active if i not in done]         # line 18
        k = min(self.T_col - len(self.active), len(self.D))             # line 19
        self.active, self.D = self.active + self.D[:k], self.D[k:]
        if not self.active:                                             # line 16: cycle over
            self.mode, self.requests_in_cycle = "prefill", 0
