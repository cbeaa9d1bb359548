"""Completion-time relaxations of the seed-004 latency IP (ours, issue 12; slot model, eqs. (1)-(4)).

The time-indexed LP (``latency-lp``) and the volume bounds average the memory ramp s_i+1..s_i+o_i
away, so they sit 20-40 % below the best schedules of the §5.1 draws. The three lemmas below look
at the schedule only at *completion times* C_j = k_j + o_j, where the ramps peak; they need no time
index. Notation: p_j = s_j + o_j (peak footprint), U(t) = memory of eq. (3) at round t, and
vol_j = Σ_{d=1}^{o_j} (s_j + d) (Lemma 4.7).

**Lemma 1 (memory peaks at completions).** Between consecutive completion times no request leaves and
every active footprint grows by one per round (new starts only add), so U is nondecreasing on each
(C_(m-1), C_(m)]: eq. (3) holds at every t iff it holds at every completion time. (MC-SF's check (5)
rests on the same fact.)

**Lemma 2 (pair separation).** If C_h <= C_j then C_j − C_h >= w(h, j) := min(o_j, max(0, p_h + p_j − M)).
*Proof.* If j starts at k_j >= C_h, C_j − C_h >= o_j. Otherwise j is active at C_h with age
α = C_h − k_j ∈ [1, o_j], and eq. (3) at C_h holds h at its peak: p_h + s_j + α <= M, so
C_j − C_h = o_j − α >= o_j − (M − p_h − s_j) = p_h + p_j − M. Both cases give the claim. □

**Lemma 2' (triple separation).** If C_h <= C_j and C_h <= C_k (j ≠ k) then (C_j − C_h) + (C_k − C_h) >=
T(h, j, k) := min(p_h + p_j + p_k − M, o_j + w(h, k), o_k + w(h, j)). *Proof.* If j and k are both
active at C_h, their footprints there, p_j − (C_j − C_h) and p_k − (C_k − C_h), fit beside h's peak:
their sum is at most M − p_h. If j is not, it starts at or after C_h, so C_j − C_h >= o_j, and
C_k − C_h >= w(h, k) by Lemma 2; symmetrically for k. □ It binds for three mid-size requests whose
peaks fit pairwise (w = 0) but not together.

**Lemma 2' in its exact form (the three cases apart).** The proof above is a case split, and T is the least of
its three cases' sums. Kept apart, with δ1 = C_j − C_h, δ2 = C_k − C_j (h, j, k completing in that order), every
schedule has δ1 >= w(h, j), δ2 >= w(j, k) and δ1 + δ2 >= w(h, k) (Lemma 2), and at least one of
  (both active at C_h)  2δ1 + δ2 >= p_h + p_j + p_k − M,
  (k starts at or after C_h)  δ1 + δ2 >= o_k,
  (j starts at or after C_h)  δ1 >= o_j.
This union is exactly the set of gaps that the three requests alone allow: by Lemma 1 their memory need only be
checked at C_h, C_j and C_k; at C_h it is the case split itself (a request active there holds p − x at x rounds
before its completion, one that is not holds nothing), at C_j only j and k can be active (h has left, or δ1 = 0
and the check is the one at C_h), which is δ2 >= w(j, k), and at C_k only k (or the earlier checks again). The
row of Lemma 2' is the least of the three cases' sums 2δ1 + δ2, so a linear objective in (δ1, δ2) with a larger
weight on δ1 can be lower under it than under the union: with j not yet started at C_h, the row allows δ1 =
w(h, j) and a longer δ2, where the case needs δ1 >= o_j. :func:`triple_bonus` minimises over the union.

**Lemma 3 (gap capacity).** For every round t up to the makespan, U(t) <= M − min(M, C⁺(t) − t), where
C⁺(t) is the first completion time >= t. *Proof.* Every request active at t completes at >= t, hence
at >= C⁺(t); so all N(t) of them are still active at C⁺(t), each footprint grown by C⁺(t) − t, and
eq. (3) at C⁺(t) gives U(t) + N(t)·(C⁺(t) − t) <= M. If N(t) = 0 then U(t) = 0. □
So a stretch of g rounds ending at a completion time (and containing no other) carries at most
φ(g) = Σ_{d=0}^{g-1} max(0, M − d) memory-rounds; φ(g) = Mg − g(g−1)/2 for g <= M+1, constant after.
φ̃(y) = (M+½)y − y²/2 on [0, M+½] (constant after) is concave and >= φ at every integer, so m stretches
of total length x carry at most m·φ̃(x/m) (Jensen), and for every y0 ∈ [0, M+½] (tangent of φ̃ at y0)

    m·φ̃(x/m) <= (M + ½ − y0)·x + (y0²/2)·m.                                                    (G)

**Window form.** For a window start τ, the requests with a_j >= τ that complete by time T run all their
rounds in (τ, T] (a start k_j >= a_j >= τ is active from k_j + 1), and (τ, T] splits at the distinct
completion times in it into at most m stretches, m = the number of requests completing in (τ, T]. So
their total volume is at most m·φ̃((T − τ)/m).

Two bounds use these lemmas:

* ``volume-bound`` (closed form, with :func:`least_span`): the k-th smallest completion among the
  requests with a_j >= τ is at least τ + x_k, the least x with (k + q_τ)·φ̃(x/(k + q_τ)) >= V_k
  (V_k: the k smallest volumes among them; q_τ: the requests with a_j < τ, which may complete in the
  window too).
* ``completion-cp`` (:class:`CompletionCP`): minimise Σ_j (C_j − a_j) over completion times and a
  completion order subject to C_j >= a_j + o_j, Lemma 2 for every pair, Lemma 2' for every h and pair
  {j, k} where it says more than Lemma 2 twice (T(h, j, k) > w(h, j) + w(h, k)), and (G) for every request h,
  window τ ∈ W (the first arrival and up to ``windows − 1`` more arrival quantiles) and tangent
  y0 ∈ Y, with m counted as the requests completing by C_h:

      Σ_{j: a_j >= τ, C_j <= C_h} 2·vol_j  <=  (2M + 1 − 2·y0)·(C_h − τ) + y0²·|{j : C_j <= C_h}|
      for h with a_h >= τ.

  Every schedule's completion times and order satisfy these, so its optimum is <= OPT; CP-SAT's proven
  bound on it is a certified lower bound even when CP-SAT stops early. Ties are broken in index order
  (C_h = C_j is allowed only on the h-before-j literal, which Lemma 2 then requires to be w = 0 both
  ways, as it is for any tie). Identical requests (a, s, o) complete in index order (swapping two
  identical requests keeps every constraint and the objective). Completion times are bounded by the
  horizons of ``latency-ip`` ((a), (b)), which keep an optimal schedule. At n = 8 (jaillet-model1 draw 0)
  it equals OPT = 701, where ``latency-lp`` gives 557.3.
"""
from __future__ import annotations

import functools
import time
from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..solvers.base import SolveResult
from ..solvers.cpsat import cp_model, solve_cp
from .base import FORMULATIONS, BuildTimeLimit
from .latency_ip import LatencyIP, canonical_starts, identical_groups, starts_from_schedule
from .volume import VolumeBound, volumes


def pair_separation(s: np.ndarray, o: np.ndarray, M: int) -> np.ndarray:
    """w[h, j] of Lemma 2 for prompts s and outputs o: the least C_j − C_h when h completes no later than j."""
    s, o = np.asarray(s, dtype=np.int64), np.asarray(o, dtype=np.int64)
    p = s + o
    return np.minimum(o[None, :], np.maximum(0, p[:, None] + p[None, :] - M))


def separation(inst) -> np.ndarray:
    """w[h, j] of Lemma 2 for the requests of ``inst`` (:func:`pair_separation`)."""
    return pair_separation(inst.prompt, inst.output, int(inst.memory))


def triple_separation(p: np.ndarray, o: np.ndarray, w: np.ndarray, M: int) -> np.ndarray:
    """T[h, j, k] of Lemma 2': the least (C_j − C_h) + (C_k − C_h) when h completes no later than j and k."""
    return np.minimum.reduce([p[:, None, None] + p[None, :, None] + p[None, None, :] - M,
                              o[None, :, None] + w[:, None, :], o[None, None, :] + w[:, :, None]])


#: the split (s, d) of each gap's weight in the chain of ``chain-bound``: s/d of it to the triple in which the gap
#: comes first, the rest to the one in which it comes second; every cost of that chain is kept in units of 1/d
#: (``chain-bound``'s docstring, "The split", argues the validity of any split and how 5/8 was chosen; 2/3 until
#: 2026-12-01, and still for ``latency-astar``'s (L), ``latency_astar.CHAIN_SPLIT``)
SPLIT = (5, 8)


def triple_bonus(p: np.ndarray, o: np.ndarray, w: np.ndarray, M: int, top: int, dtype=np.int64,
                 deadline: float | None = None, split: tuple[int, int] = SPLIT) -> np.ndarray | None:
    """d·B[c, h, j, k] for c = 2..top−1 (zero below 2), ``split`` = (s, d): the integer minimum of d·a·δ1 + d·b·δ2
    over the gaps that h, j, k alone allow (Lemma 2' in its exact form, module docstring: δ1 >= w(h, j), δ2 >=
    w(j, k), δ1 + δ2 >= w(h, k), and one of 2δ1 + δ2 >= p_h + p_j + p_k − M, δ1 + δ2 >= o_k, δ1 >= o_j), less its
    value at (w(h, j), w(j, k)); d·a = s·c, d·b = (d − s)·(c − 1), or d when c = 2 (the last gap, in no other
    triple, at its whole weight 1). This is the bonus of a triple of consecutive completions in the chains of
    ``latency-astar`` (L), split 2/3, and ``chain-bound``, split ``SPLIT`` = 5/8, whose docstrings derive the
    weights. The minimum over the union is the least of the three cases' minima. In each case, δ2 = max(w(j, k),
    R − 2δ1, S − δ1) at the optimum for its lower bound L1 on δ1 (case 1: L1 = w(h, j), R = p_h + p_j + p_k − M,
    S = w(h, k); case 2: L1 = w(h, j), R = 0, S = o_k >= w(h, k); case 3: L1 = max(w(h, j), o_j), R = 0, S =
    w(h, k)), a convex piecewise-linear function of δ1 (a > 0), so the integer minimum lies at δ1 = L1 or next to
    a breakpoint: the floor or ceiling of (R − w(j, k))/2, S − w(j, k) or R − S, each raised to L1. In cases 2 and
    3 the piece R − 2δ1 <= 0 never binds and the other pieces rise with δ1 (a > b), so δ1 = L1 is their only
    candidate. Until 2026-12-01 the bonus used the single row 2δ1 + δ2 >= T(h, j, k) of Lemma 2' instead of the
    union: on full jaillet draws 24 % of the entries are higher now (tests/test_latency_astar.py compares both
    with an enumeration of the gaps). None once ``deadline`` (a perf_counter time) has passed between two values
    of c: at 102 requests the table takes 1.5-3 s, and more on a loaded machine."""
    n = len(p)
    D1, D2 = triple_excess(p, o, w, M)
    share, unit = split
    B = np.zeros((max(top, 2), n, n, n), dtype=dtype)
    if top > 2:
        B[2] = (2 * share * D1 + unit * D2).min(axis=0)
    P, Q = (share * D1 + (unit - share) * D2).astype(dtype), ((unit - share) * D2).astype(dtype)
    # c > 2: s·c·D1 + (d − s)·(c − 1)·D2 = c·P − Q
    for c in range(3, top):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        np.min(c * P - Q, axis=0, out=B[c])
    return B


def triple_excess(p: np.ndarray, o: np.ndarray, w: np.ndarray, M: int) -> tuple[np.ndarray, np.ndarray]:
    """(D1, D2)[x, h, j, k], x over the 7 candidates of :func:`triple_bonus`: the excess of each candidate gap pair
    over (w(h, j), w(j, k)). For every weight pair a > 0, b > 0 with a >= b, min over x of a·D1 + b·D2 is the integer
    minimum of the weighted excess over the gaps h, j, k alone allow (:func:`triple_bonus`'s docstring); for a < b
    the candidates of cases 2 and 3 are still feasible, so the minimum over them is an upper estimate of that least
    excess, not a bound (callers keep a >= b)."""
    n = len(p)
    shape = (n, n, n)
    w1, w2, whk = (np.broadcast_to(x, shape) for x in (w[:, :, None], w[None, :, :], w[:, None, :]))
    P3 = p[:, None, None] + p[None, :, None] + p[None, None, :] - M                   # case 1's R
    d1 = np.maximum(np.stack([w1, (P3 - w2) // 2, (P3 - w2 + 1) // 2, whk - w2, P3 - whk]), w1)
    d2 = np.maximum.reduce([np.broadcast_to(w2, d1.shape), P3 - 2 * d1, whk - d1])
    late_j = np.maximum(w1, o[None, :, None])                                        # case 3: δ1 >= o_j
    d1 = np.concatenate([d1, w1[None], late_j[None]])
    d2 = np.concatenate([d2, np.maximum(w2, o[None, None, :] - w1)[None],           # case 2: δ1 + δ2 >= o_k
                         np.maximum(w2, whk - late_j)[None]])
    return d1 - w1, d2 - w2


def least_span(volume: np.ndarray, stretches: np.ndarray, M: int) -> np.ndarray:
    """Least x >= 0 with stretches·φ̃(x/stretches) >= volume (Lemma 3), elementwise: the root x = m(h − √(h² −
    2V/m)), h = M + ½, written as 2V / (h + √(h² − 2V/m)), which has no cancellation. Its relative float error
    is below 3·10⁻⁸ (at most √(2ε)·h in the square root where h² ≈ 2V/m, over a denominator >= h), so callers
    round it up with :func:`ceil_below`, never with an absolute tolerance alone (at M ≈ 3.6·10⁸ the old form's
    error exceeded 10⁻⁹ and a bound came out one above the optimum)."""
    h = M + 0.5
    disc = np.maximum(h * h - 2.0 * volume / stretches, 0.0)   # volume <= m·φ̃(M+½) by Lemma 3
    return 2.0 * volume / (h + np.sqrt(disc))


def ceil_below(x, relative: float = 1e-7) -> np.ndarray:
    """⌈x⌉ of a float x computed with relative error below ``relative``, never above the true ⌈x*⌉: the ceiling
    of x lowered by its error bound (and 10⁻⁹), so a bound rounded with it can lose one unit, never gain one."""
    x = np.asarray(x, dtype=np.float64)
    return np.ceil(x - 1e-9 - relative * np.abs(x))


@FORMULATIONS.register("completion-cp")
class CompletionCP(LatencyIP):
    """Lemmas 2 and 3 over completion times, solved by CP-SAT: a certified lower bound on OPT."""
    name = "completion-cp"
    exact = False
    relax = True
    integral_objective = True
    native_backend = "cpsat"
    summary = "completion-time relaxation: pair separation at peaks + gap capacity (ours), CP-SAT: lower bound"
    scalable_alternative = "use --formulation volume-bound for a lower bound that scales"
    windows = 4
    tangents = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
    max_requests = 400   # n² order literals; beyond this the closed-form bounds are the tool
    #: stages (Lemma 2 alone; + (G); + Lemma 2'), each with its share of the time left and the bound of
    #: the stage before as a floor. The triple rows come last: on the first 12 requests of jaillet-model1
    #: draws 0 and 1 a model with all three from the start did not prove its optimum in 15 s, where the
    #: first two prove theirs in seconds (docs/seed004-certification.md)
    stages = ((False, False, 0.4), (True, False, 0.4), (True, True, 1.0))

    def estimate_nonzeros(self) -> int:
        n = self.inst.n
        return n * n * (2 + self.windows * len(self.tangent_points()))

    def check_size(self) -> None:
        if self.inst.n > self.max_requests:
            raise InputError(f"--formulation: completion-cp has one order literal per pair of requests; "
                             f"{self.inst.n} requests is above its limit of {self.max_requests}; "
                             f"{self.scalable_alternative}")
        super().check_size()

    def tangent_points(self) -> list[int]:
        return [y for y in self.tangents if y <= self.inst.memory]

    def window_starts(self) -> np.ndarray:
        a = self.inst.arrival.astype(np.int64)
        taus = np.unique(a)
        if len(taus) > self.windows:
            taus = np.unique(np.quantile(a, np.linspace(0, 1, self.windows + 1)[:-1], method="lower"))
        return taus

    def build(self):
        """Counts the last stage's model (the stages are built in :meth:`solve`, each on its time left)."""
        inst = self.inst
        n = inst.n
        a = inst.arrival.astype(np.int64)
        identical = sum(len(g) * (len(g) - 1) // 2 for g in identical_groups(inst))
        gaps = sum(int(np.count_nonzero(a >= tau)) for tau in self.window_starts()) * len(self.tangent_points())
        self.n_vars = n + n * (n - 1) // 2
        self.n_rows = n * (n - 1) + identical + len(self.triple_rows) + gaps
        return self

    @functools.cached_property
    def triple_rows(self) -> list[tuple[int, int, int, int]]:
        """(h, j, k, T(h, j, k)), j < k, for which Lemma 2' says more than Lemma 2 twice: one row each (computed
        once: ``build`` counts them, the last stage adds them)."""
        inst = self.inst
        s, o = inst.prompt.astype(np.int64), inst.output.astype(np.int64)
        w = separation(inst)
        T = triple_separation(s + o, o, w, int(inst.memory))
        h, j, k = np.nonzero(T > w[:, :, None] + w[:, None, :])
        keep = (j < k) & (h != j) & (h != k)
        return list(zip(h[keep].tolist(), j[keep].tolist(), k[keep].tolist(), T[h[keep], j[keep], k[keep]].tolist()))

    def cp_model(self, capacity: bool, triples: bool, floor: int | None):
        """(model, completion variables): Lemma 2 for every pair; (G) too when ``capacity``, Lemma 2' when
        ``triples``; the objective Σ_j C_j (total latency + Σ_j a_j) at least ``floor`` when given."""
        inst = self.inst
        n = inst.n
        a = inst.arrival.astype(np.int64)
        s, o, M = inst.prompt.astype(np.int64), inst.output.astype(np.int64), int(inst.memory)
        w = separation(inst)
        vol2 = (2 * s * o + o * (o + 1)).astype(np.int64)      # 2·vol_j, integral
        last = self.horizon()
        m = cp_model.CpModel()
        C = [m.NewIntVar(int(a[j] + o[j]), int(last[j] + o[j]), f"C{j}") for j in range(n)]
        before = [[None] * n for _ in range(n)]                 # before[j][h]: literal of C_j <= C_h
        identical = {(i, j) for g in identical_groups(inst) for i in g for j in g if i < j}
        # Lemma 2 for every pair, ties broken in index order
        for h in range(n):
            for j in range(h + 1, n):
                b = m.NewBoolVar(f"b{h}_{j}")                   # b: C_h <= C_j;  not b: C_j < C_h
                m.Add(C[j] >= C[h] + int(w[h, j])).OnlyEnforceIf(b)
                m.Add(C[h] >= C[j] + max(1, int(w[j, h]))).OnlyEnforceIf(b.Not())
                if (h, j) in identical:
                    m.Add(b == 1)                               # identical requests complete in index order
                before[h][j], before[j][h] = b, b.Not()
        # Lemma 2' for h completing before both j and k, where it says more than Lemma 2 twice
        if triples:
            for row, (h, j, k, t) in enumerate(self.triple_rows):
                if row % 4096 == 0:
                    self.check_build_deadline(f"{row} triple rows built")
                m.Add(C[j] + C[k] - 2 * C[h] >= t).OnlyEnforceIf([before[h][j], before[h][k]])
        # (G) gap capacity, per request h, window τ and tangent y0
        if capacity:
            one = m.NewConstant(1)
            for tau in self.window_starts():
                for h in np.flatnonzero(a >= tau):
                    lits = [one if j == h else before[j][h] for j in range(n)]
                    for y0 in self.tangent_points():
                        coef = [int(vol2[j]) * int(a[j] >= tau) - y0 * y0 for j in range(n)]
                        m.Add(cp_model.LinearExpr.WeightedSum(lits, coef) <= (2 * M + 1 - 2 * y0) * (C[h] - int(tau)))
        # (1) total latency (Σ a_j subtracted in the report)
        if floor is not None:
            m.Add(sum(C) >= int(floor))
        m.Minimize(sum(C))
        return m, C

    def solve(self, profile, warm_schedule=None) -> SolveResult:
        """Three stages on one time limit (``stages``): Lemma 2 alone (CP-SAT often proves it in seconds at
        n <= 12), then + (G), then + Lemma 2', each with the bound of the stage before as a floor (valid:
        adding constraints cannot lower the optimum). The reported bound is the best proven one, never
        below ``volume-bound``."""
        if profile.backend != "cpsat":
            raise InputError(f"--solver: formulation 'completion-cp' is a CP-SAT model; choose a cpsat profile, "
                             f"got {profile.name!r} ({profile.backend})")
        t0 = time.perf_counter()
        shift = float(self.inst.arrival.sum())
        hint = None
        if warm_schedule is not None:
            starts = starts_from_schedule(self.inst, warm_schedule)
            hint = None if starts is None else canonical_starts(self.inst, starts) + self.inst.output  # ties in index order
        floor, stages = None, []
        for capacity, triples, share in self.stages:
            left = profile.time_limit - (time.perf_counter() - t0)
            if left <= 0.5:
                break
            name = 'pairs' + '+gaps' * capacity + '+triples' * triples
            self.build_deadline = t0 + profile.time_limit - 0.5   # the stage's own half second to solve
            try:
                m, C = self.cp_model(capacity, triples, floor)
            except BuildTimeLimit as e:
                stages.append(f"{name}: not built in the time left ({e.done})")
                break
            if hint is not None:
                for var, c in zip(C, hint):
                    m.AddHint(var, int(c))
            res = solve_cp(m, replace(profile, time_limit=max(0.5, share * left)), lambda solver: None)
            stages.append(f"{name}: {res.status}")
            if res.bound is not None:
                floor = max(floor or 0, int(np.ceil(res.bound - 1e-6)))
            if res.status in ("interrupted", "infeasible", "error"):
                break
            if triples and res.status == "optimal":
                stages[-1] += " (relaxation optimum)"
        bound = max(VolumeBound(self.inst).value(), (floor - shift) if floor is not None else -np.inf)
        done = bool(stages) and stages[-1].endswith("(relaxation optimum)")
        stopped = "interrupted" if stages and "interrupted" in stages[-1] else "time_limit"
        return SolveResult("optimal" if done else stopped,
                           bound, bound, time.perf_counter() - t0, None, "; ".join(stages))

    def extract(self, x):
        return None

    def warm_start(self, schedule):
        return schedule

