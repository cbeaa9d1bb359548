"""The hindsight latency IP of seed 004 (§3, eqs. (1)-(4)) and its LP relaxation (App. B.3).

    min  Σ_i ( Σ_{t ∈ K_i} t·x_{i,t} + o_i − a_i )                                    (1)
    s.t. Σ_{t ∈ K_i} x_{i,t} = 1                                   ∀ i                   (2)
         Σ_i Σ_{k = max(a_i, t − o_i)}^{t − 1} (s_i + t − k)·x_{i,k} ≤ M   ∀ t           (3)
         x_{i,t} ∈ {0, 1}                                                                 (4)

x_{i,k} = 1 iff request i starts at k: it is active at t = k+1..k+o_i with memory s_i + (t − k) and
completes at k + o_i (:mod:`lpbench.semantics`, slot model). The objective keeps the constant
Σ(o_i − a_i), so it equals the total end-to-end latency.

Index ranges (notes seed-004 §2.1, settled here):

* start times K_i = {a_i, ..., k̄_i}: time 0 is included when a_i = 0;
* (3) is written for every t at which any started request can be active,
  t = min_i a_i + 1, ..., max_i (k̄_i + o_i): no request runs past the checked horizon.

Horizon tightenings (each keeps every optimal solution, so the IP optimum is unchanged):

(a) **Serial bound** k̄_i <= T̄ − o_i with T̄ = max_j a_j + Σ_j o_j. *Proof.* Let x be optimal and
    suppose some round t > max_j a_j has no active request while a request starts at k >= t. Every
    request active after t starts at >= t, so shifting all starts >= t one step earlier keeps every
    memory row (the profile after t moves left by one, and nothing else is active at t), respects
    arrivals (k − 1 >= t − 1 >= max_j a_j), and lowers (1) -- a contradiction. So after max_j a_j every
    round up to the makespan has an active request; each request is active in o_i rounds, hence
    makespan <= max_j a_j + Σ_j o_j and k_i <= T̄ − o_i. (Every request fits alone: the instance
    validator rejects s_i + o_i > M.)

(b) **Incumbent bound** k̄_i <= a_i + UB − Σ_j o_j for any feasible objective UB (e.g. MC-SF's
    verified total latency). *Proof.* Latencies are >= o_j, so a solution of value <= UB has
    k_i + o_i − a_i = UB − Σ_{j≠i} latency_j <= UB − Σ_{j≠i} o_j. The incumbent itself satisfies it, so
    it remains a valid warm start.

(c) **Objective floor** (1) >= LB for a certified lower bound LB <= OPT (the ``completion-cp`` bound that
    ``solve`` computes first): every optimal solution satisfies it, so the optimum is unchanged, and the
    solver's dual bound starts at LB instead of the weaker LP value.

The LP relaxation (``latency-lp``: (4) relaxed to 0 <= x <= 1, OPT-Primal (18)-(21) generalised to
per-request s_i, o_i, a_i) is the relaxation of the tightened IP; as that IP has the same optimum
OPT, the LP value is a certified lower bound on OPT.
"""
from __future__ import annotations

import numpy as np

from ..schedule import ScheduleBuilder
from ..semantics import SLOT
from .base import FORMULATIONS, Formulation, LinearModel


LAGRANGE_MIN_SECONDS = 0.5   # the certify step's least time for lagrange-bound


@FORMULATIONS.register("latency-ip")
class LatencyIP(Formulation):
    name = "latency-ip"
    models = (SLOT,)
    exact = True
    integral_objective = True
    relax = False
    summary = "seed 004 §3 eqs. (1)-(4): time-indexed 0/1 start variables, memory row per time"

    objective_floor: float | None = None   # tightening (c), set by solve from a certified bound

    def horizon(self) -> np.ndarray:
        """Last allowed start k̄_i per request (tightenings (a) and (b))."""
        a = self.inst.arrival.astype(np.int64)
        o = self.inst.output
        T_bar = int(a.max() + o.sum())
        last = np.full(len(a), T_bar) - o                      # (a) serial bound
        if self.incumbent_objective is not None:               # (b) incumbent bound
            ub = int(np.floor(self.incumbent_objective + 1e-9))
            last = np.minimum(last, a + ub - int(o.sum()))
        return np.maximum(last, a)

    scalable_alternative = ("use --formulation volume-bound (closed form, seconds at 10,000 requests), "
                            "lagrange-bound (this LP's value by subgradient, any size) or volume-lp for a "
                            "lower bound, or latency-cp with a cpsat solver for schedules")

    #: above this many requests the incumbent search improves the best verified schedule window by window
    #: (:func:`~lpbench.heuristics.slot_sgs.window_search`) instead of climbing over whole priority orders
    #: from π₀, whose every move re-places up to all n requests. Measured with 15 s (a 60 s solve's share) on
    #: Azure-length instances at ρ = 0.8 (total latency / Σo, scratch script): n = 50 both 1.0088; n = 100
    #: local 1.0829, window 1.0702 (it stopped after 0.3 s); 200: 1.0355, 1.0343 (1.7 s); 400: 1.1964,
    #: 1.0757 (10.1 s); 1,000: 1.7286, 1.1337 (best policy 1.1581)
    window_search_above = 100

    @classmethod
    def search_incumbent(cls, inst, deadline: float, seed: int = 0, incumbent=None):
        """Iterated serial-SGS local search (:mod:`lpbench.heuristics.slot_sgs`): an offline incumbent, hill
        climbs over the priority order, cut by ``deadline``; above ``window_search_above`` requests, the
        window search from ``incumbent`` (the best verified schedule so far). It tightens horizon (b) and is
        the warm start when it beats every policy. Returns (name, schedule, info), None when the deadline
        left no time, or a note when the search's kernel is not compiled and its compilation would not fit."""
        import time

        from ..heuristics.slot_sgs import (NOT_COMPILED, eq3_ramps, kernel_ready, local_search, planned_moves,
                                           window_search)

        if not kernel_ready(deadline - time.perf_counter()):
            return f"not run: {NOT_COMPILED}"
        large = inst.n > cls.window_search_above and incumbent is not None
        starts = starts_from_schedule(inst, incumbent) if large else None
        if starts is not None:
            a, o = inst.arrival.astype(np.int64), inst.output.astype(np.int64)
            start, _, windows = window_search(a, eq3_ramps(inst.prompt, o), int(inst.memory), starts, seed=seed,
                                              deadline=deadline)
            if windows == 0:                                   # no time: nothing searched, nothing to report
                return None
            return "window-search", schedule_from_starts(inst, start), {"windows": windows}
        start, _, done = local_search(inst, seed=seed, deadline=deadline)
        if start is None:                                      # the deadline passed before one SGS was done
            return None
        return "local-search", schedule_from_starts(inst, start), {"iterations": done,
                                                                   "cut_by_deadline": done < planned_moves(inst.n)}

    #: whether :meth:`search_beside` runs (``bench_certify.py --no-search-beside`` turns it off, to measure it)
    beside_search = True

    @classmethod
    def search_beside(cls, inst, deadline: float, seed: int = 0):
        """Where the certify step runs ``chain-bound`` and ``subset-bound`` (one core each at most, most of the
        step), the local search goes on beside it on the other core: more climbs, others than the incumbent
        search's (:class:`~lpbench.heuristics.slot_sgs.ClimbsBeside`), until ``deadline``. Returns a function
        that stops them and gives (name, schedule, info) of the best, or None; None instead of the function
        where it does not run (the exact portfolio of up to ``astar_max_requests`` requests has both cores,
        and above ``window_search_above`` the incumbent is the window search's). Its schedule, verified by the
        caller, depends on how many climbs the machine made."""
        import time

        from ..heuristics.slot_sgs import ClimbsBeside, kernel_ready

        if not (cls.beside_search and cls.runs_chain(inst) and inst.n <= cls.window_search_above
                and kernel_ready(deadline - time.perf_counter())):
            return None
        climbs = ClimbsBeside(inst, seed, deadline)

        def finish():
            start, _, done = climbs.result()
            if start is None:
                return None
            return "local-search-beside", schedule_from_starts(inst, start), {"iterations": done,
                                                                               "climbs": climbs.climbs}
        return finish

    #: above this many requests ``completion-cp`` rarely beats the closed-form bound within a share of
    #: 60 s (measured: jaillet-model1 draw 0, n = 53: 8448 either way), so it is not run
    certify_max_requests = 30

    #: the certify step runs the exact search ``latency-astar`` beside CP-SAT on instances of up to this
    #: many requests (its own limit, ``latency_astar.MAX_REQUESTS``; 0 turns it off). On the first 17
    #: requests of 20 jaillet-model2 draws (60 s) it proves 19, where chain-bound and completion-cp, which ran
    #: there before, left 19 open (median gap 9.8 %): ``bench_certify.py --models jaillet-model2 --count 20
    #: --requests 17 --time-limit 60``, with and without ``--astar-max-requests 20`` (at a249226)
    astar_max_requests = 20
    #: share of the time limit for the certify step on those instances (instead of solve.BOUND_SHARE):
    #: there the step is an exact portfolio that usually finishes the job. The step ends at the latest
    #: at (solve.INCUMBENT_SHARE + this) = 95 % of the limit after entering solve, so the exact solve
    #: after it keeps at least 3 s of 60. On the README's n-ladder (at 0431b3b with 0.6, then 0.7)
    #: the exact solve after the step had proved nothing, and 0.7 proves n = 11 draw 7 and narrows the
    #: three open n = 12 gaps (4.2, 8.1, 11.2 % to 2.7, 5.9, 10.6 %), every run within the limit.
    astar_share = 0.7

    #: share of the time limit for the certify step on larger instances where ``chain-bound`` runs (up to
    #: its ``max_requests``). At paper size the exact solve after the step rarely moves either side (on
    #: 100 draws at 10 s it improved the local search's schedule on 10, with 15 % of the limit), and the
    #: chain needs a few seconds to scan its sets U (jaillet-model1 draw 0, 53 requests: 9595 in 2 s,
    #: 10046 in 5 s, against volume-bound's 8448; docs/seed004-certification.md). 0.6 against 0.3 on
    #: those 100 draws at 10 s (``bench_certify.py --count 50 --stride 4 --time-limit 10 --chain-share``):
    #: median gap 15.8 → 14.9 % (Model 1) and 19.8 → 18.8 % (Model 2), worst 34.1 → 29.0 % (Model 2)
    chain_share = 0.6
    #: the certify step runs ``chain-bound`` on instances of up to this many requests above
    #: ``astar_max_requests`` (at most ``ChainBound.max_requests``; 0 turns it off)
    chain_max_requests = 110
    #: after ``chain-bound``, on up to this many requests, ``subset-bound`` (the exact search on the 20 requests
    #: of longest output, the others by volume) gets the rest of the step; 0 turns it off
    subset_max_requests = 40
    #: above ``astar_max_requests`` and up to this many requests (at most ``latency_astar.MAX_REQUESTS``; 0 turns
    #: it off), the search ``latency-astar`` on all the requests runs first, for ``full_search_share`` of the step;
    #: what it does not prove, chain-bound and subset-bound bound with the rest. On the 22 jaillet-model2 draws of
    #: 21-28 requests at 60 s it proves 9 (none without it), median gap 2.29 -> 1.59 %, the LB lower on 7 by up to
    #: 1.9 % (subset-bound's time halved; docs/seed004-certification.md, "Paper-size draws proven"). On the 9 of
    #: 32-40 requests of the README's 60 s runs it proves none, but its bound beats subset-bound's: median gap 14.0
    #: -> 11.5 %, the LB higher on 4 (by up to 7.5 %), lower on 2 (by up to 1.6 %); on the 22 of 29-33 requests
    #: 10.6 -> 8.6 %, higher on 15 (up to 7.4 %), lower on 5 (up to 1.9 %; the same doc, "Beyond 28 requests")
    full_search_max_requests = 40
    #: three quarters of the step (it was half: at every size before fc7323e, then up to 28 requests). Where it
    #: proves nothing, its early-stop bound gives the step's bound on most draws and still rises with time. Runs back
    #: to back at 60 s, 0.5 -> 0.75 (docs/seed004-certification.md, "The search's share"): on the 22 jaillet-model2
    #: draws of 21-28 requests 9 -> 10 proven, median gap 1.37 -> 0.73 %, the LB higher on 8 and lower on 3 (by up to
    #: 2.0 %, where subset-bound gives it and had less time); on the 22 of 29-33 requests 8.27 -> 7.89 %, higher on
    #: 18 (by up to 0.76 %), lower on one (0.22 %); on the 6 of 34-40 among the README's 60 s draws 12.52 -> 11.91 %,
    #: higher on 2, lower on one (0.53 %). At 10 s this share can reach full_search_min_seconds where half could not:
    #: on the four draws of 25-28 requests of the README's 100 the gap fell on two (k = 112: 8.7 -> 1.6 %) and rose
    #: on two (k = 80: 10.7 -> 15.3 %); on the 9 of 32-40 the search ran on one (k = 156: 15.4 -> 8.2 %)
    full_search_share = 0.75
    #: but only when the search's share is at least this long: at 10 s (about 2 s of search at half the step) it
    #: proved none of the four draws of 25-28 requests of the README's 100 and lowered the LB of three, by up to 3.4 %
    full_search_min_seconds = 5.0
    #: the threads of that search: 1 keeps the other core for the local search beside the step (:meth:`search_beside`,
    #: which waits while the two-part search holds both cores). With 2, on the 22 jaillet-model2 draws of 21-28
    #: requests at 60 s: the same 10 proven, the LB higher on 9 of the 12 open (up to 1.6 %), lower on 2, the UB worse
    #: on 4 (docs/seed004-certification.md, "The search in two parts")
    full_search_threads = 1

    @classmethod
    def runs_chain(cls, inst) -> bool:
        """Whether the certify step runs ``chain-bound`` (above the A* search's size, within both limits)."""
        from .chain import ChainBound

        return cls.astar_max_requests < inst.n <= min(cls.chain_max_requests, ChainBound.max_requests)

    @classmethod
    def runs_full_search(cls, inst) -> bool:
        """Whether the certify step runs ``latency-astar`` on all the requests before the chain: above the chain
        table's size (up to it, the exact portfolio searches) and above ``astar_max_requests``, within
        ``full_search_max_requests``, where the search can take the instance (:func:`~.latency_astar.unsearchable`:
        long outputs leave fewer requests room in its state key)."""
        from .latency_astar import TABLE_REQUESTS, unsearchable

        return (max(cls.astar_max_requests, TABLE_REQUESTS) < inst.n <= cls.full_search_max_requests
                and unsearchable(inst) is None)

    @classmethod
    def certify_share(cls, inst) -> float | None:
        """This step's share of the time limit: ``astar_share`` where the A* search runs, ``chain_share``
        where ``chain-bound`` runs, else the default."""
        if inst.n <= cls.astar_max_requests:
            return cls.astar_share
        return cls.chain_share if cls.runs_chain(inst) else None

    @classmethod
    def certify_bound(cls, inst, incumbent: float, schedule, profile, deadline: float):
        """(bound, source, message, (name, schedule) or None): first ``lagrange-bound`` (the LP value of (1)-(4)
        by pricing (3), any size); then, on up to ``astar_max_requests`` requests, the exact portfolio
        :meth:`search_portfolio`; above that ``chain-bound`` (Lemmas 2 and 2' along the completion order,
        :mod:`lpbench.formulations.chain`) up to ``chain_max_requests``, and on up to
        ``certify_max_requests`` requests the ``completion-cp`` relaxation (Lemmas 2-3 of
        :mod:`lpbench.formulations.completion`) after it, above that, when all requests arrive together,
        ``volume-chain-bound`` (Lemma 2 and Lemma 3's volume along one completion order,
        :mod:`lpbench.formulations.volume_chain`) before it; before all of these, on 21 to
        ``full_search_max_requests`` requests, ``latency-astar`` on all of them for ``full_search_share`` of the
        step when that is at least ``full_search_min_seconds`` (:meth:`full_search`); on up to
        ``subset_max_requests`` requests ``subset-bound`` (:mod:`lpbench.formulations.subset_bound`) after the
        chain, instead of completion-cp, unless volume-chain-bound runs (where all arrive together it is the
        stronger: 4,473 against 3,885 on the 40-request jaillet-model1 draw 176, docs/seed004-certification.md).
        Lagrange gets a quarter of the step, at least ``LAGRANGE_MIN_SECONDS`` (about 400 steps at 50 requests),
        or just that before the portfolio. Of the rest, completion-cp or volume-chain-bound gets at most half (the
        latter stops when its ascent levels off: 1-3 s at 42-60 requests on 2 cores), the chain all that is left;
        where ``subset-bound`` runs, it gets the second half and all the chain leaves (the chain stops when its
        ascent stalls: 1-2 s at 32-37 requests). With spread arrivals the volume
        rows, which count memory from the first arrival, are weak: on the README's 10 s draws
        volume-chain-bound set the bound on 34 of 50 Model-1 draws (all arrive at 0) and rose above the
        chain's full-time value on 1 of 50 Model-2 draws, where its time cost the chain up to 8 %
        (docs/seed004-certification.md).
        When the bound meets the incumbent, the incumbent is proven optimal without solving the IP;
        otherwise it is the objective floor (c). The schedule, if any, beats the incumbent; name says which
        method found it."""
        import time

        from ..solvers.base import SolverProfile
        from .chain import chain_bound
        from .completion import CompletionCP
        from .lagrange import LagrangeBound
        from .subset_bound import subset_bound
        from .volume_chain import volume_chain_bound

        left = deadline - time.perf_counter()
        if left < 0.2:
            return None
        search = inst.n <= cls.astar_max_requests
        lag_seconds = min(left, LAGRANGE_MIN_SECONDS if search else max(left / 4, LAGRANGE_MIN_SECONDS))
        lag = LagrangeBound(inst).solve(SolverProfile("lagrange-bound", "closed-form", time_limit=lag_seconds))
        found = (float(lag.bound), "lagrange-bound", lag.message, None)
        if lag.bound >= incumbent:
            return found
        if search:
            portfolio = cls.search_portfolio(inst, incumbent, schedule, found[0], profile, deadline)
            if portfolio[0] > found[0]:
                return portfolio
            return (found[0], found[1], f"{found[2]}; the exact portfolio: {portfolio[2]}", portfolio[3])
        seconds = cls.full_search_share * (deadline - time.perf_counter())
        if cls.runs_full_search(inst) and seconds >= cls.full_search_min_seconds:
            whole = cls.full_search(inst, incumbent, schedule, time.perf_counter() + seconds,
                                    threads=cls.full_search_threads)
            if whole is not None:
                bound, source, message, better, proven = whole
                if proven:
                    return bound, source, message, better
                if bound > found[0]:
                    found = (bound, source, message, better)
                elif better is not None:                 # a better schedule, carried to the step's result
                    found = (*found[:3], better)
        if cls.runs_chain(inst):
            now = time.perf_counter()
            at = lambda share: now + share * (deadline - now)   # noqa: E731  (a share of the step left)
            volume = inst.n > cls.certify_max_requests and min(inst.arrival) == max(inst.arrival)
            subset = inst.n <= cls.subset_max_requests and not volume   # the second half, after the chain
            chain_end = at(0.5) if subset or inst.n <= cls.certify_max_requests else deadline
            bounds = [(chain_bound, (inst, chain_end), "chain-bound")]
            if volume:
                bounds.insert(0, (volume_chain_bound, (inst, at(0.5), incumbent), "volume-chain-bound"))
            if subset:
                bounds.append((lambda *args: subset_bound(*args)[:2], (inst, deadline, schedule), "subset-bound"))
            for compute, args, name in bounds:      # each: (value, what gave it, or "volume-bound")
                value, which = compute(*args)
                if value > found[0]:
                    found = (float(value), "volume-bound" if which == "volume-bound" else name, which, found[3])
                if found[0] >= incumbent:
                    return found
        left = deadline - time.perf_counter()
        if inst.n <= cls.certify_max_requests and left >= 1.0:
            relax = CompletionCP(inst, incumbent_objective=incumbent)
            cpsat = SolverProfile("completion-cp", "cpsat", time_limit=left, threads=max(2, profile.threads),
                                  seed=profile.seed)  # the exact solve's options belong to its own backend
            res = relax.build().solve(cpsat, schedule)
            if res.bound is not None and res.bound > found[0]:
                return (float(res.bound), "completion-cp", res.message, found[3])
        return found

    @staticmethod
    def full_search(inst, incumbent: float, schedule, deadline: float, pattern_size: int | None = None,
                    threads: int = 1):
        """``latency-astar`` on the whole instance until ``deadline`` (``pattern_size``: its (P) table's, default
        ``latency_astar.default_pattern_size``; ``threads``: 2 for its two-part search): (bound, "latency-astar", message, (name, schedule better than the
        incumbent) or None, whether it proved the optimum), or None where its kernels are not compiled and there
        is no time to compile them. The bound is the optimum when the search completes, else its certified least f."""
        import time

        from .latency_astar import astar_search, kernels_ready

        if not kernels_ready(deadline - time.perf_counter()):
            return None
        res = astar_search(inst, incumbent, starts_from_schedule(inst, schedule), deadline=deadline,
                           pattern_size=pattern_size, threads=threads)
        better = None
        if res.starts is not None and res.objective is not None and res.objective < incumbent:
            better = ("latency-astar", schedule_from_starts(inst, res.starts))
        proven = res.status == "optimal"
        bound = res.objective if proven else res.bound
        return (float(bound), "latency-astar", f"latency-astar on all {inst.n} requests: {res.status}", better,
                proven)

    @classmethod
    def event_partner(cls, inst) -> bool:
        """Whether :meth:`search_portfolio` runs the event model beside the search: where every request arrives at
        once (seed 004's Model 1) while ``event_beside_simultaneous_arrivals``, or everywhere with
        ``event_beside_spread_arrivals``."""
        if min(inst.arrival) == max(inst.arrival):
            return cls.event_beside_simultaneous_arrivals
        return cls.event_beside_spread_arrivals

    #: with arrivals spread (seed 004's Model 2) the event model never gave the portfolio's bound from 13 requests
    #: on (the README's n-ladder at 8dcf6a9-d528f23: Model 2, n = 13-20, 160 runs), where on Model 1 it proved 1-4
    #: of the 20 draws of each n = 12-18. So there the search runs alone with both cores: its pattern table builds
    #: on two threads undisturbed and tabulates ``solo_pattern_members`` (docs/seed004-certification.md, "The
    #: search alone where arrivals are spread")
    event_beside_spread_arrivals = False
    #: where every request arrives at once (Model 1) the event model proved 1-4 of the 20 draws of each n = 12-18
    #: beside the search; the search alone in two parts proved as many at n = 18 at best, and its proofs from
    #: n = 13 on were slower (the Model-1 ladder at f69a839: docs/seed004-certification.md, "Model 1 with the
    #: search alone")
    event_beside_simultaneous_arrivals = True
    #: what (P) tabulates when the search runs alone (``latency_astar.PATTERN_MEMBERS`` beside the event model)
    solo_pattern_members = 11
    #: and in how many threads it then searches (``latency_astar.SEARCH_THREADS``: the two-part search)
    solo_search_threads = 2

    @classmethod
    def search_portfolio(cls, inst, incumbent: float, schedule, floor: float, profile, deadline: float):
        """Two exact methods at once until one proves the optimum or ``deadline`` passes: the A* search
        ``latency-astar`` in this thread and the event model ``latency-event`` on CP-SAT with one worker
        in another (CP-SAT releases the GIL, so each has a core of the two). They are complementary
        (docs/seed004-certification.md): the search is fast where large requests must run one after
        another, the event model where many small ones share memory (it proves n = 12 prefixes in
        4-5 s that ``latency-cp``, the partner before, left open after 30 s). The first to finish stops
        the other. Where :meth:`event_partner` says no (by default where arrivals are spread) the search runs
        alone, with a larger table and in two parts; where its kernels are not compiled, or the search cannot take
        the instance (:func:`~.latency_astar.unsearchable`), the event model runs alone on both cores. Returns (bound,
        source, message, (method, schedule better than the incumbent) or None); the bound is the proven optimum,
        or else the larger of the two certified bounds."""
        import threading
        import time

        from ..solvers.base import SolverProfile
        from .latency_astar import NOT_COMPILED, astar_search, default_pattern_size, kernels_ready, unsearchable
        from .latency_event import LatencyEvent

        why_not = unsearchable(inst)
        if why_not is None and not cls.event_partner(inst):
            alone = cls.full_search(inst, incumbent, schedule, deadline,
                                    default_pattern_size(inst.n, cls.solo_pattern_members), cls.solo_search_threads)
            if alone is not None:                                 # else not compiled: the event model, below
                bound, source, message, better, _ = alone
                return bound, source, f"{message} (alone on both cores)", better
        if why_not is None and not kernels_ready(deadline - time.perf_counter()):
            why_not = NOT_COMPILED
        search = why_not is None                                  # else the event model alone, on both cores
        done = threading.Event()
        cp = LatencyEvent(inst, incumbent_objective=incumbent)
        cp.objective_floor = floor
        cp.build()
        box: dict = {}
        cp_profile = SolverProfile("certify-cpsat", "cpsat", time_limit=max(deadline - time.perf_counter(), 0.1),
                                   threads=1 if search else 2, seed=profile.seed)

        def run_cp():
            try:
                box["res"] = cp.solve(cp_profile, schedule, stop_when=done)
                if box["res"].status == "optimal":
                    done.set()
            except BaseException as e:  # re-raised in this thread below
                box["error"] = e

        res = None
        if search:
            worker = threading.Thread(target=run_cp, name="lpbench-certify-cpsat", daemon=True)
            worker.start()
            try:
                res = astar_search(inst, incumbent, starts_from_schedule(inst, schedule), deadline=deadline,
                                   stop_when=done)
            finally:
                done.set()   # whatever ended the search also ends CP-SAT
                worker.join()
        else:
            run_cp()
        if "error" in box:
            raise box["error"]
        cp_res = box["res"]
        # no state counts or seconds here: the message is part of a result row (bench), which should
        # not change from run to run when the outcome does not
        note = (f"latency-astar {res.status}, latency-event (CP-SAT, 1 worker) {cp_res.status}" if search else
                f"latency-astar not run: {why_not}; latency-event (CP-SAT, 2 workers) {cp_res.status}")
        if search and res.status == "optimal":
            better = res.objective < incumbent
            return (res.objective, "latency-astar", note,
                    ("latency-astar", schedule_from_starts(inst, res.starts)) if better else None)
        better = (("latency-event", cp.extract(cp_res.x)) if cp_res.x is not None and cp_res.objective < incumbent
                  else None)
        if cp_res.status == "optimal":
            return (cp_res.objective, "latency-event", note, better)
        cp_bound = cp_res.bound if cp_res.bound is not None else -np.inf
        found = [(res.bound, "latency-astar", note, better)] if search else []    # on a tie the search's, first
        return max(found + [(cp_bound, "latency-event", note, better)], key=lambda f: f[0])

    def estimate_nonzeros(self) -> int:
        """(2) has one entry per x_{i,k}; (3) has o_i entries per x_{i,k}."""
        starts = self.horizon() - self.inst.arrival.astype(np.int64) + 1
        return int((starts * (self.inst.output + 1)).sum())

    def build(self) -> LinearModel:
        inst = self.inst
        a = inst.arrival.astype(np.int64)
        s, o, M = inst.prompt, inst.output, inst.memory
        self.first = a
        self.last = self.horizon()
        size = self.last - self.first + 1
        lp = LinearModel(f"{self.name}:{inst.name}", offset=float((o - a).sum()))

        # x_{i,k}, k ∈ K_i, objective (1): coefficient k (plus the constant offset)
        k_all = np.concatenate([np.arange(a[i], self.last[i] + 1) for i in range(inst.n)])
        self.var_start = np.zeros(inst.n + 1, dtype=np.int64)
        np.cumsum(size, out=self.var_start[1:])
        req_of_var = np.repeat(np.arange(inst.n), size)
        x = lp.add_vars("x", int(size.sum()), lower=0, upper=1, integer=not self.relax, cost=k_all,
                        names=[f"x_{i}_{k}" for i, k in zip(req_of_var.tolist(), k_all.tolist())])

        # (2) each request starts exactly once
        lp.add_rows("(2) start once", inst.n, req_of_var, x, np.ones(len(x)), lower=1, upper=1,
                    names=[f"start_once_{i}" for i in range(inst.n)])

        # (3) memory at every time t: x_{i,k} contributes s_i + d at t = k + d, d = 1..o_i
        t0 = int(a.min()) + 1
        t1 = int((self.last + o).max())
        rows, cols, vals = [], [], []
        for i in range(inst.n):
            d = np.arange(1, o[i] + 1)
            ks = np.arange(a[i], self.last[i] + 1)
            rows.append((ks[:, None] + d[None, :]).ravel() - t0)
            cols.append(np.repeat(x[self.var_start[i]:self.var_start[i + 1]], o[i]))
            vals.append(np.tile(s[i] + d, len(ks)))
        lp.add_rows("(3) memory at every time t", t1 - t0 + 1, np.concatenate(rows), np.concatenate(cols),
                    np.concatenate(vals), upper=M, names=[f"memory_{t}" for t in range(t0, t1 + 1)])
        # (c) objective floor: (1) >= a certified lower bound on OPT keeps every optimal solution
        if self.objective_floor is not None:
            lp.add_rows("(c) objective floor", 1, np.zeros(len(x), dtype=np.int64), x, k_all,
                        lower=self.objective_floor - lp.offset, names=["objective_floor"])
        return lp

    # -- schedules <-> solutions ---------------------------------------------------------------------
    def starts_from_x(self, x: np.ndarray) -> np.ndarray:
        starts = np.zeros(self.inst.n, dtype=np.int64)
        for i in range(self.inst.n):
            seg = x[self.var_start[i]:self.var_start[i + 1]]
            starts[i] = self.first[i] + int(np.argmax(seg))
        return starts

    def extract(self, x: np.ndarray):
        return schedule_from_starts(self.inst, self.starts_from_x(np.round(x)))

    def warm_start(self, schedule) -> np.ndarray | None:
        starts = starts_from_schedule(self.inst, schedule)
        if starts is None or np.any(starts < self.first) or np.any(starts > self.last):
            return None
        x = np.zeros(int(self.var_start[-1]))
        x[self.var_start[:-1] + (starts - self.first)] = 1.0
        return x


@FORMULATIONS.register("latency-lp")
class LatencyLP(LatencyIP):
    name = "latency-lp"
    exact = False
    integral_objective = False
    relax = True
    summary = "LP relaxation of latency-ip (OPT-Primal, App. B.3 (18)-(21)): certified lower bound"

    def extract(self, x):
        return None

    def warm_start(self, schedule):
        return None  # an LP needs no start; the incumbent still tightens the horizon (b)


def starts_from_schedule(inst, schedule) -> np.ndarray | None:
    """Start round of each request's last run in a slot-model schedule (a run starts at the first
    batch that processes the request, or the first after it was evicted)."""
    starts = np.full(inst.n, -1, dtype=np.int64)
    in_run = np.zeros(inst.n, dtype=bool)
    for j in range(schedule.n_batches):
        r, c, e = schedule.batch(j)
        in_run[e] = False
        fresh = r[~in_run[r]]
        starts[fresh] = int(schedule.start[j])
        in_run[fresh] = True
    return None if np.any(starts < 0) else starts


def identical_groups(inst) -> list[list[int]]:
    """Requests with the same (a_i, s_i, o_i), in index order (groups of two or more)."""
    groups: dict = {}
    for i in range(inst.n):
        groups.setdefault((int(inst.arrival[i]), int(inst.prompt[i]), int(inst.output[i])), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def canonical_starts(inst, starts: np.ndarray) -> np.ndarray:
    """The same schedule with identical requests starting in index order: their starts sorted within each
    group. Swapping identical requests keeps every footprint and latency, so the result is feasible with
    the same objective, and it satisfies the symmetry breaking of the CP models (a hint that breaks it is
    infeasible there, and CP-SAT discards it)."""
    out = np.array(starts, dtype=np.int64, copy=True)
    for g in identical_groups(inst):
        out[g] = np.sort(out[g])
    return out


def schedule_from_starts(inst, starts: np.ndarray):
    """The slot-model schedule in which request i starts at starts[i] (rounds [k, k+1), ...)."""
    o, s = inst.output, inst.prompt
    out = ScheduleBuilder()
    t_end = int((starts + o).max())
    order = np.argsort(starts, kind="stable")
    for t in range(int(starts.min()), t_end):
        active = order[(starts[order] <= t) & (starts[order] + o[order] > t)]
        if len(active) == 0:
            continue
        out.add(t, active, np.where(starts[active] == t, s[active], 1))
    return out.build()
