"""MC-Group: MC-Work (:mod:`lpbench.policies.mcwork`) that admits waiting requests in groups, at most once
every ``period`` rounds while requests run (batch model only; lpbench extension, issue 13).

Rule. In round r the memory-checked prefix of the queue (seed 004 Alg. 1, check (5); queue sorted by
``batch-bound``'s work p_i) is admitted only if no request runs or r − r_last >= ``period``, where r_last is
the last round that admitted; otherwise the round is the running requests' decodes alone. Rounds count
batches, as in MC-SF. ``period`` = 1 is MC-Work.

Why (measured on the Azure conversation hour, docs/batch-model-bounds.md,
``python benchmarks/batch_bound_experiments.py group``): under the InferMax cost model (seed 003 §3.2) a
batch that carries a prompt pays the prefill bias b_p on top of b_o + b_d (Llama-2-7B/A100: 5.65 ms instead
of 2.69 ms), and MC-Work admits as soon as a completion frees memory, so 14,005 of its 62,784 batches carry
a prompt. With period 16, 3,555 do; the hour's busy time falls by 25 s and total latency by 8.4 %. With b_p
set to b_d the same deferral gains at most 0.9 %, so the saving is mostly the bias; the rest is the choice
among more waiting requests. Longer periods lose again (the running set thins out between admissions and
batches get smaller). On the half-loaded code hour the gain is the decode phase instead (−36 % total
latency): the long prompts stall a few batches instead of most. On a 40-request instance with little
queueing (instances/infermax-7b-mix40.json) deferral costs 1.3 %. Still non-preemptive, eviction-free and
clairvoyant like MC-SF (it reads I_i and O_i).
"""
from __future__ import annotations

from .base import POLICIES, Param
from .mcwork import MCWork


@POLICIES.register("mc-group")
class MCGroup(MCWork):
    name = "mc-group"
    summary = "MC-Work admitting in groups: the memory-checked prefix at most every `period` rounds while requests run"
    default_period = 16
    params = {"period": Param("int", "the least number of rounds between admissions while requests run", lo=1)}

    def __init__(self, period: float | None = None, **kw):
        super().__init__(**kw)
        self.period = int(self.default_period if period is None else period)

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        self.last_admission = -self.period  # round of the last batch that admitted

    def due(self, r: int) -> int:
        """The first round >= r in which the rule lets the prefix in while requests run."""
        return max(r, self.last_admission + self.period)

    def next_batch(self, t):
        n_run = len(self.run_idx)
        if n_run and self.due(self.round) > self.round:
            return self.start([], self.run_last, self.run_w, n_run)
        batch = super().next_batch(t)
        if len(batch.req) > n_run:
            self.last_admission = self.round - 1  # start() advanced the round
        return batch

    def steady_batches(self, req, tokens, decode):
        """MC-SF's run (:meth:`~lpbench.policies.mcsf.MemoryCheckedAdmission.steady_batches`), except that the
        head cannot be admitted before the round ``due`` names: the decode rounds before it repeat whatever the
        queue holds, and the head's memory test (5) is evaluated from that round on."""
        wait = self.due(self.round) - self.round
        if not wait or not decode.all():
            return super().steady_batches(req, tokens, decode)
        steps = int((self.inst.output[req] - self.st.generated[req]).min())  # the last one completes requests
        return self.head_admitting_round(wait, steps), True
