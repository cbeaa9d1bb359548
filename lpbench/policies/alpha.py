"""α-protection greedy and α-protection β-clearing (seed 004 §5.2, benchmarks modelled on vLLM;
notes seed-004 §3.4-3.6). Slot model; they do not use o_i.

Each round all running requests continue. Waiting requests are admitted FCFS while the memory after
the round stays <= (1 − α)M, counting a new request as s_i + 1 (the paper's "initial memory") and a
running one as its footprint after the round; the first that does not fit ends admission.

The paper leaves the overflow mechanics open; lpbench decides (documented, tested):

* **When.** Memory after a round is known before it runs (running requests grow by exactly one
  token), so an overflow -- footprint after the round > M -- is detected when the round is formed,
  and cleared then. The clearing costs no extra time (optimistic for these baselines); the lost
  progress is the whole cost.
* **What.** α-protection clears every running request; β-clearing clears each running request
  independently with probability β, repeating the draw until the round fits (each repeat is free;
  the RNG is ``numpy.random.default_rng(seed)``, ``--seed``).
* **Clearing is a restart** (the slot model's eviction, :mod:`lpbench.semantics`): progress lost.
* **Re-queue position.** A cleared request returns to the waiting queue at its original FCFS
  position (by arrival, then file order) and can be re-admitted in the same round, as a fresh start
  (footprint s_i + 1). Latency counts from the original a_i.
* **Termination.** A policy that clears the same request more than ``max_clears`` times (small α can
  loop forever, as the paper notes) stops with PolicyDiverged, reported as such. An instance with a request
  whose s_i + 1 exceeds (1 − α)M is refused up front (InputError): it could never be admitted.
"""
from __future__ import annotations

import bisect

import numpy as np

from ..errors import InputError, PolicyDiverged
from ..semantics import SLOT
from ..sim import Batch
from .base import POLICIES, Param, Policy


class AlphaProtection(Policy):
    name = "alpha-protection"
    models = (SLOT,)
    summary = "seed 004 §5.2: FCFS under (1-alpha)M, clear all running on overflow (alpha=0.25)"
    default_alpha = 0.25
    default_beta = 1.0  # fraction cleared on overflow (1: all)
    max_clears = 1000
    params = {"alpha": Param("float", "the memory fraction admission keeps free", lo=0, hi=1, hi_open=True),
              "beta": Param("float", "the chance an overflow clears each running request", lo=0, hi=1,
                            lo_open=True)}

    def __init__(self, alpha: float | None = None, beta: float | None = None, **kw):
        super().__init__(**kw)
        self.alpha = float(self.default_alpha if alpha is None else alpha)
        self.beta = float(self.default_beta if beta is None else beta)

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        self.rng = np.random.default_rng(self.seed)
        self.queue: list[int] = []     # waiting, FCFS by index (= arrival, then file order)
        self.running: list[int] = []
        self.clears = np.zeros(inst.n, dtype=np.int64)
        self.admit_limit = (1 - self.alpha) * inst.memory   # admission: memory after the round <= (1 − α)M
        never = np.flatnonzero(inst.prompt + 1 > self.admit_limit)  # not even alone: the run would stall
        if len(never):
            i = int(never[0])
            raise InputError(f"policy {self.name!r} (alpha={self.alpha:g}) never admits request {inst.ids[i]}: its "
                             f"initial memory s + 1 = {int(inst.prompt[i]) + 1} exceeds (1 - alpha) M = "
                             f"{self.admit_limit:g}; give a smaller --param alpha")

    def on_arrivals(self, idx) -> None:
        for i in idx.tolist():
            bisect.insort(self.queue, i)

    def next_batch(self, t):
        inst, st = self.inst, self.st
        run = np.array(self.running, dtype=np.int64)
        after = int((st.S[run] + 1).sum())  # running footprint after this round: s_j + generated + 1
        evicted: list[int] = []
        while run.size and after > self.inst.memory:  # overflow: clear
            if self.beta >= 1:
                hit = np.ones(run.size, dtype=bool)
            else:
                hit = self.rng.random(run.size) < self.beta
            cleared = run[hit]
            evicted.extend(cleared.tolist())
            self.clears[cleared] += 1
            if self.clears.max() > self.max_clears:
                raise PolicyDiverged(f"policy {self.name!r} (alpha={self.alpha}, beta={self.beta}) cleared request "
                                     f"{inst.ids[int(self.clears.argmax())]} more than {self.max_clears} times")
            run = run[~hit]
            after = int((st.S[run] + 1).sum())
        for i in evicted:
            bisect.insort(self.queue, i)
        admitted = []
        for i in self.queue:
            need = int(inst.prompt[i]) + 1
            if after + need > self.admit_limit:
                break
            admitted.append(i)
            after += need
        del self.queue[:len(admitted)]
        self.running = run.tolist() + admitted
        req = np.array(self.running, dtype=np.int64)
        c = np.ones(len(req), dtype=np.int64)
        c[len(run):] = inst.prompt[req[len(run):]]
        return Batch(req, c, np.array(evicted, dtype=np.int64) if evicted else None)

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        if len(finished):
            gone = set(finished.tolist())
            self.running = [i for i in self.running if i not in gone]

    def steady_batches(self, req, tokens, decode):
        """A round that admitted and cleared nothing (every running request decodes) repeats up to the round in
        which a running request completes, while the running footprint after each round, F + q·|run| in the
        q-th repeat (F = Σ (S_j + 1) now), stays <= M (no clearing, so no random draw either) and the queue's
        head stays refused (F + q·|run| + s + 1 > (1 − α)M holds for every q once it holds for q = 0). Proof: the
        running set changes only by clearing, admission and completion. Arrivals join the queue's tail (FCFS by
        index), so the run is arrival-sensitive only while the queue is empty (``run_survives_arrival``)."""
        if not decode.all():  # the round admitted prompts
            return 0, True
        inst, st = self.inst, self.st
        after = int((st.S[req] + 1).sum())
        if after > inst.memory or (self.queue and after + int(inst.prompt[self.queue[0]]) + 1 <= self.admit_limit):
            return 0, True
        steps = min(int((inst.output[req] - st.generated[req]).min()), (inst.memory - after) // len(req) + 1)
        self._run_after, self._run_head = after, bool(self.queue)
        return steps, not self.queue

    def run_survives_arrival(self, i: int) -> bool:
        """Into an empty queue, arrival i becomes the head: it changes no promised round iff it is refused at the
        run's first footprint (then at every later, larger one); behind a refused head it changes nothing."""
        if not self._run_head and self._run_after + int(self.inst.prompt[i]) + 1 <= self.admit_limit:
            return False
        self._run_head = True
        return True

    def advance_run(self, req, tokens, decode, steps, starts) -> None:
        """Nothing to advance: the running list and the queue are as they were (no draw, no admission)."""


@POLICIES.register("alpha-beta-clearing")
class AlphaBetaClearing(AlphaProtection):
    name = "alpha-beta-clearing"
    summary = "seed 004 §5.2: alpha-protection, each running request cleared w.p. beta (0.2, 0.1)"
    default_alpha = 0.2
    default_beta = 0.1


POLICIES.register("alpha-protection")(AlphaProtection)
