"""The one semantics of lpbench: what a batch, a token, a KV footprint and a latency are.

Every component imports this module: the simulator advances request state with
:class:`RequestStates`, the verifier replays a schedule with the same class, and the
formulations encode the same rules in algebra (each cites the convention it encodes).

Request i has arrival a_i, prompt I_i (= s_i in seed 004) and output O_i (= o_i) tokens.

State of a request (seed 003 §5 notation, notes §3.2)
-----------------------------------------------------
* ``S`` -- sequence length: prompt plus tokens generated so far (S = I before the first batch).
* ``m`` -- KV entries held in the cache (tokens already processed), 0 before the first batch.
* ``L`` -- prompt length of the current run: I, or S at the last eviction (recompute refill).
* pending tokens ``S - m``: a batch processes 1 <= c <= S - m of them (chunked prefill when c < S - m).
* token generation, seed 003 eq. (3) read as a biconditional: the request generates one token
  in a batch iff c == S - m (all pending tokens processed); then S += 1.
* phase: a request is *decoding* iff m >= L (artifact ``delta = prev_m >= prev_B``), else it is in
  prefill (or refill after an eviction). A decode step has c = 1.
* eviction, batch model (recompute, seed 003 §2.1): m = 0, L = S; generated tokens stay in the
  sequence, so the refill processes all S tokens and then generates the next token.
* eviction, slot model (*restart*, seed 004 §5.2 "clear ... back to the waiting queue as
  unprocessed"): all progress is lost, S = L = I and no token counts as generated; the request later
  starts again from its prompt. Latency still counts from the original a_i. The last run of every
  request is an uninterrupted run of o_i rounds, so dropping the earlier runs leaves a feasible
  non-preemptive schedule with the same completions: such schedules are never better than the IP.
* eviction, batch model with ``"eviction": "restart"`` in the instance (seed 001 §1.4: an evicted
  prompt "loses everything, restarts at stage 0"): as in the slot model, m = 0, S = L = I and
  generated = 0; the request prefills its prompt again and regenerates every token. Tokens emitted by
  an abandoned run still count for TTFT and TBT (they were sent), completion is the last run's. Dropping
  every abandoned run's entries from a schedule (and the batches left empty) keeps every batch's start,
  makes no batch slower under a cost model whose time does not grow when an entry is removed (every
  shipped form), and leaves each request's last run, an eviction-free run: so an eviction-free schedule
  is at least as good as any restart schedule, and the restart optimum is the eviction-free optimum.
* an eviction takes effect before the batch that names it runs. In the batch model the evicted request
  does no work in that batch (c = 0, CSP (1)-(2); also under ``"eviction": "restart"``). In the slot model
  it may start again in that same batch, as a fresh run whose first batch processes the whole prompt: seed 004
  §5.2 sends a cleared request "back to the waiting queue as unprocessed" and leaves open what time a
  clearing takes; lpbench charges none, so the round that clears it may re-admit it, as the clearing
  policies of :mod:`lpbench.policies.alpha` do. The restart argument above still holds: the last run is an
  uninterrupted run of o_i rounds.
* completion: when O_i tokens are generated; its KV is released after that batch.

KV footprint (counted after each batch, CSP eq. (4) Σ m ≤ M; seed 004 eq. (3))
---------------------------------------------------------------------------
* batch model (seed 003): a request holds m KV entries. The last generated token's KV is written
  when it is processed in a later batch, so the peak is I + O - 1 (seed 003 §2.1).
* slot model (seed 004 §2): a started request holds its prompt and every generated token,
  s_i + j after its j-th round, peak s_i + o_i. In state terms that is S (= m + 1 while running).
  A request is counted in the batch in which it completes and released after it (IP eq. (3)
  counts request i started at k at times t = k+1..k+o_i).

Time
----
* A batch starts at a time ``start`` no earlier than the end of the previous batch and no earlier
  than the arrival of any request it processes; it ends at start + cost(batch).
* A token generated in a batch appears at the batch's end. TTFT = end of the batch that generates
  the first token - a_i; completion c_i = end of the batch generating token O_i; latency = c_i - a_i.
* slot model: every batch takes 1 time unit and starts at an integer time. Request i starting at k
  (its first batch is [k, k+1)) is active in rounds k+1..k+o_i with footprint s_i + (t - k), completes
  at k + o_i and has latency k + o_i - a_i >= o_i (notes seed-004 §1.4). Non-preemptive: once started
  it is in every batch, back to back, until it completes; its first batch processes the whole prompt.
* batch model: batch time from the instance's cost model, given per processed request c (tokens
  processed now), m (KV cached before the batch) and its phase.

Several engines (batch model, ``limits.engines`` = K; :mod:`lpbench.sim.multi`)
------------------------------------------------------------------------------
* K identical engines, each running the rules above on its own: its batches do not overlap one
  another, each is priced by the cost model and limited by the batch limits, and each engine has its own
  KV memory M. A request's state (S, m, L, generated) is one, wherever it is processed.
* A request is served on the engine of its first batch, unless it *moves*: a move of request i to
  engine d starting at time x transfers its KV (the m_i entries it holds) in τ·m_i seconds,
  τ = ``limits.kv_transfer_per_token`` (no moves without it). It needs x >= the end of i's last batch on
  the source, and i's first batch on d starts at or after y = x + τ·m_i; i has no eviction on the source
  (the move carries all it processed there). At most one move per request -- the one that prefill/decode
  disaggregation (DistServe, seed 000 Alg. 5) needs.
* KV during a move (decision; seed 000 Alg. 5 line 9 says only "transfer KV-cache of r to a decode
  node"): a copy being read or written is held on both GPUs. The destination holds m_i from x, so it
  counts after every destination batch that ends after x; the source frees it at y, so it counts after
  every source batch that starts before y. A transfer uses the link, not the engines: both keep running
  batches, and transfers do not slow one another (no link contention is modelled).
* Tokens: the batch that processes the last prompt token generates the first output token, on the
  engine that ran it; a moved request's next token is a decode on the destination.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

SLOT = "slot"
BATCH = "batch"
MODELS = (SLOT, BATCH)


def peak_footprint(model: str, prompt, output):
    """Largest KV footprint of one request run without eviction: s + o (slot), I + O - 1 (batch)."""
    return prompt + output if model == SLOT else prompt + output - 1


class RequestStates:
    """Per-request state arrays (indices are the instance's sorted request positions).

    The one implementation of the transition rules above, shared by the simulator and the verifier.
    :func:`replay_batch_model` is its closed form for a whole batch-model schedule (the verifier's fast
    path; ``tests/test_verify.py`` checks that the two agree).
    """

    def __init__(self, prompt: np.ndarray, output: np.ndarray, model: str, restart: bool | None = None):
        """``restart``: evictions lose all progress (default: in the slot model only; an instance's
        ``Instance.restarts``)."""
        n = len(prompt)
        self.model = model
        self.restart = model == SLOT if restart is None else restart
        self.prompt = np.asarray(prompt, dtype=np.int64)
        self.output = np.asarray(output, dtype=np.int64)
        self.S = self.prompt.copy()          # sequence length
        self.m = np.zeros(n, dtype=np.int64)  # KV entries held
        self.L = self.prompt.copy()          # prompt length of the current run
        self.generated = np.zeros(n, dtype=np.int64)
        self.done = np.zeros(n, dtype=bool)
        self.evictions = np.zeros(n, dtype=np.int64)
        self.kv_total = 0                    # Σ footprint over requests holding KV

    @classmethod
    def of(cls, inst) -> "RequestStates":
        """The initial states of an instance's requests, under its model and eviction rule."""
        return cls(inst.prompt, inst.output, inst.model, inst.restarts)

    # -- queries -------------------------------------------------------------------------------
    def pending(self, idx):
        return self.S[idx] - self.m[idx]

    def is_decode(self, idx):
        return self.m[idx] >= self.L[idx]

    def footprint(self, idx):
        """KV footprint of requests ``idx`` that hold KV (see module docstring)."""
        if self.model == SLOT:
            return np.where(self.m[idx] > 0, self.S[idx], 0)
        return self.m[idx]

    # -- transitions ---------------------------------------------------------------------------
    def evict(self, idx: np.ndarray) -> None:
        """Drop the KV: recompute (batch model, generated tokens kept in the sequence) or restart
        (slot model, or a batch-model instance with ``"eviction": "restart"``: progress lost)."""
        self.kv_total -= int(self.footprint(idx).sum())
        self.m[idx] = 0
        if self.restart:
            self.S[idx] = self.prompt[idx]
            self.generated[idx] = 0
        self.L[idx] = self.S[idx]
        self.evictions[idx] += 1

    def process(self, idx: np.ndarray, c: np.ndarray, m: np.ndarray | None = None):
        """Process c tokens of each request in ``idx`` (caller has checked 1 <= c <= pending); ``m``:
        ``self.m[idx]``, if the caller has read it already.

        Returns (gen, finished): boolean masks over ``idx`` of requests that generated a token,
        and of those that generated their last token (their KV is released after the batch;
        ``release`` does it once the caller has read the post-batch footprint).
        """
        slot = self.model == SLOT
        before = int(self.footprint(idx).sum()) if slot else 0
        if m is None:
            m = self.m[idx]
        S = self.S[idx]
        m_after = m + c
        gen = m_after == S  # c == S - m
        self.m[idx] = m_after
        self.S[idx] = S + gen
        generated = self.generated[idx] + gen
        self.generated[idx] = generated
        finished = generated >= self.output[idx]
        # batch model: the footprint is m, which grows by c
        self.kv_total += int(self.footprint(idx).sum()) - before if slot else int(np.add.reduce(c))  # c.sum()
        return gen, finished

    def repeat(self, idx: np.ndarray, c: np.ndarray, decode: np.ndarray, steps: int) -> np.ndarray:
        """``process(idx, c)`` repeated ``steps`` times, for batches in which no request changes phase and
        only the last may complete requests: each decode (``decode``, c = 1) generates a token per batch,
        its last no earlier than in the last batch; each prefill chunk leaves pending tokens
        (m + steps c < L), so it generates nothing. Returns the mask over ``idx`` of the requests that
        complete in the last batch (``release`` them after it, as after ``process``)."""
        dec = idx[decode]
        every = np.logical_and.reduce  # np.all without its Python-level wrapper (called once per run)
        m = self.m[idx] + steps * c
        generated, output = self.generated[dec] + steps, self.output[dec]
        assert every(c[decode] == 1) and every(generated <= output)
        assert every((m < self.L[idx]) | decode)  # the prefill chunks leave pending tokens
        self.m[idx] = m
        self.S[dec] += steps
        self.generated[dec] = generated
        self.kv_total += steps * int(np.add.reduce(c))
        finished = np.zeros(len(idx), dtype=bool)
        finished[decode] = generated >= output
        return finished

    def move_in(self, idx: np.ndarray, src: "RequestStates") -> None:
        """Requests ``idx`` arrive on this engine with their state on engine ``src`` (a KV transfer, see
        "Several engines"): their KV now counts here; ``src.release`` frees it there when the transfer ends."""
        for a in ("S", "m", "L", "generated", "evictions"):
            getattr(self, a)[idx] = getattr(src, a)[idx]
        self.kv_total += int(self.footprint(idx).sum())

    def release(self, idx: np.ndarray) -> None:
        """Free the KV of completed requests (after the batch in which they complete)."""
        self.kv_total -= int(self.footprint(idx).sum())
        self.m[idx] = 0
        self.done[idx] = True


class Replay(NamedTuple):
    """Pre-batch state of every entry of a batch-model schedule (see :func:`replay_batch_model`)."""
    m: np.ndarray        # int64[ne]: KV held before the batch
    pending: np.ndarray  # int64[ne]: S - m before the batch
    decode: np.ndarray   # bool[ne]: m >= L
    gen: np.ndarray      # bool[ne]: generates a token (c == pending)
    finish: np.ndarray   # bool[ne]: generates the request's O-th token
    after_finish: np.ndarray  # bool: per entry, then per eviction: the request completed in an earlier batch
    evict_m: np.ndarray  # int64[nev]: KV held by each evicted request before its eviction


def replay_batch_model(prompt, output, ptr, req, tokens, eptr, evict, restart: bool = False) -> Replay:
    """The batch-model rules of :class:`RequestStates`, applied to a whole columnar schedule at once.

    Exact under the premise that every entry processes 1 <= c <= pending tokens, no request appears
    twice in a batch, and no request is processed or evicted after it completes -- the caller checks
    these with the returned arrays, in order, so the premise holds for all entries or the caller
    reports a violation. Per request, the events (entries and evictions) in batch order split into
    runs, each ended by an eviction. In a run that starts with prompt length L (m = 0, S = L), let T be
    the tokens processed before an entry: while T < L no token has been generated (S = L, pending
    L - T, prefill); the entry that reaches T + c = L generates, and from then on every entry is a
    decode of pending 1 that generates (S = T + 1). So a run of T tokens in all ends with
    S = max(L, T + 1), the next run's L (recompute keeps the generated tokens): L of run r is
    max(I, max over the earlier runs of T + 1). The generated count is the running count of ``gen``,
    as ``process`` adds it, and the request completes at the entry where it reaches O. With ``restart``
    (``"eviction": "restart"``) every run starts from the prompt, L = I, and the count restarts with each run.
    """
    nb = len(ptr) - 1
    ne, nev = len(req), len(evict)
    q = np.concatenate([evict, req]).astype(np.int64)
    b = np.concatenate([np.repeat(np.arange(nb), np.diff(eptr)), np.repeat(np.arange(nb), np.diff(ptr))])
    c = np.concatenate([np.zeros(nev, dtype=np.int64), np.asarray(tokens, dtype=np.int64)])
    # request, then batch, then evictions before entries: each request's events in the order they happen
    order = np.lexsort((np.r_[np.zeros(nev, dtype=np.int64), np.ones(ne, dtype=np.int64)], b, q))
    q, c = q[order], c[order]
    is_ev = order < nev
    first = np.ones(len(q), dtype=bool)
    first[1:] = q[1:] != q[:-1]
    run_start = first.copy()
    run_start[1:] |= is_ev[:-1]  # an eviction ends its run
    run = np.cumsum(run_start) - 1
    csum = np.cumsum(c)
    T = csum - c - (csum - c)[run_start][run]  # tokens of the run before the event
    starts = np.flatnonzero(run_start)
    T_run = np.add.reduceat(c, starts) if len(starts) else np.zeros(0, dtype=np.int64)
    # L of each run: max(I, earlier runs' T + 1) within the request (offset by request so one cummax serves all)
    q_run = q[starts]
    big = int(T_run.max(initial=0)) + 2
    prev = np.zeros(len(starts), dtype=np.int64)
    same = np.zeros(len(starts), dtype=bool)
    same[1:] = q_run[1:] == q_run[:-1]
    prev[1:][same[1:]] = T_run[:-1][same[1:]] + 1
    if restart:
        L_run = np.asarray(prompt, dtype=np.int64)[q_run]
    else:
        L_run = np.maximum(np.asarray(prompt, dtype=np.int64)[q_run],
                           np.maximum.accumulate(q_run * big + prev) - q_run * big)
    L = L_run[run]
    pending = np.where(T < L, L - T, 1)
    gen = ~is_ev & (c == pending)
    g = np.cumsum(gen)
    req_start = np.flatnonzero(first)
    if restart:  # per run, after the event
        generated = g - (g - gen)[run_start][run]
    else:        # per request, after the event
        generated = g - (g - gen)[req_start][np.cumsum(first) - 1]
    finish = gen & (generated == np.asarray(output, dtype=np.int64)[q])
    f = np.cumsum(finish)
    after = (f - finish) - (f - finish)[req_start][np.cumsum(first) - 1] > 0  # completed before the event
    ent = order[~is_ev] - nev  # entry index of each process event, in sorted order
    evi = order[is_ev]          # eviction index of each eviction event

    def to_entries(x):
        y = np.empty(ne, dtype=x.dtype)
        y[ent] = x[~is_ev]
        return y

    def to_evictions(x):
        y = np.empty(nev, dtype=x.dtype)
        y[evi] = x[is_ev]
        return y

    return Replay(to_entries(T), to_entries(pending), to_entries(T >= L), to_entries(gen), to_entries(finish),
                  np.concatenate([to_entries(after), to_evictions(after)]), to_evictions(T))
