"""The unified scheduler SCHEDULER(M, C, P) of seed 003 (Algorithm 1) and every variant the paper
evaluates (notes seed-003 §2, §4): vLLM, vLLM_hy, SARATHI, SARATHI_{P=C}, SARATHI_nocp, SARATHI_nohy
(Table 1), their eviction-free (EF) variants, Rank_I / Rank_O / Rank_org (§4.6), and the §6
scheduler (sorting + histogram). Batch model.

GETNEXTBATCH (lines 8-18)::

    for G in GROUPREQUESTS(R_w ∪ R_r):                 ①  groups in priority order
        for cand in G:
            CHECKHYBRIDBATCHING                         ②  no hybrid: skip cand of the other phase
            while not CANALLOCATE(cand, B, M, C, P):    ③  C, P and M conditions
                EVICTLOWERPRIORITYREQUEST               ④  recompute eviction; none left: self-evict
            else: B ← B ∪ {cand}

Conventions and decisions (paper first; where the public artifact differs it is noted):

* Memory is accounted by reservation (m_reserve): a waiting (new or refill) request reserves its whole
  current prompt S; a decode reserves one more slot; EF variants reserve I + O − 1 at admission and
  nothing later (Table 1 caption, §4.4). Reservations bound the physical KV, so every schedule verifies.
* C (instance ``token_budget``) bounds Σ c; P bounds prefill chunks Sarathi-style: a prefill cand gets
  at most P − Σ_{B} c (Alg. 1 ③, as the artifact). Decodes are not limited by P. Chunked prefill:
  c = min(pending, P − tok); without it the whole pending prompt must fit. Two differences from the
  artifact, both following ③'s text: decodes are limited by C too (the artifact's Sarathi and §6 give
  every running decode its token whatever the budget), and the Rank schedulers' P = 512 limits prefill
  only (the artifact's Rank spends one 512-token budget on all tokens, decodes included, which differs
  with more than 512 running requests).
* Eviction (④) happens only when M is short, only for running candidates in vLLM/Sarathi groups
  ("skip" for R_w, §2.3-2.4), and for any candidate in the Rank schedulers (a higher-ranked waiting
  request may evict). The victim is the lowest-priority running request not yet in the batch:
  latest arrival (vLLM/Sarathi FCFS), smallest m (§6 "evict short requests"), lowest rank (Rank;
  the artifact evicts the last-admitted instead -- the paper says lower priority). Only a request of
  lower priority than cand is evicted; if none remains, cand self-evicts (running) or is skipped
  (waiting).
  Evicted requests go to the front of R_w (recompute: generated tokens are appended to the prompt; the
  artifact's rule, where §3.1 says "appended to R_w"). The groups are formed when the batch starts (line 8
  runs GROUPREQUESTS before the loop), so a request evicted in a batch is not a candidate of that batch's
  R_w group and does not block its head: a later request may take the memory it freed. From the next batch
  on it is R_w's head. The artifact scans R_w live, so there the evicted request heads R_w at once and,
  not fitting, stops the group: an audit's reference implementation (not shipped) measured fewer evictions
  under that rule on contended 7B workloads (423 against lpbench's 466, 76 against 97) and a last batch up to 5 %
  earlier, so results under heavy contention depend on this choice.
* Allocation failing for C, P or the batch-size cap never evicts; the head-of-line rule of the
  artifact stops a waiting group at the first request that does not fit (vLLM, Sarathi, §6); the
  Rank schedulers skip it and probe the next (artifact ``continue``).
* P defaults: C (vLLM, vLLM_hy, SARATHI_{P=C}, SARATHI_nocp, SARATHI_nohy and §6: Table 1's 4096 is
  Llama-2-7B's C), 512 (SARATHI, Rank); C is the instance's ``token_budget``, 4096 when it has none;
  all are capped by C and ``prefill_budget``.
* §6 histogram gate: admission needs free memory for max(S, min(M, ⌈mean peak I+O−1 of finished
  requests with the same ⌊log2 I⌋⌉)) but reserves only S (the artifact: "an ADMISSION GATE, not a
  real reservation"). The artifact averages I+O; lpbench uses the peak KV actually held, I+O−1, and
  caps the gate at M, else a bucket whose peers filled the whole memory blocks forever.
"""
from __future__ import annotations

import bisect
import math
from collections import deque

import numpy as np

from ..errors import InputError
from ..sim import Batch
from .base import POLICIES, Param, Policy, refuse_refill_over_budget

INF = math.inf
NOT_WAITING = np.iinfo(np.int64).max  # Rank schedulers' wait_need of a request not in R_w


class BatchParts:
    """The batch being built, in candidate order: entries added one by one (``add``) and prefixes of running
    decodes (c = 1) added as the arrays they are (``add_decodes``), so that they reach the Batch without a
    Python list in between. ``len`` is the number of entries."""

    __slots__ = ("pieces", "singles", "n", "big_at", "big_c", "decode_arrays")

    def __init__(self):
        self.pieces: list = []           # int64 arrays of decodes and lists of single entries, in order
        self.singles: list[int] = []     # single entries since the last array
        self.n = 0
        self.big_at: list[int] = []      # positions and tokens of the entries with c != 1
        self.big_c: list[int] = []
        self.decode_arrays: list[np.ndarray] = []  # the arrays of decodes among the pieces

    def __len__(self) -> int:
        return self.n

    def add(self, i: int, c: int) -> None:
        if c != 1:
            self.big_at.append(self.n)
            self.big_c.append(c)
        self.singles.append(i)
        self.n += 1

    def add_decodes(self, arr: np.ndarray) -> None:
        if self.singles:
            self.pieces.append(self.singles)
            self.singles = []
        self.pieces.append(arr)
        self.decode_arrays.append(arr)
        self.n += len(arr)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(requests, tokens) as int64 arrays."""
        pieces = self.pieces + [self.singles] if self.singles else self.pieces
        req = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
        tokens = np.empty(self.n, dtype=np.int64)
        tokens.fill(1)  # np.ones, without its Python-level wrapper
        for k, c in zip(self.big_at, self.big_c):  # a few prefill chunks
            tokens[k] = c
        return req, tokens


class UnifiedScheduler(Policy):
    """Algorithm 1 with the knobs of Table 1. Subclasses set the class attributes."""

    priority = "prefill"   # "prefill" (vLLM), "decode" (Sarathi, §6), "rank"
    hybrid = True
    chunked = True
    default_P: float | None = None  # None: P = C
    eviction_free = False
    rank_key: str | None = None   # "I", "O", "id" for the Rank schedulers
    sort_decodes_by_m = False     # §6: running decodes longest first, evict the shortest
    histogram_gate = False        # §6

    #: P: default_P (512: sarathi, sarathi-ef, the rank schedulers), else the token budget C (4096 without one);
    #: capped by the instance's token and prefill budgets. A fraction below 1 would admit no token (a stall).
    params = {"P": Param("int", "the prefill token budget per batch", lo=1)}

    def __init__(self, P: float | None = None, **kw):
        super().__init__(**kw)
        self.P_param = self.default_P if P is None else float(P)

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        lim = inst.limits
        self.M = inst.memory
        self.C = lim.token_budget if lim.token_budget is not None else INF
        # P = C: the instance's token budget (Table 1's 4096 is Llama-2-7B's C), 4096 without one
        P = self.P_param if self.P_param is not None else (self.C if self.C < INF else 4096)
        self.P = min(P, self.C, lim.prefill_budget if lim.prefill_budget is not None else INF)
        self.cap = lim.max_batch_requests if lim.max_batch_requests is not None else INF
        # the batch's members as a set, for ④ and to skip a member offered twice; the Rank merge offers each
        # request once, and its victim search needs no set (see victim)
        self.track_in_batch = self.priority != "rank"
        if not self.chunked:  # an eviction-free variant never evicts, so it never refills
            refuse_refill_over_budget(self.name, inst, self.P, "raise limits.token_budget or use a chunked policy",
                                      evicts=not self.eviction_free)
        self.waiting: deque[int] = deque()
        self.wait_rank: list[int] = []  # Rank schedulers: the ranks of R_w, sorted (ranks are distinct) ...
        self.wait_ids: list[int] = []   # ... and the requests, in the same order
        self._wait_shared = False       # the rank merge of the batch being built reads these two lists ...
        self._wait_edits: list[tuple[int, int | None]] = []  # ... so their changes wait here (edit_waiting)
        self.running: list[int] = []   # holding KV, in arrival order (Rank schedulers: in rank order ...)
        self.run_rank: list[int] = []  # ... and their ranks, ascending)
        self._run_array: np.ndarray | None = None  # Rank schedulers: ``running`` as an array, until it changes
        self.reserved = np.zeros(inst.n, dtype=np.int64)
        self.reserved_total = 0
        self.hist_count = np.zeros(64, dtype=np.int64)
        self.hist_sum = np.zeros(64, dtype=np.int64)
        if self.rank_key is not None:
            key = {"I": inst.prompt, "O": inst.output, "id": np.zeros(inst.n, dtype=np.int64)}[self.rank_key]
            self.rank = np.lexsort((np.arange(inst.n), key)).argsort()  # rank position of each request
            # reserve_needed() of each waiting request, by rank (NOT_WAITING for the others): it holds
            # nothing, and its S does not change while it waits (a batch-model eviction keeps S)
            self.wait_need = np.full(inst.n, NOT_WAITING, dtype=np.int64)

    # -- bookkeeping -----------------------------------------------------------------------------
    def on_arrivals(self, idx) -> None:
        if self.priority == "rank":
            for i in idx.tolist():
                self.to_waiting(i)
        else:
            self.waiting.extend(idx.tolist())

    def to_waiting(self, i: int) -> None:
        """An evicted request re-enters R_w: at the front (FCFS groups) or at its rank."""
        if self.priority == "rank":
            r = int(self.rank[i])
            self.edit_waiting(r, i)
            # S after the eviction, which the engine applies when the batch ends: a restart resets it to I
            self.wait_need[r] = (self.inst.prompt[i] + self.inst.output[i] - 1 if self.eviction_free
                                 else self.inst.prompt[i] if self.inst.restarts else self.st.S[i])
        else:
            self.waiting.appendleft(i)

    def edit_waiting(self, r: int, i: int | None) -> None:
        """Rank schedulers: insert request ``i`` of rank ``r`` into R_w's two lists (``i`` None: remove rank
        ``r``). While the rank merge reads the lists, the change waits until the merge is over (``end_merge``):
        the merge sees R_w as the batch started. The changes of one batch commute: they admit waiting
        requests and evict running ones (never the same request), and ranks are distinct."""
        if self._wait_shared:
            self._wait_edits.append((r, i))
        elif i is None:
            k = bisect.bisect_left(self.wait_rank, r)
            del self.wait_rank[k]
            del self.wait_ids[k]
        else:
            k = bisect.bisect(self.wait_rank, r)
            self.wait_rank.insert(k, r)
            self.wait_ids.insert(k, i)

    def end_merge(self) -> None:
        """The batch is built: R_w's lists take the changes made while the rank merge read them."""
        self._wait_shared = False
        edits, self._wait_edits = self._wait_edits, []
        for r, i in edits:
            self.edit_waiting(r, i)

    def from_waiting(self, i: int) -> None:
        if self.priority == "rank":
            r = int(self.rank[i])
            self.edit_waiting(r, None)
            self.wait_need[r] = NOT_WAITING
        elif self.waiting[0] == i:
            self.waiting.popleft()
        else:
            self.waiting.remove(i)

    def free(self) -> int:
        return self.M - self.reserved_total

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        if len(finished):
            self.reserved_total -= int(np.add.reduce(self.reserved[finished]))  # .sum() without its wrapper
            self.reserved[finished] = 0
            if self.priority == "rank":
                for r in self.rank[finished].tolist():
                    self.leave_ranked(r)
            else:
                gone = set(finished.tolist())
                self.running = [i for i in self.running if i not in gone]
            if self.histogram_gate:
                k = np.floor(np.log2(self.inst.prompt[finished])).astype(int)
                np.add.at(self.hist_count, k, 1)
                np.add.at(self.hist_sum, k, self.inst.prompt[finished] + self.inst.output[finished] - 1)

    def evict(self, i: int) -> None:
        self.reserved_total -= int(self.reserved[i])
        self.reserved[i] = 0
        if self.priority == "rank":
            self.leave_ranked(int(self.rank[i]))
        else:
            self.running.remove(i)
        self.to_waiting(i)
        self._evicted.append(i)

    def leave_ranked(self, r: int) -> None:
        """Rank schedulers: the running request of rank ``r`` leaves the running list (completed or evicted)."""
        k = bisect.bisect_left(self.run_rank, r)
        del self.run_rank[k]
        del self.running[k]
        self._run_array = None

    def enter_ranked(self, i: int) -> None:
        """Rank schedulers: request ``i`` joins the running list (admitted), at its rank."""
        r = int(self.rank[i])
        k = bisect.bisect(self.run_rank, r)
        self.run_rank.insert(k, r)
        self.running.insert(k, i)
        self._run_array = None

    # -- ③ CANALLOCATE pieces ------------------------------------------------------------------------
    def holds(self, i: int) -> bool:
        return bool(self.reserved[i] > 0)

    def decoding(self, i: int) -> bool:
        return bool(self.st.m[i] >= self.st.L[i])

    def tokens_for(self, i: int, decoding: bool) -> int:
        """c for cand (``decoding``: its phase) under the C and P conditions (0: cannot be allocated)."""
        room_c = self.C - self.tok
        if decoding:
            return 1 if room_c >= 1 else 0
        pending = int(self.st.S[i] - self.st.m[i])
        room = min(room_c, self.P - self.tok)
        if self.chunked:
            return int(max(0, min(pending, room)))
        return pending if pending <= room else 0

    def reserve_needed(self, i: int, holds: bool, decoding: bool) -> int:
        """Extra KV slots cand (``holds``: it runs; ``decoding``: its phase) must reserve now (M condition): S
        for an admission (I + O - 1 with EF); for a running request none (EF, or a prefill: it reserved S = L
        when admitted), and one for a decode.

        Reservation invariant (non-EF; ``tests/test_sim.py`` checks it after every batch): between batches a
        running request holds reserved = L in prefill and reserved = m in decode. Admission reserves S, and a
        waiting request has S = L (a batch-model eviction sets L = S), m = 0; its prefill chunks reserve
        nothing until m = L; each decode step reserves one slot and processes one token (``advance_run`` adds
        ``steps`` to both); eviction and completion set reserved = 0. So a decode's m + 1 - reserved is 1."""
        if not holds:  # new request or refill
            if self.eviction_free:
                return int(self.inst.prompt[i] + self.inst.output[i] - 1)
            return int(self.st.S[i])
        if self.eviction_free:
            return 0
        return 1 if decoding else 0

    def gate(self, i: int, need: int, holds: bool) -> int:
        """Free memory cand must see (``need``: its reserve_needed(); ``holds``: whether it runs): the
        reservation, or for an admission under the §6 histogram gate, possibly more."""
        if self.histogram_gate and not holds:
            k = int(np.floor(np.log2(self.inst.prompt[i])))
            if self.hist_count[k]:
                need = max(need, min(self.M, int(math.ceil(self.hist_sum[k] / self.hist_count[k]))))
        return need

    # -- ④ victims -------------------------------------------------------------------------------------
    def lower_priority_first(self) -> list[int]:
        """Running requests, lowest priority first (④'s order for this batch)."""
        if self.priority == "rank":  # the merge's running requests by rank, reversed (ranks are distinct);
            return self._run_by_rank[::-1].tolist()  # those admitted since are in the batch: never victims
        if self.sort_decodes_by_m:
            return sorted(self.running, key=lambda v: (self.st.m[v], -v))  # shortest first
        return self.running[::-1]  # FCFS: the latest arrival has the lowest priority

    def outranks(self, cand: int, v: int) -> bool:
        if self.priority == "rank":
            return self.rank[cand] < self.rank[v]
        if self.sort_decodes_by_m:
            return (self.st.m[v], -v) < (self.st.m[cand], -cand)
        return cand < v

    def victim(self, cand: int) -> int | None:
        """The lowest-priority running request not in the batch, if it ranks below cand; else None."""
        if self._order is None:
            self._order, self._pos = self.lower_priority_first(), 0
        while self._pos < len(self._order):
            v = self._order[self._pos]
            if not self.holds(v) or (self.track_in_batch and v in self.in_batch):
                self._pos += 1  # already evicted or in the batch: never a victim again this batch
                continue
            # Rank merge: a member of the batch came before cand, so it ranks above cand (None, as skipping
            # it would give: every request after it in this order ranks above it too)
            return v if v != cand and self.outranks(cand, v) else None
        return None

    # -- ① GROUPREQUESTS ------------------------------------------------------------------------------
    def groups(self):
        """(members, may_evict, stop_at_first_failure) in priority order."""
        if self.priority == "rank":
            return [(self.ranked_candidates(), True, False)]
        run = np.array(self.running, dtype=np.int64)
        decoding = self.st.m[run] >= self.st.L[run]
        dec, pre = run[decoding], run[~decoding]
        if self.sort_decodes_by_m:
            dec = dec[np.lexsort((dec, -self.st.m[dec]))]  # longest first, then arrival
        if self.priority == "prefill":
            return [(list(self.waiting), False, True), (np.concatenate([pre, dec]), True, False)]
        return [(dec, True, False), (pre, False, False), (list(self.waiting), False, True)]

    def ranked_candidates(self):
        """R_w ∪ R_r by rank, merged lazily; waiting requests (all in prefill) stop being offered
        once the prefill budget P is used up, so a long queue is not rescanned every batch. Running
        requests come as arrays, each the run of them ranked before the next waiting request. Once no
        victim is left, waiting requests that need more than the free memory are not offered: the loop
        would skip them, and skipping changes nothing it tests (free memory, C, P, the cap)."""
        if self._run_array is None:  # in rank order; kept while no request is admitted, evicted or completed
            self._run_array = np.fromiter(self.running, np.int64, len(self.running))
        run = self._run_array
        run_rank = self.run_rank[:]                     # the batch changes self.run_rank
        self._run_by_rank = run
        if self.P - self.tok > 0:
            wait, wait_rank = self.wait_ids, self.wait_rank  # R_w when the batch starts (edit_waiting)
            self._wait_shared = True
        else:
            wait, wait_rank = [], []
        a = b = 0
        nr, nw = len(run), len(wait)
        while a < nr or b < nw:
            if b < nw and self.P - self.tok <= 0:
                nw = b
            if b < nw:
                a2 = bisect.bisect_left(run_rank, wait_rank[b], a)  # running requests ranked before wait[b]
                if a2 > a:
                    a, prev = a2, a
                    yield run[prev:a2]
                    continue
                if self._no_victim:
                    end = nw if a == nr else bisect.bisect_left(wait_rank, run_rank[a], b, nw)
                    b = self.first_fitting(wait_rank, b, end)
                    if b == end:
                        continue
                b += 1
                yield wait[b - 1]
            else:
                a, prev = nr, a
                yield run[prev:]

    def first_fitting(self, wait_rank: list[int], b: int, end: int) -> int:
        """The first position k in ``wait_rank[b:end]`` (R_w's ranks as the batch started) whose request needs
        at most the free memory; ``end`` if none. A rank found in ``wait_need`` but absent from the list
        belongs to a request evicted in this batch, which the loop would skip: the search goes on past it."""
        free = self.free()
        while b < end:
            lo = wait_rank[b]
            hits = np.flatnonzero(self.wait_need[lo:wait_rank[end - 1] + 1] <= free)
            if not len(hits):
                return end
            r = lo + int(hits[0])
            b = bisect.bisect_left(wait_rank, r, b, end)
            if wait_rank[b] == r:
                return b
        return end

    def take_decodes(self, arr, batch: BatchParts, phases) -> np.ndarray:
        """Running requests ``arr``, next in candidate order, none examined yet: add in one step the
        longest prefix that the loop below would add one by one through its running-decode fast path
        (decodes that fit in free memory, within C and the batch-size cap), and return the rest. Requests
        evicted earlier in the batch are dropped first: the loop skips them without testing anything.
        In a hybrid scheduler a running prefill that ends such a prefix is decided here too, as the loop
        would: it needs no memory (it holds its reservation), so it gets c = tokens_for() > 0 or is
        skipped; then the next prefix of decodes follows."""
        if self._evicted:  # a few per batch: one comparison each is cheaper than np.isin
            keep = arr != self._evicted[0]
            for e in self._evicted[1:]:
                keep &= arr != e
            arr = arr[keep]
        if not self.hybrid and phases and True not in phases:
            return arr  # the loop decides (② may apply)
        n = len(arr)
        k = 0  # arr[:k] is decided
        for p in (self.st.m[arr] < self.st.L[arr]).nonzero()[0].tolist() + [n]:  # the running prefills, then n
            if p > k:  # arr[k:p] are decodes
                k += self.decode_prefix(arr[k:p], batch, phases)
                if k < p:
                    return arr[k:]  # a decode that did not fit: the loop decides it
            if not (self.hybrid and p < n and self.C - self.tok >= 1 and len(batch) < self.cap and self.free() >= 0):
                return arr[k:]
            i = int(arr[p])  # a running prefill: the loop's general path with need = gate = 0, no eviction
            c = self.tokens_for(i, False)
            if c > 0:
                batch.add(i, c)
                self.tok += c
                if self.track_in_batch:
                    self.in_batch.add(i)
                phases.add(False)
            k = p + 1
        return arr[k:]

    def decode_prefix(self, decodes, batch: BatchParts, phases) -> int:
        """``take_decodes``' step: add the longest prefix of ``decodes`` (running requests, all in decode) that
        fits, within C and the batch-size cap; return its length."""
        limit = int(min(len(decodes), self.C - self.tok, self.cap - len(batch)))
        if limit <= 0:
            return 0
        free = self.free()
        if self.eviction_free:
            k = limit if free >= 0 else 0
        else:  # each decode needs one slot (reserve_needed's invariant): the first ``free`` fit
            k = min(limit, max(free, 0))
        if k:
            chosen = decodes[:k]
            if not self.eviction_free:  # their slots; reserved[] follows when the batch is built
                self.reserved_total += k
            batch.add_decodes(chosen)
            self.tok += k
            if self.track_in_batch:
                self.in_batch.update(chosen.tolist())
            phases.add(True)
        return k

    def candidates(self, members, batch: BatchParts, phases):
        """The members of a group one by one; an array of running requests (a group, or a run of the rank
        merge) goes through ``take_decodes`` around each request the loop must decide."""
        for item in ([members] if isinstance(members, np.ndarray) else members):
            if not isinstance(item, np.ndarray):
                yield item
                continue
            while len(item) >= 8:  # the loop decides for the first one take_decodes leaves, then take_decodes again
                item = self.take_decodes(item, batch, phases)
                if len(item):
                    yield int(item[0])
                    item = item[1:]
            yield from item.tolist()  # a few: one by one is cheaper than numpy

    def next_batch(self, t):
        self.tok = 0
        self.in_batch: set[int] = set()
        self._evicted: list[int] = []
        self._order = None  # lower_priority_first(), computed on the first eviction of the batch
        batch = BatchParts()
        phases: set[bool] = set()
        self._no_victim = False
        self._memory_refused = False       # a candidate was refused for memory so far in this batch
        self._admitted_past_refusal = False  # ... and a later candidate was admitted (see steady_batches)
        for members, may_evict, stop in self.groups():
            if isinstance(members, np.ndarray) and self.fast_decodes(members, may_evict, phases, batch):
                continue
            for cand in self.candidates(members, batch, phases):
                if self.C - self.tok < 1 or len(batch) >= self.cap:  # nothing more can be allocated
                    break
                if (self.track_in_batch and cand in self.in_batch) or cand in self._evicted:
                    continue
                # none of the three changes until cand itself is admitted or evicted
                holds = self.holds(cand)
                dec = holds and self.decoding(cand)  # a request in R_w is in prefill (m = 0 < L = S)
                need = self.reserve_needed(cand, holds, dec)
                if holds and dec and need <= self.free() and (self.hybrid or not phases or True in phases):
                    # a running decode that fits: the general path below with c = 1, gate = need, no eviction
                    self.reserved[cand] += need
                    self.reserved_total += need
                    batch.add(cand, 1)
                    self.tok += 1
                    if self.track_in_batch:
                        self.in_batch.add(cand)
                    phases.add(True)
                    continue
                if self._no_victim and not holds and need > self.free():
                    continue  # the general path skips it too: it cannot fit, and nothing ranks below it
                if not self.hybrid and phases and dec not in phases:  # ② CHECKHYBRIDBATCHING
                    if stop:  # R_w holds prefills only: every later member is skipped too
                        break
                    continue
                c = self.tokens_for(cand, dec)
                if c <= 0:                                          # ③ C / P: no eviction
                    if stop:
                        break
                    continue
                gate = self.gate(cand, need, holds)
                admitted = True
                while gate > self.free():                           # ③ M
                    v = self.victim(cand) if may_evict else None
                    if v is None:                                   # ④ self-evict / skip
                        # Rank: candidates come in rank order and the victim's rank only falls, so no
                        # later candidate can evict either (only free memory admits from now on)
                        self._no_victim = may_evict and self.priority == "rank"
                        self._memory_refused = True
                        if holds:
                            self.evict(cand)
                        admitted = False
                        break
                    self.evict(v)                                   # ④ evict lower priority
                if not admitted:
                    if stop:
                        break
                    continue
                if not holds:
                    self.from_waiting(cand)
                    if self.priority == "rank":
                        self.enter_ranked(cand)
                    else:
                        bisect.insort(self.running, cand)
                    self._admitted_past_refusal |= self._memory_refused
                self.reserved[cand] += need
                self.reserved_total += need
                batch.add(cand, c)
                self.tok += c
                if self.track_in_batch:
                    self.in_batch.add(cand)
                phases.add(dec)
        self.end_merge()
        if batch.decode_arrays and not self.eviction_free:
            # the slot of each decode added as an array, counted in reserved_total when it was added: until now
            # nothing read reserved[] of a member of the batch (④ never picks one), so it is updated once here
            arrays = batch.decode_arrays
            self.reserved[arrays[0] if len(arrays) == 1 else np.concatenate(arrays)] += 1
        ev = np.array(self._evicted, dtype=np.int64) if self._evicted else None
        return Batch(*batch.arrays(), ev)

    def steady_batches(self, req, tokens, decode):
        """A batch B that evicts and completes nothing, with at most one prefill chunk that leaves its
        prompt unfinished, repeats up to the batch in which a decode in it completes (that batch is
        decided before the completion), until that prefill reaches its last chunk, or until free memory
        runs short. Proof, first for a B that admits nothing, with the state advanced by one step (every m
        grows by its c, a decode's reservation by one, nothing else moves):

        * the groups are the same lists in the same order: no request changes phase, the running list
          and the ranks do not change, and §6's order by m is kept because every decode's m grows by one;
        * at every candidate the batch so far is the same, so the C, P and batch-size room, ② and the
          Rank merge's cut-off are the same. The prefill chunk took the whole room (c < pending), and
          its room, hence c, stays the same while more than c tokens remain;
        * each decode of B fits again: a step needs |D| slots (one per decode, ``reserve_needed``'s
          invariant; zero for EF), the prefill none, and R is capped so free memory covers every step;
        * every other candidate was refused in B by a rule that no step undoes: the room, ②, or memory
          (free memory only falls; the gate and the histogram change only at completions). A refusal for
          memory never evicted (B evicts nothing), so no victim ranked below it, and none does now; a
          running request always fits (a decode's refusal would have evicted), so it was refused by room.
        * R_w changes only by arrivals: appended at the back of a FCFS queue they cannot pass its refused
          head, so the run ignores them, except when R_w is empty (a new head may fit) and for the Rank
          schedulers (a new request may rank ahead); then it stops at the next arrival.

        If B admitted its prefill w (a new or refill request: the only prefill, so the only admission), the
        next batch B' is B again, and admits nothing, so the above carries on from B'. In B', w is a running
        prefill instead of a waiting one, at the same place in the candidate order: in the Rank merge at its
        rank; in a FCFS scheduler B had no other prefill and w was R_w's head, so w comes after the same
        groups (the decodes; Orca: first) as in B. The batch before w is the same as in B (the decodes ranked
        before w fit, as above), so w gets the same room and c. Every candidate after w sees what it saw in B
        (w in the batch) and is refused again, as above. A candidate before w was not refused for room (w,
        later, found room; room only shrinks) nor ②; so it was refused for memory or admitted. The run needs
        that no candidate before w was refused for memory (``_admitted_past_refusal``): in the Rank merge such
        a candidate may now evict w, which runs and ranks below it but is not yet in the batch. (FCFS
        waiting candidates before w were admitted, as w is R_w's head; running ones never fail without
        an eviction.)
        """
        if self._evicted or self._admitted_past_refusal:
            return 0, True
        st = self.st
        n_pre = len(req) - int(np.count_nonzero(decode))
        if n_pre > 1:
            return 0, True
        steps = INF
        if n_pre:
            j = int(decode.argmin())  # the prefill's entry
            left = int(st.L[req[j]] - st.m[req[j]])
            if left <= 0:  # it finished: it now decodes
                return 0, True
            steps = (left - 1) // int(tokens[j])  # more than c left each time
        dec = req[decode] if n_pre else req
        if len(dec):
            to_go = np.minimum.reduce(self.inst.output[dec] - st.generated[dec])  # .min() without its wrapper
            steps = min(steps, int(to_go))  # only the last completes
            if not self.eviction_free:  # one slot per decode and step (reserve_needed's invariant)
                steps = min(steps, self.free() // len(dec))
        if self.priority == "rank":
            sensitive = True
        else:
            sensitive = not self.waiting and (self.hybrid or self.priority != "decode")
        self._steady, self._survival = (req, tokens, decode), None  # for run_survives_arrival, if it is called
        return int(steps), sensitive

    def entries_before_waiting(self, decode: np.ndarray) -> int:
        """How many entries of a batch (in candidate order; ``decode``: their phases) come from the groups
        that precede R_w's: all of them with decode priority, none with prefill priority."""
        return len(decode) if self.priority == "decode" else 0

    def run_survives_arrival(self, i: int) -> bool:
        """An arriving request that B's next repetitions refuse without evicting: at its place in the
        candidate order B's entries before it (k of them, Σ c = tok) leave it no tokens (the loop or the
        Rank merge stop there, or tokens_for() gives 0) or the batch-size cap is reached, or its gate is
        above the free memory after B (free memory only falls during the run) and, in the Rank merge, no
        running request ranks below it (it could evict one). FCFS: it arrives to an empty R_w (else the run
        is not arrival-sensitive) and becomes its head; once the head is refused every later arrival waits
        behind it. A refused candidate changes nothing the loop tests later (B evicts nothing)."""
        if self._survival is None:  # what B leaves to an arrival (the state is still the one after B)
            req, tokens, decode = self._steady
            if self.priority == "rank":  # B is in candidate order: rank order
                self._survival = (self.rank[req], np.concatenate([[0], np.cumsum(tokens)]), self.free(),
                                  self.run_rank[-1])
            else:
                before = self.entries_before_waiting(decode)
                self._survival = (int(tokens[:before].sum()), before, self.free())
        if self.priority == "rank":
            ranks, tok_before, free, lowest = self._survival
            r = int(self.rank[i])
            k = int(np.searchsorted(ranks, r))
            tok, may_evict = int(tok_before[k]), lowest > r
        else:
            (tok, k, free), may_evict = self._survival, False
        room = self.P - tok  # P <= C: min(C - tok, P - tok), as tokens_for()
        pending = int(self.st.S[i])
        c = min(pending, room) if self.chunked else (pending if pending <= room else 0)
        refused = k >= self.cap or c <= 0 or (self.gate(i, self.reserve_needed(i, False, False), False) > free
                                               and not may_evict)
        if refused and self.priority != "rank":
            self._survival = (self.P, k, free)  # the head is refused: later arrivals queue behind it
        return bool(refused)

    def advance_run(self, req, tokens, decode, steps, starts):
        if not self.eviction_free:  # each step reserves one more slot per decode (reserved = m)
            dec = req[decode]
            self.reserved[dec] += steps
            self.reserved_total += steps * len(dec)

    def fast_decodes(self, members, may_evict, phases, batch: BatchParts) -> bool:
        """All-decode group that fits without eviction: add it vectorised (same result as the loop)."""
        if not isinstance(members, np.ndarray) or len(members) < 8:  # only running groups (R_w never decodes)
            return False
        m = members
        st = self.st
        if np.count_nonzero(st.m[m] < st.L[m]):  # a prefill among them
            return False
        if not self.hybrid and phases and True not in phases:
            return True  # every member would be skipped by ②
        k = int(min(len(m), self.C - self.tok, self.cap - len(batch)))
        if k < len(m) and not may_evict:
            return False
        chosen = m[:k]
        total = 0 if self.eviction_free else k  # one slot per decode (reserve_needed's invariant)
        if total > self.free():
            return False
        self.reserved_total += total  # reserved[] follows when the batch is built
        batch.add_decodes(chosen)
        self.tok += k
        self.in_batch.update(chosen.tolist())  # not a Rank scheduler: its one group is not an array
        if k:
            phases.add(True)
        return True


def _register(name, summary, **attrs):
    cls = type(name.replace("-", "_"), (UnifiedScheduler,), {"name": name, "summary": summary, **attrs})
    POLICIES.register(name)(cls)
    return cls


TABLE_1 = {  # name: (priority, hybrid, chunked, P)   seed 003 Table 1 (P = None: P = C, 4096 in the paper)
    "vllm": ("prefill", False, False, None),
    "vllm-hy": ("prefill", True, False, None),
    "sarathi": ("decode", True, True, 512),
    "sarathi-pc": ("decode", True, True, None),
    "sarathi-nocp": ("decode", True, False, None),
    "sarathi-nohy": ("decode", False, False, None),
}
for _name, (_prio, _hy, _cp, _P) in TABLE_1.items():
    _desc = (f"seed 003 Table 1: {_prio} priority, hybrid {'on' if _hy else 'off'}, chunked prefill "
             f"{'on' if _cp else 'off'}, P={_P or 'C'}")
    _register(_name, _desc, priority=_prio, hybrid=_hy, chunked=_cp, default_P=_P)
    _register(_name + "-ef", _desc + "; eviction-free (reserves I+O-1)", priority=_prio, hybrid=_hy,
              chunked=_cp, default_P=_P, eviction_free=True)
for _name, _key in (("rank-i", "I"), ("rank-o", "O"), ("rank-org", "id")):
    _register(_name, f"seed 003 §4.6: one ranked group by {'arrival' if _key == 'id' else _key}, may evict lower "
              "ranks; hybrid, chunked, P=512 (the artifact's defaults: §4.6 states none)", priority="rank",
              rank_key=_key, default_P=512)
_register("infermax-sort-hist", "seed 003 §6: Sarathi groups, decodes longest-first (evict shortest), "
          "log2-prompt histogram admission gate, P=C", priority="decode", sort_decodes_by_m=True,
          histogram_gate=True, default_P=None)
