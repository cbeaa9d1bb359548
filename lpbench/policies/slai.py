"""SLAI, the SLO-aware scheduler of seed 000 (§6, §7.1; notes seed-000 §3.3). Batch model.

Each decode-phase request q carries the TBT SLO of its class (the per-request ``tbt_slo`` field:
paying 0.1 s, free 0.5 s in the paper). Its next decode-iteration has the last schedulable time
(eq. 8/9)::

    ℓ_q = s_q + TBT_q − Θ · τ_batch

s_q = end of the batch that produced q's previous token (for the first decode: the batch that
finished its prefill -- the repo's choice, notes §5.4.5), τ_batch = running mean of all batch times
so far. At a batch start t the DI is *critical* iff t >= ℓ_q. Batch construction, in order, within
the token budget n_budget (the instance's ``token_budget``, 512 without one; prefill chunks also
within its ``prefill_budget``), the decode limit
(128) and the active-request cap (128):

1. critical DIs by increasing ℓ;
2. started prefills, FIFO, each a chunk min(remaining prompt, budget left);
3. new prefills, SPF (shortest prompt first) or FCFS, while the active cap and memory allow;
4. non-critical DIs by increasing ℓ.

Offset Θ: fixed (``theta``, default 10) or dynamic (``dynamic=1``, the default: Θ = 5 while memory
utilisation < 96 %, else 10). Parameters: ``spf`` (1: SPF, default; 0: FCFS), ``dynamic``, ``theta``,
``cap`` (active requests), ``decode_limit``, ``used`` (below).

Decisions (notes §5.4): critical DIs obey the budget and the decode limit (the paper: the batch "must
respect" every constraint; the repo caps them); a request without the ``tbt_slo`` field has no TBT deadline
(ℓ = +∞: its decodes are always deferrable), so SLAI runs on any batch instance (the SLO capacity still
requires every class's SLO).

Deviations, kept so that every schedule verifies without evictions (and the measured tables of
docs/seed002-000-capacity.md stand):

* *Clairvoyant admission.* Memory is a KV reservation of the request's peak I + O − 1 at admission, so
  nothing is ever evicted. That reads the output length O, which the paper's scheduler does not know (seed 000
  §2.1: the output length is unknown at arrival; the repo reserves the prompt and preempts on a shortage).
  SLAI here therefore holds information that the non-clairvoyant baselines (vLLM, Sarathi) lack; comparisons
  with them carry that advantage.
* *Utilisation for the 96 % rule* is reserved / M by default. The repo's figure is the fraction of KV blocks
  in use, which is lower by the tokens not generated yet, so the default switches Θ to 10 sooner than the
  repo would. ``used=1`` takes the KV in use (Σ of the footprints held, as the verifier counts them) instead.
"""
from __future__ import annotations

import bisect
from collections import deque

import numpy as np

from ..sim import Batch
from .base import POLICIES, Param, Policy


@POLICIES.register("slai")
class SLAI(Policy):
    name = "slai"
    summary = "seed 000 §6 SLAI: critical decodes (last schedulable time), prefills SPF/FCFS, then deferrable decodes"

    params = {"spf": Param("flag", "the admission order", values="0 (FCFS) or 1 (shortest prompt first)"),
              "dynamic": Param("flag", "the offset rule", values="0 (the fixed theta) or 1 (5 below 96 % memory "
                                                                  "utilisation, else 10)"),
              "theta": Param("float", "the fixed offset Θ in mean batch times (with dynamic=0)", lo=0),
              "cap": Param("int", "the most active requests (capped by limits.max_batch_requests)", lo=1),
              "decode_limit": Param("int", "the most decodes per batch (capped by cap)", lo=1),
              "used": Param("flag", "the utilisation the 96 % rule reads",
                            values="0 (reserved / M) or 1 (the KV in use / M)")}

    def __init__(self, spf: float = 1, dynamic: float = 1, theta: float = 10, cap: float = 128,
                 decode_limit: float = 128, used: float = 0, **kw):
        super().__init__(**kw)
        self.spf, self.dynamic, self.theta = bool(spf), bool(dynamic), float(theta)
        self.cap, self.decode_limit = int(cap), int(decode_limit)
        self.used = bool(used)

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        # a request without a tbt_slo field has no TBT deadline: ℓ = +inf, its decodes are always deferrable
        self.tbt = np.full(inst.n, np.inf) if inst.tbt_slo is None else np.where(np.isnan(inst.tbt_slo), np.inf,
                                                                                  inst.tbt_slo)
        lim = inst.limits
        self.budget = lim.token_budget if lim.token_budget is not None else 512
        self.prefill_budget = lim.prefill_budget if lim.prefill_budget is not None else self.budget
        self.cap = min(self.cap, lim.max_batch_requests or self.cap)
        self.decode_limit = min(self.decode_limit, self.cap)
        self.peak = (inst.prompt + inst.output - 1).astype(np.int64)
        self.waiting: list[tuple[int, int]] = []  # arrived, not admitted: (key, index) sorted; key I (SPF) or 0
        self.prefilling: deque[int] = deque()  # admitted, prefill under way (FIFO)
        self.decoding: list[int] = []
        self.s = np.zeros(inst.n)              # end of the batch that produced q's previous token
        self.reserved = 0
        self.batches, self.busy = 0, 0.0
        self.last_start: float | None = None
        self.emitted: np.ndarray | None = None  # requests that produced a token in the last batch

    def on_arrivals(self, idx) -> None:
        keys = self.inst.prompt[idx].tolist() if self.spf else [0] * len(idx)
        for key, i in zip(keys, idx.tolist()):
            bisect.insort(self.waiting, (key, i))

    def offset(self) -> float:
        if not self.dynamic:
            return self.theta
        held = self.st.kv_total if self.used else self.reserved
        return 5.0 if held < 0.96 * self.inst.memory else 10.0

    def next_batch(self, t):
        if self.last_start is not None:        # the previous batch ended at t: τ_batch and s_q
            self.batches += 1
            self.busy += t - self.last_start
            if self.emitted is not None and len(self.emitted):
                self.s[self.emitted] = t
            self.last_start = None
        tau = self.busy / self.batches if self.batches else 0.0
        st = self.st
        req: list[int] = []
        tok: list[int] = []
        n = 0
        self._admitted = False
        dec = np.array(self.decoding, dtype=np.int64)
        if len(dec):
            ell = self.s[dec] + self.tbt[dec] - self.offset() * tau
            order = np.lexsort((dec, ell))
            dec, ell = dec[order], ell[order]
            critical = ell <= t
        else:
            critical = np.zeros(0, dtype=bool)
        k = int(min(np.count_nonzero(critical), self.decode_limit, self.budget))
        req.extend(dec[:k].tolist())                                   # (2) critical DIs
        tok.extend([1] * k)
        n += k
        p = 0                                                          # prefill tokens (the instance's P)
        for i in self.prefilling:                                      # (3a) started prefills, FIFO
            if n >= self.budget or p >= self.prefill_budget:
                break
            c = min(int(st.S[i] - st.m[i]), self.budget - n, self.prefill_budget - p)
            req.append(i)
            tok.append(c)
            n += c
            p += c
        while self.waiting and n < self.budget and p < self.prefill_budget:  # (3b) admissions, SPF / FCFS
            i = self.waiting[0][1]
            active = len(self.prefilling) + len(self.decoding)
            if active >= self.cap or self.reserved + int(self.peak[i]) > self.inst.memory:
                break
            self.waiting.pop(0)
            self._admitted = True
            self.prefilling.append(i)
            self.reserved += int(self.peak[i])
            c = min(int(st.S[i]), self.budget - n, self.prefill_budget - p)
            req.append(i)
            tok.append(c)
            n += c
            p += c
        rest = dec[k:]                                                 # (4) deferrable DIs by ℓ
        room = int(min(self.budget - n, self.decode_limit - k))
        if room > 0 and len(rest):
            req.extend(rest[:room].tolist())
            tok.extend([1] * min(room, len(rest)))
        if not req:
            return None
        self.last_start = t
        return Batch(np.array(req, dtype=np.int64), np.array(tok, dtype=np.int64))

    def steady_batches(self, req, tokens, decode):
        """A batch B that admits and completes nothing repeats while no decoding request has a TBT deadline
        (ℓ = +∞ for all: none is critical, whatever t and τ_batch, and (4) takes them by index), up to the batch
        in which a decode of B completes (decided before it completes), while B's prefill, if any, does not
        reach its last chunk. Proof, with the state advanced one step (every m grows by its c, τ_batch and s_q
        move, nothing else): the decoding list, the FIFO of started prefills and the reservations change only
        at admissions, prefill completions and completions, so (1) is empty again and (3a) offers the same
        prefills. At most one prefill can run without finishing: it takes c = min(pending, room) < pending,
        the whole room, which stays the same (no critical DIs before it) while more than c tokens remain;
        every later prefill gets no room. The admissions (3b) are tried only if room is left; then the head
        was refused by the active cap or by memory, and both stay as they were (the reservations change only
        at admissions and completions). An arrival can change that answer (a new SPF head, or an empty queue)
        unless the cap refused, so the run is arrival-sensitive when (3b) ran and the cap did not refuse. (4)
        gets the same room and the same decodes by index. SLAI has finite deadlines in its SLO runs; there the
        critical set moves with τ_batch and every batch goes through ``next_batch``."""
        st = self.st
        if self._admitted or np.isfinite(self.tbt[self.decoding]).any():
            return 0, True
        pre = ~decode
        if np.count_nonzero(pre) > 1:  # the first one finished its prompt
            return 0, True
        steps = np.inf
        n = int(tokens[pre].sum())
        if n:
            i = req[pre][0]
            if st.m[i] >= st.L[i]:  # it finished its prompt
                return 0, True
            steps = int(st.L[i] - st.m[i] - 1) // n  # more than c tokens left each time
        dec = req[decode]
        if len(dec):
            steps = min(steps, int((self.inst.output[dec] - st.generated[dec]).min()))  # the last may complete
        sensitive = (n < self.budget and n < self.prefill_budget
                     and len(self.prefilling) + len(self.decoding) < self.cap)
        return int(steps), sensitive

    def advance_run(self, req, tokens, decode, steps, starts):
        # what each of the ``steps`` calls to next_batch does before building the same batch, then records
        busy, last = self.busy, self.last_start
        for t in starts.tolist():
            busy += t - last
            last = t
        self.busy, self.batches = busy, self.batches + steps
        self.s[self.emitted] = last
        self.last_start = last

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        self.emitted = req[gen]
        done = set(finished.tolist())
        if done:
            self.reserved -= int(self.peak[list(done)].sum())
        st = self.st
        still = deque()
        for i in self.prefilling:
            if i in done or st.m[i] >= st.L[i]:  # prefill complete (a completed one has m = 0)
                if i not in done:
                    self.decoding.append(i)
            else:
                still.append(i)
        self.prefilling = still
        if done:
            self.decoding = [i for i in self.decoding if i not in done]
