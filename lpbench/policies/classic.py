"""vLLM and Sarathi-Serve as simulated in seed 003 (notes seed-003 §2.3-2.4, artifact logic).

Both keep a FCFS waiting queue (evicted requests are pushed to its front) and a running list in
arrival order, and account memory by *reservation*: an admitted request reserves its whole current
prompt (S tokens, generated tokens included after an eviction), a decode reserves one more slot.
Reservation >= the physical KV, so the verifier's post-batch memory check always holds.
Evictions are recompute evictions of the newest running request (the back of the running list);
when none is left the candidate evicts itself.

Batch limits: the instance's ``token_budget`` C and ``max_batch_requests`` bind every policy; the
policy's own P (prefill chunk budget) is min(policy P, instance ``prefill_budget``, C).
"""
from __future__ import annotations

import bisect
import math
from collections import deque

import numpy as np

from ..errors import InputError
from ..sim import Batch
from .base import POLICIES, Policy

INF = math.inf


class KVQueuePolicy(Policy):
    """Waiting queue + running list + reservations; the shared machinery of the InferMax family."""

    default_P: float = INF

    def __init__(self, P: float | None = None, **kw):
        super().__init__(**kw)
        self.P_param = self.default_P if P is None else P

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        lim = inst.limits
        self.M = inst.memory
        self.C = lim.token_budget if lim.token_budget is not None else INF
        self.P = min(self.P_param, self.C, lim.prefill_budget if lim.prefill_budget is not None else INF)
        self.cap = lim.max_batch_requests if lim.max_batch_requests is not None else INF
        self.waiting: deque[int] = deque()
        self.running: list[int] = []
        self.reserved = np.zeros(inst.n, dtype=np.int64)
        self.reserved_total = 0
        self._evicted: list[int] = []

    # -- queue bookkeeping ------------------------------------------------------------------
    def on_arrivals(self, idx) -> None:
        self.waiting.extend(idx.tolist())

    def free(self) -> int:
        return self.M - self.reserved_total

    def admit(self, i: int, amount: int) -> None:
        self.reserved[i] = amount
        self.reserved_total += amount
        bisect.insort(self.running, i)

    def evict(self, i: int) -> None:
        self.reserved_total -= int(self.reserved[i])
        self.reserved[i] = 0
        self.running.remove(i)
        self.waiting.appendleft(i)
        self._evicted.append(i)

    def take_evictions(self):
        ev, self._evicted = self._evicted, []
        return np.array(ev, dtype=np.int64) if ev else None

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        if len(finished):
            self.reserved_total -= int(self.reserved[finished].sum())
            self.reserved[finished] = 0
            gone = set(finished.tolist())
            self.running = [i for i in self.running if i not in gone]

    # -- shared passes ----------------------------------------------------------------------
    def decode_pass(self, tok: int):
        """Give each running decode one token, FCFS, evicting the newest running request while
        memory is short (self-evicting when none is left). Returns (decodes, prefills, tok):
        running requests still in prefill are set aside for the caller."""
        run = np.array(self.running, dtype=np.int64)
        if len(run) == 0:
            return [], [], tok
        dec_mask = self.st.m[run] >= self.st.L[run]
        decodes = run[dec_mask]
        prefills = run[~dec_mask].tolist()
        k = int(min(len(decodes), self.C - tok, self.cap))
        if k <= self.free():  # common case: no eviction needed, vectorised
            chosen = decodes[:k]
            self.reserved[chosen] += 1
            self.reserved_total += k
            return chosen.tolist(), prefills, tok + k
        # memory is short: the sequential eviction loop of the artifact
        queue = deque(self.running)
        prefills, chosen = [], []
        while queue:
            r = queue.popleft()
            if self.st.m[r] < self.st.L[r]:
                prefills.append(r)
                continue
            if tok >= self.C or len(chosen) >= self.cap:
                continue
            while self.free() < 1:
                if queue:
                    self.evict(queue.pop())
                else:
                    self.evict(r)
                    r = -1
                    break
            if r >= 0:
                self.reserved[r] += 1
                self.reserved_total += 1
                chosen.append(r)
                tok += 1
        prefills = [r for r in prefills if self.reserved[r] > 0]
        return chosen, prefills, tok

    def batch(self, req: list[int], tokens: list[int]) -> Batch:
        return Batch(np.array(req, dtype=np.int64), np.array(tokens, dtype=np.int64), self.take_evictions())


@POLICIES.register("vllm")
class VLLM(KVQueuePolicy):
    """vLLM (seed 003 Table 1): prefill-first, FCFS, no hybrid batching, no chunked prefill.

    A batch is either the FCFS prefix of waiting requests whose whole prompts fit (memory, C, cap;
    head-of-line blocking) or, when none is admitted, one decode token for every running request,
    FCFS, evicting the newest running request (recompute) while memory is short.
    """

    name = "vllm"
    summary = "prefill-first FCFS, no hybrid/chunking, evicts newest running (seed 003 Table 1)"

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        worst = inst.prompt + inst.output - 1  # a refill recomputes the prompt and generated tokens
        if self.P < INF and worst.max() > self.P:
            i = int(worst.argmax())
            raise InputError(f"policy 'vllm' has no chunked prefill: request {inst.ids[i]} may need a prefill of "
                             f"{int(worst[i])} tokens (prompt + output - 1), above the token/prefill budget "
                             f"{self.P:g}; raise limits.token_budget or use 'sarathi'")

    def next_batch(self, t):
        req, toks, tok = [], [], 0
        st = self.st
        while self.waiting:
            r = self.waiting[0]
            need = int(st.S[r])
            if self.free() < need or tok + need > self.P or len(req) >= self.cap:
                break
            self.waiting.popleft()
            self.admit(r, need)
            req.append(r)
            toks.append(need)
            tok += need
        if req:
            return self.batch(req, toks)
        dec, _, tok = self.decode_pass(0)
        return self.batch(dec, [1] * len(dec))


@POLICIES.register("sarathi")
class Sarathi(KVQueuePolicy):
    """Sarathi-Serve (seed 003 Table 1): decode-first, hybrid batches, chunked prefill, P = 512.

    Every running decode gets one token (FCFS, evicting the newest running request when memory is
    short); then running prefills continue with chunks of min(pending, P - tok); then waiting
    requests are admitted FCFS, each reserving its whole prompt, with chunk min(S, P - tok), until
    one does not fit (head-of-line blocking).
    """

    name = "sarathi"
    summary = "decode-first, hybrid, chunked prefill under budget P=512 (seed 003 Table 1)"
    default_P = 512

    def next_batch(self, t):
        st = self.st
        dec, prefills, tok = self.decode_pass(0)
        req, toks = list(dec), [1] * len(dec)
        for r in prefills:
            n = int(min(st.S[r] - st.m[r], self.P - tok, self.C - tok))
            if n <= 0 or len(req) >= self.cap:
                continue
            req.append(r)
            toks.append(n)
            tok += n
        while self.waiting and len(req) < self.cap:
            r = self.waiting[0]
            need = int(st.S[r])
            n = int(min(need, self.P - tok, self.C - tok))
            if self.free() < need or n <= 0:
                break
            self.waiting.popleft()
            self.admit(r, need)
            req.append(r)
            toks.append(n)
            tok += n
        return self.batch(req, toks)
