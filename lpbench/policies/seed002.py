"""Seed 002's five schedulers (notes seed-002 §3) on the seed-003 unified scheduler
(:mod:`lpbench.policies.infermax`), reused, not copied. The mapping, with P = C = the token budget b
(seed 002 has one budget, (2.5d), and no separate prefill budget):

==================  =======================================================  =====================
seed 002            definition (notes §3)                                     unified scheduler
==================  =======================================================  =====================
fastertransformer   decode-prioritized, no mixed batching; a prefill batch    ``sarathi-nohy``: decode
                    (whole prompts, FCFS, Σ <= b) only when no request        priority, hybrid off,
                    decodes, so a cohort drains before the next is admitted  chunking off, P = C
vllm-vanilla        prefill-prioritized, no mixed batching, whole prompts     ``vllm`` (Table 1)
orca                prefill-prioritized with mixed batching: all prefill      prefill priority, hybrid,
                    tokens first (FCFS, the last one chunked to fill b,      chunked, P = C; groups in
                    decision A5), then decode tokens up to b                 FCFS order (below)
sarathi-serve       decode-prioritized chunk schedule: every decode, then     ``sarathi-pc``: decode
                    prefill tokens FCFS up to b (chunked)                     priority, hybrid, chunked
vllm-chunked        "vLLM with chunk-prefill enabled ... is work-conserving"  same as sarathi-serve
                    (§3.4: model it as SARATHI)
==================  =======================================================  =====================

Decisions (notes §5.4): A5 Orca chunks its last prefill so that it is work-conserving (real Orca
does not; without chunking it is ``vllm-hy``). A6 FT and vLLM prefill batches are token-budget
limited and take whole prompts; an instance with a request whose prefill can exceed b is refused up front
(InputError), not left to deadlock: its prompt I, or, where an eviction is possible (Σ (I + O − 1) > M, not a
restart instance), I + O − 1, the refill of an evicted request (:func:`~lpbench.policies.base.refuse_refill_over_budget`).
A7 FCFS everywhere. A4 the batch-size limit is the instance's ``limits.max_batch_requests``.
A9 memory is the instance's M: with M large (the shipped capacity instance) nothing is evicted and
the policies are seed 002's; with a small M they also evict as the seed-003 scheduler does.
"""
from __future__ import annotations

import numpy as np

from .base import POLICIES
from .infermax import UnifiedScheduler, _register


@POLICIES.register("orca")
class Orca(UnifiedScheduler):
    """Prefill-prioritized mixed batching in FCFS order: partially prefilled requests (older) before
    new ones, then decodes (seed 002 §3.3: "fills in p_i = x_p^i first. Only after ... pack as many
    decode tokens as possible")."""

    name = "orca"
    summary = "seed 002 §3.3 Orca: prefill tokens first (FCFS, last one chunked), then decodes up to the budget"
    priority, hybrid, chunked, default_P = "prefill", True, True, None

    def groups(self):
        run = np.array(self.running, dtype=np.int64)
        decoding = self.st.m[run] >= self.st.L[run]
        return [(run[~decoding], True, False), (list(self.waiting), False, True), (run[decoding], True, False)]

    def entries_before_waiting(self, decode):
        return int(np.count_nonzero(~decode))  # the running prefills (a batch's first entries)


_register("fastertransformer", "seed 002 §3.1 FasterTransformer = sarathi-nohy with P=C: decode first, "
          "no mixing, whole prompts; a cohort drains before the next", priority="decode", hybrid=False,
          chunked=False, default_P=None)
_register("vllm-vanilla", "seed 002 §3.2 vanilla vLLM = seed-003 vllm: prefill first, no mixing, whole prompts",
          priority="prefill", hybrid=False, chunked=False, default_P=None)
_register("sarathi-serve", "seed 002 §3.4 Sarathi-Serve = sarathi-pc: decodes first, then chunked prefill "
          "FCFS up to the budget (work-conserving)", priority="decode", hybrid=True, chunked=True, default_P=None)
_register("vllm-chunked", "seed 002 §3.4 vLLM with chunked prefill, modelled as Sarathi-Serve (= sarathi-pc)",
          priority="decode", hybrid=True, chunked=True, default_P=None)
