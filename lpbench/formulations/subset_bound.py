"""Subset bound (ours, issue 12; slot model, eqs. (1)-(4)): the exact search ``latency-astar`` on the m requests
that ``chain-bound`` keeps, the others by volume.

**Validity.** A schedule restricted to a subset U of the requests is a schedule of U: (2) and (4) concern each
request alone, and removing requests only lowers the memory of (3) at every round. So in every schedule the
requests of U have total latency at least OPT(U), and the others, R, at least any lower bound on OPT(R):

    OPT >= LB(OPT(U)) + max(Σ_{j∈R} o_j, volume-bound(R), LB(OPT(R))),

the argument of ``chain-bound``'s "requests left out" (:mod:`lpbench.formulations.chain`), with the chain of U
replaced by the search's certified bound on OPT(U): OPT(U) itself when the search completes, else the least f in
its queue. The best schedule, restricted to U, is a schedule of U, so its latency on U is the search's incumbent.
LB(OPT(R)) is the same search on R, by the same argument (R's requests too form a schedule of R), run first for at
most ``REST_SHARE`` of the time and only where R's whole chain table fits in it.

**U.** The m requests left when ``chain-bound``'s "shortest" order drops the n − m of shortest output (ties by
index), m the largest size up to ``latency_astar.TABLE_REQUESTS`` whose chain table (2^m·m² entries,
``TABLE_SECONDS_PER_ENTRY``) takes at most ``TABLE_SHARE`` of the time left; the table cannot be stopped once
begun. Where the chain is strong (a chain of 25 or more requests) the search over 20 of them gives less, and the
larger bound is kept: on 12 jaillet-model2 draws of 25-39 requests, 20 s each, the subset bound was higher than
``chain-bound`` on 8 (by 4-17 %) and lower on 4 (docs/seed004-certification.md, "The search on a subset").
"""
from __future__ import annotations

import time

import numpy as np

from ..semantics import SLOT
from ..sim.multi import sub_instance
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm
from .chain import drop_orders
from .latency_astar import TABLE_REQUESTS, astar_search, kernels_ready, unsearchable
from .latency_ip import starts_from_schedule
from .volume import VolumeBound, bound_alone

#: seconds per entry of the search's chain table (2^m·m² entries: 1.2 s at 18 requests, 6.1 s at 20 on the 2-core
#: machine, docs/seed004-certification.md "Beyond 16 requests"; 1.5e-8, doubled for a loaded machine). Since the
#: table is built two sizes at a time (2.2-2.5 s at 20) this is about twice the time it takes; left as it was, so
#: the subsets chosen are those of the measured runs (larger ones in short runs are not measured)
TABLE_SECONDS_PER_ENTRY = 3.0e-8
#: at most this share of the time left goes to the chain table; the search (and its pattern table) gets the rest
TABLE_SHARE = 0.5
#: the least subset worth a search: below it the chain of ``chain-bound`` is as strong
MIN_MEMBERS = 12
#: at most this share of the time left goes to the search on the rest R (its short requests: 0.0-1.6 s on 7
#: jaillet-model2 draws of 25-33 requests with U of 18; on the 13 of 25-40 requests it raised the rest's bound on 6,
#: by 9-106; scratch /work/scratch/rest/probe.py, orders.py)
REST_SHARE = 0.1


def subset_size(n: int, seconds: float, least: int = MIN_MEMBERS) -> int:
    """The largest m <= min(n, TABLE_REQUESTS) whose chain table fits ``TABLE_SHARE`` of ``seconds``; 0 if that is
    fewer than ``least`` (or n) requests."""
    for m in range(min(n, TABLE_REQUESTS), min(least, n) - 1, -1):
        if (1 << m) * m * m * TABLE_SECONDS_PER_ENTRY <= TABLE_SHARE * seconds:
            return m
    return 0


def certified(bound: float) -> int:
    """The search's bound as an integer bound (every total latency is an integer)."""
    return int(np.ceil(bound - 1e-9))


def rest_bound(inst, R: np.ndarray, alone: int, seconds: float) -> tuple[int, str]:
    """(a lower bound on OPT(R) for the requests ``R``, how it was found): ``latency-astar`` on R alone for at most
    ``seconds`` where its whole chain table fits in them and it can take R (its certified bound: OPT(R) if it
    completes, else its least f), when that beats ``alone`` (R's bound by volume); else ``alone``, "by volume"."""
    if len(R) >= 2 and subset_size(len(R), seconds, least=2) == len(R) and kernels_ready(seconds):
        rest_instance = sub_instance(inst, np.sort(R))
        if unsearchable(rest_instance) is None:
            on_r = astar_search(rest_instance, deadline=time.perf_counter() + seconds)
            if on_r.bound is not None and certified(on_r.bound) > alone:
                return certified(on_r.bound), f"by latency-astar ({on_r.status})"
    return alone, "by volume"


def subset_bound(inst, deadline: float, schedule=None, members: int | None = None) -> tuple[int, str, bool]:
    """(certified lower bound on total latency, what gave it, whether the search on U completed) by the module
    docstring's argument, or (0, why not, False) when the search does not run (too little time for
    ``MIN_MEMBERS`` requests, its kernels not compiled, or U beyond what the search can take:
    :func:`~.latency_astar.unsearchable`). ``schedule``: a verified schedule of ``inst``; ``members``: the size m of
    U (default :func:`subset_size`)."""
    m = subset_size(inst.n, deadline - time.perf_counter()) if members is None else members
    if m == 0 or not kernels_ready(deadline - time.perf_counter()):
        return 0, "subset search not run: too little time", False
    order = drop_orders(inst.prompt, inst.output)["shortest"]
    U, R = np.sort(order[inst.n - m:]), order[:inst.n - m]
    sub = sub_instance(inst, U)
    why_not = unsearchable(sub)
    if why_not is not None:
        return 0, f"subset search not run: {why_not}", False
    starts = None if schedule is None else starts_from_schedule(inst, schedule)
    upper = None
    if starts is not None:                      # the schedule restricted to U: the search's incumbent
        starts = starts[U]
        upper = float((starts + sub.output - sub.arrival).sum())
    rest, how = rest_bound(inst, R, bound_alone(inst, R), REST_SHARE * (deadline - time.perf_counter()))
    found = astar_search(sub, upper, starts, deadline=deadline)
    if found.bound is None:
        return 0, "subset search stopped before its root bound", False
    on_u = certified(found.bound)
    complete = found.status == "optimal"
    return on_u + rest, (f"{'OPT' if complete else 'a bound'} {on_u:,} of the {m} requests of longest output by "
                         f"latency-astar ({found.status}), + {rest:,} for the other {len(R)} {how}"), complete


@FORMULATIONS.register("subset-bound")
class SubsetBound(ClosedForm):
    name = "subset-bound"
    models = (SLOT,)
    exact = False
    integral_objective = True
    summary = ("the exact search on the up to 20 requests of longest output, the rest by volume (ours): lower bound")

    def solve(self, profile, warm=None) -> SolveResult:
        """Status "optimal" when the search on U completed (the bound is then the best this argument gives with
        that U), "time_limit" otherwise; never below ``volume-bound``."""
        t0 = time.perf_counter()
        bound, which, complete = subset_bound(self.inst, t0 + 0.95 * profile.time_limit, warm)
        volume = int(round(VolumeBound(self.inst).value()))
        if volume > bound:
            bound, which = volume, f"volume-bound ({which})"
        return SolveResult("optimal" if complete else "time_limit", float(bound), float(bound),
                           time.perf_counter() - t0, message=which)

    def warm_start(self, schedule):
        return schedule       # the best verified schedule, restricted to U, is the search's incumbent
