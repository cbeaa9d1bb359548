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
from .base import POLICIES, Policy


def peak_memory_at_completions(last_round: np.ndarray, weight: np.ndarray) -> int:
    """max over b in {last_round} of Σ_{j: last_round_j >= b} (weight_j + b)."""
    order = np.argsort(last_round, kind="stable")
    cs, ws = last_round[order], weight[order]
    k = len(cs)
    suffix_w = np.cumsum(ws[::-1])[::-1]
    mem = suffix_w + cs * (k - np.arange(k))
    return int(mem.max())


class MemoryCheckedAdmission(Policy):
    """Algorithm 1 / 2 with the queue order given by :meth:`order_key`."""

    models = (SLOT, BATCH)

    def order_key(self, i: int) -> tuple:
        raise NotImplementedError

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        self.delta = 0 if inst.model == SLOT else 1
        lim = inst.limits
        inf = float("inf")
        self.C = lim.token_budget or inf
        self.P = min(lim.prefill_budget or inf, self.C)
        self.cap = lim.max_batch_requests or inf
        if self.P < inf and inst.prompt.max() + 1 > self.P:
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
            cand_last = np.append(last, r + o - 1)
            cand_w = np.append(w, s - self.delta + 1 - r)
            if peak_memory_at_completions(cand_last, cand_w) > inst.memory:
                break
            last, w = cand_last, cand_w
            admitted.append(i)
            tokens += s
            prefill += s
        del self.queue[:len(admitted)]
        return self.start(admitted, last, w, n_run)

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
