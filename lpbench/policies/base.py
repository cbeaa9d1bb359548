"""The policy interface and registry. Adding a policy is one module with one ``@POLICIES.register``.

A policy owns its queues and reservations; the engine owns the physical state
(:class:`lpbench.semantics.RequestStates`, read-only to the policy) and the clock.
"""
from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import InputError
from ..instance import MAX_INT
from ..registry import Registry
from ..semantics import BATCH

POLICIES: Registry[type["Policy"]] = Registry("policy")


@dataclass(frozen=True)
class Param:
    """One policy parameter (``--param KEY=VALUE``; :func:`make_policy` checks every value before the policy is
    built). ``kind``: "int" (an integral value), "float" or "flag" (0 or 1); the value must be finite and lie in
    [lo, hi] (``lo_open`` / ``hi_open``: that end excluded). An integer's hi defaults to MAX_INT (2^40), beyond
    which counts overflow int64 arrays. ``what`` says what the value means (shown in messages); ``values``, if
    set, replaces the rendered range (a flag whose 0 and 1 each need a word)."""

    kind: str
    what: str
    lo: float = -math.inf
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    values: str = ""

    def __post_init__(self):
        if self.kind not in ("int", "float", "flag"):
            raise ValueError(f"Param kind must be int, float or flag, got {self.kind!r}")
        if self.hi is None:
            object.__setattr__(self, "hi", 1 if self.kind == "flag" else MAX_INT if self.kind == "int" else math.inf)
        if self.kind == "flag":
            object.__setattr__(self, "lo", 0)

    def expect(self) -> str:
        if self.values:
            return self.values
        if self.kind == "flag":
            return "0 or 1"
        noun = "an integer" if self.kind == "int" else "a number"
        lo, hi = self.lo, self.hi
        if self.kind == "int" and lo == 1 and not (self.lo_open or self.hi_open):
            return "a positive integer up to 2^40" if hi == MAX_INT else f"a positive integer up to {_num(hi)}"
        if lo == -math.inf and hi == math.inf:
            return "a finite number"
        if hi == math.inf:
            return f"{noun} {'>' if self.lo_open else '>='} {_num(lo)}"
        if lo == -math.inf:
            return f"{noun} {'<' if self.hi_open else '<='} {_num(hi)}"
        return f"{noun} in {'(' if self.lo_open else '['}{_num(lo)}, {_num(hi)}{')' if self.hi_open else ']'}"

    def accepts(self, value) -> bool:
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, numbers.Real):
            return False
        value = float(value)
        if not math.isfinite(value):
            return False
        if self.kind in ("int", "flag") and not value.is_integer():
            return False
        return ((value > self.lo if self.lo_open else value >= self.lo)
                and (value < self.hi if self.hi_open else value <= self.hi))


def _num(x: float) -> str:
    """A number as a message shows it: whole numbers in full up to 1e16, else as %g (1e+300, 0.5, inf, nan)."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e16 else f"{x:g}"


def _shown(value) -> str:
    return _num(value) if isinstance(value, numbers.Real) else repr(value)


class Policy:
    name: ClassVar[str]
    #: instance models the policy is defined for
    models: ClassVar[tuple[str, ...]] = (BATCH,)
    summary: ClassVar[str] = ""
    #: the parameters ``--param`` may set, name -> Param; every one is checked by :func:`make_policy` before
    #: ``__init__`` sees it, so ``__init__`` checks only what depends on several of them. A parameter's default
    #: is the class attribute ``default_<name>`` if there is one, else its ``__init__`` keyword default (None:
    #: derived from the instance); see :meth:`param_defaults`.
    params: ClassVar[dict[str, Param]] = {}

    @classmethod
    def param(cls, key: str) -> Param | None:
        """The declaration of parameter ``key``, None if the policy has no such parameter."""
        return cls.params.get(key)

    @classmethod
    def param_defaults(cls) -> dict[str, object]:
        """Each declared parameter's default (None: derived from the instance at run time)."""
        out = {}
        for key in cls.params:
            if hasattr(cls, "default_" + key):
                out[key] = getattr(cls, "default_" + key)
                continue
            out[key] = None
            for klass in cls.__mro__:
                init = klass.__dict__.get("__init__")
                if init is not None and key in inspect.signature(init).parameters:
                    default = inspect.signature(init).parameters[key].default
                    out[key] = None if default is inspect.Parameter.empty else default
                    break
        return out

    @classmethod
    def check_params(cls, params: dict) -> None:
        """Raise InputError (exit 2) for the first parameter that the policy does not declare or whose value
        is outside its declaration."""
        for key, value in params.items():
            spec = cls.param(key)
            if spec is None:
                known = ", ".join(cls.params) or "none (it takes no parameters)"
                hint = " (the seed is --seed)" if key == "seed" else ""
                raise InputError(f"--param {key}: unknown parameter for policy {cls.name!r}{hint}; expected {known}")
            if not spec.accepts(value):
                raise InputError(f"--param {key}: must be {spec.expect()}, got {_shown(value)} "
                                 f"(for policy {cls.name!r}, {key} is {spec.what})")

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


def make_policy(name: str, inst=None, seed: int = 0, **params) -> Policy:
    """Build policy ``name`` with ``params`` (checked against its declared :attr:`Policy.params` first), and
    check that it can run on ``inst`` (if given)."""
    cls = POLICIES.get(name)
    cls.check_params(params)
    if inst is not None and inst.model not in cls.models:
        raise InputError(f"policy {name!r} is defined for model {' or '.join(map(repr, cls.models))}, "
                         f"but the instance uses model {inst.model!r}")
    policy = cls(seed=seed, **params)
    if inst is not None:
        policy.check(inst)
    return policy


def applicable(inst) -> list[str]:
    return [name for name, cls in POLICIES.items()
            if inst.model in cls.models and not getattr(cls, "explicit_only", False)]
