"""Speed of the seed-004 incumbent local search (``lpbench.heuristics.slot_sgs.local_search``) at paper size.

    python benchmarks/bench_local_search.py --draws 0,20,40
    python benchmarks/bench_local_search.py --requests 8,12,16 --models jaillet-model1 --draws 0   # prefixes

Per draw (``jaillet.instance(model, 0, k)``, both models): the best total latency after the given moves
(default: the full search, ``planned_moves(n)``; deterministic: the same at any speed), the seconds it took
and the milliseconds per move. The first call compiles the kernel (a few seconds, once per install).
"""
from __future__ import annotations

import argparse
import time

from lpbench.generators import jaillet
from lpbench.heuristics.slot_sgs import local_search, planned_moves
from lpbench.instance import parse_instance

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--iterations", type=int, default=None, help="moves per draw (default: the full search)")
ap.add_argument("--draws", default="0,20,40")
ap.add_argument("--models", default="jaillet-model1,jaillet-model2")
ap.add_argument("--requests", default=None, help="comma list of n: search the first n requests of each draw")
args = ap.parse_args()
prefixes = [int(x) for x in args.requests.split(",")] if args.requests else [None]

local_search(parse_instance(jaillet.instance("jaillet-model1", 0, 0)), iterations=1)   # compile outside the timing
print("| model | draw | n | moves | total latency | seconds | ms per move |")
print("|---|---|---|---|---|---|---|")
for model in args.models.split(","):
    for k in map(int, args.draws.split(",")):
        for prefix in prefixes:
            inst = parse_instance(jaillet.instance(model, 0, k, first=prefix))
            moves = args.iterations if args.iterations is not None else planned_moves(inst.n)
            t = time.perf_counter()
            _, best, done = local_search(inst, iterations=moves, seed=k)
            seconds = time.perf_counter() - t
            print(f"| {model} | {k} | {inst.n} | {done} | {best} | {seconds:.2f} | {seconds / done * 1e3:.3f} |",
                  flush=True)
