"""MC-Work: MC-SF's memory-checked admission (seed 004, Algorithm 1) with the queue sorted by each
request's work under the instance's cost model instead of by o_i (batch model only; lpbench extension).

The key is p_i of ``batch-bound``'s single-server relaxation (:mod:`lpbench.formulations.batch_bound`,
memory share rule): the request's per-participation batch time (prompt processing, one decode per
later token reading its X = I + g − 1 keys) plus its share X/M of the batch constants. Admitting the
smallest p_i first is the relaxation's SRPT order, applied non-preemptively at admission, so the
policy is clairvoyant like MC-SF (it reads I_i and O_i). Everything else (largest memory-feasible
prefix, whole prompts, ties by arrival) is :class:`lpbench.policies.mcsf.MemoryCheckedAdmission`.
On the Azure conversation hour it has 30 % less total latency than MC-SF (docs/batch-model-bounds.md).
Cost models that batch-bound refuses (``tiled``) are refused here (InputError naming the policy).
"""
from __future__ import annotations

from ..errors import InputError
from ..formulations.batch_bound import BatchBound
from ..semantics import BATCH
from .base import POLICIES
from .mcsf import MemoryCheckedAdmission


@POLICIES.register("mc-work")
class MCWork(MemoryCheckedAdmission):
    name = "mc-work"
    models = (BATCH,)
    summary = "MC-SF's memory-checked admission, queue sorted by the request's work under the cost model"

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        try:
            self.work = BatchBound(inst).works()[0]
        except InputError as e:
            raise InputError([f"policy 'mc-work' orders requests by batch-bound's work p_i; {p.split(': ', 1)[-1]}"
                              for p in e.problems]) from None

    def order_key(self, i):
        return (float(self.work[i]),)  # then arrival order = index
