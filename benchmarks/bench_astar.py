"""The exact search ``latency-astar`` alone on Jaillet prefixes (issue 12): proofs, certified bounds when
stopped, states and time; with ``--compare``, the ``completion-cp`` relaxation's bound on the same
prefix with the same time limit.

    python benchmarks/bench_astar.py --requests 9,10 --count 20 --time-limit 60
    python benchmarks/bench_astar.py --requests 12 --draws 0,1,2,3,4 --time-limit 15 --compare
    python benchmarks/bench_astar.py --requests 16 --draws 1,3,15 --time-limit 100 --pattern-size 0,10,11,12

Draw k is ``jaillet.instance(model, seed, k)`` cut to its first n requests (as in bench_certify.py's
n-ladder). No incumbent is given to the search, so its value is its own. ``--pattern-size``: how many
requests the pattern bound (P) tabulates, a comma list run one after another (default: the search's own
choice; the table may stop sooner, half the time limit being its budget (PATTERN_SHARE); the line shows how many
were tabulated and the root bound).
"""
from __future__ import annotations

import argparse
import time

from lpbench.formulations.latency_astar import astar_search
from lpbench.generators import jaillet
from lpbench.instance import parse_instance

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--model", default="jaillet-model1")
ap.add_argument("--requests", default="9,10", help="comma list of prefix sizes n")
ap.add_argument("--count", type=int, default=20, help="draws k = 0..count-1 (ignored with --draws)")
ap.add_argument("--draws", help="comma list of draws k")
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--time-limit", type=float, default=60.0)
ap.add_argument("--compare", action="store_true", help="also solve completion-cp (CP-SAT, 2 threads)")
ap.add_argument("--pattern-size", help="comma list of (P) table sizes to run (default: the search's choice)")
args = ap.parse_args()

draws = [int(k) for k in args.draws.split(",")] if args.draws else list(range(args.count))
sizes = [int(x) for x in args.pattern_size.split(",")] if args.pattern_size else [None]
for n in (int(x) for x in args.requests.split(",")):
    for size in sizes:
        proven, worst = 0, 0.0
        for k in draws:
            inst = parse_instance(jaillet.instance(args.model, args.seed, k, first=n))
            res = astar_search(inst, deadline=time.perf_counter() + args.time_limit, pattern_size=size)
            proven += res.status == "optimal"
            worst = max(worst, res.seconds)
            line = (f"{args.model} k={k:3d} n={n:2d} M={inst.memory:2d} (P) {res.tabulated:2d} root {res.root:6d} "
                    f"{res.status:<10} value {res.objective} bound {res.bound:g}  {res.expanded:9,d} expanded "
                    f"{res.states:9,d} stored {res.seconds:6.1f}s")
            if args.compare:
                from lpbench.formulations.completion import CompletionCP
                from lpbench.solvers.base import SolverProfile

                cc = CompletionCP(inst).build().solve(SolverProfile("c", "cpsat", time_limit=args.time_limit,
                                                                    threads=2))
                line += f"  | completion-cp {cc.status} bound {cc.bound:g}"
            print(line, flush=True)
        label = "" if size is None else f", (P) size {size}"
        print(f"n = {n}{label}: proven {proven} of {len(draws)}, slowest {worst:.1f}s\n", flush=True)
