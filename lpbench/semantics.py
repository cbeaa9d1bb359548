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
* in both models an evicted request does no work in the batch that evicts it (c = 0, CSP (1)-(2)).
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
"""
from __future__ import annotations

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
    """

    def __init__(self, prompt: np.ndarray, output: np.ndarray, model: str):
        n = len(prompt)
        self.model = model
        self.prompt = np.asarray(prompt, dtype=np.int64)
        self.output = np.asarray(output, dtype=np.int64)
        self.S = self.prompt.copy()          # sequence length
        self.m = np.zeros(n, dtype=np.int64)  # KV entries held
        self.L = self.prompt.copy()          # prompt length of the current run
        self.generated = np.zeros(n, dtype=np.int64)
        self.done = np.zeros(n, dtype=bool)
        self.started = np.zeros(n, dtype=bool)  # has been processed at least once
        self.evictions = np.zeros(n, dtype=np.int64)
        self.kv_total = 0                    # Σ footprint over requests holding KV

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
        (slot model, progress lost)."""
        self.kv_total -= int(self.footprint(idx).sum())
        self.m[idx] = 0
        if self.model == SLOT:
            self.S[idx] = self.prompt[idx]
            self.generated[idx] = 0
        self.L[idx] = self.S[idx]
        self.evictions[idx] += 1

    def process(self, idx: np.ndarray, c: np.ndarray):
        """Process c tokens of each request in ``idx`` (caller has checked 1 <= c <= pending).

        Returns (gen, finished): boolean masks over ``idx`` of requests that generated a token,
        and of those that generated their last token (their KV is released after the batch;
        ``release`` does it once the caller has read the post-batch footprint).
        """
        before = int(self.footprint(idx).sum())
        gen = c == self.S[idx] - self.m[idx]
        self.m[idx] += c
        self.S[idx] += gen
        self.generated[idx] += gen
        self.started[idx] = True
        finished = self.generated[idx] >= self.output[idx]
        self.kv_total += int(self.footprint(idx).sum()) - before
        return gen, finished

    def release(self, idx: np.ndarray) -> None:
        """Free the KV of completed requests (after the batch in which they complete)."""
        self.kv_total -= int(self.footprint(idx).sum())
        self.m[idx] = 0
        self.done[idx] = True
