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

Thresholds (seed 001 (12), Lemma 8, (14); notes §3.5, §4.3, §6.6-6.7). With Λ_k = Σ_{j>=k} λ_j and
p_k = Λ_{k+1} / Λ_k (the main text's index), Theorem 2 assumes
  (12) line 1   ΔT_{[1..m]}(n) = d_0 + d_1 M^π < n_1 / Λ_1      (segment 1's entry queue drifts down),
  (12) line 2   n_{k+1} / n_k > p_k, k = 1..m-1                 (every boundary queue drifts down),
  Lemma 8       n_{k+1} < n_k (with line 2, θ_k of (20) exists and is > 0; the notes' missing condition),
  (14)          C >= M^π + Σ_{k>=2} (l + l'_{k-1}) (n_k + θ_k^{-1} ln(m B / δ)),
with the corrected M^π = Σ_k n_k Σ_{s∈S_k} (l + s) and l = the largest prompt of the types (notes §6.13).
Default (:func:`default_thresholds`): the least n_1, then each n_{k+1} the least integer with
n_k p_k < n_{k+1} < n_k from which the later segments can still meet both (:func:`chain_thresholds`), such
that (12) lines 1-2, Lemma 8 and (14) with δ = 0.01 and B = 1 + T/d_0 (T the last arrival) all hold; all four
are guaranteed (tests/test_nested_thresholds.py). If no n_1 whose (14) terms 1-2 fit C meets them,
InputError names the failed condition. The paper's own §5.2 / §6.3 rule n_k ∝ Λ_k (ratios 15:14:12:8,
66:43:...) sits *on* line 2 (n_{k+1}/n_k = p_k), and rounding it up can fall below p_k (§5.2 at n_1 = 9:
(9, 9, 8, 5), n_4/n_3 = 0.625 < p_3 = 2/3, whose last boundary queue grows without bound); it is no
longer the default. ``--param n1=`` fixes n_1 and takes the rest of the chain; ``--param n1=.. n2=.. ..
nm=`` gives every threshold. Given thresholds run as given, but a :class:`ThresholdWarning` names every
violated condition, also kept in the policy's ``threshold_violations`` (:func:`threshold_violations`).
The overflow probability behind (14)'s term 3 is the paper's; the safety net below covers misses.
:func:`memory_requirement` gives (14)'s three terms.

Memory safety net (not in the paper, which evicts LIFO when (2) would fail; Theorem 2 only bounds the
probability): if the planned batch would leave more than C of KV, the deepest segments leave the
batch first; then waiting KV holders are evicted LIFO by admission (recompute, lpbench semantics);
then new prefills are dropped. End of horizon: after the last arrival every segment with work runs
(the flush of :mod:`lpbench.throughput`).
"""
from __future__ import annotations

import math
import re
import warnings
from collections import deque
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, LpbenchWarning
from ..fluid import linear_coefficients
from ..sim import Batch
from .base import POLICIES, Param, Policy
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


class ThresholdWarning(LpbenchWarning):
    """Given thresholds violate a condition of Theorem 2 ((12), Lemma 8, (14)); the run goes on with them."""


STRICT = 1e-9  # relative margin that makes (12)'s strict "n_{k+1}/n_k > p_k" robust to float rates


def tail_rates(view: BlindView) -> np.ndarray:
    """Λ_k = Σ_{j>=k} λ_j, k = 1..m."""
    return np.cumsum(view.rates[::-1])[::-1]


def thinning(view: BlindView) -> np.ndarray:
    """p_k = Λ_{k+1} / Λ_k, k = 1..m-1 (the main text's index in (12); the appendix's p_{k+1})."""
    Lam = tail_rates(view)
    return Lam[1:] / Lam[:-1]


def _above(x: float) -> int:
    """The least integer strictly above x, with the margin STRICT."""
    return int(math.floor(x * (1 + STRICT) + 1e-12)) + 1


def _least_chain(p: np.ndarray) -> list[int]:
    """lo_k: the least n_k that some n_{k+1} >= lo_{k+1} with n_k p_k < n_{k+1} < n_k can follow (lo_m = 1)."""
    lo = [1]
    for q in p[::-1]:
        if not q < 1 - 1e-9 or lo[0] >= 10**15:   # a zero rate: n_k p_k < n_{k+1} < n_k has no solution
            lo.insert(0, 10**15)
            continue
        x = max(lo[0] + 1, int(math.floor((1 + STRICT) / (1 - q))))
        while max(lo[0], _above(x * q)) >= x:
            x += 1
        lo.insert(0, x)
    return lo


def chain_thresholds(view: BlindView, n1: int) -> np.ndarray:
    """n_1 given; n_k (k >= 2) the least integer meeting (12)'s second line n_k > p_{k-1} n_{k-1} and Lemma 8's
    n_k < n_{k-1}, and from which n_{k+1}..n_m can still meet both. Where none is below n_{k-1} (n_1 too small),
    n_k = max(1, least integer > p_{k-1} n_{k-1}), which breaks Lemma 8 (:func:`threshold_violations` says so).
    Each n_k is the least of all valid choices, so M^π and (14)'s terms 1-2 are the least for this n_1."""
    p = thinning(view)
    lo = _least_chain(p)
    n = [int(n1)]
    for k, q in enumerate(p, start=1):
        x = max(lo[k], _above(n[-1] * q))
        n.append(x if x < n[-1] else max(1, _above(n[-1] * q)))
    return np.array(n, dtype=np.int64)


def horizon_iterations(view: BlindView) -> float:
    """B of (14): iterations over the arrivals' horizon T, at most 1 + T / d_0 (each takes >= d_0)."""
    T = float(view.arrival.max()) if len(view.arrival) else 0.0
    return 1.0 + T / view.d0 if view.d0 > 0 else math.inf


def threshold_violations(view: BlindView, n, delta: float = 0.01) -> list[str]:
    """One line per condition of Theorem 2 that thresholds ``n`` violate (empty: all hold): n_k >= 1; (12)'s
    first line d_0 + d_1 M^π < n_1 / Λ_1; its second line n_{k+1}/n_k > p_k (with the margin STRICT); Lemma 8's
    n_{k+1} < n_k; (14) with the corrected M^π, B = :func:`horizon_iterations` and ``delta``."""
    n = np.asarray(n, dtype=np.int64)
    Lam, p = tail_rates(view), thinning(view)
    out = []
    if (n < 1).any():
        out.append(f"thresholds must be >= 1, got {n.tolist()}")
        return out
    l = float(view.prompt.max()) if len(view.prompt) else 0.0
    M_pi = float(n @ segment_memory(view.lengths, l))
    dT = view.d0 + view.d1 * M_pi
    if not dT < n[0] / Lam[0]:
        out.append(f"(12) first line: d0 + d1 M^pi = {dT:.6g} is not < n_1 / Lambda_1 = {n[0] / Lam[0]:.6g}")
    for k, q in enumerate(p, start=1):
        if not n[k] > n[k - 1] * q * (1 + STRICT):
            out.append(f"(12) second line: n_{k + 1}/n_{k} = {n[k]}/{n[k - 1]} = {n[k] / n[k - 1]:.4g} is not "
                       f"> p_{k} = Lambda_{k + 1}/Lambda_{k} = {q:.4g}")
        if not n[k] < n[k - 1]:
            out.append(f"Lemma 8: n_{k + 1} = {n[k]} is not < n_{k} = {n[k - 1]}")
    req = memory_requirement(view, n, horizon_iterations(view), delta)
    if req["M_pi"] + req["term2_queue"] > view.memory:
        out.append(f"(14): its terms 1-2 M^pi + sum_k (l + l'_(k-1)) n_k = {req['M_pi'] + req['term2_queue']:.6g} "
                   f"are above memory {view.memory}")
    elif math.isfinite(req["total"]) and req["total"] > view.memory:   # infinite: a violation above (theta_k = 0)
        out.append(f"(14): M^pi + sum_k (l + l'_(k-1))(n_k + ln(m B / delta) / theta_k) = {req['total']:.6g} "
                   f"(delta = {delta:g}, B = {horizon_iterations(view):.6g}) is above memory {view.memory}")
    return out


def default_thresholds(view: BlindView, delta: float = 0.01) -> np.ndarray:
    """The least n_1 whose :func:`chain_thresholds` have no :func:`threshold_violations`: (12) lines 1-2,
    Lemma 8 and (14) at ``delta`` all hold.

    n_1 runs up from the least value that admits a strictly decreasing chain, and stops once (14)'s terms 1-2
    M^π + Σ_{k>=2} (l + l'_{k-1}) n_k (which grow with n_1) pass C; then InputError names the condition that
    failed."""
    l = float(view.prompt.max()) if len(view.prompt) else 0.0
    per, boundary = segment_memory(view.lengths, l), l + view.lengths[:-1]
    start = _least_chain(thinning(view))[0]
    if start >= 10**15:
        raise InputError("policy 'nested-wait': no thresholds meet (12)'s second line n_(k+1)/n_k > p_k and Lemma 8's "
                         "n_(k+1) < n_k: some p_k = Lambda_(k+1)/Lambda_k is within 1e-9 of 1 (a rate next to 0); "
                         "pass --param n1=")
    met12 = False
    for x in range(start, start + 10**6):
        n = chain_thresholds(view, x)
        if float(n @ per) + float(boundary @ n[1:]) > view.memory:
            break
        bad = threshold_violations(view, n, delta)
        if not bad:
            return n
        met12 = met12 or not any(b.startswith("(12) first line") for b in bad)
    if x == start:
        raise InputError(f"policy 'nested-wait': no thresholds meet (12)'s second line n_(k+1)/n_k > p_k and Lemma 8's "
                         f"n_(k+1) < n_k with (14)'s terms 1-2 within memory {view.memory} (the least, {n.tolist()}, "
                         f"need {float(n @ per) + float(boundary @ n[1:]):.6g}); pass --param n1=")
    if not met12:
        raise InputError(f"policy 'nested-wait': no n_1 meets (12)'s first line d0 + d1 M^pi < n_1 / Lambda_1 with "
                         f"(14)'s terms 1-2 within memory {view.memory}; pass --param n1=")
    raise InputError(f"policy 'nested-wait': no thresholds meeting (12) and Lemma 8 meet (14) (delta = {delta:g}, "
                     f"B = {horizon_iterations(view):.6g}) within memory {view.memory}; pass --param n1=")


@POLICIES.register("nested-wait")
class NestedWait(Policy):
    name = "nested-wait"
    explicit_only = True
    summary = "seed 001 Alg. 2 Nested WAIT: segments by output length, prefix rule, boundary queues on GPU; blind to own lengths"

    #: n1 alone (the rest follow from it), or every n_k of n1..nm (one per output length of the types block)
    params = {"n1": Param("int", "a segment's threshold (n1 alone, or all of n1..nm)", lo=1)}

    @classmethod
    def param(cls, key):
        return cls.params["n1"] if re.fullmatch(r"n[1-9][0-9]*", key) else None

    def __init__(self, n1: float | None = None, **kw):
        given = {k: kw.pop(k) for k in [k for k in kw if re.fullmatch(r"n[1-9][0-9]*", k)]}
        super().__init__(**kw)
        if n1 is not None:
            given["n1"] = n1
        if given and "n1" not in given:
            raise InputError(f"--param: {', '.join(sorted(given))} given without n1; give n1 alone or every n_k")
        self.n1 = None if n1 is None else int(n1)
        self.given = {int(k[1:]): int(v) for k, v in given.items()}

    def reset(self, inst, st) -> None:  # keeps neither inst nor st: see BlindView
        v = self.view = BlindView.of(inst)                   # its types block and linear cost model first
        refuse_batch_limits(self.name, inst)
        if inst.eviction == "restart":                       # its segments keep a request's stage through an eviction
            raise InputError("eviction: policy 'nested-wait' keeps an evicted prompt at its stage (its memory safety "
                             "net recomputes, not in the paper), so it refuses 'restart'; remove it")
        m = len(v.lengths)
        if len(self.given) > 1 and sorted(self.given) != list(range(1, m + 1)):
            raise InputError(f"--param: give n1 alone or all of n1..n{m} (one per output length of the types "
                             f"block), got {', '.join(f'n{k}' for k in sorted(self.given))}")
        if self.n1 is None:
            self.thresholds = default_thresholds(v)
        elif len(self.given) > 1:
            self.thresholds = np.array([self.given[k] for k in range(1, m + 1)], dtype=np.int64)
        else:
            self.thresholds = chain_thresholds(v, self.n1)
        #: Theorem 2's conditions these thresholds violate (empty for the default thresholds); given ones run anyway
        self.threshold_violations = threshold_violations(v, self.thresholds)
        if self.threshold_violations:
            warnings.warn(f"policy 'nested-wait': thresholds {self.thresholds.tolist()} violate "
                          + "; ".join(self.threshold_violations) + " (running them as given)",
                          ThresholdWarning, stacklevel=2)
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
