"""The pattern table (P) of ``latency-astar`` and the search after it, on one Jaillet prefix (issue 12): each
stage's time, the whole table's, then the search in two parts with a given UB, as the certify step runs it where
the search runs alone. With ``--cap N``, each entry of the stages from ``--cap-from`` on is searched up to N
stored states and, where stopped there, keeps its certified bound (the least f at the limit, at most the
subset's optimum, so (P) stays admissible) instead of its optimum: does a cheaper, weaker table pay?

    python benchmarks/pattern_table_probe.py --model jaillet-model2 --draw 5 --requests 20 --ub 999 --seconds 45
    python benchmarks/pattern_table_probe.py --model jaillet-model2 --draw 5 --requests 20 --ub 999 --seconds 45 --cap 3000 --cap-from 13

The table is the one the certify step builds where the search runs alone (``LatencyIP.solo_pattern_members``
members of largest peak and up to ``COPY_ROOM`` copies), built whole (no time share), on two threads.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from lpbench.formulations import latency_astar as la
from lpbench.formulations.latency_ip import LatencyIP
from lpbench.generators import jaillet
from lpbench.instance import parse_instance

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--model", default="jaillet-model2")
ap.add_argument("--draw", type=int, default=5)
ap.add_argument("--requests", type=int, default=20)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--members", type=int, default=LatencyIP.solo_pattern_members)
ap.add_argument("--ub", type=int, required=True, help="the incumbent's latency given to the search")
ap.add_argument("--seconds", type=float, default=45.0, help="the search's time limit after the table")
ap.add_argument("--cap", type=int, default=0, help="stored states per entry from --cap-from on (0: exact entries)")
ap.add_argument("--cap-from", type=int, default=1, help="the first stage whose entries are capped")
args = ap.parse_args()

inst = parse_instance(jaillet.instance(args.model, args.seed, args.draw, first=args.requests))
a, s, o = ([int(x) for x in v] for v in (inst.arrival, inst.prompt, inst.output))
n = inst.n
bounds = la._Bounds(a, s, o, int(inst.memory))
before = la.identical_before(inst)                    # as the search: identical requests start in order
members = la.pattern_members(bounds, la.default_pattern_size(n, args.members))
copies = la.pattern_copies(bounds, members, la.COPY_ROOM)
print(f"{args.model} draw {args.draw}, first {n} requests, M = {inst.memory}: members (s, o) "
      f"{[(s[j], o[j]) for j in members]}, copies {[[(s[j], o[j]) for j in g] for g in copies]}")

exact_best_first, exact_stage, state_limit = la._best_first, la.tabulate_stage, la.MAX_STATES
stage, capped = [0], [0]


def capped_best_first(*call, **named):
    """An entry's search stopped at the state limit (``latency_astar.MAX_STATES``, set to --cap meanwhile); its
    certified bound counts as the entry, so the stage is kept."""
    found = exact_best_first(*call, **named)
    if found.status == "feasible":
        capped[0] += 1
        found.status = "optimal"
    return found


def timed_stage(tables, before_t, subsets, deadline, stop_when):
    stage[0] += 1
    if args.cap and stage[0] >= args.cap_from:
        la._best_first, la.MAX_STATES = capped_best_first, args.cap
    t = time.perf_counter()
    complete = exact_stage(tables, before_t, subsets, deadline, stop_when)
    la._best_first, la.MAX_STATES = exact_best_first, state_limit
    print(f"  stage {stage[0]}: {len(subsets)} entries, {time.perf_counter() - t:.2f} s", flush=True)
    return complete


la.tabulate_stage = timed_stage
t = time.perf_counter()
la.build_patterns(bounds, before, members, copies=copies)      # stage 1 compiles, if not warm
table_seconds = time.perf_counter() - t
la.tabulate_stage = exact_stage
print(f"table: {table_seconds:.1f} s, {capped[0]} entries capped at {args.cap} states" if args.cap else
      f"table: {table_seconds:.1f} s, every entry exact")
full, t0 = (1 << n) - 1, min(a)
t = time.perf_counter()
found = la._best_first_parallel([bounds, bounds.with_own_caches()], before, full, t0, t0 if t0 < bounds.a_last else -1,
                                args.ub, t + args.seconds, state_limit, None)
search_seconds = time.perf_counter() - t
print(f"search (two parts, UB {args.ub}): {found.status}, bound {found.bound}, {found.expanded:,} expanded, "
      f"{search_seconds:.1f} s; table + search {table_seconds + search_seconds:.1f} s")
