"""Memory-volume lower bounds on OPT (seed 004, Lemma 4.7 / LP (9)), generalised to per-request
prompt sizes s_i and arrivals a_i (slot model).

Request i's *volume* is vol_i = Σ_{j=1}^{o_i} (s_i + j) = s_i·o_i + o_i(o_i+1)/2 (memory × time), and
its completion C_i >= r_i := a_i + o_i.

**Window inequality.** For any τ and t > τ, the requests with a_i >= τ that complete by t run all of
their active rounds inside (τ, t] (a start k >= a_i >= τ is active at k+1..k+o_i), where memory is at
most M at each of the t − τ times, so  Σ_{i: a_i >= τ, C_i <= t} vol_i <= M·(t − τ).

``volume-lp`` (LP (9) generalised). Variables F_{i,g} ∈ [0,1] = "i has completed by grid time g",
nondecreasing in g, 0 before r_i, 1 at T̄ = max a + Σ o (every optimal schedule ends by T̄, see
``latency-ip`` (a)); the window inequality at every grid time g for the windows τ ∈ W; objective
Σ_i [o_i + Σ_{g >= r_i, g < T̄} w_g (1 − F_{i,g'})]. On the full integer grid (w = 1, g' = g) this is
exactly Σ_i E[C_i − a_i] = Σ_i (o_i + Σ_{t=r_i}^{T̄−1} P(C_i > t)), and any schedule gives a feasible
0/1 point, so the LP optimum is <= OPT. Large instances use a geometric grid: for t in
[g_k, g_{k+1}), 1 − F(t) >= 1 − F(g_{k+1}), so weights w = g_{k+1} − g_k on 1 − F(g_{k+1}) keep it a lower
bound; the grid has 16..120 points, fewer for more requests (about 200k variables in all).
W = the distinct arrival times (at most ``max_windows``, evenly spaced, always the first; 4 above
2,000 requests).
With all a_i = 0 and equal s_i this is LP (9) with the C_i >= o_i bounds added.

``volume-bound`` (closed form, O(n log n) per window, for 10,000-request instances). In any
schedule, the k-th smallest completion among the requests with a_i >= τ is at least
τ + ⌈V_k / M⌉ (V_k = sum of the k smallest volumes of those requests: the first k to complete have at
least that volume, all inside (τ, C_(k)]), at least τ + ⌈x_k⌉ with x_k from the gap capacity of
:mod:`lpbench.formulations.completion` (Lemma 3: memory is at most M − d at d rounds before the next
completion, so (τ, C_(k)], cut into at most k + q_τ stretches by completions, holds at most
(k + q_τ)·φ̃(x/(k + q_τ)); q_τ = the requests with a_i < τ), and at least the k-th smallest r_i (k of
them complete by then, each no earlier than its r_i). The windows are also taken all at once: round t
processes U(t) <= M memory-rounds and request i's volume lies in rounds a_i+1..C_i, so the requests are
jobs of work vol_i / M with release a_i on one preemptive machine of rate 1, where SRPT's k-th
completion is the least possible k-th completion (as in ``batch-bound``); per order statistic with r_(k). Requests with a_i < τ complete no earlier than r_i. Summing
and subtracting Σ a_i bounds OPT; the best window is reported. The trivial bound Σ o_i is the
window-free case and is always included.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import InputError

from ..semantics import SLOT
from ..sim.multi import sub_instance
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm, Formulation, LinearModel


#: the volume bounds compute in float64 and int64; beyond this total memory-time their sums are no longer exact
EXACT_VOLUME = 2.0 ** 52


def volumes(inst) -> np.ndarray:
    """Memory-rounds of each request alone, s·o + o(o+1)/2 (slot model). InputError where their total reaches
    ``EXACT_VOLUME``: the bounds built on their sums would no longer be exact."""
    s, o = inst.prompt.astype(np.float64), inst.output.astype(np.float64)
    vol = s * o + o * (o + 1) / 2
    if vol.sum() >= EXACT_VOLUME:
        raise InputError(f"requests: the volume bounds need Σ (s·o + o(o+1)/2) below 2^52 to compute exactly, got "
                         f"{vol.sum():.4g}; express the tokens in larger units (scale memory, prompts and outputs "
                         "down)")
    return vol


def windows(arrival: np.ndarray, max_windows: int) -> np.ndarray:
    taus = np.unique(arrival)
    if len(taus) > max_windows:
        taus = taus[np.unique(np.linspace(0, len(taus) - 1, max_windows).round().astype(int))]
    return taus


@FORMULATIONS.register("volume-lp")
class VolumeLP(Formulation):
    name = "volume-lp"
    models = (SLOT,)
    exact = False
    summary = "memory-volume LP (9) of Lemma 4.7, per-request s_i, a_i, window per arrival: lower bound"
    max_windows = 16
    max_exact_cells = 400_000   # n x horizon above this -> geometric grid
    geometric_points = 120

    def grid(self, r_min: int, T_bar: int) -> tuple[np.ndarray, bool]:
        if self.inst.n * (T_bar - r_min + 1) <= self.max_exact_cells:
            return np.arange(r_min, T_bar + 1), True
        points = int(np.clip(self.max_exact_cells // (2 * self.inst.n), 16, self.geometric_points))
        g = np.unique(np.round(np.geomspace(max(r_min, 1), T_bar, points)).astype(np.int64))
        return np.unique(np.concatenate([[r_min], g, [T_bar]])), False

    def build(self) -> LinearModel:
        inst = self.inst
        a = inst.arrival.astype(np.int64)
        o = inst.output.astype(np.int64)
        r = a + o
        vol = volumes(inst)
        T_bar = int(a.max() + o.sum())
        G, exact_grid = self.grid(int(r.min()), T_bar)
        lp = LinearModel(f"{self.name}:{inst.name}", offset=float(o.sum()))
        var_of = []   # per request: (grid positions, variable indices)
        rows_m, cols_m = [], []
        n_mono = 0
        for i in range(inst.n):
            pos = np.flatnonzero(G >= r[i])            # grid points at or after r_i (the last is T̄)
            pts = G[pos]
            if exact_grid:
                w = np.ones(len(pts))                  # Σ_{t=r_i}^{T̄-1} (1 - F(t)), F(T̄) = 1
                w[-1] = 0.0
            else:                                      # 1 - F(t) >= 1 - F(next grid point)
                w = np.diff(np.concatenate([[r[i]], pts]))
            lower = np.zeros(len(pts))
            lower[-1] = 1.0                            # complete by T̄
            x = lp.add_vars(f"F[{i}]", len(pts), lower=lower, upper=1.0, cost=-w)
            lp.offset += float(w.sum())
            var_of.append((pos, x))
            # F nondecreasing: F_g - F_{g+1} <= 0
            k = len(x) - 1
            rows_m.append(np.repeat(np.arange(n_mono, n_mono + k), 2))
            cols_m.append(np.column_stack([x[:-1], x[1:]]).ravel())
            n_mono += k
        if n_mono:
            vals = np.tile([1.0, -1.0], n_mono)
            lp.add_rows("F nondecreasing", n_mono, np.concatenate(rows_m), np.concatenate(cols_m), vals, upper=0.0)

        # window inequality: Σ_{a_i >= τ} vol_i F_{i,g} <= M (g - τ), for g > τ
        rows, cols, vals, upper = [], [], [], []
        n_rows = 0
        for tau in windows(a, self.max_windows if inst.n <= 2000 else 4):
            gpos = np.flatnonzero(G > tau)
            row_of = np.full(len(G), -1)
            row_of[gpos] = np.arange(n_rows, n_rows + len(gpos))
            upper.append(inst.memory * (G[gpos] - tau).astype(np.float64))
            for i in np.flatnonzero(a >= tau):
                pos, x = var_of[i]
                rows.append(row_of[pos])
                cols.append(x)
                vals.append(np.full(len(x), vol[i]))
            n_rows += len(gpos)
        lp.add_rows("window volume <= M (t - tau)", n_rows, np.concatenate(rows), np.concatenate(cols),
                    np.concatenate(vals), upper=np.concatenate(upper))
        return lp


@FORMULATIONS.register("volume-bound")
class VolumeBound(ClosedForm):
    name = "volume-bound"
    models = (SLOT,)
    exact = False
    summary = "closed-form volume/order-statistic bound (Lemma 4.7 style, any window): lower bound"
    max_windows = 64

    def value(self) -> float:
        from .batch_bound import srpt_completions
        from .completion import ceil_below, least_span

        inst = self.inst
        a = inst.arrival.astype(np.int64)
        r = a + inst.output.astype(np.int64)
        vol = volumes(inst)
        best = float(r.sum())                                   # C_i >= r_i: the trivial bound Σ o_i
        for tau in windows(a, self.max_windows):
            inside = a >= tau
            V = np.cumsum(np.sort(vol[inside]))              # integers below 2^52 (volumes): exact
            by_volume = tau - (-V.astype(np.int64) // int(inst.memory))   # ⌈V / M⌉ in integers
            stretches = np.arange(1, len(V) + 1) + int((~inside).sum())
            by_gaps = tau + ceil_below(least_span(V, stretches, int(inst.memory)))
            by_release = np.sort(r[inside])
            best = max(best, float(np.maximum.reduce([by_volume, by_gaps, by_release]).sum() + r[~inside].sum()))
        # all windows at once: memory-time as a preemptive single machine with release dates
        by_srpt = ceil_below(np.sort(srpt_completions(a.astype(np.float64), vol / inst.memory)), 1e-9)
        best = max(best, float(np.maximum(by_srpt, np.sort(r)).sum()))
        return best - float(a.sum())

    def solve(self, profile, warm=None) -> SolveResult:
        t0 = time.perf_counter()
        v = self.value()
        return SolveResult("optimal", v, v, time.perf_counter() - t0)


def bound_alone(inst, idx: np.ndarray) -> int:
    """A lower bound on the optimum of the requests ``idx`` of ``inst`` alone: the larger of Σ o and ``volume-bound``
    on them (0 for none). ``chain-bound`` and ``subset-bound`` charge the requests they leave out this much: a
    schedule restricted to a subset of the requests is a schedule of that subset."""
    if len(idx) == 0:
        return 0
    return max(int(inst.output[idx].sum()), int(round(VolumeBound(sub_instance(inst, np.sort(idx))).value())))
