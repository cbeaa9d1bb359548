"""The simulator: advances batch by batch, pricing each with the instance's cost model.

A policy (:class:`lpbench.policies.base.Policy`) sees the state and returns the next batch and
any evictions; the engine applies the transition rules of :mod:`lpbench.semantics`, advances the
clock, and records the :class:`~lpbench.schedule.Schedule`, which the caller verifies.
Per batch the work is proportional to the requests in it (numpy over the batch), so long traces
simulate in seconds.

Repeated batches. After a batch that evicts nothing and completes nothing, the policy may promise,
through :meth:`~lpbench.policies.base.Policy.steady_batches`, that its next ``R`` batches would be the
same batch again (same requests in the same order, same tokens: decodes and a prefill chunk that does
not finish its prompt; decodes may complete in the last one only), provided no request arrives before
a batch starts when it says the run is arrival-sensitive (unless the policy proves, through
``run_survives_arrival``, that the arrival changes none of them: it is then delivered after the run).
The engine then appends those batches in one numpy step: their times from the cost model's
``repeat_times`` (bit for bit the per-batch times), their starts by the same left-to-right sum as
``t += dur``, the state advanced by :meth:`~lpbench.semantics.RequestStates.repeat`; requests completed
by the last one are released and reported to ``on_batch_end`` as after any batch. The schedule is the
one the batch-by-batch loop builds; ``benchmarks/compare_schedules.py`` and ``tests/test_sim.py`` check
it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..errors import PolicyDiverged, PolicyError
from ..instance import Instance
from ..schedule import Schedule, ScheduleBuilder
from ..semantics import SLOT, RequestStates


class Batch(NamedTuple):
    req: np.ndarray                 # request indices processed
    tokens: np.ndarray              # tokens processed per request (>= 1)
    evict: np.ndarray | None = None  # request indices evicted in this batch (recompute)


def apply_batch(st: RequestStates, cost, out: ScheduleBuilder, t: float, batch: Batch):
    """Run ``batch`` on an engine with state ``st`` at time ``t`` (:mod:`lpbench.semantics`): its evictions,
    then its tokens, priced by ``cost`` from the state before it; record it in ``out``. Returns (decode, dur,
    gen, fin): the phases before the batch, its duration, and ``process``' masks of the requests that
    generated a token and of those that completed (not yet released). The one-engine loop below and the
    several-engine loop (:mod:`lpbench.sim.multi`) both apply batches through it."""
    req, tokens, evict = batch
    if evict is not None and len(evict):
        st.evict(evict)
    m = st.m[req]  # read once for the phases, the cost model and the transition
    decode = m >= st.L[req]  # st.is_decode(req)
    dur = cost.batch_time(tokens, m, decode)
    gen, fin = st.process(req, tokens, m)
    out.add(t, req, tokens, evict)
    return decode, dur, gen, fin


class Watch:
    """The livelock guard and the progress report of a simulation loop (the one-engine loop below and the
    several-engine one, :mod:`lpbench.sim.multi`): more batches than 10x the instance's tokens (+ 1,000)
    raise PolicyDiverged; ``progress(completed, n, t)`` is called about every 1,000 batches."""

    def __init__(self, inst: Instance, name: str, progress=None):
        self.guard = 10 * int((inst.prompt + inst.output).sum()) + 1000
        self.name, self.progress, self.n = name, progress, inst.n
        self.why = ("; evictions restart on this instance, so a request evicted again and again never completes"
                    if inst.model != SLOT and inst.restarts else "")
        self.reported = 0  # thousands of batches reported to progress
        self.due = self.guard + 1 if progress is None else min(self.guard + 1, 1000)  # the least count check acts on

    def check(self, batches: int, completed: int, t: float) -> None:
        if batches > self.guard:
            raise PolicyDiverged(f"policy {self.name!r} ran {self.guard} batches, 10x the tokens of the instance, "
                                 f"without finishing (livelock){self.why}")
        if self.progress is not None and batches // 1000 > self.reported:
            self.reported = batches // 1000
            self.due = min(self.guard + 1, (self.reported + 1) * 1000)
            self.progress(completed, self.n, t)


@dataclass
class SimResult:
    policy: str
    schedule: Schedule
    seconds: float


def simulate(inst: Instance, policy, progress=None) -> SimResult:
    """Run ``policy`` on ``inst`` until every request completes. ``progress(done, n, t)`` is called
    about every 1,000 batches."""
    import time

    t0 = time.perf_counter()
    st = RequestStates.of(inst)
    policy.reset(inst, st)
    arrival = inst.arrival
    n = inst.n
    cost = inst.cost_model
    out = ScheduleBuilder()
    t = float(arrival[0])
    delivered = 0
    completed = 0
    watch = Watch(inst, policy.name, progress)
    while completed < n:
        if delivered < n and arrival[delivered] <= t:  # deliver every request arrived by t
            k = int(np.searchsorted(arrival, t, side="right"))
            policy.on_arrivals(np.arange(delivered, k))
            delivered = k
        batch = policy.next_batch(t)
        if batch is None or len(batch.req) == 0:
            if batch is not None and batch.evict is not None and len(batch.evict):
                raise PolicyError(f"policy {policy.name!r} evicted requests in a batch that processes nothing")
            if delivered < n:
                t = max(t, float(arrival[delivered]))
                continue
            raise PolicyError(f"policy {policy.name!r} stalled at t={t:g} with {n - completed} requests unfinished")
        req, tokens = batch.req, batch.tokens
        decode, dur, gen, fin = apply_batch(st, cost, out, t, batch)
        t += dur
        finished = req[fin]
        if len(finished):
            st.release(finished)
            completed += len(finished)
        policy.on_batch_end(req, tokens, gen, finished)
        if not len(finished) and (batch.evict is None or not len(batch.evict)):
            steps, sensitive = policy.steady_batches(req, tokens, decode)
            if steps > 0:
                starts = np.empty(steps + 1)
                starts[0] = t
                starts[1:] = cost.repeat_times(tokens, st.m[req], decode, steps)
                np.cumsum(starts, out=starts)  # starts[s]: start of repeat s (a left-to-right sum, as t += dur)
                if sensitive and delivered < n:  # a repeat must start before the next arrival is delivered ...
                    k = delivered
                    while k < n and arrival[k] <= starts[steps - 1] and policy.run_survives_arrival(k):
                        k += 1  # ... unless the policy proves the arrival changes none of the batches
                    if k < n:
                        steps = int(np.searchsorted(starts[:steps], arrival[k], side="left"))
                if steps > 0:
                    fin = st.repeat(req, tokens, decode, steps)
                    policy.advance_run(req, tokens, decode, steps, starts[:steps])
                    out.add_run(starts[:steps], req, tokens)
                    t = starts[steps]
                    finished = req[fin]
                    if len(finished):  # the last repeat completed decodes: its on_batch_end, as after any batch
                        st.release(finished)
                        completed += len(finished)
                        policy.on_batch_end(req, tokens, decode, finished)
        if len(out.starts) >= watch.due:
            watch.check(len(out.starts), completed, t)
    return SimResult(policy.name, out.build(), time.perf_counter() - t0)
