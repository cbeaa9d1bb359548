"""Volume chain bound (ours, issue 12; slot model, eqs. (1)-(4)): Lemma 2 along the completion order of the
large requests, and Lemma 3's memory volume along the completion order of all of them, in one programme.

``chain-bound`` charges each set U of large requests its chain and the requests left out their own
``volume-bound``, as if the two groups ran on separate machines. In the best schedules at paper size the small
requests run first and the chain of large ones starts late, and it is the memory volume that forces that: the
first k completions hold their whole volume before C_(k) (``python benchmarks/order_relaxation_probe.py`` measures
what the volume rows add on a fixed order). This bound sees both along one merged order.

**Rows.** Take any schedule; let e be its completion order (ties in any order), n = |R|, t0 = min a, and
δ_1 = C_(1) − t0, δ_l = C_(l) − C_(l−1). With W_l = n − l + 1,

    Σ_j (C_j − a_j) = Σ_l W_l·δ_l − Σ_j (a_j − t0).                                                  (i)

Let U = {j : 2·p_j > M} (p = s + o; every pair of U has w > 0) and D the other requests. Along e:

* (ii) the first member j of U at position l: Σ_{i<=l} δ_i = C_j − t0 >= c_j = a_j − t0 + o_j (eq. (2));
  consecutive members h, j of U at positions l0 < l1: Σ_{l0<i<=l1} δ_i = C_j − C_h >= w(h, j) (Lemma 2 of
  :mod:`lpbench.formulations.completion`, members of D in between or not);
* (iii) for every k: Σ_{l<=k} vol_{e_l} <= Σ_{l<=k} φ(δ_l), φ(δ) = Σ_{d<δ} max(M − d, 0): the first k
  completions run all their rounds in (t0, C_(k)], and in a stretch (C_(l−1), C_(l)] memory is at most
  M − d at d rounds before its end (Lemma 3: all that is active then is active at C_(l), each grown by d).

**Lagrangian.** Price (iii) with μ_k >= 0 and write ν_l = Σ_{k>=l} μ_k (non-increasing, >= 0). The D volumes
in the first k positions sum to at least the d_k smallest D volumes, so with vol'_l the U volume at a U
position and the d-th smallest D volume at the d-th D position,

    total >= Σ_l [W_l·δ_l − ν_l·φ(δ_l) + ν_l·vol'_l] + Σ_{j∈U} λ_j·(visits_j − 1) − Σ_j (a_j − t0)

for every λ ∈ R^U (each member of U is visited once). Minimising over every sequence of |U| visits of U (no
request twice in a row) and |D| anonymous D positions, and over integer δ >= 0 under (ii), gives a lower
bound for every (λ, ν) (weak duality; the schedule's own sequence is one of those minimised over).

**The programme.** g_l(δ) = W_l·δ − ν_l·φ(δ) is convex (φ is concave), so a block of consecutive gaps
l..l+q whose sum must reach x costs Blk[l, q, x] = Σ g_i(δ*_i) plus the x − Σ δ*_i cheapest unit increments
above the unconstrained minimisers δ*_i (greedy is exact for a separable convex objective under one sum
row). A dynamic programme over (members of U placed, members of D placed, last member of U) adds one member
of U and the q members of D before it per step: O(|U|³·|D|²) per evaluation, compiled by numba, about 0.009 s
at 53 requests (``SECONDS_PER_UNIT``; 0.13 s in numpy).
The multipliers live on a grid of 1/``GRID`` (ν as integers over ``GRID``), so every cost is a multiple of
1/``GRID`` far below 2⁵³ and the float64 programme is exact; the bound is its value rounded up (the
objective is an integer). λ and μ are searched by projected subgradient ascent: g_λ = visits − 1,
g_μ = the cumulative violations of (iii) along the minimising sequence, until the step factor falls below
``THETA_MIN`` or the best value levels off (``PLATEAU``); every iterate gives a valid bound, so where it stops
changes only how high the bound is.

Tests (``tests/test_volume_chain.py``): for random multipliers the programme equals a brute force over all
merged sequences of small sets; the bound is <= the brute-force optimum on random small instances.
"""
from __future__ import annotations

import time

import numpy as np

from ..semantics import SLOT
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm
from .compiled import compiled
from .completion import pair_separation
from .volume import VolumeBound

GRID = 1 << 12          # multipliers are multiples of 1/GRID: every cost is an exact float64 ...
EXACT = 2.0 ** 50       # ... as long as each of its three parts (``MergedChain.caps``) times GRID stays below this
PATIENCE = 8            # steps without improvement before the step factor halves (from the best multipliers)
THETA_MIN = 2.0 ** -9   # stop when the step factor falls below this
#: or when the best value rose by less than PLATEAU (relative) over the last WINDOW evaluations: the tail of the
#: ascent is slow (full jaillet-model1 draw 0: 10,203 after 100 evaluations, 10,257 after 200, 10,261 at the
#: stall after 270; jaillet-model2 draw 20: 5,254 after 400, 5,266 after 800, still rising after 6,000), and
#: in the certify step that time is worth more to ``chain-bound``
PLATEAU, WINDOW = 1e-3, 50
#: seconds per unit of |U|·|D|²/2·|U|² in one evaluation, doubled (0.009 s for |U| = 30, |D| = 23 on the 2-core
#: machine: 197 evaluations in 1.8 s, ``lpbench solve F --formulation volume-chain-bound --time-limit 20`` on
#: jaillet-model1 draw 0): the ascent is not started when fewer than ``MIN_EVALUATIONS`` fit in the time left
SECONDS_PER_UNIT = 2.5e-9
MIN_EVALUATIONS = 50


def phi(delta, M: int) -> np.ndarray:
    """φ(δ) = Σ_{d<δ} max(M − d, 0), the memory-rounds a stretch of δ rounds can hold (Lemma 3)."""
    d = np.minimum(np.asarray(delta, dtype=np.int64), M + 1)
    return M * d - d * (d - 1) // 2


@compiled
def _block_costs(marg, ds, g, Q, X):
    """Blk[l, q, x] of the module docstring: the gaps l..l+q with their least sum x (x <= X). Each row of
    ``marg`` (the marginal costs above δ*) is non-decreasing, so the X cheapest increments of gaps l..l+q are
    the X cheapest of those of gaps l..l+q−1 merged with the first X of row l+q."""
    n = marg.shape[0]
    blk = np.full((n, Q + 1, X + 1), np.inf)
    pool = np.empty(X)
    merged = np.empty(X)
    for l in range(n):
        base, floor = 0.0, 0
        for q in range(min(Q, n - 1 - l) + 1):
            row = marg[l + q]
            if q == 0:
                pool[:] = row[:X]
            else:
                i = j = 0
                for k in range(X):
                    if pool[i] <= row[j]:
                        merged[k] = pool[i]
                        i += 1
                    else:
                        merged[k] = row[j]
                        j += 1
                pool[:] = merged
            base += g[l + q]
            floor += ds[l + q]
            cum = base
            for x in range(X + 1):
                if x > floor:
                    cum += pool[x - floor - 1]
                blk[l, q, x] = cum
    return blk


@compiled
def _merge_dp(P, src, blk, w, u_cost, nu, vol_d):
    """Fill P[u + 1] from P[u] for u = 1..m−1 (the DP of the module docstring): P[u, q, j] is the least cost of
    the first u + q positions holding u members of U, the last of them j, and q members of D. ``src`` records
    (members of D before, last member of U before, members of D added) of each minimiser; ties go to the
    least q, then the least last member."""
    m, nD, n = P.shape[0] - 1, P.shape[1] - 1, blk.shape[0]
    w_to = np.ascontiguousarray(w.T)                                   # w_to[next, last] = w(last, next)
    for u in range(1, m):
        for q in range(nD + 1):
            pos = u + q
            if pos >= n:
                continue
            here = P[u, q]
            d_cost = 0.0
            for added in range(min(nD - q, n - pos - 1) + 1):
                costs = blk[pos, added]
                for nxt in range(m):
                    best, arg = np.inf, -1
                    for last in range(m):
                        if last != nxt:
                            v = here[last] + costs[w_to[nxt, last]]
                            if v < best:
                                best, arg = v, last
                    v = best + d_cost + u_cost[pos + added, nxt]
                    if v < P[u + 1, q + added, nxt]:
                        P[u + 1, q + added, nxt] = v
                        src[u + 1, q + added, nxt, 0] = q
                        src[u + 1, q + added, nxt, 1] = arg
                        src[u + 1, q + added, nxt, 2] = added
                d_cost += nu[pos + added] * vol_d[q + added]


class MergedChain:
    """The programme of the module docstring for one instance and one split U / D (``large``: mask of U)."""

    def __init__(self, a, s, o, M: int, large: np.ndarray):
        a, s, o = (np.asarray(v, dtype=np.int64) for v in (a, s, o))
        self.n, self.M = len(s), int(M)
        t0 = int(a.min())
        self.offset = int((a - t0).sum())
        vol = s * o + o * (o + 1) // 2
        self.U, self.D = np.nonzero(large)[0], np.nonzero(~large)[0]
        self.m, self.nD = len(self.U), len(self.D)
        w = np.asarray(pair_separation(s, o, self.M), dtype=np.int64)
        self.w = w[np.ix_(self.U, self.U)]
        self.c = (a - t0 + o)[self.U]
        self.vol_u = vol[self.U].astype(np.float64)
        self.vol_d = np.sort(vol[self.D]).astype(np.float64)
        self.X = int(max(self.w.max(initial=0), self.c.max(initial=0))) + 1   # largest sum a block needs, + 1
        self.W = np.arange(self.n, 0, -1, dtype=np.int64)                     # W_l, position l = index + 1

    def caps(self) -> tuple[float, float] | None:
        """(cap on ν_1 = Σ μ, cap on |λ_j|) that keep every cost of an evaluation an exact float64 multiple of
        1/GRID: a cost is at most n²·max(X, M + 1) (the W_l·δ terms) + ν_1·(n·φ(M + 1) + Σ vol) (the ν terms)
        + n·max|λ| (the visits), and each part times GRID stays below EXACT. Capping the multipliers keeps the
        bound valid (weak duality holds for every λ and every non-increasing ν >= 0). None where the first part
        alone is too large (n²·M near 2^38 and more): the programme is then not run."""
        n, M = self.n, self.M
        if n * n * max(self.X, M + 1) * GRID >= EXACT or M * (M + 1) >= 2 ** 62:   # (φ in int64 too)
            return None
        nu_scale = n * M * (M + 1) / 2 + float(self.vol_u.sum() + self.vol_d.sum())
        return EXACT / GRID / max(nu_scale, 1.0), EXACT / GRID / n

    def units(self) -> float:
        """The work of one evaluation in the units of ``SECONDS_PER_UNIT``."""
        return self.m * max(self.nD, 1) ** 2 / 2 * self.m ** 2 + self.n * self.nD * self.X

    def blocks(self, nu_i: np.ndarray):
        """Blk[l, q, x] of the module docstring for ν = nu_i / GRID (position l is the block's first gap, 0-based),
        with δ*, g(δ*) and the marginal costs above δ* per position."""
        n, M, X, Q = self.n, self.M, self.X, self.nD
        nu = nu_i / GRID
        WG = self.W * GRID
        ds = np.where(nu_i > 0, np.maximum(0, M - WG // np.maximum(nu_i, 1)), 0)   # least δ with g' >= 0
        g = self.W * ds - nu * phi(ds, M)
        marg = self.W[:, None] - nu[:, None] * np.maximum(M - (ds[:, None] + np.arange(X)[None, :]), 0)
        blk = _block_costs(marg, ds, g, Q, X)
        return blk, ds, g, marg

    def evaluate(self, lam: np.ndarray, nu_i: np.ndarray):
        """(value of the programme less Σ λ, visits per member of U, δ per position, vol' per position) for λ
        (multiples of 1/GRID) and ν = nu_i / GRID (non-increasing integers >= 0). The value excludes the
        −Σ (a_j − t0) of (i)."""
        n, m, nD, X = self.n, self.m, self.nD, self.X
        blk, ds, g, marg = self.blocks(nu_i)
        nu = nu_i / GRID
        vol_d = self.vol_d
        P = np.full((m + 1, nD + 1, m), np.inf)
        src = np.full((m + 1, nD + 1, m, 3), -1, dtype=np.int64)       # (D placed before, last U before, D added)
        u_cost = nu[:, None] * self.vol_u[None, :] + lam[None, :]       # [position, member of U]
        d_cum = np.concatenate([[0.0], np.cumsum(nu[:nD] * vol_d)])
        for q in range(min(nD, n - 1) + 1):                            # q members of D, then the first of U
            P[1, q] = blk[0, q][np.minimum(self.c, X)] + d_cum[q] + u_cost[q]
            src[1, q, :, 2] = q
        _merge_dp(P, src, blk, self.w, u_cost, nu, vol_d)
        best, end = np.inf, None
        for q in range(nD + 1):                                        # the members of D after the last of U
            pos, rest = m + q, nD - q
            tail = float(g[pos:pos + rest].sum() + (nu[pos:pos + rest] * vol_d[q:]).sum())
            j = int(P[m, q].argmin())
            if P[m, q, j] + tail < best:
                best, end = P[m, q, j] + tail, (q, j)
        # the minimising sequence, for the subgradients
        q, j = end
        blocks = []
        for u in range(m, 0, -1):
            q_prev, j_prev, added = src[u, q, j]
            if u == 1:
                blocks.append((0, added, min(int(self.c[j]), X), j))
            else:
                blocks.append((u - 1 + q_prev, added, int(self.w[j_prev, j]), j))
            q, j = q_prev, j_prev
        blocks.reverse()
        delta = ds.copy()
        vol_p = np.zeros(n)
        d = 0
        for first, added, x, member in blocks:
            gaps = np.arange(first, first + added + 1)
            extra = x - int(ds[gaps].sum())
            if extra > 0:
                cheapest = np.argsort(marg[gaps], axis=None, kind="stable")[:extra] // X
                np.add.at(delta, gaps[cheapest], 1)
            vol_p[first:first + added] = vol_d[d:d + added]
            d += added
            vol_p[first + added] = self.vol_u[member]
        vol_p[n - (nD - d):] = vol_d[d:]
        visits = np.bincount([b[3] for b in blocks], minlength=m)
        return best - float(lam.sum()), visits, delta, vol_p

    def ascent(self, deadline: float, target: float) -> tuple[int, int]:
        """(best bound on Σ_j (C_j − a_j) found before ``deadline``, evaluations). ``target``: an estimate of
        the optimum (a verified schedule's total latency) for the Polyak steps."""
        m, n, M = self.m, self.n, self.M
        nu_cap, lam_cap = self.caps()
        lam = np.zeros(m)
        mu = np.zeros(n)
        best, best_at, theta, stall, evaluations = -np.inf, (lam, mu), 1.0, 0, 0
        history = []                                                   # the best value after each evaluation
        goal = target + self.offset
        while time.perf_counter() < deadline:
            lam = np.round(np.clip(lam, -lam_cap, lam_cap) * GRID) / GRID
            if mu.sum() > nu_cap:                                      # ν_1 = Σ μ within the exact range
                mu = mu * (nu_cap / mu.sum())
            nu_i = np.floor(np.cumsum(mu[::-1])[::-1] * GRID).astype(np.int64)   # non-increasing, >= 0
            value, visits, delta, vol_p = self.evaluate(lam, nu_i)
            evaluations += 1
            improved = value > best + 1e-9
            if improved:
                best, best_at, stall = value, (lam.copy(), mu.copy()), 0
            history.append(best)
            if evaluations > WINDOW and best - history[-1 - WINDOW] < PLATEAU * abs(best):
                break
            if not improved:
                stall += 1
                if stall >= PATIENCE:
                    theta, stall = theta / 2, 0
                    lam, mu = best_at[0].copy(), best_at[1].copy()
                    if theta < THETA_MIN:
                        break
                    continue
            g_lam = visits - 1.0
            g_mu = np.cumsum(vol_p - phi(delta, M))
            g_mu[(mu <= 0) & (g_mu < 0)] = 0.0
            step = theta * max(goal - value, 1.0)
            if g_lam.any():
                lam = lam + step / float(g_lam @ g_lam) * g_lam
            if g_mu.any():
                mu = np.maximum(0.0, mu + step / float(g_mu @ g_mu) * g_mu)
        if not np.isfinite(best):
            return 0, evaluations
        return int(np.ceil(best - 1e-9)) - self.offset, evaluations


def volume_chain_bound(inst, deadline: float, target: float | None = None) -> tuple[int, str]:
    """(certified lower bound on total latency, what gave it): the larger of ``volume-bound`` and the ascent of
    the module docstring until ``deadline``. ``target``: a verified schedule's total latency, if known."""
    a, s, o = (np.asarray(x, dtype=np.int64) for x in (inst.arrival, inst.prompt, inst.output))
    M = int(inst.memory)
    best = (int(round(VolumeBound(inst).value())), "volume-bound")
    large = 2 * (s + o) > M
    if not large.any():
        return best
    programme = MergedChain(a, s, o, M, large)
    if programme.caps() is None:
        return best[0], f"{best[1]} (memory {M} too large for the programme's exact arithmetic)"
    if programme.units() * SECONDS_PER_UNIT * MIN_EVALUATIONS > deadline - time.perf_counter():
        return best
    if target is None:
        target = 1.25 * best[0]
    value, evaluations = programme.ascent(deadline, target)
    if value > best[0]:
        best = (value, f"|U| = {programme.m} requests with 2p > M, {programme.nD} in D; {evaluations} evaluations")
    return best


@FORMULATIONS.register("volume-chain-bound")
class VolumeChainBound(ClosedForm):
    name = "volume-chain-bound"
    models = (SLOT,)
    exact = False
    integral_objective = True
    summary = ("Lemma 2 along the completion order of the requests with 2p > M and Lemma 3's volume along all "
               "completions, by Lagrangian relaxation (ours): lower bound")
    max_requests = 110
    scalable_alternative = "use --formulation volume-bound or lagrange-bound, which scale"

    def solve(self, profile, warm=None) -> SolveResult:
        """Status "optimal" when the ascent stalled before the limit, "time_limit" when the limit cut it short
        (the bound is valid either way)."""
        t0 = time.perf_counter()
        deadline = t0 + 0.95 * profile.time_limit
        bound, which = volume_chain_bound(self.inst, deadline)
        status = "time_limit" if time.perf_counter() >= deadline else "optimal"
        return SolveResult(status, float(bound), float(bound), time.perf_counter() - t0, message=which)
