"""Exact best-first (A*) search for the seed-004 latency problem, eqs. (1)-(4) (ours, issue 12; slot model).

The time-indexed IP grows with the horizon and its LP relaxation smooths the memory ramps away; the
completion-time relaxations (:mod:`lpbench.formulations.completion`) are strong but CP-SAT proves them
slowly. This module searches the schedules themselves, round by round, and prunes with lower bounds
built from the same lemmas. It proves small instances (about 8-12 requests) and, stopped early, still
returns a certified lower bound.

**States.** At time t (before the starts of round t+1 are chosen) the future depends only on W, the
requests not yet started, and A, the running requests with their ages α_i = t − k_i ∈ [1, o_i − 1]
(memory s_i + α_i + d at round t + d, completion at t + o_i − α_i), and on t itself while some request
has not arrived (a_j > t). A move chooses X ⊆ {j ∈ W: a_j <= t} to start at k = t, keeping memory
feasible; then one round passes. Its cost is the number of arrived, unfinished requests, so a path from
the empty start to the state with nothing left costs Σ_i (C_i − a_i), objective (1), and paths are
exactly the schedules of (2)-(4). *Feasibility of a move.* With no further starts, memory after t is
highest at completion times (Lemma 1 of ``completion``), so A ∪ X is feasible for the rest of its life
iff the memory at each member's completion offset is at most M; later starts are checked when they are
made (they only add memory). Starting later is pointwise lighter for the started request (its footprint
at any round is smaller or zero), so the feasible start offsets of one request beside fixed running
ones are an upward-closed set.

**Reductions (each keeps an optimal schedule).**

* Identical requests (a, s, o) start in index order (swapping them maps schedules to schedules of equal
  cost).
* When nothing runs and every request left has arrived, some request starts now: otherwise round t+1
  has nothing active and every later start can move one round earlier (as horizon (a) of
  ``latency-ip``), lowering (1).

**Lower bound h on the cost still to come** (admissible, so A* returns an optimum; also "pathmax":
a child's f is at least its parent's, since every completion through the child passes the parent).
Running requests contribute exactly o_i − α_i. For the waiting set W, with offsets x = C_j − t:

* (E) *earliest completion*: c_j = max(e_j, a_j − t) + o_j, where e_j is the least start offset at
  which j alone fits beside A (upward-closed, above).
* (V) *volume*: the k-th smallest completion of W needs the k smallest volumes V_k within (t, t + x]
  beside A's known memory U(d): Σ_{d<=x} (M − U(d)) >= V_k; and with Lemma 3 of ``completion``,
  (t, t + x] is cut by at most k + |A| completion times into stretches that carry at most
  (k + |A|)·φ̃(x/(k + |A|)) memory-rounds, of which A uses Σ_{d<=x} U(d). Each is a necessary condition
  on x, so the least x meeting it bounds the k-th completion; Σ_k max(that x, k-th smallest c_j).
* (L) *chain*: order W by completion, π, with gaps δ_l = C_π(l) − C_π(l−1) (l = 2..m, m = |W|); then
  Σ_{j∈W} (C_j − t) = m·(C_π(1) − t) + Σ_l c_l·δ_l with c_l = m − l + 1, and C_π(1) − t >= c_π(1).
  The gaps obey, for consecutive h = π(l−1), j = π(l), k = π(l+1):

  - (pair, Lemma 2) δ_l >= w(h, j), and δ_l + δ_{l+1} >= w(h, k);
  - (triple, Lemma 2' of ``completion``) 2δ_l + δ_{l+1} = (C_j − C_h) + (C_k − C_h) >= T(h, j, k) =
    min(p_h + p_j + p_k − M, o_j + w(h, k), o_k + w(h, j)): at C_h, h is at its peak, and j and k, if
    both active, fit beside it; one that is not active starts at or after C_h.

  Lemma 2 alone sees only pairs that cannot both be at their peaks (p_h + p_j > M); the triple sees
  three mid-size requests whose peaks fit pairwise but not together. To keep a dynamic programme over
  subsets, each gap's weight c_l is split: a share (1 − β)·c_l goes with the triple where δ_l comes
  first, β·c_l with the one where it comes second (β = 1/3; the last gap, c = 1, gives all of its
  weight to its one triple, β = 1). Each triple then contributes at least the integer minimum of
  a·δ_l + b·δ_{l+1} under its three rows, that is a·w(h, j) + b·w(j, k) + B(c_l, h, j, k) with B >= 0,
  and Σ_l c_l·δ_l >= Σ_l c_l·w(π(l−1), π(l)) + Σ_triples B (the shares add up to c_l, and each share
  is at least its weight times w). The least such chain over S that starts with h, j is tabulated once
  over all subsets, in thirds: 3·G(S, h, j) = 3(|S| − 1)·w(h, j) + min_{k ∈ S−h−j} (3B(|S| − 1, h, j, k)
  + 3·G(S − h, j, k)) (2^n·n² entries, so at most ``MAX_REQUESTS`` requests; larger instances are
  refused before the search); (L) = min_{h,j} (m·c_h + G(W, h, j)), and min_j c_j when m = 1.
  The chain charges only its first completion its c, so one short request makes it weak; (L) is
  taken over subsets U ⊆ W, each request left out counted at its own c_j (:meth:`_Bounds.chain`).

h = Σ_A (o_i − α_i) + max((V), (L)) − Σ_{j∈W} max(0, a_j − t).

**Certificates.** With an incumbent UB (a verified schedule), nodes with f >= UB are dropped: if the
search empties, UB is optimal. Stopped early (time or state limit), the least f among open nodes (and
UB) is a certified lower bound: some open node lies on an optimal path with its optimal cost so far
(the standard A* invariant, kept by re-opening a state reached more cheaply), and its f <= OPT.
"""
from __future__ import annotations

import heapq
import time

import numpy as np

from ..errors import InputError
from ..interrupt import REQUESTED
from ..semantics import SLOT
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm
from .compiled import compiled
from .completion import pair_separation, triple_bonus
from .latency_ip import LatencyIP, identical_groups, schedule_from_starts, starts_from_schedule

#: the chain table G has 2^n·n² entries (65,536 × 256 at 16), and the moves of one round are the
#: memory-feasible subsets of the waiting requests: beyond this size the search is refused (keep
#: ``LatencyIP.astar_max_requests`` at most this)
MAX_REQUESTS = 16
#: stop (with a certified bound) after this many distinct states (about 1 KB each in Python)
MAX_STATES = 4_000_000
BIG = 1 << 40
CHAIN_BIG = 1 << 30   # "no such chain" in the int32 chain table


class SearchResult:
    """What the search found: status ("optimal", "time_limit", "feasible" at the state limit,
    "interrupted"), the best objective and its starts (None if no schedule beat the incumbent and none
    was given), the certified lower bound, and counters."""

    def __init__(self, status, objective, starts, bound, expanded, states, seconds):
        self.status, self.objective, self.starts, self.bound = status, objective, starts, bound
        self.expanded, self.states, self.seconds = expanded, states, seconds


@compiled
def running_parts(ids, ages, s, o, M):
    """The running set's parts of h (requests ``ids`` at ``ages``): (Σ remaining rounds, e, U), U[d − 1] the
    set's memory at round t + d for d = 1..reach (zero after its last completion). e_j is the least δ >= 0
    with U(r) + s_j + (r − δ) <= M for every round r ∈ (δ, δ + o_j]; only rounds with the set running matter
    (beyond them s_j + o_j <= M): round r forbids δ ∈ [r − o_j, min(r, s_j − slack_r)), slack_r = M − U(r)
    − r, and e_j is the least δ no round forbids. Only these O(n + o_max) numbers are cached per running
    set: the Lemma-3 searches over offsets x are made per waiting set (:func:`waiting_bound`), since a table
    of them per running set (68 KB at 15 requests) filled 24 GB in a 56 s search (scratch measurement,
    docs/seed004-certification.md)."""
    n = len(s)
    remaining, reach = 0, 0
    for t in range(len(ids)):
        remaining += o[ids[t]] - ages[t]
        reach = max(reach, o[ids[t]] - ages[t])
    U = np.zeros(reach + 1, dtype=np.int64)           # U[d], d = 1..reach
    for t in range(len(ids)):
        i, age = ids[t], ages[t]
        for d in range(1, o[i] - age + 1):
            U[d] += s[i] + age + d
    e = np.zeros(n, dtype=np.int64)
    cover = np.zeros(reach + 2, dtype=np.int64)
    for j in range(n):
        cover[:] = 0
        for r in range(1, reach + 1):
            lo = max(r - o[j], 0)
            hi = min(r, s[j] - (M - U[r] - r))
            if hi > lo:
                cover[lo] += 1
                cover[hi] -= 1
        acc = 0
        for delta in range(reach + 2):
            acc += cover[delta]
            if acc == 0:
                e[j] = delta
                break
    return remaining, e, U[1:]


class _Bounds:
    """The lower bound h of the module docstring, with its per-running-set and per-waiting-set parts
    cached (both repeat across many states)."""

    def __init__(self, a, s, o, M):
        self.s, self.o, self.M = s, o, M
        self.n = n = len(s)
        self.p = [s[i] + o[i] for i in range(n)]
        self.vol = [s[i] * o[i] + o[i] * (o[i] + 1) // 2 for i in range(n)]
        self.span = sum(o) + max(o) + 2   # offsets x searched (a bound beyond them reads span + 1: still valid)
        self.w = pair_separation(s, o, M).tolist()     # Lemma 2, as lists: the search indexes it per state
        self.a_arr, self.s_arr, self.o_arr = (np.array(v, dtype=np.int64) for v in (a, s, o))
        self.p_arr = self.s_arr + self.o_arr
        # 3·min_j G[S, h, j]: all the search reads of the chain table (which is not kept: 67 MB at n = 16)
        self.G3_first = self.chain_table().min(axis=2).astype(np.int64)
        self.a_last = max(a)
        self.running_cache: dict = {}
        self.waiting_cache: dict = {}

    def triple_bonus(self) -> np.ndarray:
        """3·B(c, h, j, k) of (L) for c = 2..n−1 (:func:`~lpbench.formulations.completion.triple_bonus`)."""
        return triple_bonus(self.p_arr, self.o_arr, np.array(self.w, dtype=np.int64), self.M, self.n)

    def chain_table(self) -> np.ndarray:
        """3·G[S, h, j] of (L) for every subset S (bitmask) and h ≠ j in S; CHAIN_BIG elsewhere."""
        n = self.n
        w3 = 3 * np.array(self.w, dtype=np.int32)
        B = self.triple_bonus().astype(np.int32)
        G = np.full((1 << n, n, n), CHAIN_BIG, dtype=np.int32)
        for h in range(n):
            for j in range(n):
                if h != j:
                    G[1 << h | 1 << j, h, j] = w3[h, j]
        for S in range(1, 1 << n):
            members = [j for j in range(n) if S >> j & 1]
            m = len(members)
            if m < 3:
                continue
            rest = np.array([S & ~(1 << h) for h in members])
            cand = (B[m - 1][members] + G[rest]).min(axis=2)     # [h, j]: over k in S − h − j
            G[S, members] = np.minimum((m - 1) * w3[members] + cand, CHAIN_BIG)
        return G

    def running(self, act):
        """Per running set: (Σ remaining rounds, least start offset e_j of every request beside it, its
        memory U at rounds t + 1.. while it runs, |A|) (:func:`running_parts`)."""
        got = self.running_cache.get(act)
        if got is None:
            ids = np.array([i for i, _ in act], dtype=np.int64)
            ages = np.array([age for _, age in act], dtype=np.int64)
            remaining, e, U = running_parts(ids, ages, self.s_arr, self.o_arr, self.M)
            got = self.running_cache[act] = (int(remaining), e, U, len(act))
        return got

    def waiting(self, W):
        """Per waiting set: (members, their o, prefix sums of their sorted volumes, the chain's subsets
        (:meth:`chain`), size)."""
        got = self.waiting_cache.get(W)
        if got is None:
            members = [j for j in range(self.n) if W >> j & 1]
            idx = np.array(members, dtype=np.int64)
            V = np.cumsum(np.sort(np.array([self.vol[j] for j in members], dtype=np.int64)))
            m = len(members)
            gone = np.stack([np.argsort(key, kind="stable")[:m - 2] for key in (self.o_arr[idx], self.p_arr[idx])])
            bits = np.concatenate([np.zeros((2, 1), dtype=np.int64), np.cumsum(np.left_shift(1, idx[gone]), axis=1)],
                                  axis=1)
            U = (W - bits).ravel()                    # W less its r shortest, then its r smallest-peak requests
            drops = (self.G3_first[U][:, idx], 3 * np.tile(m - np.arange(m - 1), 2), gone)
            got = (idx, self.o_arr[idx], V, drops, m)
            self.waiting_cache[W] = got
        return got

    def h(self, W, act, t):
        remaining, e, U, q = self.running(act)
        if not W:
            return remaining
        idx, o_w, V, drops, m = self.waiting(W)
        return int(waiting_bound(remaining, e, U, q, self.M, self.span, idx, o_w, V, *drops, self.a_arr, t,
                                 self.a_last))

    @staticmethod
    def chain(c, drops) -> int:
        """(L) for the members' earliest completions ``c`` and the subsets ``drops`` of :meth:`waiting`
        (:func:`chain_bound`)."""
        return int(chain_bound(np.asarray(c, dtype=np.int64), *drops))


@compiled
def waiting_bound(remaining, e, U, q, M, span, idx, o_w, V, first_G, size3, gone, a, t, a_last):
    """h for the waiting set ``idx`` beside a running set (its parts from :func:`running_parts`, q requests):
    remaining + max((V), (L)) − Σ forced waiting. c_j: j's earliest completion (e_j, or its arrival if later,
    plus o_j). (V): the k-th smallest volume V_k needs x_k rounds, the least offset x (searched up to
    ``span``; none there reads span + 1, still valid) at which the Lemma-3 capacity of k + q stretches less
    the running set's memory, K((M + ½)y − y²/2) − Σ_{d<=x} U(d) with y = min(x/K, M + ½), in floats that
    never round a tie up, or the free capacity Σ_{d<=x} (M − U(d)) reaches it; the k-th completion is at
    least x_k and the k-th smallest c. (L): :func:`chain_bound`. Compiled; ``tests/test_latency_astar.py``
    checks it against its numpy form."""
    m, reach = len(idx), len(U)
    c = np.empty(m, dtype=np.int64)
    late = 0
    for j in range(m):
        c[j] = e[idx[j]] + o_w[j]
        if t < a_last:                                # else everything has arrived: no waiting is forced
            wait = max(a[idx[j]] - t, 0)
            c[j] = max(e[idx[j]], wait) + o_w[j]
            late += wait
    used = np.zeros(span + 1, dtype=np.int64)         # used[x] = Σ_{d<=x} U(d)
    for x in range(1, span + 1):
        used[x] = used[x - 1] + (U[x - 1] if x <= reach else 0)
    c_sorted = np.sort(c)
    volume = 0
    for k in range(m):
        target, K = V[k] - 1e-6, np.float64(k + 1 + q)
        x_rows = span + 1
        for x in range(1, span + 1):
            y = min(x / K, M + 0.5)
            if K * ((M + 0.5) * y - y * y / 2) - used[x] >= target:
                x_rows = x
                break
        x_free = span + 1
        for x in range(1, span + 1):
            if M * x - used[x] >= V[k]:
                x_free = x
                break
        volume += max(max(x_rows, x_free), c_sorted[k])
    pair = c[0] if m == 1 else chain_bound(c, first_G, size3, gone)
    return remaining + max(volume, pair) - late


@compiled
def chain_bound(c, first_G, size3, gone):
    """(L) over the best of the subsets U_r ⊆ W: W less its r requests of least o, or of least p (r = 0..
    m − 2), each dropped request j counted at its own c_j (``c``: the members' earliest completions).
    Valid for every U: Σ_{j∈W} (C_j − t) >= (L) on U + Σ_{j∉U} c_j. Dropping small requests helps
    because the chain charges only the first completion its c: one short request first makes
    m·c_π(1) small and its gaps are 0. Per W (:meth:`_Bounds.waiting`): ``first_G`` = 3·min_j G[U_r, h, j]
    (rows U_r, columns the members h), ``size3`` = 3|U_r|, and ``gone`` the members dropped in each order."""
    m = len(c)
    R = len(size3) // 2                               # subsets per drop order: r = 0..m − 2
    pair = -1
    for row in range(len(size3)):
        first = first_G[row, 0] + size3[row] * c[0]
        for h in range(1, m):
            first = min(first, first_G[row, h] + size3[row] * c[h])
        value = first // 3
        order, r = row // R, row % R
        for d in range(r):
            value += c[gone[order, d]]
        pair = max(pair, value)
    return pair


def refuse_if_too_large(inst) -> None:
    if inst.n > MAX_REQUESTS:
        raise InputError(f"--formulation: 'latency-astar' searches instances of at most {MAX_REQUESTS} requests "
                         f"(its chain table has 2^n·n² entries); {inst.name} has {inst.n}; "
                         f"{LatencyIP.scalable_alternative}")


def astar_search(inst, upper: float | None = None, upper_starts=None, deadline: float | None = None,
                 max_states: int = MAX_STATES, stop_when=None) -> SearchResult:
    """Best-first search of the module docstring. ``upper``/``upper_starts``: a verified incumbent (its
    total latency and start rounds), returned when nothing better exists. ``stop_when`` (a
    threading.Event): stop with status "stopped" and the bound so far (a portfolio partner finished)."""
    refuse_if_too_large(inst)
    t_enter = time.perf_counter()
    a = [int(x) for x in inst.arrival]
    s = [int(x) for x in inst.prompt]
    o = [int(x) for x in inst.output]
    M, n = int(inst.memory), inst.n
    bounds = _Bounds(a, s, o, M)
    a_last = max(a)
    before = [0] * n                                  # the identical request listed just before (symmetry)
    for group in identical_groups(inst):
        for i, j in zip(group, group[1:]):
            before[j] = 1 << i
    ub = BIG if upper is None else int(round(upper))
    full = (1 << n) - 1
    t0 = min(a)
    h0 = bounds.h(full, (), t0)
    heap = [(h0, 0, t0, full, (), None)]
    best_g = {(full, (), t0 if t0 < a_last else -1): 0}
    expanded = 0
    found = None

    def finish(status, bound):
        if found is not None:
            g, path = found
            starts = np.zeros(n, dtype=np.int64)
            while path is not None:
                t, X, path = path
                for i in range(n):
                    if X >> i & 1:
                        starts[i] = t
            return SearchResult(status, float(g), starts, float(bound), expanded, len(best_g),
                                time.perf_counter() - t_enter)
        starts = None if upper_starts is None else np.asarray(upper_starts, dtype=np.int64)
        return SearchResult(status, None if upper is None else float(upper), starts, float(bound), expanded,
                            len(best_g), time.perf_counter() - t_enter)

    while heap:
        f, g, t, W, act, path = heapq.heappop(heap)
        g = -g
        key = (W, act, t if t < a_last else -1)
        if best_g.get(key, BIG) < g:
            continue                                  # reached more cheaply since
        if W == 0 and not act:
            found = (g, path)
            return finish("optimal", g)
        expanded += 1
        if len(best_g) > max_states:
            return finish("feasible", min(f, ub))
        if REQUESTED.is_set():
            return finish("interrupted", min(f, ub))
        if stop_when is not None and stop_when.is_set():
            return finish("stopped", min(f, ub))
        if deadline is not None and time.perf_counter() > deadline:
            return finish("time_limit", min(f, ub))
        arrived = [j for j in range(n) if W >> j & 1 and a[j] <= t]
        cost = len(act) + len(arrived)
        if not act and not arrived:                   # nothing to do before the next arrival: jump
            t_next = min(a[j] for j in range(n) if W >> j & 1)
            key2 = (W, act, t_next if t_next < a_last else -1)
            if best_g.get(key2, BIG) > g:
                best_g[key2] = g
                heapq.heappush(heap, (f, -g, t_next, W, act, path))
            continue
        # peaks of the running set: (completion offset d, memory then); a start of j adds s_j + d
        peaks = []
        for i, age in act:
            d = o[i] - age
            peaks.append([d, sum(s[k] + ag + d for k, ag in act if ag + d <= o[k])])
        moves = []

        def extend(pos, X, peaks, members):
            moves.append((X, members))
            for q in range(pos, len(arrived)):
                j = arrived[q]
                if before[j] & W & ~X:
                    continue                          # an identical request listed earlier still waits
                ok = True
                for d, load in peaks:
                    if d <= o[j] and load + s[j] + d > M:
                        ok = False
                        break
                if not ok:
                    continue
                own = s[j] + o[j] + sum(s[k] + ag + o[j] for k, ag in members if ag + o[j] <= o[k])
                if own > M:
                    continue
                grown = [[d, load + s[j] + d if d <= o[j] else load] for d, load in peaks] + [[o[j], own]]
                extend(q + 1, X | (1 << j), grown, members + [(j, 0)])

        extend(0, 0, peaks, list(act))
        idle_dominated = not act and len(arrived) == W.bit_count()   # all left have arrived
        for X, members in moves:
            if X == 0 and idle_dominated:
                continue
            nxt = tuple(sorted((i, age + 1) for i, age in members if age + 1 < o[i]))
            W2, t2, g2 = W & ~X, t + 1, g + cost
            key2 = (W2, nxt, t2 if t2 < a_last else -1)
            if best_g.get(key2, BIG) <= g2:
                continue
            f2 = max(g2 + bounds.h(W2, nxt, t2), f)   # pathmax
            if f2 >= ub:
                continue
            best_g[key2] = g2
            heapq.heappush(heap, (f2, -g2, t2, W2, nxt, (t, X, path) if X else path))
    return finish("optimal", ub)                      # nothing beats the incumbent: it is optimal


@FORMULATIONS.register("latency-astar")
class LatencyAStar(ClosedForm):
    name = "latency-astar"
    models = (SLOT,)
    exact = True
    engine = "astar"               # no external solver: the search above
    integral_objective = True
    summary = ("exact A* search over rounds, bounded by the completion-time lemmas (proves about 8-12 "
               "requests; stopped early: a certified lower bound)")
    search_incumbent = staticmethod(LatencyIP.search_incumbent)
    max_requests = MAX_REQUESTS   # refused above it (solve.check_applicable), before policies run
    scalable_alternative = LatencyIP.scalable_alternative

    def solve(self, profile, warm_schedule=None) -> SolveResult:
        inst = self.inst
        starts = upper = None
        if warm_schedule is not None:
            starts = starts_from_schedule(inst, warm_schedule)
            if starts is not None:
                upper = float((starts + inst.output - inst.arrival).sum())
        found = astar_search(inst, upper, starts, deadline=time.perf_counter() + 0.98 * profile.time_limit)
        why = {"optimal": "search complete", "time_limit": "time limit reached",
               "feasible": f"stopped at {MAX_STATES:,} states", "interrupted": "interrupted (Ctrl-C)"}[found.status]
        x = None if found.starts is None else found.starts.astype(np.float64)
        return SolveResult(found.status, found.objective, found.bound, found.seconds, x,
                           f"{why}: {found.expanded:,} states expanded, {found.states:,} stored")

    def extract(self, starts):
        return schedule_from_starts(self.inst, np.round(starts).astype(np.int64))

    def warm_start(self, schedule):
        return schedule
