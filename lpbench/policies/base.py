"""The policy interface and registry. Adding a policy is one module with one ``@POLICIES.register``.

A policy owns its queues and reservations; the engine owns the physical state
(:class:`lpbench.semantics.RequestStates`, read-only to the policy) and the clock.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..errors import InputError
from ..registry import Registry
from ..semantics import BATCH

POLICIES: Registry[type["Policy"]] = Registry("policy")


class Policy:
    name: ClassVar[str]
    #: instance models the policy is defined for
    models: ClassVar[tuple[str, ...]] = (BATCH,)
    summary: ClassVar[str] = ""

    def __init__(self, seed: int = 0, **params):
        if params:
            raise InputError(f"policy {self.name!r}: unknown parameter(s) {', '.join(params)}")
        self.seed = seed

    def check(self, inst) -> None:
        """Raise InputError when the policy cannot run on ``inst`` (``make_policy`` asks, before any work)."""

    def reset(self, inst, st) -> None:
        self.inst, self.st = inst, st

    def on_arrivals(self, idx: np.ndarray) -> None:
        raise NotImplementedError

    def next_batch(self, t: float):
        raise NotImplementedError

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        pass

    def steady_batches(self, req: np.ndarray, tokens: np.ndarray, decode: np.ndarray) -> tuple[int, bool]:
        """Called after a batch (``req``, ``tokens``; ``decode`` the phases before it) that evicted and
        completed nothing has ended. Returns (R, sensitive): the policy promises that, with its state and
        the engine's advanced as the batch-by-batch loop would, each of its next R calls to ``next_batch``
        returns this same batch again, unless (``sensitive``) a request arrives first. In none of those
        batches may a request change phase (a prefill chunk must leave pending tokens), and only in the
        last may decodes complete. The default promises nothing."""
        return 0, True

    def run_survives_arrival(self, i: int) -> bool:
        """Called during an arrival-sensitive run promised by the last ``steady_batches``, for each request
        ``i`` (in arrival order) that arrives before a promised batch starts: True if the policy proves that
        ``i``, once in its queue, changes none of the promised batches (given that those before it, which
        returned True, change none). The run then goes on past ``i``'s arrival, and the engine delivers
        ``i`` after the run. The default proves nothing."""
        return False

    def advance_run(self, req: np.ndarray, tokens: np.ndarray, decode: np.ndarray, steps: int,
                    starts: np.ndarray) -> None:
        """The engine ran ``steps`` of the batches promised by ``steady_batches``, starting at ``starts``
        (float64[steps], the ``t`` those calls would have seen): update the policy's own bookkeeping as
        ``steps`` calls to ``next_batch`` and ``on_batch_end`` would have, the last ``on_batch_end`` without
        its completions: if the last batch completes requests, the engine then calls ``on_batch_end`` for
        it (every policy's ``on_batch_end`` changes nothing for a repeated batch that completes nothing)."""
        raise NotImplementedError


def batch_budgets(limits) -> tuple[float, float, float]:
    """(C, P, cap): the batch's token budget, its prefill budget (at most C) and its request count from the
    instance's limits, inf where unset (the policies that keep whole prompts: MC-SF's family, FCFS)."""
    C = limits.token_budget or float("inf")
    return C, min(limits.prefill_budget or float("inf"), C), limits.max_batch_requests or float("inf")


def refuse_refill_over_budget(name: str, inst, P: float, remedy: str, evicts: bool = True) -> None:
    """Exit 2 where a policy without chunked prefill cannot ever run a request: a refill after an eviction
    recomputes its prompt and generated tokens in one batch, up to I + O − 1, and that must fit the budget P
    (on a restart instance a refill is the prompt I again). Where every request's peak fits in memory at once
    (Σ (I + O − 1) <= M), memory never runs short, nothing is evicted, and only the prompt must fit; so too
    for a policy that never evicts (``evicts`` False: the eviction-free variants reserve the peak up front)."""
    peaks = inst.prompt + inst.output - 1
    no_refill = not evicts or inst.restarts or int(peaks.sum()) <= inst.memory
    worst, what = (inst.prompt, "its prompt") if no_refill else (peaks, "prompt + output - 1, a refill after an "
                                                                         "eviction")
    if inst.n and worst.max() > P:
        i = int(worst.argmax())
        raise InputError(f"policy {name!r} has no chunked prefill: request {inst.ids[i]} may need a prefill of "
                         f"{int(worst[i])} tokens ({what}), above its budget P = {P:g}; {remedy}")


def make_policy(name: str, inst=None, **params) -> Policy:
    cls = POLICIES.get(name)
    if inst is not None and inst.model not in cls.models:
        raise InputError(f"policy {name!r} is defined for model {' or '.join(map(repr, cls.models))}, "
                         f"but the instance uses model {inst.model!r}")
    policy = cls(**params)
    if inst is not None:
        policy.check(inst)
    return policy


def applicable(inst) -> list[str]:
    return [name for name, cls in POLICIES.items()
            if inst.model in cls.models and not getattr(cls, "explicit_only", False)]
