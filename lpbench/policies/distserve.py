"""DistServe (Zhong et al., OSDI'24; seed 000 ref. [36], Algorithm 5 in App. E, §5): prefill and decode on
separate engines, the request's KV moved from one to the other. It drives several engines
(:class:`lpbench.sim.multi.EngineGroup`); the instance names K (``limits.engines``), the routing rule
(``limits.routing``) and the transfer time (``limits.kv_transfer_per_token``).

* Static partition (seed 000 §5): the first ``prefill_engines`` engines (default ⌊K/2⌋) prefill, the
  others decode.
* Prefill engine (Alg. 5, prefill node): FCFS. A batch is the head request's next prefill chunk, alone
  in it (line 8, PI(r_q, 1, l^p_q)), cut at the token budget C and the prefill budget P where the instance
  sets them ("chunked prefill-iteration may be done too"). ``--param pack=1`` instead fills a batch with
  FCFS chunks up to the budget, the last one cut, and with at most ``limits.max_batch_requests`` requests
  (DistServe's own batching of prefills). A request starts
  when its prompt's KV (I) fits next to the prompts the engine holds: those in prefill and those waiting
  for, or in, their transfer.
* First token (lpbench's one semantics): the batch that processes the last prompt token generates the
  first output token, on the prefill engine. So TTFT ends with the prefill and does not include the
  transfer; the transfer and the wait for a decode slot fall in the first TBT gap.
* Transfer (line 9): a prefilled request queues FIFO for a decode engine. It moves, its I KV entries
  taking τ·I (τ = ``limits.kv_transfer_per_token``), as soon as a decode engine has room for its peak
  I + O − 1 and holds fewer than its batch cap of requests; among those engines the routing rule picks.
  The prefill engine frees the prompt's KV when the transfer ends; the decode engine holds it from the
  start (:mod:`lpbench.semantics`, "Several engines").
* Decode engine (Alg. 5, decode node): every batch decodes every request it holds (one DI each). A request
  is admitted at its peak KV I + O − 1, as the eviction-free (-ef) policies and RAD here reserve it, so
  nothing is evicted (DistServe itself swaps KV to host memory, seed 000 App. A.2; not modelled); at most
  min(C, max_batch_requests) requests, so every batch stays within the limits.
* A request with O = 1 completes on its prefill engine.

τ has no default in the code: the instance states its link. For Mistral-7B, 128 KiB of fp16 KV per token
(2 · 32 layers · 8 KV heads · 128 · 2 B, notes seed-000 §1.5) over PCIe 4.0 x16 at about 25 GB/s (the
RTX 6000 Ada of seed 000 has no NVLink), τ = 131072 / 25e9 ≈ 5.2e-6 s per token: a 1730-token prompt
(the openchat median, seed 000 Table 1) moves in 9 ms. ``benchmarks/bench_capacity.py distserve`` uses it.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from ..errors import InputError
from ..sim import Batch
from ..sim.multi import ROUTERS, EngineGroup
from .base import POLICIES, Param, Policy


@POLICIES.register("distserve")
class DistServe(Policy, EngineGroup):
    name = "distserve"
    summary = "seed 000 Alg. 5: FCFS prefill engines, all-decode engines, KV moved between them"
    explicit_only = True  # needs limits.engines >= 2 and limits.kv_transfer_per_token

    #: prefill_engines: default limits.engines // 2; at most limits.engines - 1 (checked per instance: check)
    params = {"prefill_engines": Param("int", "the number of prefill engines", lo=1),
              "pack": Param("flag", "whether a prefill batch packs the FCFS chunks of several requests up to "
                                    "the budgets", values="0 (one request per prefill batch, Alg. 5) or 1")}

    def __init__(self, prefill_engines: float | None = None, pack: float = 0, **kw):
        super().__init__(**kw)
        self.prefill_param, self.pack = prefill_engines, bool(pack)

    def n_prefill(self, K: int) -> int:
        return int(self.prefill_param) if self.prefill_param is not None else K // 2

    def check(self, inst) -> None:
        lim = inst.limits
        if lim.K < 2:
            raise InputError(f"limits.engines: policy 'distserve' needs at least 2 engines (prefill and decode), "
                             f"got {lim.K}")
        if lim.kv_transfer_per_token is None:
            raise InputError("limits.kv_transfer_per_token: policy 'distserve' moves KV between engines and needs "
                             "its time in seconds per token, got none (e.g. 5.2e-06: Mistral-7B's 128 KiB per token "
                             "over 25 GB/s PCIe 4.0)")
        P = self.prefill_param
        if P is not None and not P < lim.K:  # an integer >= 1: Param
            raise InputError(f"--param prefill_engines: must be an integer in 1..{lim.K - 1} "
                             f"(limits.engines = {lim.K}), got {P:g}")

    # -- EngineGroup -------------------------------------------------------------------------------
    def start(self, inst, states, run) -> None:
        self.inst, self.states, self.run = inst, states, run
        lim = inst.limits
        K = lim.K
        P = self.n_prefill(K)
        self.prefill_engines = np.arange(P)
        self.decode_engines = np.arange(P, K)
        self.router = ROUTERS.get(lim.routing_rule)(K, self.seed)
        budgets = [b for b in (lim.token_budget, lim.prefill_budget) if b is not None]
        self.chunk = min(budgets) if budgets else None
        caps = [b for b in (lim.token_budget, lim.max_batch_requests) if b is not None]
        self.cap = min(caps) if caps else inst.n
        # a packed prefill batch holds at most max_batch_requests requests (its token budgets cap it too)
        self.prefill_cap = lim.max_batch_requests if lim.max_batch_requests is not None else inst.n
        self.prompt = inst.prompt
        self.peak = (inst.prompt + inst.output - 1).astype(np.int64)
        self.waiting = [deque() for _ in range(K)]  # prefill engine: arrived, not started (FCFS)
        self.started = [[] for _ in range(K)]       # prefill engine: in prefill, FCFS
        self.decoding = [[] for _ in range(K)]      # decode engine: requests whose KV has arrived
        self.held = np.zeros(K, dtype=np.int64)     # KV held or reserved: prompts (prefill), peaks (decode)
        self.admitted = np.zeros(K, dtype=np.int64)  # decode engine: requests moving in or decoding
        self.to_move: deque[int] = deque()           # prefilled, waiting for a decode engine (FIFO)

    def route(self, i, t) -> int:
        return self.router.pick(self.prefill_engines, self.run.load)

    def deliver(self, e, idx) -> None:
        if e < len(self.prefill_engines):
            self.waiting[e].extend(idx.tolist())
        else:
            self.decoding[e].extend(idx.tolist())

    def next_batch(self, e, t):
        if e >= len(self.prefill_engines):
            d = self.decoding[e]
            return Batch(np.array(d, dtype=np.int64), np.ones(len(d), dtype=np.int64)) if d else None
        st, started, waiting = self.states[e], self.started[e], self.waiting[e]
        left = self.chunk if self.chunk is not None else np.inf
        req, tok = [], []
        k = 0
        while left > 0 and k < self.prefill_cap:
            if k == len(started):
                if not (waiting and (self.pack or not started) and
                        self.held[e] + self.prompt[waiting[0]] <= self.inst.memory):
                    break
                i = waiting.popleft()
                started.append(i)
                self.held[e] += self.prompt[i]
            i = started[k]
            c = int(min(st.S[i] - st.m[i], left))
            req.append(i)
            tok.append(c)
            left -= c
            k += 1
            if not self.pack:
                break
        if not req:
            return None
        return Batch(np.array(req, dtype=np.int64), np.array(tok, dtype=np.int64))

    def batch_end(self, e, t, req, tokens, gen, finished) -> None:
        done = set(finished.tolist())
        if e < len(self.prefill_engines):
            prefilled = set(req[gen].tolist())  # on a prefill engine, a token is the first token
            if prefilled:
                self.started[e] = [i for i in self.started[e] if i not in prefilled]
                for i in req[gen].tolist():
                    if i in done:
                        self.held[e] -= self.prompt[i]  # O = 1: complete, its KV released by the loop
                    else:
                        self.to_move.append(i)
        elif done:
            self.decoding[e] = [i for i in self.decoding[e] if i not in done]
            self.held[e] -= int(self.peak[list(done)].sum())
            self.admitted[e] -= len(done)
        self.start_moves(t)

    def start_moves(self, t: float) -> None:
        """Move prefilled requests, FIFO, while a decode engine has room for the head's peak."""
        M = self.inst.memory
        while self.to_move:
            i = self.to_move[0]
            d = self.decode_engines
            room = d[(self.held[d] + self.peak[i] <= M) & (self.admitted[d] < self.cap)]
            if not len(room):
                return
            dst = self.router.pick(room, self.run.load)
            self.to_move.popleft()
            self.held[dst] += self.peak[i]
            self.admitted[dst] += 1
            self.run.start_move(i, dst, t)

    def moved(self, i, src, dst, t) -> None:
        self.held[src] -= self.prompt[i]
