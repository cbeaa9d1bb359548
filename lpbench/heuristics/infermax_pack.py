"""Offline incumbents for the InferMax CSP (seed 003 §5) on instances whose memory does not bind:
prompts packed longest-output-first into the token budget, after a few prefill-only batches.

Where memory does not bind, no schedule needs an eviction, and the cost of a schedule beyond the unavoidable work W of the CSP's *Horizon J* is its batch biases
(b_o per batch, b_d per batch with a decode step, b_p per batch with a prefill step) plus what chunked
prefills add (s_p and m_p·m per extra chunk). The bound (V12)-(V14) of
:mod:`lpbench.formulations.infermax_csp` counts the biases of N >= o − 1 + (batches before the last
prompt of an output-o request is cached) batches, at least max O_i − 1 of them with a decode step and
⌈Σ I_i / C⌉ with a prefill step. The schedules here aim at that structure:

* the first ``lead`` batches are prefill-only (no b_d): a request whose prompt is cached there waits
  for its decode steps until batch ``lead`` + 1, which costs nothing while it has slack before the
  last batch;
* from batch ``lead`` + 1 on, every started request decodes in every batch until it completes, and the
  budget left, C − (decoding requests), is filled with prompts in ``order`` (longest output first, so
  that the requests that set N start first), chunked to fill the budget exactly or, without
  ``chunk``, first-fit whole prompts (no chunk costs, perhaps one prefill batch more).

:func:`best_packed_schedule` tries every ``lead`` up to ⌈Σ I / C⌉ + 1, both prompt orders and both
chunk rules and keeps the cheapest verified one (a variant whose KV would exceed M after a batch is
not built; one that breaks a limit it does not model, a prefill budget or a batch size, fails the
verifier and is dropped); the solve pipeline verifies the result again like any schedule.
Not an online policy: it sees the whole instance (hindsight). Offline instances only (a_i = 0).
"""
from __future__ import annotations

import time

import numpy as np

from ..verify import verify


def packed_batches(inst, lead: int, order, chunk: bool):
    """The (req, tokens, evict) batches of the schedule described above, or None where it does not
    apply (an arrival after 0, no token budget, or the KV of the requests in a batch above M)."""
    C = inst.limits.token_budget
    if C is None or float(inst.arrival.max()) > 0:
        return None
    I, O = inst.prompt.astype(np.int64), inst.output.astype(np.int64)
    left = I.copy()                      # prompt tokens not yet cached
    decodes = O - 1                      # decode steps still to run after the prefill end
    started = np.zeros(inst.n, dtype=bool)
    queue = [int(i) for i in order]
    batches, b, held = [], 0, np.zeros(inst.n, dtype=np.int64)
    while queue or (started & (decodes > 0)).any():
        b += 1
        tok = {}
        if b > lead or not queue:        # after the prefill-only batches: every started request decodes
            for i in np.flatnonzero(started & (decodes > 0) & (left == 0)):
                tok[int(i)] = 1
        budget = C - len(tok)
        for i in list(queue):
            if budget <= 0:
                break
            take = min(int(left[i]), budget) if chunk else (int(left[i]) if left[i] <= budget else 0)
            if take:
                tok[i] = take
                budget -= take
                left[i] -= take
                if left[i] == 0:
                    queue.remove(i)
        if not tok:
            return None
        for i, c in tok.items():
            if held[i] >= I[i]:          # its prompt was cached before this batch: a decode step
                decodes[i] -= 1
            started[i] = True
            held[i] += c
        finished = (left == 0) & (decodes == 0) & started
        if int(held.sum()) > inst.memory:
            return None
        req = sorted(tok)
        batches.append((req, [tok[i] for i in req], []))
        held[finished] = 0
    return batches


def candidate_orders(inst):
    """Prompt orders tried: longest output first, ties by longer or by shorter prompt."""
    I, O = inst.prompt.astype(np.int64), inst.output.astype(np.int64)
    return {"O-desc,I-desc": np.lexsort((-I, -O)), "O-desc,I-asc": np.lexsort((I, -O))}


def best_packed_schedule(inst, deadline: float | None = None):
    """(name, schedule, makespan) of the cheapest verified packed schedule over the parameters above,
    or None where none applies; past ``deadline`` (time.perf_counter()) the remaining ones are skipped."""
    from ..formulations.infermax_csp import schedule_from_batches

    C = inst.limits.token_budget
    if C is None:
        return None
    best = None
    pmin = -(-int(inst.prompt.sum()) // int(C))
    for lead in range(pmin + 2):
        for oname, order in candidate_orders(inst).items():
            for chunk in (True, False):
                if deadline is not None and time.perf_counter() > deadline:
                    return best
                batches = packed_batches(inst, lead, order, chunk)
                if batches is None:
                    continue
                sched = schedule_from_batches(inst, batches)
                ver = verify(inst, sched)
                if not ver.feasible:
                    continue
                end = float(ver.metrics["makespan"])
                if best is None or end < best[2]:
                    best = (f"packed(lead={lead},{oname},{'chunk' if chunk else 'whole'})", sched, end)
    return best
