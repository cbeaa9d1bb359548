"""Exact best-first (A*) search for the seed-004 latency problem, eqs. (1)-(4) (ours, issue 12; slot model).

The time-indexed IP grows with the horizon and its LP relaxation smooths the memory ramps away; the
completion-time relaxations (:mod:`lpbench.formulations.completion`) are strong but CP-SAT proves them
slowly. This module searches the schedules themselves, round by round, and prunes with lower bounds
built from the same lemmas and from exact optima of subsets. It proves small instances (up to 20 requests
within a minute, and some paper-size draws of 25-31 requests in a few minutes) and, stopped early, still
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
* *Dominance*: a state reached at cost g2 is dropped when a "twin" with one request less to do is stored
  at g1 <= g2 + what that request still costs here (OPT(·) below: the least cost to come):

  (a) twin (W, A, t) of (W, A ∪ {i}, t), i finished there, the others at the same ages, g1 <= g2 + o_i − α_i.
      Every continuation (the later starts of W) from the state is feasible from the twin, whose memory is
      lower at every round by i's footprint, and costs o_i − α_i less there (i's remaining rounds), so
      g1 + OPT(W, A, t) <= g2 + OPT(W, A ∪ {i}, t).
  (b) twin (W − {j}, A, t) of (W, A, t), j done there, the same running set, g1 <= g2 + o_j. A continuation
      from the state, less j's start, is feasible from the twin (j only adds memory; identical requests
      keep their order, j being done), and costs at least o_j less there (j counts C_j − max(t, a_j) >= o_j
      rounds), so g1 + OPT(W − {j}, A, t) <= g2 + OPT(W, A, t).

  The reductions above are local to a state (they keep an optimal continuation from every state), so OPT of
  a state is the same with them. A twin has fewer waiting requests, or as many and fewer running ones, so
  no chain of drops cycles, and an optimal path through a dropped state is matched by one through its twin:
  the A* invariant below still holds. On the first 15 requests of jaillet-model1 draw 1 (12 tabulated,
  incumbent OPT + 1), 19 % of the states stored without the reduction are dominated by (a); with (a),
  21 % of those left by (b) (scratch dom.py).

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
    both active, fit beside it; one that is not active starts at or after C_h. In its exact form the three
    cases stay apart: 2δ_l + δ_{l+1} >= p_h + p_j + p_k − M, or δ_l + δ_{l+1} >= o_k, or δ_l >= o_j.

  Lemma 2 alone sees only pairs that cannot both be at their peaks (p_h + p_j > M); the triple sees
  three mid-size requests whose peaks fit pairwise but not together. To keep a dynamic programme over
  subsets, each gap's weight c_l is split: a share (1 − β)·c_l goes with the triple where δ_l comes
  first, β·c_l with the one where it comes second (β = 1/3, ``CHAIN_SPLIT``; the last gap, c = 1, gives all of
  its weight to its one triple, β = 1). Any β is valid (``chain-bound``'s docstring, "The split"); ``chain-bound``
  takes 3/8, which raises its chain by 0.8-3.8 % at paper size, but here it did not help the proofs: on Model-1 n =
  18 draws 3 and 19 and Model-2 n = 20 draw 5 (60 s, one run each, 2026-12-01) the search ended at 760, 407 and 939
  with 3/8 against 761, 408 and 952 with 1/3 (docs/seed004-certification.md). Each triple then contributes at least the
  integer minimum of a·δ_l + b·δ_{l+1} over the gaps the triple alone allows (the union of the three cases with the
  pair rows; :func:`~lpbench.formulations.completion.triple_bonus`), that is a·w(h, j) + b·w(j, k) + B(c_l, h, j, k)
  with B >= 0, and Σ_l c_l·δ_l >= Σ_l c_l·w(π(l−1), π(l)) + Σ_triples B (the shares add up to c_l, and each share is
  at least its weight times w). The least such chain over S that starts with h, j is tabulated once over all subsets,
  in units of 1/d (d = ``UNIT``, thirds): d·G(S, h, j) = d(|S| − 1)·w(h, j) +
  min_{k ∈ S−h−j} (dB(|S| − 1, h, j, k) + d·G(S − h, j, k)) (2^n·n² entries, computed two sizes at a time, and
  2^n·n row minima kept, so over at most ``TABLE_REQUESTS`` requests; instances above
  ``MAX_REQUESTS`` are refused before the search); (L) = min_{h,j} (m·c_h + G(W, h, j)), and min_j c_j
  when m = 1.
  The chain charges only its first completion its c, so one short request makes it weak; (L) is
  taken over subsets U ⊆ W, each request left out counted at its own c_j (:meth:`_Bounds.chain`).
  *Beyond 20 requests* the table covers only the ``TABLE_REQUESTS`` of longest output (placed first by
  :func:`table_order`), and U ranges over subsets of W within them: the others are always left out, at their
  own c_j. Valid by the same argument (any U ⊆ W); up to 20 requests nothing changes.

* (P) *patterns* (additive pattern databases, as in heuristic search): the optimum of every subset S of the
  ``pattern_size`` requests of largest peak, G1, alone and all arrived, is tabulated before the search
  (:func:`build_patterns`, by this search on the subsets, smallest first, in two threads). The requests of
  W ∩ G1 cannot start before t + δ (δ their least earliest start beside A), and the schedule restricted to them
  is a schedule of them alone, so they cost at least |W ∩ G1|·δ + pattern[W ∩ G1]; W − G1 is bounded by the
  rest of h on its own. The chain and the volume see requests pairwise, by threes or by memory-time;
  the table sees how ten large requests really interleave (first 15 requests of jaillet-model1 draw 8:
  root bound 304 without, 345 with, OPT 374; scratch measurement, docs/seed004-certification.md).
  *Copies* (:func:`pattern_copies`): the additive split misses how the requests left out delay the large ones
  (first 17 requests of jaillet-model1 draw 1: each of its four mid-size others adds 48-70 to the 12 largest's
  optimum 913, four times its own o; scratch pairprobe.py, docs/seed004-certification.md). So a group of the
  others is tabulated too, each replaced by one lighter copy (s*, o*) = (least s, least o) of the group: a copy
  fits wherever its request did and ends exactly o_j − o* rounds sooner (started when j starts), so Σ (C_j − t)
  over S ∪ {any c of the group} is at least OPT(S with c copies), the entry, plus Σ (o_j − o*) over the c
  (:func:`build_patterns`, :func:`copies_shorter`), and the copies being identical, the table grows by a factor of
  (group size + 1), not 2^(group size) (:func:`canonical_subset`). Root bound there: 1,056 without, 1,158 with
  four copies beside the 12 largest (OPT 1,192; scratch cfg.py; before the o_j − o* term). A running request at
  age α is a request started at t with prompt s + α and o − α outputs, so it too can take a copy's place where
  s* <= s + α and o* <= o − α, the copy then costing o* from t (:func:`running_as_copies`): then (P) also sees
  how the running requests delay the waiting ones (the table's searches get faster by this too). By default (P)
  tabulates the 9 largest and up to 7 copies (``PATTERN_MEMBERS``, ``COPY_ROOM``).

h = Σ_A (o_i − α_i) + max((V), (L), (P)) − Σ_{j∈W} max(0, a_j − t), (P) taken for G1 (and, when asked, for G1
less its last members by peak: ``PATTERN_LEVELS``).

**Certificates.** With an incumbent UB (a verified schedule), nodes with f >= UB are dropped: if the
search empties, UB is optimal. Stopped early (time or state limit), the least f among open nodes (and
UB) is a certified lower bound: some open node lies on an optimal path with its optimal cost so far
(the standard A* invariant, kept by re-opening a state reached more cheaply), and its f <= OPT.

**Two parts** (``threads=2``; :func:`_best_first_parallel`). The search can run as two searches in two threads
that own the states by a hash of the running set and send each other the successors they do not own (hash-
distributed A*); the same invariant holds with the states on their way counted as open (proof there).
"""
from __future__ import annotations

import copy
import os
import threading
import time

import numpy as np

from ..cores import both_cores
from ..errors import InputError
from ..interrupt import REQUESTED, expired
from ..semantics import SLOT
from ..sim.multi import sub_instance
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm
from .compiled import compiled
from .completion import pair_separation, triple_bonus
from .latency_ip import LatencyIP, identical_groups, schedule_from_starts, starts_from_schedule

#: the chain table G has 2^m·m² entries for the m requests it covers, built two sizes of subsets at a time
#: (:func:`chain_kernel`); the search keeps its row minima, 2^m·n entries of 8 bytes (168 MB at 20 requests). It is
#: built in 2.2-2.5 s at 20 requests (peak RSS 0.48 GB), 4.5-4.7 s with the whole table held (2.05 GB) before
#: (docs/seed004-certification.md, "The chain table two sizes at a time"), and each request more about doubles
#: both: it covers at most this many, the requests of longest output (:func:`table_order`)
TABLE_REQUESTS = 20
#: the search is refused above this many requests: the state keys pack the running requests' ages in
#: ``AGE_WORDS`` words, ten ages a word for outputs below 64 (the paper's), so 40 (:func:`refuse_if_too_large`
#: refuses sooner for longer outputs). Waiting sets are cached in a hash table, which cost the search little against
#: the 2^n array it replaced (limited to 28 requests): 28.1 s against 27.1 s, the same states (first 18 requests of
#: jaillet-model2 draw 5, UB = OPT + 1; docs/seed004-certification.md, "Beyond 28 requests").
#: Keep ``LatencyIP.astar_max_requests`` at most this
MAX_REQUESTS = 40
#: stop (with a certified bound) after this many distinct states: about 0.4 KB each with the compiled search
#: (0.75 GB of peak RSS at 2.0 M states, the first 14 requests of jaillet-model1 draw 1; scratch measurement
#: under /usr/bin/time), so 4.5 GB at the limit, which a 60 s search can reach; (P)'s cache of the rest bound
#: (``rest_h``) adds up to about three entries per state (13 M for 4.7 M states on the first 17 requests of
#: jaillet-model2 draw 5 with 11 members tabulated; scratch d1.py). The bound's caches grow with n: 7.3 GB of peak
#: RSS at the limit on jaillet-model2 draw 18 (31 requests, 600 B per state; docs/seed004-certification.md, "Tried on
#: the search's bound")
MAX_STATES = 12_000_000
#: and when the process holds more than this share of the machine's memory (:func:`memory_full`): the bytes per state
#: grow with the outputs' length (a running set's cached parts hold its memory at each round still to come, 1 + n +
#: o_max words), so below the state limit the certify step's searches on an Azure prefix of 30 requests at rho = 0.8
#: (outputs up to 467) filled the 24 GB machine in 240 s and the process was killed (docs/cli-hardening.md)
MEMORY_SHARE = 0.6
BIG = 1 << 40
#: the f of the start state when it is pushed: its first pop computes its h at the search's one call of
#: :func:`state_bound`, pushes it again at f = h and records h as the root bound (``counters[6]``). ``state_bound``
#: is inlined there; computing the root's h from Python compiled a second copy of it (``lpbench warmup``'s exact
#: search step with an empty NUMBA_CACHE_DIR: 59.9 s with that copy, 51.5 s without, one run each, 2026-11-28)
UNSCORED = -1
HASH_MUL, HASH_MIX = -7046029254386353131, -4658895280553007687   # 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9
AGE_WORDS = 4   # a state key packs the running set's ages into this many int64 words (:func:`age_layout`)
CHAIN_BIG = 1 << 30   # "no such chain" in the int32 chain table
CHAIN_SPLIT = (2, 3)  # (L)'s split of each gap's weight between its two triples (module docstring)
UNIT = CHAIN_SPLIT[1]  # the chain table (L) in units of 1/UNIT


class SearchResult:
    """What the search found: status ("optimal", "time_limit", "feasible" at the state or the memory limit:
    ``memory`` says which, "interrupted"), the best objective and its starts (None if no schedule beat the
    incumbent and none was given), the certified lower bound, and counters: states expanded and stored, seconds,
    the root's bound h and how many requests (P) tabulated."""

    def __init__(self, status, objective, starts, bound, expanded, states, seconds, root=None, tabulated=0,
                 memory=False):
        self.status, self.objective, self.starts, self.bound = status, objective, starts, bound
        self.expanded, self.states, self.seconds = expanded, states, seconds
        self.root, self.tabulated, self.memory = root, tabulated, memory


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
    """The lower bound h of the module docstring. Its per-running-set parts (:func:`running_parts`) and
    per-waiting-set parts (:func:`waiting_parts`) repeat across many states; both are cached in numba
    containers that the search kernel (:func:`_expand`) fills and reads, so Python callers (the tests) and the
    search compute h by the same kernel, :func:`state_bound` (the search computes its root bound itself:
    ``UNSCORED``)."""

    def __init__(self, a, s, o, M):
        self.s, self.o, self.M = s, o, M
        self.n = n = len(s)
        self.span = sum(o) + max(o) + 2   # offsets x searched (a bound beyond them reads span + 1: still valid)
        self.w = pair_separation(s, o, M).tolist()     # Lemma 2, w[h][j]
        self.a_arr, self.s_arr, self.o_arr = (np.array(v, dtype=np.int64) for v in (a, s, o))
        self.p_arr = self.s_arr + self.o_arr
        self.vol_arr = self.s_arr * self.o_arr + self.o_arr * (self.o_arr + 1) // 2
        # UNIT·min_j G[S, h, j]: all the search reads of the chain table (which is not kept), over the first
        # ``tabled`` requests (S ⊆ them; the columns of the others CHAIN_BIG)
        self.tabled = min(n, TABLE_REQUESTS)
        self.G3_first = self.chain_tables()[1]
        self.a_last = max(a)
        self.layout = age_layout(o)
        self.new_caches()
        # (P): the optima of subsets (of the first ``tabled`` requests: :func:`pattern_members`), and the nested
        # sets G1 it is applied with, filled by build_patterns
        self.pattern, self.G1s = np.zeros(1 << self.tabled, dtype=np.int64), np.zeros(0, dtype=np.int64)
        self.groups = np.zeros((0, 4), dtype=np.int64)   # (P)'s groups of copies (:func:`canonical_subset`)

    def new_caches(self) -> None:
        """Empty caches of the per-set parts of h, and h's scratch."""
        from .astar_containers import new_caches

        self.run_slot, self.run_parts, self.wait_slot, self.wait_parts, self.rest_h = new_caches()
        self.work = np.empty(2 * self.n, dtype=np.int64)   # h's scratch: the members' c, then sorted

    def with_own_caches(self) -> "_Bounds":
        """A copy for another thread: the same instance arrays, chain minima and (P) tables (``pattern`` shared, so
        entries written through either are seen by both), with caches and scratch of its own (numba's containers
        are not safe to fill from two threads)."""
        other = copy.copy(self)
        other.new_caches()
        return other

    def caches(self) -> tuple:
        """The arguments of :func:`state_bound` after the state: the instance's arrays and the caches."""
        return (self.a_arr, self.s_arr, self.o_arr, self.p_arr, self.vol_arr, self.M, self.span, self.a_last,
                self.G3_first, self.run_slot, self.run_parts, self.wait_slot, self.wait_parts, self.pattern,
                self.G1s, self.groups, self.rest_h, self.work)

    def triple_bonus(self) -> np.ndarray:
        """UNIT·B(c, h, j, k) of (L) for c = 2..n−1 (:func:`~lpbench.formulations.completion.triple_bonus`)."""
        k = self.tabled
        return triple_bonus(self.p_arr[:k], self.o_arr[:k], np.array(self.w, dtype=np.int64)[:k, :k], self.M, k,
                            split=CHAIN_SPLIT)

    def chain_tables(self, whole: bool = False) -> tuple[np.ndarray | None, np.ndarray]:
        """What the search keeps of the chain table, UNIT·min_j G[S, h, j] for every S and request h (CHAIN_BIG for h
        outside S, |S| = 1 and requests beyond ``tabled``), computed by :func:`chain_kernel`, which holds only two
        sizes of subsets at a time; and, with ``whole``, the table itself, UNIT·G[S, h, j] for every subset S (bitmask)
        and h ≠ j in S, CHAIN_BIG elsewhere (2^m·m² entries, for the tests; else None)."""
        k = self.tabled
        first = np.full((1 << k, self.n), CHAIN_BIG, dtype=np.int64)
        G = np.full((1 << k, k, k) if whole else (1, 1, 1), CHAIN_BIG, dtype=np.int32)
        chain_kernel(UNIT * np.array(self.w, dtype=np.int64)[:k, :k], self.triple_bonus(), first, G)
        return (G if whole else None), first

    def running(self, act):
        """(Σ remaining rounds, least start offset e_j of every request beside it, its memory U at rounds
        t + 1.. while it runs, |A|) of the running set ``act`` ((id, age) pairs; :func:`running_parts`)."""
        remaining, e, U = running_parts(*running_arrays(act), self.s_arr, self.o_arr, self.M)
        return int(remaining), e, U, len(act)

    def waiting(self, W):
        """(members, their o, prefix sums of their sorted volumes, the chain's subsets (first_G, size3, gone)
        (:func:`waiting_parts`), size) of the waiting set W."""
        idx, o_w, V, first_G, size3, gone = waiting_parts(W, self.o_arr, self.p_arr, self.vol_arr, self.G3_first)
        return idx, o_w, V, (first_G, size3, gone), len(idx)

    def h(self, W, act, t):
        """h of the state (W, running set ``act``, t) (:func:`state_bound`)."""
        ids, ages = running_arrays(act)
        return int(state_bound(BIG, W, t, pack_ages(ids, ages, *self.layout), ids, ages, *self.caches()))

    @staticmethod
    def chain(c, drops) -> int:
        """(L) for the members' earliest completions ``c`` and the subsets ``drops`` of :meth:`waiting`
        (:func:`chain_bound`)."""
        c = np.asarray(c, dtype=np.int64)
        none = np.zeros(len(c), dtype=np.int64)
        return int(chain_bound(c, pack_waiting(none, none, none, *drops)))


@compiled
def chain_kernel(w3, B, first, whole):
    """d·G[S, h, j] of (L) (module docstring; d = ``UNIT``) from d·w (``w3``) and the bonuses d·B[c, h, j, k]: G[{h, j},
    h, j] = dw(h, j), and for |S| = m >= 3, d·G(S, h, j) = d(m − 1)·w(h, j) + min_{k ∈ S−h−j} (dB(m − 1, h, j, k)
    + d·G(S − h, j, k)); writes ``first[S, h]`` = min_j G[S, h, j], all the search reads, and ``whole[S, h, j]``
    when ``whole`` is the full table (shape (2^k, k, k); (1, 1, 1): not kept). The entries of size m depend only
    on those of size m − 1, so sizes go in ascending order and only two are held, each subset's entries indexed by
    its members' positions (m² per subset: 74 MB for the largest size of 20 requests, where the whole table takes
    1.7 GB). Subsets of one size come in increasing order (Gosper's step), so the r-th is the one of rank r in the
    combinatorial number system, rank(S) = Σ_i C(x_i, i + 1) over its members x_0 < x_1 < …, and S less its i-th
    member has rank Σ_{i' < i} C(x_i', i' + 1) + Σ_{i' > i} C(x_i', i')."""
    k = w3.shape[0]
    binom = np.zeros((k + 1, k + 2), dtype=np.int64)
    for a in range(k + 1):
        binom[a, 0] = 1
        for b in range(1, a + 1):
            binom[a, b] = binom[a - 1, b - 1] + binom[a - 1, b]
    keep = whole.shape[0] > 1
    members = np.empty(k, dtype=np.int64)
    below = np.empty(k + 1, dtype=np.int64)           # Σ_{i' < i} C(x_i', i' + 1)
    above = np.empty(k + 1, dtype=np.int64)           # Σ_{i' >= i} C(x_i', i')
    prev = np.empty((1, 1, 1), dtype=np.int32)
    for m in range(2, k + 1):
        count = binom[k, m]
        cur = np.empty((count, m, m), dtype=np.int32)
        S = (1 << m) - 1
        for r in range(count):
            q = 0
            for j in range(k):
                if S >> j & 1:
                    members[q] = j
                    q += 1
            if m == 2:
                h, j = members[0], members[1]
                cur[r, 0, 1], cur[r, 1, 0] = w3[h, j], w3[j, h]
                first[S, h], first[S, j] = w3[h, j], w3[j, h]
                if keep:
                    whole[S, h, j], whole[S, j, h] = w3[h, j], w3[j, h]
            else:
                below[0], above[m] = 0, 0
                for i in range(m):
                    below[i + 1] = below[i] + binom[members[i], i + 1]
                for i in range(m - 1, -1, -1):
                    above[i] = above[i + 1] + binom[members[i], i]
                for x in range(m):
                    h = members[x]
                    rest = below[x] + above[x + 1]        # the rank of S − h
                    low = np.int64(CHAIN_BIG)
                    for y in range(m):
                        if y == x:
                            continue
                        j = members[y]
                        y_rest = y if y < x else y - 1     # j's position in S − h
                        best = np.int64(CHAIN_BIG)
                        for z in range(m):
                            if z != x and z != y:
                                best = min(best, B[m - 1, h, j, members[z]] + prev[rest, y_rest, z if z < x else z - 1])
                        value = min((m - 1) * w3[h, j] + best, CHAIN_BIG)
                        cur[r, x, y] = value
                        low = min(low, value)
                        if keep:
                            whole[S, h, j] = value
                    first[S, h] = low
            if r + 1 < count:                           # the next subset of m members (Gosper)
                c = S & -S
                nxt = S + c
                S = (((nxt ^ S) >> 2) // c) | nxt
        prev = cur


def running_arrays(act) -> tuple[np.ndarray, np.ndarray]:
    """The running set ``act`` ((id, age) pairs) as the kernels take it: (ids, ages)."""
    return (np.array([i for i, _ in act], dtype=np.int64), np.array([age for _, age in act], dtype=np.int64))


def age_layout(o) -> tuple[int, int]:
    """How :func:`pack_ages` packs ages for outputs ``o``: (bits per age, ages per word). A running request's age
    is at most o_i − 1, so ``bits`` = the bit length of max o − 1 (at least 1), and a word holds 64 // bits ages
    (the top one may set the sign bit; unpacking masks it off): 10 per word for the paper's outputs (below 64),
    4 for outputs up to 2^16."""
    bits = max(int(max(o)) - 1, 1).bit_length()
    return bits, 64 // bits


@compiled
def pack_ages(ids, ages, bits, per):
    """The running set (``ids``, ``ages`` >= 1) as AGE_WORDS words of ``bits``-bit ages, request i in word
    i // ``per`` at position i % ``per`` (0: not running; :func:`age_layout`): the key of its cache entry and
    part of the state's key."""
    w0 = w1 = w2 = w3 = 0                            # scalars, not an array: no allocation per successor
    for x in range(len(ids)):
        word, part = ids[x] // per, ages[x] << ((ids[x] % per) * bits)
        if word == 0:
            w0 |= part
        elif word == 1:
            w1 |= part
        elif word == 2:
            w2 |= part
        else:
            w3 |= part
    return (w0, w1, w2, w3)


@compiled(inline=True)
def unpack_ages(key, ids, ages, bits, per):
    """The running set packed as ``key`` (:func:`pack_ages`) into ``ids`` and ``ages`` (ascending ids); returns how
    many run."""
    mask = (1 << bits) - 1
    q = 0
    for i in range(len(ids)):
        age = (key[i // per] >> ((i % per) * bits)) & mask
        if age > 0:
            ids[q] = i
            ages[q] = age
            q += 1
    return q


@compiled
def waiting_parts(W, o, p, vol, G3_first):
    """The parts of h that depend on the waiting set W alone: its members idx (ascending), their o, the prefix
    sums V of their sorted volumes, and the chain's subsets: W less its r requests of least o, then of least p
    (stable order; r = 0..m − 2), as rows of first_G (UNIT·min_j G[U_r, h, j] for the members h), size3 =
    UNIT·|U_r|, and gone (the members dropped in each order). Members outside the chain table (``G3_first`` covers the
    first log2(len) requests: :func:`table_order`) are dropped first in both orders, and a row whose U_r still holds one
    gets −BIG, below every other row (:func:`chain_bound` takes the largest)."""
    n = len(o)
    m = 0
    for j in range(n):
        if W >> j & 1:
            m += 1
    idx = np.empty(m, dtype=np.int64)
    x = 0
    for j in range(n):
        if W >> j & 1:
            idx[x] = j
            x += 1
    V = np.cumsum(np.sort(vol[idx]))
    drop = max(m - 2, 0)
    tabled, bits = len(G3_first), 0                   # the chain table's subsets: of the first ``bits``
    while (1 << bits) < tabled:                       # requests; the others are dropped first
        bits += 1
    outside = idx >= bits
    gone = np.empty((2, drop), dtype=np.int64)
    gone[0] = np.argsort(np.where(outside, 0, o[idx]), kind="mergesort")[:drop]
    gone[1] = np.argsort(np.where(outside, 0, p[idx]), kind="mergesort")[:drop]
    rows = max(m - 1, 0)
    first_G = np.empty((2 * rows, m), dtype=np.int64)
    size3 = np.empty(2 * rows, dtype=np.int64)
    for order in range(2):
        U = W
        for r in range(rows):
            if r > 0:
                U -= 1 << idx[gone[order, r - 1]]
            for y in range(m):
                # a subset with requests outside the table: no chain (a value below every other row's)
                first_G[order * rows + r, y] = G3_first[U, idx[y]] if U < tabled else -BIG
            size3[order * rows + r] = UNIT * (m - r)
    return idx, o[idx], V, first_G, size3, gone


@compiled
def pack_running(remaining, e, U):
    """A running set's parts (:func:`running_parts`) in one array, the form its cache holds (one look-up, one
    reference count, where three lists took three): Σ remaining rounds, then e (n values), then the prefix sums
    of U."""
    n = len(e)
    run = np.empty(1 + n + len(U), dtype=np.int64)
    run[0] = remaining
    run[1:1 + n] = e
    run[1 + n:] = np.cumsum(U)
    return run


@compiled
def pack_waiting(idx, o_w, V, first_G, size3, gone):
    """A waiting set's parts (:func:`waiting_parts`) in one array, the form its cache holds: m, R (the chain's
    subsets per drop order), the number dropped at most, then idx, o_w, V (m values each), size3 (2R),
    first_G (2R rows of m) and gone (2 rows of m − 2 at most; :func:`chain_bound`)."""
    m, rows, drop = len(idx), len(size3) // 2, gone.shape[1]
    part = np.empty(3 + 3 * m + 2 * rows + 2 * rows * m + 2 * drop, dtype=np.int64)
    part[0], part[1], part[2] = m, rows, drop
    part[3:3 + m] = idx
    part[3 + m:3 + 2 * m] = o_w
    part[3 + 2 * m:3 + 3 * m] = V
    at = 3 + 3 * m
    part[at:at + 2 * rows] = size3
    at += 2 * rows
    for row in range(2 * rows):
        part[at + row * m:at + (row + 1) * m] = first_G[row]
    at += 2 * rows * m
    for order in range(2):
        part[at + order * drop:at + (order + 1) * drop] = gone[order]
    return part


@compiled(inline=True)
def state_bound(enough, W, t, key, ids, ages, a, s, o, p, vol, M, span, a_last, G3_first, run_slot, run_parts,
                wait_slot, wait_parts, pattern, G1s, groups, rest_h, work):
    """h of the state (W, running requests ``ids`` at ``ages`` packed as ``key``, t), its parts taken from the
    caches or computed and cached (:func:`running_parts`, :func:`waiting_parts`, each kept as one array:
    :func:`pack_running`, :func:`pack_waiting`), with :func:`waiting_bound` (``work``: its scratch, 2n values),
    or a smaller bound that reaches ``enough`` (:func:`waiting_bound`); then (P), the pattern bound: with
    ``pattern[S]`` the optimum of S ⊆ G1 alone (:func:`build_patterns`, read at :func:`canonical_subset`; 0
    where not built) and δ the least start offset max(e_j, a_j − t) of the members of S = W ∩ G1, remaining +
    max(pattern[S] + |S|·δ, pattern[S with running requests as copies] − the copies' rounds o* from t
    (:func:`running_as_copies`)) + Σ (o_j − o*) over the copies' requests in S (:func:`copies_shorter`) − Σ_S
    forced waiting + h of W − G1 beside the running set. That last h
    depends only on the running set, W − G1 and t (t only while some request has not arrived), so it is cached
    in ``rest_h`` under (the running set's slot, W − G1, t or −1): on the first 15 requests of jaillet-model1
    draw 1 the search took 17.2 s instead of 21.2 s with it, the same 1.09 M states expanded (scratch script
    ``d1.py``)."""
    if key in run_slot:
        slot = run_slot[key]
    else:
        remaining, e, U = running_parts(ids, ages, s, o, M)
        slot = len(run_parts)
        run_parts.append(pack_running(remaining, e, U))
        run_slot[key] = slot
    run = run_parts[slot]
    remaining = run[0]
    if W == 0:
        return remaining
    h = waiting_bound(run, len(ids), M, span, waiting_slot(W, o, p, vol, G3_first, wait_slot, wait_parts), a, t,
                      a_last, enough, work)
    for level in range(len(G1s)):                     # (P) for each nested G1, largest first
        if h >= enough:
            return h
        G1 = G1s[level]
        S = W & G1
        at = canonical_subset(S, groups)
        entry = pattern[at]
        key_run, run_used = running_as_copies(at, S, G1, groups, ids, ages, s, o)
        entry_run = pattern[key_run] if run_used > 0 else 0
        if entry == 0 and entry_run == 0:
            continue
        # the schedule restricted to S = W ∩ G1 schedules it alone from t + δ, δ the least of its members'
        # earliest starts beside the running set; forced waiting is subtracted as in h
        delta, late, size = BIG, 0, 0
        for j in range(len(a)):
            if S >> j & 1:
                wait = max(a[j] - t, 0) if t < a_last else 0
                delta = min(delta, max(run[1 + j], wait))
                late += wait
                size += 1
        shorter = copies_shorter(S, groups, o)         # a copy ends o_j − o* rounds before its request
        part = entry + size * delta - late + shorter if entry > 0 else -BIG
        if entry_run > 0:                             # with running requests as copies, from t
            part = max(part, entry_run - late - run_used + shorter)
        rest = W & ~G1
        if rest == 0:
            h = max(h, remaining + part)
            continue
        rest_key = (slot, rest, t if t < a_last else -1)
        h_rest = rest_h.get(rest_key, -BIG)
        if h_rest == -BIG:
            h_rest = waiting_bound(run, len(ids), M, span,
                                   waiting_slot(rest, o, p, vol, G3_first, wait_slot, wait_parts), a, t, a_last,
                                   BIG, work)
            rest_h[rest_key] = h_rest
        h = max(h, part + h_rest)
    return h


@compiled(inline=True)
def popcount(x):
    count = 0
    while x != 0:
        x &= x - 1
        count += 1
    return count


@compiled(inline=True)
def copies_shorter(S, groups, o):
    """Σ (o_j − o*) over the members j of S tabulated as copies (``groups`` of :func:`canonical_subset`): the rounds by
    which each copy, started when its request starts, ends sooner (:func:`build_patterns`)."""
    total = 0
    for g in range(len(groups)):
        part, o_copy = S & groups[g, 0], groups[g, 2]
        j = 0
        while part != 0:
            if part & 1:
                total += o[j] - o_copy
            part >>= 1
            j += 1
    return total


@compiled(inline=True)
def running_as_copies(key, S, G1, groups, ids, ages, s, o):
    """The table entry of S = W ∩ G1 (read at ``key`` = :func:`canonical_subset` of S) with running requests added as
    copies, and the copies' rounds from t, Σ o* over them (0: none added). A request running at age α from round t
    on is a request started at t with prompt s + α and o − α outputs (the same memory at every round), so where
    s* <= s + α and o* <= o − α a copy (s*, o*) of its group replaces it (:func:`build_patterns`), while the group
    has copies of G1 left over: the schedule from t restricted to S and those requests, the copies put in their
    place (S's own copies' requests too, each ending o_j − o* sooner: :func:`copies_shorter`), is one of the
    entry's set from time 0, costing Σ_S (C_j − t) − Σ over S's copied requests (o_j − o*) + o* for each running
    request taken."""
    run_used, taken = 0, 0
    for g in range(len(groups)):
        mask, s_copy, o_copy = groups[g, 0], groups[g, 1], groups[g, 2]
        count, room = popcount(S & mask), popcount(G1 & mask)
        added = 0
        for x in range(len(ids)):
            i = ids[x]
            if (count + added < room and not taken >> i & 1
                    and s[i] + ages[x] >= s_copy and o[i] - ages[x] >= o_copy):
                taken |= 1 << i
                added += 1
                run_used += o_copy
        if added > 0:
            key = (key & ~mask) | groups[g, 3 + count + added]
    return key, run_used


@compiled(inline=True)
def canonical_subset(S, groups):
    """The table entry of S (:func:`build_patterns`): S with its members in each group of copies replaced by as
    many of the group's first ones. Row g of ``groups``: the group's mask, its copy's s* and o*, then the masks
    of its first c members for c = 0, 1, …; requests of a group are tabulated as copies of one request, so the
    entry of any c of them is that of the first c."""
    key = S
    for g in range(len(groups)):
        part = S & groups[g, 0]
        if part != 0:
            key = (key & ~groups[g, 0]) | groups[g, 3 + popcount(part)]
    return key


@compiled(inline=True)
def waiting_slot(W, o, p, vol, G3_first, wait_slot, wait_parts):
    """The waiting set W's parts (:func:`waiting_parts`, packed by :func:`pack_waiting`), computed on first use."""
    if W in wait_slot:
        return wait_parts[wait_slot[W]]
    wait_slot[W] = len(wait_parts)
    wait_parts.append(pack_waiting(*waiting_parts(W, o, p, vol, G3_first)))
    return wait_parts[-1]


@compiled(inline=True)
def waiting_bound(run, q, M, span, part, a, t, a_last, enough, work):
    """h for the waiting set of ``part`` (:func:`pack_waiting`: members idx, their o, the prefix sums V of their
    sorted volumes, the chain's subsets) beside a running set of q requests (``run``: :func:`pack_running`, its
    remaining rounds, e, and the prefix sums of its memory U while it runs):
    remaining + max((V), (L)) − Σ forced waiting. c_j: j's earliest completion (e_j, or its arrival if later,
    plus o_j), kept in ``work[:m]``, sorted in ``work[n:n + m]``. (V): the k-th smallest volume V_k needs x_k
    rounds, the least offset x (searched up to ``span``; none there reads span + 1, still valid) at which the
    Lemma-3 capacity of k + q stretches less the running set's memory, K((M + ½)y − y²/2) − Σ_{d<=x} U(d) with
    y = min(x/K, M + ½), in floats that never round a tie up, or the free capacity Σ_{d<=x} (M − U(d)) reaches
    it; the k-th completion is at least x_k and the k-th smallest c. (L): :func:`chain_bound`. Compiled;
    ``tests/test_latency_astar.py`` checks it against its numpy form.

    The searches over x skip what cannot hold, which changes no value: the free capacity is nondecreasing in
    x and V_k in k, so its least x is too, and the scan goes on from the previous one; and the Lemma-3
    capacity is at most (M + ½)x (both branches of y), so no x with (M + ½)x − Σ_{d<=x} U(d) <= V_k − 1
    reaches V_k − 1e-6 even with rounding, and the least x past those (again nondecreasing in k) is where
    the Lemma-3 scan starts.

    (L) is computed first: when remaining + (L) − Σ forced waiting already reaches ``enough`` (the search
    passes UB − g, so the state is pruned whatever (V) adds), that smaller value is returned without (V);
    ``enough`` above every bound gives h itself."""
    n = len(work) // 2
    m = part[0]
    idx, o_w, V = 3, 3 + m, 3 + 2 * m                 # where each part starts in ``part``
    late = 0
    for j in range(m):
        i = part[idx + j]
        work[j] = run[1 + i] + part[o_w + j]
        if t < a_last:                                # else everything has arrived: no waiting is forced
            wait = max(a[i] - t, 0)
            work[j] = max(run[1 + i], wait) + part[o_w + j]
            late += wait
    remaining = run[0]
    pair = work[0] if m == 1 else chain_bound(work, part)
    if remaining + pair - late >= enough:
        return remaining + pair - late
    for j in range(m):                                # c sorted, by insertion (m <= 20)
        c_j, y = work[j], n + j
        while y > n and work[y - 1] > c_j:
            work[y] = work[y - 1]
            y -= 1
        work[y] = c_j
    # Σ_{d<=x} U(d) = run[n + x] for x <= reach (the running set's prefix sums), then constant (``total``)
    reach = len(run) - 1 - n
    total = run[n + reach] if reach > 0 else 0
    volume = 0
    x_free, x_lo = 1, 1
    for k in range(m):
        V_k = part[V + k]
        while x_free <= span and M * x_free - (run[n + x_free] if x_free <= reach else total) < V_k:
            x_free += 1
        while x_lo <= span and 2 * (M * x_lo - (run[n + x_lo] if x_lo <= reach else total)) + x_lo <= 2 * V_k - 2:
            x_lo += 1
        target, K = V_k - 1e-6, np.float64(k + 1 + q)
        x_rows = span + 1
        for x in range(x_lo, span + 1):
            y = min(x / K, M + 0.5)
            if K * ((M + 0.5) * y - y * y / 2) - (run[n + x] if x <= reach else total) >= target:
                x_rows = x
                break
        volume += max(max(x_rows, x_free), work[n + k])
    return remaining + max(volume, pair) - late


@compiled(inline=True)
def chain_bound(c, part):
    """(L) over the best of the subsets U_r ⊆ W: W less its r requests of least o, or of least p (r = 0..
    m − 2), each dropped request j counted at its own c_j (``c[:m]``: the members' earliest completions).
    Valid for every U: Σ_{j∈W} (C_j − t) >= (L) on U + Σ_{j∉U} c_j. Dropping small requests helps
    because the chain charges only the first completion its c: one short request first makes
    m·c_π(1) small and its gaps are 0. Per W (:func:`pack_waiting`'s ``part``): size3 = UNIT·|U_r|, first_G =
    UNIT·min_j G[U_r, h, j] (rows U_r, columns the members h), and gone, the members dropped in each order."""
    m, R, drop = part[0], part[1], part[2]            # R subsets per drop order: r = 0..m − 2
    size3 = 3 + 3 * m
    first_G = size3 + 2 * R
    gone = first_G + 2 * R * m
    pair = -1
    for row in range(2 * R):
        at = first_G + row * m
        first = part[at] + part[size3 + row] * c[0]
        for h in range(1, m):
            first = min(first, part[at + h] + part[size3 + row] * c[h])
        value = first // UNIT
        order, r = row // R, row % R
        for d in range(r):
            value += c[part[gone + order * drop + d]]
        pair = max(pair, value)
    return pair


def unsearchable(inst) -> str | None:
    """Why the search cannot take ``inst``, or None: more than ``MAX_REQUESTS`` requests, or more running requests
    than ``AGE_WORDS`` words of a state's key hold at the bit width of its longest output (:func:`age_layout`). The
    certify step of ``latency-ip`` asks before it runs the search, and bounds such instances without it."""
    if inst.n > MAX_REQUESTS:
        return (f"it searches instances of at most {MAX_REQUESTS} requests (an exact search over the running "
                f"requests' ages, packed in {AGE_WORDS} words per state), and {inst.name} has {inst.n}")
    bits, per = age_layout(inst.output)
    if inst.n > AGE_WORDS * per:
        return (f"it packs the running requests' ages in {AGE_WORDS} words of 64 bits, {per} ages of {bits} bits "
                f"each for {inst.name}'s longest output, {int(inst.output.max())}: at most {AGE_WORDS * per} "
                f"requests, and it has {inst.n}")
    return None


def refuse_if_too_large(inst) -> None:
    why = unsearchable(inst)
    if why is not None:
        raise InputError(f"--formulation: 'latency-astar' cannot search {inst.name}: {why}; "
                         f"{LatencyIP.scalable_alternative}")


@compiled(inline=True)
def key_bit(key, size):
    """The bit of a state key (W, t key, four age words) in a filter of ``size`` bits (a power of two): a
    multiplicative hash."""
    h = key[0]
    for x in range(1, 6):
        h = h * HASH_MUL + key[x]
    h ^= h >> 29
    h *= HASH_MIX
    h ^= h >> 32
    return h & (size - 1)


@compiled(inline=True)
def remember(best_g, seen, key, g):
    """Store g as the least cost of ``key`` in ``best_g`` and set the key's bit in the filter ``seen[0]`` (int64
    words, a power of two of them: a key never stored has its bit clear unless another key shares it). The
    filter grows eightfold, refilled from ``best_g``, when more than an eighth of its bits would be taken, so a
    look-up of a key never stored reaches the dict about one time in eight at most."""
    best_g[key] = g
    words = seen[0]
    size = len(words) << 6
    if len(best_g) << 3 > size:                       # refill a larger filter (key is among best_g's keys)
        size <<= 3
        words = np.zeros(size >> 6, dtype=np.int64)
        for stored in best_g.keys():
            b = key_bit(stored, size)
            words[b >> 6] |= 1 << (b & 63)
        seen[0] = words
        return
    b = key_bit(key, size)
    words[b >> 6] |= 1 << (b & 63)


@compiled(inline=True)
def stored_at_most(best_g, words, key, g):
    """Whether ``key`` is stored in ``best_g`` at a cost <= g; the dict is read only when the filter ``words``
    (:func:`remember`) has the key's bit."""
    b = key_bit(key, len(words) << 6)
    return (words[b >> 6] >> (b & 63)) & 1 == 1 and best_g.get(key, BIG) <= g


@compiled(inline=True)
def dominated(best_g, seen, key2, ids, ages, q, o, g, bits, per):
    """Whether the state ``key2`` (W, t key, age words; running requests ``ids[:q]`` at ``ages[:q]``) reached at
    cost g is dominated (the dominance reduction of the module docstring): some stored state with the same t
    key and either (a) the same W and the same running set less one member i (finished there), the others at
    the same ages, has g' <= g + o_i − α_i, or (b) W less one member j (done there) and the same running set
    at the same ages has g' <= g + o_j."""
    mask = (1 << bits) - 1
    words = seen[0]
    for x in range(q):
        i = ids[x]
        word, clear = i // per, ~(mask << ((i % per) * bits))
        smaller = (key2[0], key2[1],
                   key2[2] & clear if word == 0 else key2[2], key2[3] & clear if word == 1 else key2[3],
                   key2[4] & clear if word == 2 else key2[4], key2[5] & clear if word == 3 else key2[5])
        if stored_at_most(best_g, words, smaller, g + o[i] - ages[x]):
            return True
    W = key2[0]
    for j in range(len(o)):
        if W >> j & 1 and stored_at_most(best_g, words, (W & ~(1 << j),) + key2[1:], g + o[j]):
            return True
    return False


@compiled
def heap_push(heap, sizes, f, neg_g, node):
    """Push (f, −g, node) on the binary min-heap ``heap[0]`` (rows ordered as tuples; ``sizes[0]`` rows in use),
    doubling its array when full. A heap in a numpy array: 8x faster than ``heapq`` on a numba typed list of
    tuples (2 M pushes and 1 M pops: 0.42 s against 3.4 s; scratch timing)."""
    i = sizes[0]
    if i == heap[0].shape[0]:
        heap[0] = doubled(heap[0])
    H = heap[0]
    sizes[0] = i + 1
    while i > 0:
        up = (i - 1) >> 1
        if (f, neg_g, node) < (H[up, 0], H[up, 1], H[up, 2]):
            H[i, 0], H[i, 1], H[i, 2] = H[up, 0], H[up, 1], H[up, 2]
            i = up
        else:
            break
    H[i, 0], H[i, 1], H[i, 2] = f, neg_g, node


@compiled
def heap_pop(heap, sizes):
    """Remove and return the least row (f, −g, node) of the heap of :func:`heap_push` (not empty)."""
    H = heap[0]
    top = (H[0, 0], H[0, 1], H[0, 2])
    last = sizes[0] - 1
    sizes[0] = last
    x = (H[last, 0], H[last, 1], H[last, 2])
    i = 0
    while True:
        c = 2 * i + 1
        if c >= last:
            break
        if c + 1 < last and (H[c + 1, 0], H[c + 1, 1], H[c + 1, 2]) < (H[c, 0], H[c, 1], H[c, 2]):
            c += 1
        if (H[c, 0], H[c, 1], H[c, 2]) < x:
            H[i, 0], H[i, 1], H[i, 2] = H[c, 0], H[c, 1], H[c, 2]
            i = c
        else:
            break
    if last > 0:
        H[i, 0], H[i, 1], H[i, 2] = x
    return top


@compiled
def add_row(store, sizes, which, v0, v1, v2, v3, v4, v5, v6):
    """Append (v0, …) to the row store ``store[0]`` (as many values as it has columns), ``sizes[which]`` rows in
    use, doubling its array when full; returns the row's index."""
    i = sizes[which]
    if i == store[0].shape[0]:
        store[0] = doubled(store[0])
    R = store[0]
    values = (v0, v1, v2, v3, v4, v5, v6)
    for col in range(R.shape[1]):
        R[i, col] = values[col]
    sizes[which] = i + 1
    return i


@compiled
def doubled(rows):
    """``rows`` copied into an array of twice as many rows."""
    bigger = np.empty((2 * rows.shape[0], rows.shape[1]), dtype=np.int64)
    bigger[:rows.shape[0]] = rows
    return bigger


@compiled(inline=True)
def owner(key, parts):
    """Which of ``parts`` searches owns the states whose running set is packed as ``key``
    (:func:`_best_first_parallel`): a hash of the running set."""
    h = ((key[0] * HASH_MUL + key[1]) * HASH_MUL + key[2]) * HASH_MUL + key[3]
    h ^= h >> 29
    h *= HASH_MIX
    h ^= h >> 32
    return (h & 0x7FFFFFFF) % parts


@compiled(inline=True)
def send(outbox, out_n, W, t, key, g, f, path):
    """Append a state for another part's search, (W, t, age words, g, its parent's f, path), to ``outbox[0]``
    (``out_n[0]`` rows in use, doubled when full)."""
    i = out_n[0]
    if i == outbox[0].shape[0]:
        outbox[0] = doubled(outbox[0])
    R = outbox[0]
    R[i, 0], R[i, 1], R[i, 2], R[i, 3], R[i, 4], R[i, 5] = W, t, key[0], key[1], key[2], key[3]
    R[i, 6], R[i, 7], R[i, 8] = g, f, path
    out_n[0] = i + 1


@compiled(inline=True)
def extended_path(paths, sizes, t, X, path, parts, tid):
    """The path of a successor: ``path``, with a row (t, X started at t, parent) added to this part's store when X
    is not empty (numbered row · ``parts`` + ``tid``: :func:`path_starts`)."""
    if X == 0:
        return path
    return add_row(paths, sizes, 2, t, X, path, 0, 0, 0, 0) * parts + tid


@compiled(inline=True)
def admissible(best_g, seen, key2, ids2, ages2, q2, o, g2, bits, per):
    """Whether a successor (state key ``key2``, running requests ``ids2[:q2]`` at ``ages2[:q2]``) reached at cost g2
    is kept: not stored at most as cheaply, nor dominated (:func:`dominated`), as :func:`_expand_slice` and
    :func:`_receive` admit successors."""
    return best_g.get(key2, BIG) > g2 and not dominated(best_g, seen, key2, ids2, ages2, q2, o, g2, bits, per)


@compiled(inline=True)
def scored(ub, f, g2, W2, t2, key, ids2, ages2, q2, a, s, o, p, vol, M, span, a_last, G3_first, run_slot, run_parts,
           wait_slot, wait_parts, pattern, G1s, groups, rest_h, work):
    """The f of an admitted successor reached at cost g2 from a node of f ``f``: max(g2 + h, f), pathmax (h is
    :func:`state_bound`, asked for no more than ``ub`` − g2); :func:`_expand_slice` and :func:`_receive` score with it."""
    return max(g2 + state_bound(ub - g2, W2, t2, key, ids2[:q2], ages2[:q2], a, s, o, p, vol, M, span, a_last,
                                G3_first, run_slot, run_parts, wait_slot, wait_parts, pattern, G1s, groups, rest_h,
                                work), f)


#: the columns of a message between the parts of :func:`_best_first_parallel` (:func:`send`)
MESSAGE_COLUMNS = 9

#: what a call of :func:`_expand` ended with
RUNNING, GOAL, EMPTY, FULL, WAIT = 0, 1, 2, 3, 4


@compiled(nogil=True)
def _receive(rows, count, ub, bits, per, heap, nodes, sizes, best_g, seen, a, s, o, p, vol, M, span, a_last,
             G3_first, run_slot, run_parts, wait_slot, wait_parts, pattern, G1s, groups, rest_h, work):
    """The states another part's search sent this one (``rows[:count]``, :func:`send`), admitted as
    :func:`_expand_slice` admits its own successors: unless stored at most as cheaply or dominated, scored
    (f = max(g + h, the parent's f): pathmax) and pushed when f < ``ub``."""
    n = len(s)
    ids2 = np.empty(n, dtype=np.int64)
    ages2 = np.empty(n, dtype=np.int64)
    for r in range(count):
        W2, t2, g2, f, path2 = rows[r, 0], rows[r, 1], rows[r, 6], rows[r, 7], rows[r, 8]
        key = (rows[r, 2], rows[r, 3], rows[r, 4], rows[r, 5])
        key2 = (W2, t2 if t2 < a_last else -1, key[0], key[1], key[2], key[3])
        q2 = unpack_ages(key, ids2, ages2, bits, per)
        if not admissible(best_g, seen, key2, ids2, ages2, q2, o, g2, bits, per):
            continue
        f2 = scored(ub, f, g2, W2, t2, key, ids2, ages2, q2, a, s, o, p, vol, M, span, a_last, G3_first, run_slot,
                    run_parts, wait_slot, wait_parts, pattern, G1s, groups, rest_h, work)
        if f2 < ub:
            remember(best_g, seen, key2, g2)
            heap_push(heap, sizes, f2, -g2, add_row(nodes, sizes, 1, W2, t2, key[0], key[1], key[2], key[3], path2))


@compiled(nogil=True)
def _expand(budget, max_states, ub, cap, before, bits, per, heap, nodes, paths, sizes, best_g, seen, counters,
            tid, parts, outbox, out_n,
            a, s, o, p, vol, M, span, a_last, G3_first, run_slot, run_parts, wait_slot, wait_parts, pattern, G1s,
            groups, rest_h, work):
    """At most ``budget`` pops of the best-first search of :func:`astar_search`, on its containers (row stores of
    :func:`add_row`, ``sizes`` their rows in use): ``heap`` of (f, −g, node) (:func:`heap_push`), ``nodes`` of
    (W, t, the running set's age words (``bits``, ``per``: :func:`age_layout`), path), ``paths`` of (t, X started at
    t, parent path; −1 ends), ``best_g`` from a state's key (W, t or −1 once
    everything has arrived, age words) to its least g, ``seen`` the filter of its keys (:func:`remember`),
    ``counters`` = [expanded, g and path of the goal, f of the node that met the state limit, the least f in the
    heap, states stored]. As part ``tid`` of ``parts`` searches (:func:`_best_first_parallel`; 0 of 1 alone), a
    successor that another part owns (:func:`owner`) is sent to ``outbox`` (:func:`send`) unless a state of this
    part dominates it, path rows are numbered row · ``parts`` + ``tid``, and no node above ``cap`` is expanded.
    Returns RUNNING (budget spent), GOAL, EMPTY (no node below ``ub`` is left), FULL (over ``max_states``) or WAIT
    (the least f is above ``cap``)."""
    code = _expand_slice(budget, max_states, ub, cap, before, bits, per, heap, nodes, paths, sizes, best_g, seen,
                         counters, tid, parts, outbox, out_n, a, s, o, p, vol, M, span, a_last, G3_first, run_slot,
                         run_parts, wait_slot, wait_parts, pattern, G1s, groups, rest_h, work)
    counters[4] = heap[0][0, 0] if sizes[0] > 0 else BIG
    counters[5] = len(best_g)
    return code


@compiled
def _expand_slice(budget, max_states, ub, cap, before, bits, per, heap, nodes, paths, sizes, best_g, seen, counters,
                  tid, parts, outbox, out_n, a, s, o, p, vol, M, span, a_last, G3_first, run_slot, run_parts,
                  wait_slot, wait_parts, pattern, G1s, groups, rest_h, work):
    """The loop of :func:`_expand`."""
    n = len(s)
    ids = np.empty(n, dtype=np.int64)
    ages = np.empty(n, dtype=np.int64)
    arrived = np.empty(n, dtype=np.int64)
    peak_d = np.empty((n + 1, 2 * n), dtype=np.int64)     # per depth of the move enumeration: completion offsets
    peak_load = np.empty((n + 1, 2 * n), dtype=np.int64)  # and the memory then
    member_id = np.empty(2 * n, dtype=np.int64)           # running requests, then the ones started by the move
    member_age = np.empty(2 * n, dtype=np.int64)
    X_at = np.empty(n + 1, dtype=np.int64)
    next_q = np.empty(n + 1, dtype=np.int64)
    age_next = np.empty(n, dtype=np.int64)
    ids2 = np.empty(n, dtype=np.int64)
    ages2 = np.empty(n, dtype=np.int64)
    for _ in range(budget):
        if sizes[0] == 0:
            return EMPTY
        if heap[0][0, 0] >= ub:                       # the other part's goal lowered ub: nothing below it is left
            sizes[0] = 0
            return EMPTY
        if heap[0][0, 0] > cap:                       # the other part is behind: wait for it
            return WAIT
        f, neg_g, node = heap_pop(heap, sizes)
        g = -neg_g
        row = nodes[0][node]
        W, t, w0, w1, w2, w3, path = row[0], row[1], row[2], row[3], row[4], row[5], row[6]
        if best_g.get((W, t if t < a_last else -1, w0, w1, w2, w3), BIG) < g:
            continue                                  # reached more cheaply since
        start = f == UNSCORED                         # the start state: its h first, at the one call of state_bound
        if W == 0 and w0 == 0 and w1 == 0 and w2 == 0 and w3 == 0:
            counters[1] = g
            counters[2] = path
            return GOAL
        if not start:
            counters[0] += 1
        if len(best_g) > max_states:
            counters[3] = f
            return FULL
        q = unpack_ages((w0, w1, w2, w3), ids, ages, bits, per)
        n_arr = 0
        n_wait = 0
        for j in range(n):
            if W >> j & 1:
                n_wait += 1
                if a[j] <= t:
                    arrived[n_arr] = j
                    n_arr += 1
        cost = q + n_arr
        if q == 0 and n_arr == 0 and not start:       # nothing to do before the next arrival: jump
            t_next = BIG
            for j in range(n):
                if W >> j & 1:
                    t_next = min(t_next, a[j])
            key2 = (W, t_next if t_next < a_last else -1, w0, w1, w2, w3)
            if best_g.get(key2, BIG) > g:
                remember(best_g, seen, key2, g)
                heap_push(heap, sizes, f, -g, add_row(nodes, sizes, 1, W, t_next, w0, w1, w2, w3, path))
            continue
        # peaks of the running set: (completion offset d, memory then); a start of j adds s_j + d
        for x in range(q):
            i, age = ids[x], ages[x]
            d = o[i] - age
            load = 0
            for y in range(q):
                if ages[y] + d <= o[ids[y]]:
                    load += s[ids[y]] + ages[y] + d
            peak_d[0, x] = d
            peak_load[0, x] = load
            member_id[x] = i
            member_age[x] = age
        idle_dominated = q == 0 and n_arr == n_wait   # all left have arrived: something starts now
        # the moves: memory-feasible sets X of arrived requests, depth first (X grows by requests of higher q)
        depth = 0
        X_at[0] = 0
        next_q[0] = 0
        new = True
        while depth >= 0:
            if new:
                new = False
                X = X_at[depth]
                if start:                             # the state itself, pushed again with its f = h
                    q2 = q
                    ids2[:q] = ids[:q]
                    ages2[:q] = ages[:q]
                    key = (w0, w1, w2, w3)
                    W2, t2, g2 = W, t, g
                elif not (X == 0 and idle_dominated):
                    age_next[:] = 0
                    for y in range(q + depth):
                        if member_age[y] + 1 < o[member_id[y]]:
                            age_next[member_id[y]] = member_age[y] + 1
                    q2 = 0
                    for i in range(n):
                        if age_next[i] > 0:
                            ids2[q2] = i
                            ages2[q2] = age_next[i]
                            q2 += 1
                    key = pack_ages(ids2[:q2], ages2[:q2], bits, per)
                    W2, t2, g2 = W & ~X, t + 1, g + cost
                if start or not (X == 0 and idle_dominated):
                    key2 = (W2, t2 if t2 < a_last else -1, key[0], key[1], key[2], key[3])
                    if not start and parts > 1 and owner(key, parts) != tid:
                        # the other part's state: its owner checks and scores it; a twin of (b) here drops it first
                        if not dominated(best_g, seen, key2, ids2, ages2, q2, o, g2, bits, per):
                            send(outbox, out_n, W2, t2, key, g2, f,
                                 extended_path(paths, sizes, t, X, path, parts, tid))
                    elif start or admissible(best_g, seen, key2, ids2, ages2, q2, o, g2, bits, per):
                        f2 = scored(ub, f, g2, W2, t2, key, ids2, ages2, q2, a, s, o, p, vol, M, span, a_last,
                                    G3_first, run_slot, run_parts, wait_slot, wait_parts, pattern, G1s, groups, rest_h,
                                    work)
                        if start:
                            counters[6] = f2
                        if f2 < ub:
                            if not start:
                                remember(best_g, seen, key2, g2)
                            heap_push(heap, sizes, f2, -g2, add_row(nodes, sizes, 1, W2, t2, key[0], key[1], key[2],
                                                                    key[3], extended_path(paths, sizes, t, X, path,
                                                                                          parts, tid)))
                if start:
                    break
            if next_q[depth] >= n_arr:
                depth -= 1
                continue
            at = next_q[depth]
            next_q[depth] += 1
            j = arrived[at]
            X = X_at[depth]
            if before[j] & W & ~X:
                continue                              # an identical request listed earlier still waits
            n_peaks = q + depth
            ok = True
            for x in range(n_peaks):
                if peak_d[depth, x] <= o[j] and peak_load[depth, x] + s[j] + peak_d[depth, x] > M:
                    ok = False
                    break
            if not ok:
                continue
            own = s[j] + o[j]
            for y in range(n_peaks):
                if member_age[y] + o[j] <= o[member_id[y]]:
                    own += s[member_id[y]] + member_age[y] + o[j]
            if own > M:
                continue
            for x in range(n_peaks):
                d = peak_d[depth, x]
                peak_d[depth + 1, x] = d
                peak_load[depth + 1, x] = peak_load[depth, x] + (s[j] + d if d <= o[j] else 0)
            peak_d[depth + 1, n_peaks] = o[j]
            peak_load[depth + 1, n_peaks] = own
            member_id[n_peaks] = j
            member_age[n_peaks] = 0
            X_at[depth + 1] = X | (1 << j)
            next_q[depth + 1] = at + 1
            depth += 1
            new = True
    return RUNNING


@compiled
def path_starts(paths, other_paths, path, n, parts):
    """The start round of every request on the path ending at ``path`` (entries (t, X started at t, parent)); a path
    index is (row · ``parts`` + the part whose store ``paths`` (part 0) or ``other_paths`` (part 1) holds the row)."""
    starts = np.zeros(n, dtype=np.int64)
    while path >= 0:
        P = paths[0] if path % parts == 0 else other_paths[0]
        row = path // parts
        t, X, path = P[row, 0], P[row, 1], P[row, 2]
        for i in range(n):
            if X >> i & 1:
                starts[i] = t
    return starts


#: with a table to build, the search first runs this long without it (the ladder's easy draws end within it;
#: with the table first, the median proof on the first 16 requests of 20 jaillet-model2 draws took 8.8 s
#: instead of 3.0: ``bench_certify.py --models jaillet-model2 --count 20 --requests 16 --time-limit 60``)
PLAIN_SECONDS = 1.0
#: at most this share of the time to the deadline goes to (P)'s table (:func:`build_patterns`). The twelfth
#: member's stage is the costly one and often the one that proves (first 17 requests of jaillet-model2 draw 5:
#: stages of 9-12 members take 0.23, 0.85, 4.5 and 14.4 s; the search after 11 members needs 79.8 s, after 12
#: 16.3 s; scratch scripts stages.py, d1.py). With the ladder's 60 s, 0.2 never let that stage begin, and 0.4
#: only alone: in the portfolio, with CP-SAT on the other core, the stages are slower and 0.4 stopped at 11
#: (draw 5 open at 766, where alone 0.4 proved 776 in 34.7 s; scratch d2.py, d3.py)
PATTERN_SHARE = 0.5
#: (P) is applied with G1 = the first k members tabulated, for this many k down from all of them. Which k
#: gives the larger bound varies by instance (first 16 requests of jaillet-model1: 12 on draw 15, 10 and 8 on
#: draw 8; scratch measurement), but each level costs its share of h at every state: with 12 tabulated and
#: UB = OPT + 1 (scratch d1lv.py, search alone), 4 levels -> 1 on the first 17 requests of jaillet-model1
#: draws 1 and 3: 58.2 -> 52.7 s and 38.2 -> 34.7 s (0.3 % and 4.9 % more states); jaillet-model2 draw 5,
#: first 17 and 18: 6.4 -> 5.8 s and 39.6 -> 36.8 s; jaillet-model1 draw 8, first 16: 10.8 -> 10.9 s (30 %
#: more states). 2 levels lie between (56.1 and 35.6 s on draws 1 and 3)
PATTERN_LEVELS = 1
#: (P) tabulates at most this many requests of largest peak by default (:func:`default_pattern_size`)
PATTERN_MEMBERS = 9
#: and at most this many others as copies (:func:`pattern_copies`). A copy stage searches 2^members subsets, so
#: fewer members make room for them: table and search alone (scratch cfg.py, UB = OPT + 1), 12 members and no
#: copies against 9 and 7: first 17 requests of jaillet-model1 draws 1 and 3, 7.8 + 51.9 s -> 8.6 + 27.4 s and
#: 15.9 + 36.2 s -> 28.2 + 22.0 s; jaillet-model2 draw 5's first 18, 14.8 + 37.0 s -> 14.5 + 25.0 s
#: (docs/seed004-certification.md, "(P) with copies")
COPY_ROOM = 7
#: a stage of that table (one more member) costs about this many times the one before: 3-7x from 9 to 12
#: members on the first 16 requests of jaillet-model1 draw 15 (scratch measurement)
STAGE_GROWTH = 4
#: a stage of copies after the first costs about this many times the one before (each searches 2^members
#: subsets, one copy more each time): 1.0-1.4x from the second to the sixth copy beside 10 members on the first
#: 17 requests of jaillet-model1 draw 1 (scratch stageprobe.py)
COPY_STAGE_GROWTH = 1.5
#: (P)'s copies in up to this many groups (1 or 2; :func:`pattern_copies`). Two groups, each copying its own least
#: (s, o), are closer to their requests but make the table (g1 + 1)(g2 + 1)/(c + 1) times larger. Split wherever
#: the copies' volume gains 5 %, the six rows of the README's ladder (60 s, 20 draws each; docs/seed004-
#: certification.md, "Where h falls short on Model 2") gained jaillet-model2 n = 20 draw 2 and lost jaillet-model1
#: n = 17 draw 3 and jaillet-model2 n = 18 draw 5, whose splits gain 13 % and 11 %
COPY_GROUPS = 2
#: so two groups only where their copies' volume beats one group's by this factor: with 36b7642's faster tables,
#: the six rows keep every proof and jaillet-model2 n = 20 proves draw 2 (split gain 1.22; 18 of 20, was 17)
SPLIT_GAIN = 1.2
#: (P)'s table is built by this many threads (:func:`tabulate_stage`; the search kernel releases the GIL). The
#: Model-1 n = 18 draws the ladder left open spend most of their time in the table (draw 8: 47.8 s of table and
#: 35.2 s of search alone); two threads build the same table in half the time alone (first 16 requests of
#: jaillet-model1 draw 8, 9 members + 6 copies: 83.2 s -> 42.5 s, scratch partab.py), and in the ladder, with
#: CP-SAT on one of the two cores, n = 18 proves draw 8 (18 of 20, was 17; docs/seed004-certification.md)
TABLE_THREADS = 2
#: the threads of the search where it runs alone (``latency-astar``, and the certify step's search where arrivals are
#: spread: ``LatencyIP.solo_search_threads``): two parts (:func:`_best_first_parallel`). Search alone, after the
#: same table, UB = OPT + 1: first 19 requests of jaillet-model2 draw 2, 24.7 -> 17.2 s (2.57 M -> 2.93 M states
#: expanded); first 20 of draw 12, 63.1 -> 44.7 s (4.75 M -> 5.32 M) (docs/seed004-certification.md, "The search
#: in two parts")
SEARCH_THREADS = 2
#: a part of the two-part search expands no state whose f exceeds the other part's least f by more than this: on
#: draw 2's 19 requests with UB = OPT, 1, 3 and 6 took 18.3, 16.6 and 15.9 s (one part: 23.9 s)
PARALLEL_SLACK = 6
#: seconds of search between checks of the deadline, the portfolio partner's stop and Ctrl-C
CHECK_SECONDS = 0.02
#: and between exchanges of states in the two-part search (a state sent waits for the end of both parts' slices)
PARALLEL_SLICE_SECONDS = 0.005
#: compiling the search's kernels takes this long when numba's disk cache does not hold them (the first run after
#: an install or an edit: 51.5 s on the 2-core machine on 2026-11-28, a slow day, 62.6 s on 11-27 before the root
#: bound moved into the search (``UNSCORED``), 0.8 s from the cache, as ``lpbench warmup`` reports them with the
#: caches deleted and again): with less time left the search is not started (:func:`kernels_ready`)
COLD_COMPILE_SECONDS = 70.0


def _memory_limit_pages() -> int | None:
    try:
        return int(MEMORY_SHARE * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):   # no such sysconf name here: no memory limit
        return None


#: :func:`memory_full` reads the process's memory at most this often (the two-part search asks every 5 ms a part)
MEMORY_CHECK_SECONDS = 0.05
_memory_read = [-MEMORY_CHECK_SECONDS, False, MEMORY_SHARE]   # when it was last read, what it said, at what share


def memory_full() -> bool:
    """Whether this process's resident memory exceeds ``MEMORY_SHARE`` of the machine's (Linux: /proc/self/statm;
    False where it cannot be read), as read within the last ``MEMORY_CHECK_SECONDS`` at the same share. Asked between
    the search's slices: a stop there keeps the bound certified."""
    now = time.perf_counter()
    if now - _memory_read[0] < MEMORY_CHECK_SECONDS and _memory_read[2] == MEMORY_SHARE:
        return _memory_read[1]
    limit, full = _memory_limit_pages(), False
    try:
        with open("/proc/self/statm") as statm:
            full = limit is not None and int(statm.read().split()[1]) > limit
    except (OSError, ValueError, IndexError):
        pass
    _memory_read[:] = [now, full, MEMORY_SHARE]
    return full


def kernels_ready(seconds_left: float) -> bool:
    """Whether the search can start with ``seconds_left`` to its deadline: its kernels are compiled or in numba's
    disk cache (:func:`~lpbench.formulations.compiled.cached`), or there is time to compile them. A compilation
    cannot be stopped, so a search started without that time would overrun its deadline by up to a minute."""
    from .astar_containers import new_caches, new_outbox, new_search
    from .compiled import fits

    return fits(seconds_left, COLD_COMPILE_SECONDS, _expand, _receive, chain_kernel, pack_ages, new_caches, new_search,
                new_outbox)


#: what the search reports when :func:`kernels_ready` says no
NOT_COMPILED = ("its compiled kernels are not built yet (about a minute, once after an install; run `lpbench warmup` "
                f"first, or give at least {COLD_COMPILE_SECONDS:.0f} s)")


def astar_search(inst, upper: float | None = None, upper_starts=None, deadline: float | None = None,
                 max_states: int = MAX_STATES, stop_when=None, pattern_size: int | None = None,
                 pattern_levels=None, plain_seconds: float | None = PLAIN_SECONDS,
                 copy_room: int | None = None, threads: int = 1) -> SearchResult:
    """Best-first search of the module docstring. ``upper``/``upper_starts``: a verified incumbent (its
    total latency and start rounds), returned when nothing better exists. ``stop_when`` (a
    threading.Event): stop with status "stopped" and the bound so far (a portfolio partner finished).
    ``pattern_size``: how many requests the pattern bound (P) tabulates (:func:`build_patterns`; default
    :func:`default_pattern_size`, 0 for none), ``copy_room`` how many others it may tabulate as copies
    (:func:`pattern_copies`; default ``COPY_ROOM``) and ``pattern_levels`` the sizes of G1 it is applied at
    (default :func:`build_patterns`'); with a table to build, the search first runs ``plain_seconds`` without it
    (None: the table first). The search runs in :func:`_expand`, compiled, in slices of about
    ``CHECK_SECONDS``; with ``threads`` = 2, as two searches in two threads (:func:`_best_first_parallel`). Above
    ``TABLE_REQUESTS`` requests the search runs on the instance in :func:`table_order` and returns its starts in
    the caller's order."""
    refuse_if_too_large(inst)
    args = (deadline, max_states, stop_when, pattern_size, pattern_levels, plain_seconds, copy_room, threads)
    order = table_order(inst)
    if order is None:
        return _search(inst, upper, upper_starts, *args)
    upper_starts = None if upper_starts is None else np.asarray(upper_starts, dtype=np.int64)[order]
    found = _search(sub_instance(inst, order), upper, upper_starts, *args)
    if found.starts is not None:
        starts = np.empty_like(found.starts)
        starts[order] = found.starts
        found.starts = starts
    return found


def identical_before(inst) -> np.ndarray:
    """Per request, the bit of the identical request listed just before it, 0 for none (the search's symmetry
    breaking: identical requests start in index order; :func:`~lpbench.formulations.latency_ip.identical_groups`)."""
    before = np.zeros(inst.n, dtype=np.int64)
    for group in identical_groups(inst):
        for i, j in zip(group, group[1:]):
            before[j] = 1 << i
    return before


def _search(inst, upper, upper_starts, deadline, max_states, stop_when, pattern_size, pattern_levels, plain_seconds,
            copy_room, threads) -> SearchResult:
    """:func:`astar_search` on an instance whose chain table covers its first ``TABLE_REQUESTS`` requests."""
    t_enter = time.perf_counter()
    a, s, o = ([int(x) for x in v] for v in (inst.arrival, inst.prompt, inst.output))
    M, n = int(inst.memory), inst.n
    bounds = _Bounds(a, s, o, M)
    before = identical_before(inst)
    size = default_pattern_size(n) if pattern_size is None else pattern_size
    ub = BIG if upper is None else int(round(upper))
    full, t0 = (1 << n) - 1, min(a)
    t_key = t0 if t0 < bounds.a_last else -1
    tabulated, found = 0, None

    def best_first(end):
        if threads > 1:
            parts = [bounds] + [bounds.with_own_caches() for _ in range(1, threads)]
            return _best_first_parallel(parts, before, full, t0, t_key, ub, end, max_states, stop_when)
        return _best_first(bounds.caches(), bounds.layout, before, full, t0, t_key, ub, end, max_states, stop_when)

    if size == 0 or plain_seconds is not None:      # first without the table: easy instances end here
        end = deadline
        if size > 0:
            end = time.perf_counter() + plain_seconds
            end = end if deadline is None else min(deadline, end)
        found = best_first(end)
    time_left = deadline is None or time.perf_counter() < deadline
    if size > 0 and (found is None or (found.status == "time_limit" and time_left)):
        budget = None if deadline is None else PATTERN_SHARE * (deadline - time.perf_counter())
        members = pattern_members(bounds, size)
        room = COPY_ROOM if copy_room is None else copy_room
        tabulated = build_patterns(bounds, before, members, pattern_levels, deadline, stop_when, budget,
                                   pattern_copies(bounds, members, room))
        found = best_first(deadline)
    seconds = time.perf_counter() - t_enter
    counts = (found.expanded, found.states, seconds, found.root, tabulated, found.memory)
    if found.goal is not None:
        return SearchResult(found.status, float(found.goal), found.starts(n), float(found.bound), *counts)
    starts = None if upper_starts is None else np.asarray(upper_starts, dtype=np.int64)
    return SearchResult(found.status, None if upper is None else float(upper), starts, float(found.bound), *counts)


def table_order(inst) -> np.ndarray | None:
    """None up to ``TABLE_REQUESTS`` requests (the chain table covers them all); above, the order the search
    uses: the ``TABLE_REQUESTS`` requests of longest output (ties: the higher index, as ``subset-bound``'s U,
    :func:`~lpbench.formulations.chain.drop_orders`) in index order, then the others in index order."""
    if inst.n <= TABLE_REQUESTS:
        return None
    from .chain import drop_orders

    shortest_first = drop_orders(inst.prompt, inst.output)["shortest"]
    tabled = np.sort(shortest_first[inst.n - TABLE_REQUESTS:])
    return np.concatenate([tabled, np.sort(shortest_first[:inst.n - TABLE_REQUESTS])]).astype(np.int64)


class _Found:
    """What one best-first run ended with: status, the goal's g and path (None, −1 without one), the certified
    bound, the containers' paths (of each part, :func:`path_starts`), and counters (summed over the parts)."""

    def __init__(self, status, bound, counters, paths, goal=None, goal_path=None, other_paths=None, parts=1,
                 memory=False):
        self.status, self.bound, self.paths, self.goal, self.memory = status, bound, paths, goal, memory
        self.other_paths, self.parts = (paths if other_paths is None else other_paths), parts
        self.goal_path = -1 if goal is None else int(counters[2]) if goal_path is None else goal_path
        self.expanded, self.states, self.root = int(counters[0]), int(counters[5]), int(counters[6])

    def starts(self, n: int) -> np.ndarray:
        """The start rounds of the goal's schedule."""
        return path_starts(self.paths, self.other_paths, self.goal_path, n, self.parts)


def _best_first(caches, layout, before, W0, t0, t_key, ub, deadline, max_states, stop_when) -> _Found:
    """The search from (W0, t0, nothing running), whose h its first pop computes (``UNSCORED``), with the arguments
    ``caches`` of :func:`state_bound` and the age ``layout`` of :func:`age_layout`, in slices of about
    ``CHECK_SECONDS`` between checks of the deadline, the partner's stop and Ctrl-C."""
    from .astar_containers import new_outbox, new_search

    heap, nodes, paths, sizes, best_g, seen = new_search(W0, t0, t_key, UNSCORED)
    counters = np.zeros(7, dtype=np.int64)
    budget = 64
    outbox, out_n = new_outbox(), np.zeros(1, dtype=np.int64)     # unused by one part
    while True:
        t_slice = time.perf_counter()
        code = _expand(budget, max_states, ub, BIG, before, *layout, heap, nodes, paths, sizes, best_g, seen, counters,
                       0, 1, outbox, out_n, *caches)
        if code == GOAL:
            return _Found("optimal", int(counters[1]), counters, paths, goal=int(counters[1]))
        if code == EMPTY:
            return _Found("optimal", ub, counters, paths)   # nothing beats the incumbent: it is optimal
        if code == FULL:
            return _Found("feasible", min(int(counters[3]), ub), counters, paths)
        frontier = min(int(counters[4]), ub)          # the least f of the open nodes: a certified bound
        if memory_full():                             # as at the state limit
            return _Found("feasible", frontier, counters, paths, memory=True)
        if REQUESTED.is_set():
            return _Found("interrupted", frontier, counters, paths)
        if stop_when is not None and stop_when.is_set():
            return _Found("stopped", frontier, counters, paths)
        now = time.perf_counter()
        if deadline is not None and now > deadline:
            return _Found("time_limit", frontier, counters, paths)
        took = now - t_slice                          # aim the next slice at CHECK_SECONDS
        budget = int(min(max(budget * CHECK_SECONDS / max(took, 1e-4), 16), 4 * budget))


def _best_first_parallel(parts_bounds, before, W0, t0, t_key, ub, deadline, max_states, stop_when) -> _Found:
    """:func:`_best_first` as two searches in two threads (hash-distributed A*), ``parts_bounds`` their two
    :class:`_Bounds` (one instance, caches of their own). Each part owns the states whose running set (packed ages)
    :func:`owner` gives it: it stores, scores and expands only those, and sends each successor it does not own to
    the other part (:func:`send`), which admits it at the start of its next slice (:func:`_receive`). The start
    state is part 0's.

    Exactness and the certificate. Each state has one owner, which keeps its least g and re-opens it when reached
    more cheaply, as the one search does; dominance is checked against the states stored where the check runs (a twin
    of (b) has the state's running set, so the same owner; a twin of (a) may be the other part's, and the sender
    checks it against its own states before sending; a twin not seen keeps more states, never fewer). A goal popped by either part is an upper bound: ``ub`` drops to it for both, and each part drops
    nodes with f >= ``ub``. So when both parts' heaps hold nothing below ``ub`` and no state is on its way, ``ub``
    is the optimum (every state of an optimal path was admitted, scored and expanded, or pruned below ``ub``). Stopped
    early, some state on an optimal path with its optimal g is in a heap or on its way (the A* invariant), with f <=
    OPT, and a state on its way has f >= its parent's f, which it carries: the least of ``ub``, both heaps' tops and
    the carried f of the states on their way is a certified bound.

    The parts expand in their own f order, so together they may expand states the one search would not (those
    between the optimum and a part's own frontier when the other finds the goal), and which schedule of the optimum's
    cost is returned, and the bound when stopped early, depend on the threads' timing."""
    import threading

    from .astar_containers import new_outbox, new_search

    parts = len(parts_bounds)
    lock, wake = threading.Lock(), threading.Condition()
    inbox = [[] for _ in range(parts)]
    idle = [False] * parts
    tops = [BIG] * parts                              # each part's least f, as of its last slice
    shared = {"ub": ub, "goal": None, "goal_path": -1, "done": None, "memory": False}
    searches = []
    for tid in range(parts):
        heap, nodes, paths, sizes, best_g, seen = new_search(W0, t0, t_key, UNSCORED)
        if tid != owner((0, 0, 0, 0), parts):
            sizes[0] = 0                               # the start state is its owner's
        searches.append(dict(heap=heap, nodes=nodes, paths=paths, sizes=sizes, best_g=best_g, seen=seen,
                             counters=np.zeros(7, dtype=np.int64), outbox=new_outbox(),
                             out_n=np.zeros(1, dtype=np.int64), code=RUNNING))
    errors = []
    part_states = max_states // parts

    def run(tid):
        me, bounds = searches[tid], parts_bounds[tid]
        caches, (bits, per) = bounds.caches(), bounds.layout
        budget = 64
        try:
            while True:
                with lock:
                    if shared["done"] is not None:
                        return
                    batch, inbox[tid] = inbox[tid], []
                    cur_ub = shared["ub"]
                    cap = BIG                         # expand no f above the other parts' least f + slack
                    for other in range(parts):
                        if other != tid:
                            cap = min([cap, tops[other]] + [int(rows[:, 7].min()) for rows in inbox[other]])
                    cap = cap + PARALLEL_SLACK if cap < BIG else BIG
                for rows in batch:
                    _receive(rows, len(rows), cur_ub, bits, per, me["heap"], me["nodes"], me["sizes"], me["best_g"],
                             me["seen"], *caches)
                t_slice = time.perf_counter()
                code = _expand(budget, part_states, cur_ub, cap, before, bits, per, me["heap"], me["nodes"],
                               me["paths"], me["sizes"], me["best_g"], me["seen"], me["counters"], tid, parts,
                               me["outbox"], me["out_n"], *caches)
                sent = me["outbox"][0][:me["out_n"][0]].copy()
                me["out_n"][0] = 0
                me["code"] = code
                with lock:
                    if len(sent):
                        for other in range(parts):
                            if other != tid:
                                inbox[other].append(sent)
                                idle[other] = False
                    if code == GOAL and me["counters"][1] < shared["ub"]:
                        shared["ub"], shared["goal"], shared["goal_path"] = (int(me["counters"][1]), True,
                                                                             int(me["counters"][2]))
                    tops[tid] = int(me["counters"][4])
                    idle[tid] = code == EMPTY and not inbox[tid]
                    if code == FULL:
                        shared["done"] = "feasible"
                    elif memory_full():
                        shared["done"], shared["memory"] = "feasible", True
                    elif all(idle) and not any(inbox):
                        shared["done"] = "optimal"
                    elif REQUESTED.is_set():
                        shared["done"] = "interrupted"
                    elif stop_when is not None and stop_when.is_set():
                        shared["done"] = "stopped"
                    elif deadline is not None and time.perf_counter() > deadline:
                        shared["done"] = "time_limit"
                with wake:
                    wake.notify_all()
                    if idle[tid] or code == WAIT:
                        wake.wait(PARALLEL_SLICE_SECONDS)
                if code == RUNNING:                   # the whole budget spent: aim the next at the slice
                    took = time.perf_counter() - t_slice
                    budget = int(min(max(budget * PARALLEL_SLICE_SECONDS / max(took, 1e-4), 16), 4 * budget))
        except BaseException as error:                # raised again by the caller's thread
            errors.append(error)
            with lock:
                shared["done"] = "error"
            with wake:
                wake.notify_all()

    threads = [threading.Thread(target=run, args=(tid,), daemon=True) for tid in range(1, parts)]
    with both_cores():
        for thread in threads:
            thread.start()
        run(0)
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
    counters = np.zeros(7, dtype=np.int64)
    for me in searches:
        counters += me["counters"]
    counters[6] = max(me["counters"][6] for me in searches)   # the root bound: its owner's
    status, ub = shared["done"], shared["ub"]
    goal = ub if shared["goal"] and status == "optimal" else None
    bound = ub
    if status != "optimal":                            # the least f of every open state, held or on its way
        for me in searches:
            if me["code"] == FULL:
                bound = min(bound, int(me["counters"][3]))
            if me["sizes"][0] > 0:
                bound = min(bound, int(me["heap"][0][0, 0]))
        for rows in inbox:
            for batch in rows:
                bound = min(bound, int(batch[:, 7].min()))
    return _Found(status, bound, counters, searches[0]["paths"], goal=goal, goal_path=shared["goal_path"],
                  other_paths=searches[-1]["paths"], parts=parts, memory=shared["memory"])


def default_pattern_size(n: int, members: int | None = None) -> int:
    """How many requests (P) may tabulate by default: none below 12 requests (the search alone proves those
    within a second or two), else n − 2 up to ``members`` (default ``PATTERN_MEMBERS``; and ``COPY_ROOM`` copies:
    :func:`pattern_copies`; a deadline may stop the table sooner: :func:`build_patterns`)."""
    return 0 if n < 12 else min(n - 2, PATTERN_MEMBERS if members is None else members)


def pattern_members(bounds, size: int) -> list[int]:
    """The ``size`` requests of largest peak p = s + o (then longest o, then lowest index), in that order: the
    ones whose interactions the chain and the volume see least well. Only requests of the chain table are
    candidates (all of them up to ``TABLE_REQUESTS`` requests), so that (P)'s table is indexed by its subsets."""
    return sorted(range(bounds.tabled), key=lambda j: (-bounds.p_arr[j], -bounds.o_arr[j], j))[:size]


def pattern_copies(bounds, members, room: int, groups: int | None = None) -> list[list[int]]:
    """The requests (P) tabulates as copies of lighter requests beside ``members`` (:func:`build_patterns`), at
    most ``room`` of them: of the others in order of longest o (then largest s, lowest index), the first c for
    the c that maximises c·vol(s*, o*), (s*, o*) = their least s and least o: copies of a short request add
    little, so one short request is left out rather than shortening every copy. One group, or none; with
    ``groups`` = 2 (default ``COPY_GROUPS``) and at least 4 copies, two groups, cut where the copies' volume
    Σ_group size·vol(its least s, its least o) is largest with 2 or more in each, when that beats one group by
    ``SPLIT_GAIN``."""
    groups = COPY_GROUPS if groups is None else groups
    others = sorted(set(range(bounds.tabled)) - set(members), key=lambda j: (-bounds.o_arr[j], -bounds.s_arr[j], j))

    def volume(group) -> int:
        s_min = min(int(bounds.s_arr[j]) for j in group)
        o_min = min(int(bounds.o_arr[j]) for j in group)
        return len(group) * (s_min * o_min + o_min * (o_min + 1) // 2)

    best, chosen = 0, []
    for c in range(1, min(room, len(others)) + 1):
        value = volume(others[:c])
        if value > best:
            best, chosen = value, others[:c]
    if groups < 2 or len(chosen) < 4:
        return [chosen] if chosen else []
    cut = max(range(2, len(chosen) - 1), key=lambda i: volume(chosen[:i]) + volume(chosen[i:]))
    if volume(chosen[:cut]) + volume(chosen[cut:]) >= SPLIT_GAIN * best:
        return [chosen[:cut], chosen[cut:]]
    return [chosen]


def build_patterns(bounds, before, members, levels=None, deadline=None, stop_when=None, budget=None,
                   copies=(), threads: int | None = None) -> int:
    """Fill ``bounds.pattern`` with the optimum of every subset S of ``members``, each alone: every member arrived at t
    = 0 and nothing running, Σ_{j∈S} C_j; and, for each group of ``copies`` (lists of other requests), of S with any
    c of the group, each replaced by the copy (s*, o*) of the group's least s and least o (stored at S and the
    group's first c: :func:`canonical_subset`). Each entry is found by the search with (P) of its proper subsets,
    which are already tabulated, on an instance of the tabulated requests alone (the group's requests made copies):
    in stages k = 1, 2, …, the subsets made of the k-th tabulated request and any before it (of a group: with every
    copy before it, so that each group's copies are its first ones). A stage is not begun when ``budget`` seconds
    would likely be passed (a stage costs about ``STAGE_GROWTH`` times the one before, a stage of copies after the
    first ``COPY_STAGE_GROWTH`` times, the first of a later group that times the ratio of the two stages' numbers of
    subsets), and a stage counts only when every entry of it is exact: one stopped by ``deadline``, ``stop_when`` or
    the state limit is dropped with the stages after it (0 means not built and (P) skips it). Then (P) is applied with G1 = the first k
    tabulated requests for k in ``levels`` (default: the ``PATTERN_LEVELS`` largest numbers tabulated), which one
    table serves. Returns how many requests were tabulated in full (members first, then copies). Each stage is
    built by ``threads`` threads (default ``TABLE_THREADS``; :func:`tabulate_stage`).

    Validity of (P) in h: any schedule from a state (W, A, t) restricted to S = W ∩ G1 is a schedule of S
    alone: dropping requests (the running ones and W − G1) only frees memory, and arrivals only forbid starts.
    No member of S starts before t + δ (δ = min over S of max(e_j, a_j − t): e_j is j's least start offset
    beside A alone, and memory is only heavier with more requests), so shifted by t + δ it is a schedule of S
    from time 0, and Σ_S (C_j − t) >= |S|·δ + OPT(S). A copy (s*, o*) of j is lighter: s* + d <= s_j + d at
    every round d <= o* <= o_j of j's life, so the same starts, with copies, stay feasible and every copy ends
    sooner than j by o_j − o* (C* = k + o*): Σ_S (C_j − t) >= |S|·δ + the entry (OPT of S with copies) + Σ over
    S's copied requests of o_j − o* (:func:`copies_shorter`). The latency still to come
    splits by request, Σ_A (o_i − α_i) + Σ_S (C_j − t) + Σ_{W−G1} (C_j − t) − Σ_W forced waiting, and the part
    of W − G1 is bounded by h of W − G1 beside A (its running set as it is), so (P) is at most the cost still to
    come, like every other part of h."""
    members, copies = list(members), [list(group) for group in copies if group]
    ids = members + [j for group in copies for j in group]          # the real request at each table position
    s_t, o_t = [int(bounds.s_arr[j]) for j in ids], [int(bounds.o_arr[j]) for j in ids]
    before_t = np.zeros(len(ids), dtype=np.int64)
    position = {j: x for x, j in enumerate(ids)}
    for x, j in enumerate(members):                 # identical members keep their order; others are never waiting
        for i in range(bounds.n):
            if before[j] >> i & 1 and i in position:
                before_t[x] = 1 << position[i]
    spans, x = [], len(members)                       # each group's table positions
    for group in copies:
        s_min, o_min = min(s_t[x:x + len(group)]), min(o_t[x:x + len(group)])
        for y in range(x, x + len(group)):
            s_t[y], o_t[y] = s_min, o_min
            if y > x:
                before_t[y] = 1 << (y - 1)              # copies are identical: they start in order
        spans.append(range(x, x + len(group)))
        x += len(group)
    table = _Bounds([0] * len(ids), s_t, o_t, bounds.M)
    table.groups = group_rows([([1 << y for y in span], s_t[span[0]], o_t[span[0]]) for span in spans])
    tables = [table] + [table.with_own_caches() for _ in range(1, TABLE_THREADS if threads is None else threads)]
    t_start, last, done, last_count = time.perf_counter(), 0.0, 0, 1
    for k in range(1, len(ids) + 1):
        now = time.perf_counter()
        subsets = stage_subsets(len(members), spans, k)
        growth = STAGE_GROWTH if k <= len(members) + 1 else COPY_STAGE_GROWTH
        if k > len(members) + 1 and any(span[0] == k - 1 for span in spans):   # a later group's first copy
            growth *= len(subsets) / last_count
        if budget is not None and now - t_start + growth * last > budget:
            break
        for tab in tables:                            # while building: the exact table of proper subsets
            tab.G1s = np.array([(1 << k) - 1], dtype=np.int64)
        if not tabulate_stage(tables, before_t, subsets, deadline, stop_when):
            break
        done = k
        last, last_count = time.perf_counter() - now, len(subsets)
        if k == 1:                                    # one search of one request: first use compiles the kernels
            t_start, last = time.perf_counter(), 0.0
    real = np.zeros(1 << done, dtype=np.int64)        # the real subset of each tabulated one
    for y in range(done):
        real |= ((np.arange(1 << done) >> y) & 1) << ids[y]
    bounds.pattern[real] = table.pattern[:1 << done]
    bounds.groups = group_rows([([1 << ids[y] for y in span if y < done], s_t[span[0]], o_t[span[0]])
                                for span in spans])
    if levels is None:
        levels = range(done, max(done - PATTERN_LEVELS, 0), -1)
    levels = [k for k in levels if 0 < k <= done]
    bounds.G1s = np.array([sum(1 << j for j in ids[:k]) for k in sorted(levels, reverse=True)], dtype=np.int64)
    return done


def tabulate_stage(tables, before_t, subsets, deadline, stop_when) -> bool:
    """The entries of one stage of :func:`build_patterns`: each subset's optimum alone, by the search, written to
    the tables' shared ``pattern``. Its subsets of one size are independent (a proper subset is smaller, or of an
    earlier stage), so each size is split among ``tables`` (one per thread, each with its own caches), and sizes
    go in ascending order. A subset whose proper subsets' entries are missing still gets its exact optimum (the
    search is exact with any admissible h), so the split changes no entry. Returns whether every entry of the stage
    is its exact optimum (False: stopped by ``deadline``, ``stop_when`` or the state limit); an error in any thread
    is raised here."""
    def run(tab, part, complete, errors):
        try:
            caches = tab.caches()
            for S in part:
                if expired(deadline, stop_when):
                    complete[0] = False
                    return
                found = _best_first(caches, tab.layout, before_t, S, 0, -1, BIG, deadline, MAX_STATES, stop_when)
                if found.status != "optimal":
                    complete[0] = False
                tab.pattern[S] = found.bound
        except BaseException as error:               # raised again by the caller's thread
            errors.append(error)
            complete[0] = False

    layers = {}
    for S in subsets:
        layers.setdefault(bin(S).count("1"), []).append(S)
    complete, errors = [True], []
    for size in sorted(layers):
        layer = layers[size]
        parts = [layer[x::len(tables)] for x in range(len(tables))]
        if len(tables) == 1 or len(layer) < 2 * len(tables):
            run(tables[0], layer, complete, errors)
        else:
            workers = [threading.Thread(target=run, args=(tab, part, complete, errors))
                       for tab, part in zip(tables[1:], parts[1:])]
            with both_cores():                       # background work waits meanwhile (lpbench.cores)
                for worker in workers:
                    worker.start()
                run(tables[0], parts[0], complete, errors)
                for worker in workers:
                    worker.join()
        if errors:
            raise errors[0]
        if not complete[0]:
            return False
    return True


def group_rows(groups) -> np.ndarray:
    """The ``groups`` argument of :func:`canonical_subset` for groups given as (member bits, s*, o*) (empty
    groups left out): per row the group's mask, s*, o*, then the masks of its first c members, c = 0..len."""
    groups = [(bits, s_copy, o_copy) for bits, s_copy, o_copy in groups if bits]
    rows = np.zeros((len(groups), 4 + max((len(bits) for bits, _, _ in groups), default=0)), dtype=np.int64)
    for g, (bits, s_copy, o_copy) in enumerate(groups):
        rows[g, :3] = sum(bits), s_copy, o_copy
        for c in range(1, len(bits) + 1):
            rows[g, 3 + c] = rows[g, 2 + c] | bits[c - 1]
    return rows


def stage_subsets(n_members: int, spans, k: int) -> list[int]:
    """The table positions' subsets of stage k of :func:`build_patterns`, ascending (so each comes after its
    proper subsets' entries): position k − 1 with any subset of the members before it; for a copy, with any
    subset of the members, any first copies of each group before its own, and every copy of its group before
    it."""
    new = 1 << (k - 1)
    if k <= n_members:
        return [T | new for T in range(1 << (k - 1))]
    subsets = np.arange(1 << n_members, dtype=np.int64)
    for span in spans:
        if k - 1 in span:
            own = sum(1 << y for y in span if y < k - 1)
            return sorted(int(T) | own | new for T in subsets)
        firsts = np.cumsum([0] + [1 << y for y in span])     # the group's first c copies, c = 0..len
        subsets = (subsets[:, None] | firsts[None, :]).ravel()
    raise ValueError(f"table position {k - 1} is in no group")


@FORMULATIONS.register("latency-astar")
class LatencyAStar(ClosedForm):
    name = "latency-astar"
    models = (SLOT,)
    exact = True
    engine = "astar"               # no external solver: the search above
    integral_objective = True
    summary = ("exact A* search over rounds, bounded by the completion-time lemmas and exact optima of subsets, "
               "in two threads (up to 40 requests; in a 60 s solve it proves the 17-request prefixes of the paper's "
               "20 first Model-1 draws (CP-SAT beside it) and the 19-request ones of Model 2; alone, 18 of the 24 "
               "Model-2 draws of 20-28 requests and 3 of the 22 of 29-33 within 300 s; stopped early: a certified "
               "lower bound)")
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
        seconds = 0.98 * profile.time_limit
        if not kernels_ready(seconds):
            return SolveResult("time_limit", upper, None, 0.0, None if starts is None else starts.astype(np.float64),
                               f"search not run: {NOT_COMPILED}")
        found = astar_search(inst, upper, starts, deadline=time.perf_counter() + seconds, threads=SEARCH_THREADS)
        why = {"optimal": "search complete", "time_limit": "time limit reached",
               "feasible": (f"stopped at {MEMORY_SHARE:.0%} of the machine's memory" if found.memory else
                            f"stopped at {MAX_STATES:,} states"), "interrupted": "interrupted (Ctrl-C)"}[found.status]
        x = None if found.starts is None else found.starts.astype(np.float64)
        return SolveResult(found.status, found.objective, found.bound, found.seconds, x,
                           f"{why}: {found.expanded:,} states expanded, {found.states:,} stored; root bound "
                           f"{found.root:,}, exact optima of the subsets of {found.tabulated} requests in h")

    def extract(self, starts):
        return schedule_from_starts(self.inst, np.round(starts).astype(np.int64))

    def warm_start(self, schedule):
        return schedule
