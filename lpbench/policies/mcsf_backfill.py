"""MC-SF with backfilling (lpbench, issue 12): seed 004's Algorithm 1 without its prefix rule.

MC-SF admits the largest *prefix* of its o-sorted queue that passes the memory check (5) and stops at
the first request that fails (selection rule (6)). Under load that head-of-line rule leaves memory idle
while a long prompt at the head waits for room: on 10,000 Azure-length requests at ρ = 1.0
(``benchmarks/bench_slot_load.py``) MC-SF keeps 92 % of M in use during the busy period. This policy
scans the queue in the same order and admits *every* request that passes (5) beside the running
requests and those admitted before it in the round; a refused request keeps its place and the scan
stops at the ``depth``-th refusal. ``depth = 1`` is MC-SF exactly. It is an incumbent source, not a seed policy: every schedule it makes is
a feasible schedule of the IP (1)-(4) (check (5) at every completion is eq. (3) at every round, Lemma 1
of :mod:`lpbench.formulations.completion`), so its verified total latency is an upper bound on OPT.
It is defined for the slot model, whose IP it serves (which has no batch budgets); the batch model has
``mc-work`` and the seed 003 schedulers.
"""
from __future__ import annotations

from ..semantics import SLOT
from .base import POLICIES, Param
from .mcsf import MCSF, first_admitting_round, peak_memory_at_completions


@POLICIES.register("mc-sf-backfill")
class MCSFBackfill(MCSF):
    name = "mc-sf-backfill"
    summary = "MC-SF's order and check (5); a refused request is skipped, up to `depth` refusals (ours)"
    default_depth = 16
    models = (SLOT,)

    params = {"depth": Param("int", "the number of refusals that ends a round's scan (1: mc-sf)", lo=1)}

    def __init__(self, depth: int | None = None, **kw):
        super().__init__(**kw)
        self.depth = int(self.default_depth if depth is None else depth)

    def next_batch(self, t):
        inst, r = self.inst, self.round
        last, w = self.run_last, self.run_w
        n_run = len(self.run_idx)
        window = [entry[-1] for entry in self.queue[:4 * self.depth]]
        # (5) beside the running requests alone, for the whole window at once: admissions only add
        # memory, so a request refused here is refused in the sequential scan too
        alone = first_admitting_round(last, w, inst.prompt[window] - self.delta + 1, inst.output[window], r, 1,
                                      inst.memory) == 0 if window else []
        admitted, taken, refused = [], [], 0
        for q, entry in enumerate(self.queue):
            i = entry[-1]
            fits = q >= len(window) or alone[q]
            if fits:
                cand_last, cand_w = self.with_request(last, w, i, r)
                fits = ((q < len(window) and not admitted)  # known from the window test
                        or peak_memory_at_completions(cand_last, cand_w) <= inst.memory)
            if not fits:
                refused += 1
                if refused == self.depth:
                    break
                continue
            last, w = cand_last, cand_w
            admitted.append(i)
            taken.append(q)
        for q in reversed(taken):
            del self.queue[q]
        return self.start(admitted, last, w, n_run)

    def head_admitting_round(self, q0: int, steps: int) -> int:
        """MC-SF's run (:meth:`~lpbench.policies.mcsf.MemoryCheckedAdmission.steady_batches`) with each of the
        first ``depth`` queued requests in the head's role (a round that admits nothing refused exactly
        those): the first q in q0..steps-1 in which one of them passes check (5), evaluated for all rounds
        at once; an arrival may enter that window, so the run is arrival-sensitive (see
        ``run_survives_arrival``). The slot model has no budgets to test."""
        heads = [entry[-1] for entry in self.queue[:self.depth]]
        if not heads or q0 >= steps:
            return steps
        inst = self.inst
        return q0 + int(first_admitting_round(self.run_last, self.run_w, inst.prompt[heads] - self.delta + 1,
                                              inst.output[heads], self.round + q0, steps - q0, inst.memory).min())

    def run_survives_arrival(self, i: int) -> bool:
        """An arrival sorted behind the first ``depth`` queued requests is never scanned in a round that
        refuses them all, so every promised batch is unchanged (earlier survivors were sorted behind too)."""
        return len(self.queue) >= self.depth and self.order_key(i) + (i,) > self.queue[self.depth - 1]
