"""MC-SF and MC-Benchmark (seed 004, Algorithms 1 and 2; notes seed-004 §3.1-3.3).

Every round, all running requests continue (non-preemptive). Waiting requests are taken as the
largest *prefix* of the queue -- sorted by o_i (MC-SF) or by arrival (MC-Benchmark) -- for which
the memory inequality (5) holds at every future completion time; the scan stops at the first
request that fails (no skipping, selection rule (6)).

Tie-breaking (not in the paper): ascending o_i, then arrival a_i, then position in the file
(the instance's stable arrival order), as Proposition 4.2's proof orders "by index".

Memory of a request j started in round p_j after its k-th round is s_j + k - delta, with delta = 0 in
the slot model (seed 004: s_j + k) and delta = 1 in the batch model (seed 003: I + k - 1), see
:mod:`lpbench.semantics`. Check (5) is evaluated at the last round c_j = p_j + o_j - 1 of every
request of S ∪ U ∪ {i}: after round b, memory is Σ_{j: c_j >= b} (s_j - delta + 1 - p_j + b), which is
nondecreasing between completions, so completion rounds are where it peaks. Rounds count batches,
so in the batch model (the seed's real-data setting) the check is in batch units, as the paper's.

lpbench extension for the batch model: the instance's token_budget / prefill_budget /
max_batch_requests also end the prefix (the paper's model has no such limits).
"""
from __future__ import annotations

import bisect

import numpy as np

from ..errors import InputError
from ..semantics import BATCH, SLOT
from ..sim import Batch
from .base import POLICIES, Policy, batch_budgets


def peak_memory_at_completions(last_round: np.ndarray, weight: np.ndarray) -> int:
    """max over b in {last_round} of Σ_{j: last_round_j >= b} (weight_j + b)."""
    order = np.argsort(last_round, kind="stable")
    cs, ws = last_round[order], weight[order]
    k = len(cs)
    suffix_w = np.cumsum(ws[::-1])[::-1]
    mem = suffix_w + cs * (k - np.arange(k))
    return int(mem.max())


def first_admitting_round(last_round: np.ndarray, weight: np.ndarray, size, o, r0: int, rounds: int,
                          memory: int):
    """The first q in 0..rounds-1 for which a request of footprint size + k after its k-th round
    (size = s - delta + 1) and o rounds, started in round r0 + q beside the running requests (whose last
    rounds are all >= r0 + rounds - 1), passes check (5): ``peak_memory_at_completions`` <= memory with it
    appended (last round r0 + q + o - 1, weight size - r0 - q); ``rounds`` if none does. All rounds at once,
    in integers: at b = a running request's last round the sum gains the new request's footprint at b
    if it still runs then; at b = its own last round it is the running requests' sum there plus its peak
    size + o - 1. ``size`` and ``o`` may be arrays of K candidates (each tested alone beside the running
    requests): then an int64[K] array of first rounds."""
    scalar = np.ndim(size) == 0
    size = np.atleast_1d(np.asarray(size, dtype=np.int64))[:, None]
    o = np.atleast_1d(np.asarray(o, dtype=np.int64))[:, None]
    r = r0 + np.arange(rounds, dtype=np.int64)[None, :]
    last_h = r + o - 1                                            # [K, rounds]
    order = np.argsort(last_round, kind="stable")
    lasts, w = last_round[order], weight[order]
    k = len(lasts)
    suffix_w = np.zeros(k + 1, dtype=np.int64)
    suffix_w[:k] = np.cumsum(w[::-1])[::-1]
    at_last = suffix_w[:k] + lasts * (k - np.arange(k))  # Σ_{j: last_j >= b} (w_j + b) at b = lasts
    head_at = np.where(lasts <= last_h[..., None], (size - r)[..., None] + lasts, 0)
    i = np.searchsorted(lasts, last_h, side="left")
    at_head_last = suffix_w[i] + last_h * (k - i) + size + o - 1  # b = its own last round
    peak = np.maximum((at_last + head_at).max(axis=2, initial=0), at_head_last)
    admits = peak <= memory
    first = np.where(admits.any(axis=1), admits.argmax(axis=1), rounds)
    return int(first[0]) if scalar else first


class MemoryCheckedAdmission(Policy):
    """Algorithm 1 / 2 with the queue order given by :meth:`order_key`."""

    models = (SLOT, BATCH)

    def order_key(self, i: int) -> tuple:
        raise NotImplementedError

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        self.delta = 0 if inst.model == SLOT else 1
        self.C, self.P, self.cap = batch_budgets(inst.limits)
        if inst.prompt.max() + 1 > self.P:
            i = int(inst.prompt.argmax())
            raise InputError(f"policy {self.name!r} processes whole prompts: request {inst.ids[i]} has prompt "
                             f"{int(inst.prompt[i])}, which with one running decode exceeds the budget {self.P:g}")
        self.round = 0
        self.queue: list[tuple] = []                 # sorted (key..., index)
        self.run_idx = np.zeros(0, dtype=np.int64)   # running requests
        self.run_last = np.zeros(0, dtype=np.int64)  # their last round c_j
        self.run_w = np.zeros(0, dtype=np.int64)     # their weight s_j - delta + 1 - p_j

    def on_arrivals(self, idx) -> None:
        for i in idx.tolist():
            bisect.insort(self.queue, self.order_key(i) + (i,))

    def next_batch(self, t):
        inst, r = self.inst, self.round
        last, w = self.run_last, self.run_w
        admitted: list[int] = []
        n_run = len(self.run_idx)
        tokens = n_run
        prefill = 0
        for entry in self.queue:
            i = entry[-1]
            s, o = int(inst.prompt[i]), int(inst.output[i])
            if (tokens + s > self.C or prefill + s > self.P or n_run + len(admitted) + 1 > self.cap):
                break
            cand_last, cand_w = self.with_request(last, w, i, r)
            if peak_memory_at_completions(cand_last, cand_w) > inst.memory:
                break
            last, w = cand_last, cand_w
            admitted.append(i)
            tokens += s
            prefill += s
        del self.queue[:len(admitted)]
        return self.start(admitted, last, w, n_run)

    def with_request(self, last: np.ndarray, w: np.ndarray, i: int, r: int) -> tuple[np.ndarray, np.ndarray]:
        """Check (5)'s last rounds and weights (``last``, ``w`` of the requests so far) with request i
        started in round r appended: last round r + o_i - 1, weight s_i - delta + 1 - r."""
        inst = self.inst
        return np.append(last, r + int(inst.output[i]) - 1), np.append(w, int(inst.prompt[i]) - self.delta + 1 - r)

    def start(self, admitted: list[int], last: np.ndarray, w: np.ndarray, n_run: int) -> Batch:
        """The round's batch: the n_run running requests decode, ``admitted`` (already taken off the queue,
        with the completion rounds ``last`` and weights ``w`` of every running request) prefill whole."""
        if admitted:
            self.run_idx = np.concatenate([self.run_idx, np.array(admitted, dtype=np.int64)])
            self.run_last, self.run_w = last, w
        self.round += 1
        req = self.run_idx
        c = np.ones(len(req), dtype=np.int64)
        c[n_run:] = self.inst.prompt[req[n_run:]]
        return Batch(req, c)

    def steady_batches(self, req, tokens, decode):
        """A round that admits nothing (every request of B decodes) repeats up to the round in which a
        running request completes, as long as the queue's head stays refused; an arrival may become the
        head, so the run is arrival-sensitive. Proof: the running set, hence B, changes only by admissions
        and completions. The head's budget and cap tests (tokens n_run + s <= C, s <= P, n_run + 1 <= cap)
        are the same in every round without them. Its memory test (5) moves with the round r' it would
        start in (its last round r' + o - 1 and weight s - delta + 1 - r'), so it is evaluated for every
        round of the run at once (``first_admitting_round``): the run stops before the first round in
        which it passes. The scan stops at the head, so no later request matters."""
        if not decode.all():  # the round admitted prompts
            return 0, True
        steps = int((self.inst.output[req] - self.st.generated[req]).min())  # the last one completes requests
        return self.head_admitting_round(0, steps), True

    def head_admitting_round(self, q0: int, steps: int) -> int:
        """The first q in q0..steps-1 in which the queue's head passes its budget tests and check (5) when
        started in round ``self.round + q`` beside the running requests; ``steps`` if none does."""
        if not self.queue or q0 >= steps:
            return steps
        inst = self.inst
        h = self.queue[0][-1]
        s, o = int(inst.prompt[h]), int(inst.output[h])
        n_run = len(self.run_idx)
        if n_run + s > self.C or s > self.P or n_run + 1 > self.cap:
            return steps
        return q0 + first_admitting_round(self.run_last, self.run_w, s - self.delta + 1, o, self.round + q0,
                                          steps - q0, inst.memory)

    def advance_run(self, req, tokens, decode, steps, starts):
        self.round += steps  # each round's start(); on_batch_end only acts on completions

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        if len(finished):
            keep = self.run_last >= self.round
            self.run_idx, self.run_last, self.run_w = self.run_idx[keep], self.run_last[keep], self.run_w[keep]


@POLICIES.register("mc-sf")
class MCSF(MemoryCheckedAdmission):
    name = "mc-sf"
    summary = "seed 004 Alg. 1: shortest output first, largest memory-feasible prefix, non-preemptive"

    def order_key(self, i):
        return (int(self.inst.output[i]),)  # then arrival order = index


@POLICIES.register("mc-benchmark")
class MCBenchmark(MemoryCheckedAdmission):
    name = "mc-benchmark"
    summary = "seed 004 Alg. 2: MC-SF's memory check with FCFS order"

    def order_key(self, i):
        return ()
