"""Lagrangian relaxation of the memory rows (3) of the seed-004 IP (slot model): the LP bound at any size.

Price each memory row (3) at time t with λ_t >= 0 and move it into the objective (1). What remains is
constraint (2) alone, which separates by request: request i picks the start k >= a_i minimising

    cost_i(k; λ) = (k + o_i - a_i) + Σ_{u=k+1}^{k+o_i} λ_u (s_i + u - k)          [(1) + λ·(3), row u]

and the Lagrangian dual function  L(λ) = Σ_i min_{k >= a_i} cost_i(k; λ) − M Σ_t λ_t.
**Validity.** For every schedule x feasible for (2)–(4), Σ_t λ_t (M − memory_t(x)) >= 0, so
TEL(x) >= TEL(x) − Σ_t λ_t (M − memory_t(x)) = Σ_i cost_i(p_i; λ) − M Σ_t λ_t >= L(λ): *every* λ >= 0
gives a lower bound on OPT (weak duality), however far the search for λ is from the best one. The
subproblem is a choice over the simplex of (2), whose vertices are integral, so max_λ L(λ) equals the
optimum of the LP relaxation of (1)–(4) with unrestricted starts (``latency-lp`` without the horizon
tightenings): this is that LP's value without building its n × T̄ matrix (530 M entries at 1,000
requests).

**Exact subproblem at any size.** With prefix sums P0(j) = Σ_{u<j} λ_u and P1(j) = Σ_{u<j} u·λ_u the
sum in cost_i(k) is (s_i − k)(P0(k+o_i+1) − P0(k+1)) + P1(k+o_i+1) − P1(k+1): O(1) per candidate k.
Since cost_i(k) >= k + o_i − a_i, no start later than a_i + cost_i(a_i) − o_i can beat k = a_i, so the
candidates are that window; where it is longer than ``max_window`` the rest is bounded below by its
first round's k + o_i − a_i (still exact as a lower bound). Blocks of 64 starts are skipped when a lower
bound on their cost exceeds a sampled start's (each round every start of the block covers is priced at
least (s_i + 1)·λ_u), so high prices do not make every start a candidate.

**Search for λ.** Projected subgradient ascent: g_t = memory_t(chosen starts) − M, Polyak steps towards
the target 1.05 × the best L so far (the incumbent's TEL as the target was measured worse: far above the
LP value under load, its steps overshoot), halving the step and returning to the best λ after
``patience`` iterations without improvement. The best λ is re-evaluated in exact integer arithmetic and
rounded up, TEL being an integer (:func:`certified_bound`). λ lives on rounds up to a horizon H =
max(a_i + o_i) + 2⌈Σ vol_i / M⌉; rows after H keep λ = 0, which is allowed.
"""
from __future__ import annotations

import time

import numpy as np

from ..semantics import SLOT
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm
from .volume import volumes

TARGET_MARGIN = 0.05   # Polyak target: best L(λ) so far × (1 + margin)
MAX_WINDOW = 1 << 16   # candidate starts per request and evaluation; later ones are bounded by their delay
BLOCK = 64             # candidate starts per pruning block
CHUNK = 2048           # requests per vectorised step of the subproblem
EXACT_SCALE = 2 ** 24  # λ resolution of the certified evaluation


def dual_value(a, s, o, M: int, lam: np.ndarray, max_window: int = MAX_WINDOW, scale: int = 1):
    """(L(λ), chosen start of each request). ``lam[u]`` prices row u; λ = 0 beyond len(lam).

    With ``scale`` > 1, ``lam`` holds integers λ·scale and everything is computed in exact int64
    arithmetic; the value returned is then scale·L(λ), an integer (see :func:`certified_bound`).
    Requests are taken CHUNK at a time, so memory stays bounded at any n."""
    H = len(lam)
    P0 = np.concatenate([[0], np.cumsum(lam)])
    P1 = np.concatenate([[0], np.cumsum(np.arange(H) * lam)])
    best, start = [], []
    for c in range(0, len(a), CHUNK):
        part = slice(c, c + CHUNK)
        b, k = _cheapest_starts(a[part], s[part], o[part], P0, P1, H, max_window, scale)
        best.append(b)
        start.append(k)
    best, start = np.concatenate(best), np.concatenate(start)
    if scale > 1:                                        # exact: sum as Python integers
        return sum(best.tolist()) + int(o.sum()) * scale - M * sum(lam.tolist()), start
    return best.sum() + float(o.sum()) - M * lam.sum(), start


def _cheapest_starts(a, s, o, P0, P1, H: int, max_window: int, scale: int):
    """min_k cost_i(k) − o_i (times scale) and its argmin k, per request, from the prefix sums of λ."""

    def priced(k, si, oi):  # Σ_{u=k+1}^{k+o} λ_u (s + u − k)
        hi = np.minimum(k + oi + 1, H)
        lo = np.minimum(k + 1, H)
        return (si - k) * (P0[hi] - P0[lo]) + (P1[hi] - P1[lo])

    base = priced(a, s, o)                               # cost of starting at arrival, less o_i
    extra = base // scale if scale > 1 else np.floor(base + 1e-9).astype(np.int64)
    # the priced sum is >= 0, but its floating-point form (a difference of prefix sums) can come out
    # slightly negative; a negative window would leave the request without a candidate start
    window = np.clip(extra, 0, max_window)               # later starts cost more than starting at a_i
    # blocks of BLOCK candidate starts [k0, k1]: a sample at k0 bounds each request's minimum from above; a
    # block whose lower bound exceeds that is skipped. Lower bound: delay k0 − a_i, plus the rounds every
    # start of the block covers, k1+1 .. k0+o_i, each priced at least (s_i + 1)·λ_u
    n = len(a)
    blocks = window // BLOCK + 1
    bfirst = np.concatenate([[0], np.cumsum(blocks)[:-1]])
    bjob = np.repeat(np.arange(n), blocks)
    k0 = a[bjob] + BLOCK * (np.arange(int(blocks.sum())) - bfirst[bjob])
    k1 = np.minimum(k0 + BLOCK - 1, (a + window)[bjob])
    sample = (k0 - a[bjob]) * scale + priced(k0, s[bjob], o[bjob])
    upper = np.minimum.reduceat(sample, bfirst)
    cover_hi, cover_lo = np.minimum(k0 + o[bjob] + 1, H), np.minimum(k1 + 1, H)
    lower = (k0 - a[bjob]) * scale + np.where(cover_hi > cover_lo, (s[bjob] + 1) * (P0[cover_hi] - P0[cover_lo]), 0)
    keep = lower <= upper[bjob]
    keep[_argmin_segments(sample, bfirst, blocks, upper)] = True   # (float rounding could tie-break it away)
    keep = np.flatnonzero(keep)
    size = k1[keep] - k0[keep] + 1
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    job = np.repeat(bjob[keep], size)
    k = np.repeat(k0[keep], size) + (np.arange(int(size.sum())) - np.repeat(start, size))
    cost = (k - a[job]) * scale + priced(k, s[job], o[job])
    first = np.searchsorted(job, np.arange(n))
    count = np.diff(np.append(first, len(job)))
    best = np.minimum.reduceat(cost, first)
    arg = _argmin_segments(cost, first, count, best)
    beyond = window == max_window                        # starts after the window: cost > their delay
    best = np.where(beyond, np.minimum(best, (max_window + 1) * scale), best)
    return best, k[arg]


def certified_bound(a, s, o, M: int, lam: np.ndarray) -> int:
    """⌈L(λ')⌉ in exact integer arithmetic, λ' = λ rounded down to a multiple of 1/scale (still >= 0, so
    still a valid bound; TEL is an integer, hence the ceiling). Floating-point sums cannot overstate it.
    scale = 2^24, or less where the int64 intermediates ((s_i − k)·ΔP0, P1 <= (H + s + window)·Σλ·scale)
    would not fit; the sums over requests are Python integers."""
    lam = np.asarray(lam, dtype=np.float64)
    reach = (len(lam) + float(s.max()) + float(o.max()) + MAX_WINDOW + 1) * 4 * float(lam.sum())
    scale = EXACT_SCALE
    while scale > 1 and reach * scale > 2.0 ** 62:
        scale //= 2
    lam_int = np.floor(lam * scale).astype(np.int64)
    value, _ = dual_value(a, s, o, M, lam_int, scale=scale)
    return -(-int(value) // scale)


def _argmin_segments(cost, first, count, best):
    """Index of the first minimum of each segment [first, first + count) of ``cost``."""
    seg_min = np.repeat(best, count)
    hit = np.flatnonzero(cost <= seg_min)
    seg_of_hit = np.searchsorted(first, hit, side="right") - 1
    _, pos = np.unique(seg_of_hit, return_index=True)
    return hit[pos]


def memory_profile(k, s, o, H: int) -> np.ndarray:
    """memory_u for u < H when request i starts at k_i (footprint s_i + u − k_i on rounds k_i+1..k_i+o_i)."""
    lo = np.minimum(k + 1, H)
    hi = np.minimum(k + o + 1, H)
    c0 = np.bincount(lo, s - k, H + 1) - np.bincount(hi, s - k, H + 1)   # difference arrays of the
    c1 = np.bincount(lo, None, H + 1) - np.bincount(hi, None, H + 1)     # constant and slope parts
    return np.cumsum(c0)[:H] + np.arange(H) * np.cumsum(c1)[:H]


def subgradient_bound(a, s, o, M: int, horizon: int, deadline: float | None = None,
                      iterations: int = 400, patience: int = 20, theta: float = 1.0, progress=None):
    """Projected subgradient ascent: (best λ, its L(λ) in floating point, iterations, why it stopped), the
    reason one of "optimal" (a zero subgradient: λ is dual optimal), "time_limit" or "feasible" (iterations
    used up). Certify the result with :func:`certified_bound`."""
    a, s, o = (np.asarray(x, dtype=np.int64) for x in (a, s, o))
    lam = best_lam = np.zeros(horizon)
    best, since, done, why = -np.inf, 0, 0, "feasible"
    for done in range(1, iterations + 1):
        value, k = dual_value(a, s, o, M, lam)
        if done == 1 or value > best + 1e-9 * max(1.0, abs(best)):
            best, best_lam, best_k, since = value, lam, k, 0
        else:
            since += 1
            if since >= patience:                       # shorter steps, from the best λ so far
                theta, since, lam, value, k = theta / 2, 0, best_lam, best, best_k
        if progress is not None:
            progress(done, value, best)
        if deadline is not None and time.perf_counter() > deadline:
            why = "time_limit"
            break
        g = memory_profile(k, s, o, horizon) - M
        g[(lam <= 0) & (g < 0)] = 0.0                   # projection onto λ >= 0
        norm = float(g @ g)
        if norm == 0.0:                                 # complementary slackness: L(λ) = the LP optimum
            why = "optimal"
            break
        goal = best * (1 + TARGET_MARGIN) + 1.0
        lam = np.maximum(lam + theta * (goal - value) / norm * g, 0.0)
    return best_lam, best, done, why


@FORMULATIONS.register("lagrange-bound")
class LagrangeBound(ClosedForm):
    name = "lagrange-bound"
    models = (SLOT,)
    exact = False
    integral_objective = True
    summary = "Lagrangian dual of the memory rows (3) by subgradient ascent (= latency-lp's value, any size): lower bound"
    #: subgradient steps at most (the time limit may stop it first)
    iterations = 400

    @staticmethod
    def search_incumbent(inst, deadline: float, seed: int = 0, incumbent=None):
        """``latency-ip``'s incumbent search (the window search from the best policy schedule above 100
        requests), in ``solve``'s incumbent share of the time limit: its verified schedule is the upper end
        UB of the certified intervals this bound reports, where only the policies' schedules were before.
        At the trace scale this bound serves, the IP itself cannot be built."""
        from .latency_ip import LatencyIP

        return LatencyIP.search_incumbent(inst, deadline, seed, incumbent)

    def solve(self, profile, warm=None) -> SolveResult:
        t0 = time.perf_counter()
        inst = self.inst
        a, s, o = (x.astype(np.int64) for x in (inst.arrival, inst.prompt, inst.output))
        M = int(inst.memory)
        horizon = int((a + o).max() + 2 * np.ceil(volumes(inst).sum() / M))  # any horizon is valid; generous
        # self.lam: the best λ, kept for callers that schedule by it (benchmarks/bench_slot_load.py)
        self.lam, _, self.steps, why = subgradient_bound(a, s, o, M, horizon, iterations=self.iterations,
                                                         deadline=t0 + 0.95 * profile.time_limit)
        bound = float(max(int(o.sum()), certified_bound(a, s, o, M, self.lam)))
        return SolveResult(why, bound, bound, time.perf_counter() - t0,
                           message=f"best of {self.steps} subgradient steps (a valid bound at every step; "
                                   "the dual optimum, latency-lp's value, may be higher)")
