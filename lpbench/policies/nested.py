"""Nested WAIT (seed 001 Algorithm 2, §4; notes seed-001 §3.4-3.5) for unknown output lengths.

What the policy is given (enforced, tested): on :meth:`reset` it keeps only a :class:`BlindView` --
arrival times, prompt lengths, the memory C, and the *set* of output lengths l'_1 < ... < l'_m with
their rates (from the types block) -- never the instance or the simulator state, which hold every
request's own output length. During the run it learns only what a server learns: arrivals, and which
requests finished (generated EOS) at the end of each batch. It keeps its own KV bookkeeping.

Segments (notes §3.4, the consistent convention): segment 1 = stages {0..l'_1} (its entry is the
off-GPU arrival queue E_1), segment k >= 2 = stages {l'_{k-1}+1..l'_k}; its entry E_k is the
*boundary queue* of prompts that finished stage l'_{k-1} without EOS, resident on the GPU with
l + l'_{k-1} KV each. Prefix rule: K* = max{k : |E_k'| >= n_k' for all k' <= k}; if K* >= 1 the batch
takes, for every k' <= K*, min{n_k', |E_k'|} prompts of E_k' (their first stage of the segment) and every
prompt of the segment's later stages (at most n_k' each). A prompt finishing stage l'_k completes or
joins E_{k+1}. Stage s is the request's (s+1)-th batch (:mod:`lpbench.fluid`).

Thresholds: n_k proportional to Λ_k = Σ_{j>=k} λ_j (the §5.2 / §6.3 rule, ratios 15:14:12:8 and
66:43:...), n_k = max(1, ceil(n_1 Λ_k / Λ_1)) (rounding up keeps n_k / n_{k-1} near p_k from below the
boundary); n_1 = ``--param n1=`` or the smallest integer meeting (12)'s first line
ΔT_{[1..m]}(n) = d_0 + d_1 M^π < n_1 / Λ_1 (the least waiting that keeps segment 1 stable), with the
first two terms of (14) within C: M^π + Σ_{k>=2} (l + l'_{k-1}) n_k <= C, with the corrected
M^π = Σ_k n_k Σ_{s∈S_k} (l + s) and l = the largest prompt of the types (notes §6.13). Term 3, the
high-probability buffer, is reported by :func:`memory_requirement`; the safety net covers its misses. :func:`memory_requirement` gives (14)'s three terms.

Memory safety net (not in the paper, which evicts LIFO when (2) would fail; Theorem 2 only bounds the
probability): if the planned batch would leave more than C of KV, the deepest segments leave the
batch first; then waiting KV holders are evicted LIFO by admission (recompute, lpbench semantics);
then new prefills are dropped. End of horizon: after the last arrival every segment with work runs
(the flush of :mod:`lpbench.throughput`).
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..fluid import linear_coefficients
from ..sim import Batch
from .base import POLICIES, Policy
from .wait import refuse_batch_limits


@dataclass(frozen=True)
class BlindView:
    """Everything Nested WAIT may know: no request's own output length."""

    arrival: np.ndarray
    prompt: np.ndarray
    memory: int
    lengths: np.ndarray   # l'_1 < ... < l'_m (decode tokens after the prefill iteration)
    rates: np.ndarray     # λ per length
    d0: float             # the linear cost model (1)
    d1: float

    @classmethod
    def of(cls, inst) -> "BlindView":
        if inst.types is None:
            raise InputError("policy 'nested-wait': needs the instance's types block (the set of output "
                             "lengths and their rates); derive one with `lpbench generate fluid --from`")
        lengths, inv = np.unique(inst.types.output, return_inverse=True)
        rates = np.bincount(inv.reshape(-1), weights=inst.types.rate, minlength=len(lengths))
        d0, d1 = linear_coefficients(inst)
        return cls(inst.arrival.copy(), inst.prompt.copy(), int(inst.memory), lengths, rates, d0, d1)

    @property
    def stages(self) -> np.ndarray:
        """δ_k: stages per segment (δ_1 = l'_1 + 1)."""
        return np.diff(np.concatenate([[-1], self.lengths]))


def segment_memory(lengths, l: float) -> np.ndarray:
    """Σ_{s∈S_k} (l + s) per segment: the corrected (13) (notes §6.6)."""
    lo = np.concatenate([[0], np.asarray(lengths[:-1]) + 1])
    hi = np.asarray(lengths)
    return (hi - lo + 1) * (l + (lo + hi) / 2)


def theta_root(n_prev: float, n_k: float, p: float) -> float:
    """The positive root θ_k of (20), e^{-θ n_k} (1 - p + p e^θ)^{n_{k-1}} = 1 (Lemma 8: unique when
    n_{k-1} p < n_k < n_{k-1}); bisection on g(θ) = n_{k-1} ln(1 - p + p e^θ) - θ n_k."""
    if not (n_prev * p < n_k < n_prev):
        return 0.0
    g = lambda th: n_prev * (math.log1p(p * math.expm1(th))) - th * n_k  # noqa: E731
    lo, hi = 1e-12, 1.0
    while g(hi) < 0:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if g(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def memory_requirement(view: BlindView, n, iterations: float, delta: float = 0.01) -> dict:
    """(14): C >= M^π + Σ_{k>=2} (l + l'_{k-1})(n_k + θ_k^{-1} ln(m B / δ)) with the corrected M^π and θ_k
    from (20); p_k = Λ_k / Λ_{k-1} (appendix index). θ_k = 0 (outside Lemma 8) makes term 3 infinite."""
    l = float(view.prompt.max()) if len(view.prompt) else 0.0
    Lam = np.cumsum(view.rates[::-1])[::-1]
    n = np.asarray(n, dtype=np.float64)
    m = len(n)
    term1 = float(n @ segment_memory(view.lengths, l))
    boundary = l + view.lengths[:-1]
    term2 = float((boundary * n[1:]).sum())
    thetas = [theta_root(n[k - 1], n[k], Lam[k] / Lam[k - 1]) for k in range(1, m)]
    log = math.log(max(m, 1) * max(iterations, 1.0) / delta)
    term3 = float(sum(b * log / th if th > 0 else math.inf for b, th in zip(boundary, thetas)))
    return {"M_pi": term1, "term2_queue": term2, "term3_high_probability": term3,
            "total": term1 + term2 + term3, "theta": thetas}


def proportional_thresholds(view: BlindView, n1: int | None) -> np.ndarray:
    Lam = np.cumsum(view.rates[::-1])[::-1]
    l = float(view.prompt.max()) if len(view.prompt) else 0.0
    per = segment_memory(view.lengths, l)

    def scaled(x: int) -> np.ndarray:
        return np.maximum(1, np.ceil(x * Lam / Lam[0] - 1e-9)).astype(np.int64)

    if n1 is not None:
        return scaled(n1)
    boundary = l + view.lengths[:-1]
    for x in range(1, 10**6):                   # smallest n_1 meeting (12)'s first line
        n = scaled(x)
        M_pi = float(n @ per)
        if M_pi + float(boundary @ n[1:]) > view.memory:
            break
        if view.d0 + view.d1 * M_pi < x / Lam[0]:
            return n
    raise InputError(f"policy 'nested-wait': no n_1 with d0 + d1 M^pi < n_1 / Lambda_1 (12) and terms 1-2 of "
                     f"(14) within memory {view.memory}; pass --param n1=")


@POLICIES.register("nested-wait")
class NestedWait(Policy):
    name = "nested-wait"
    explicit_only = True
    summary = "seed 001 Alg. 2 Nested WAIT: segments by output length, prefix rule, boundary queues on GPU; blind to own lengths"

    def __init__(self, n1: float | None = None, **kw):
        super().__init__(**kw)
        if n1 is not None and not (n1 >= 1 and float(n1).is_integer()):
            raise InputError(f"--param n1: must be a positive integer, got {n1:g}")
        self.n1 = None if n1 is None else int(n1)

    def reset(self, inst, st) -> None:  # keeps neither inst nor st: see BlindView
        v = self.view = BlindView.of(inst)                   # its types block and linear cost model first
        refuse_batch_limits(self.name, inst)
        if inst.eviction == "restart":                       # its segments keep a request's stage through an eviction
            raise InputError("eviction: policy 'nested-wait' keeps an evicted prompt at its stage (its memory safety "
                             "net recomputes, not in the paper), so it refuses 'restart'; remove it")
        self.thresholds = proportional_thresholds(v, self.n1)
        K = len(v.lengths)
        self.entry = [deque() for _ in range(K)]
        self.groups = [deque([np.zeros(0, np.int64)] * int(d - 1)) for d in v.stages]
        n = len(v.arrival)
        self.seq = v.prompt.astype(np.int64).copy()  # I + tokens generated so far
        self.kv = np.zeros(n, dtype=np.int64)         # KV entries held (own bookkeeping)
        self.admitted = np.full(n, -1, dtype=np.int64)
        self.clock = 0
        self.arrived = 0
        self.leaving: list[tuple[int, np.ndarray]] = []

    def on_arrivals(self, idx) -> None:
        self.entry[0].extend(idx.tolist())
        self.arrived += len(idx)

    def has_work(self, k: int) -> bool:
        return bool(self.entry[k]) or any(len(g) for g in self.groups[k])

    def plan(self, segments):
        """(segment, entry prompts, later-stage prompts) for each segment in the batch."""
        out = []
        for k in segments:
            take = min(int(self.thresholds[k]), len(self.entry[k]))
            new = np.array(list(self.entry[k])[:take], dtype=np.int64)
            rest = np.concatenate(list(self.groups[k])) if self.groups[k] else np.zeros(0, np.int64)
            out.append([k, new, rest])
        return out

    def next_batch(self, t):
        K = len(self.thresholds)
        if self.arrived == len(self.view.arrival):           # end of horizon: flush
            segments = [k for k in range(K) if self.has_work(k)]
        else:
            segments = []
            for k in range(K):                               # prefix rule
                if len(self.entry[k]) < self.thresholds[k]:
                    break
                segments.append(k)
        if not segments:
            return None
        plan = self.plan(segments)
        evict = self.fit(plan)
        req = np.concatenate([np.concatenate([new, rest]) for _, new, rest in plan]) if plan else np.zeros(0, np.int64)
        if len(req) == 0:
            return None
        tokens = self.seq[req] - self.kv[req]
        for k, new, _ in plan:                               # advance the selected prompts one stage
            for _ in range(len(new)):
                self.entry[k].popleft()
            if len(self.groups[k]):
                last = self.groups[k].pop()
                self.groups[k].appendleft(new)
            else:
                last = new
            self.leaving.append((k, last))
            self.admitted[new[self.admitted[new] < 0]] = self.clock
            self.clock += 1
        if len(evict):
            self.kv[evict] = 0
        self.kv[req] = self.seq[req]
        self.seq[req] += 1
        return Batch(req, tokens.astype(np.int64), evict if len(evict) else None)

    def fit(self, plan) -> np.ndarray:
        """Make the planned batch leave at most C of KV (the safety net in the module docstring)."""
        C = self.view.memory

        def after(plan, evicted):
            proc = np.concatenate([np.concatenate([new, rest]) for _, new, rest in plan]) if plan else np.zeros(0, np.int64)
            held = int(self.kv.sum()) - int(self.kv[proc].sum()) - int(self.kv[evicted].sum())
            return held + int(self.seq[proc].sum()), proc

        evicted = np.zeros(0, np.int64)
        total, proc = after(plan, evicted)
        while total > C and len(plan) > 1:
            plan.pop()
            total, proc = after(plan, evicted)
        if total > C:
            holders = np.flatnonzero(self.kv > 0)
            holders = holders[~np.isin(holders, proc)]
            for i in holders[np.argsort(-self.admitted[holders], kind="stable")]:
                if total <= C:
                    break
                evicted = np.append(evicted, i)
                total -= int(self.kv[i])
        while total > C and len(plan[0][1]) > 1:
            plan[0][1] = plan[0][1][:-1]
            total, proc = after(plan, evicted)
        if total > C:
            raise InputError(f"policy 'nested-wait': one batch of segment 1 cannot fit in memory {C}")
        return evicted

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        done = set(finished.tolist())
        K = len(self.thresholds)
        leaving = set(i for _, g in self.leaving for i in g.tolist())
        if done - leaving:  # EOS inside a segment (an output length outside the set): leave the pipeline
            for k in range(K):
                for s, g in enumerate(self.groups[k]):
                    self.groups[k][s] = g[~np.isin(g, list(done))]
            self.kv[list(done - leaving)] = 0
        for k, group in self.leaving:
            for i in group.tolist():
                if i in done:
                    self.kv[i] = 0
                elif k + 1 < K:
                    self.entry[k + 1].append(i)
                else:
                    raise InputError(f"policy 'nested-wait': a request ran past the largest output length "
                                     f"{int(self.view.lengths[-1])} of the types block")
        self.leaving = []
