"""Speed of the seed-004 incumbent local search (``lpbench.heuristics.slot_sgs.local_search``) at paper size.

    python benchmarks/bench_local_search.py --iterations 400 --draws 0,20,40

Per draw (``jaillet.instance(model, 0, k)``, both models): the best total latency after the given
iterations (deterministic: the same at any speed) and the milliseconds per iteration.
"""
from __future__ import annotations

import argparse
import time

from lpbench.generators import jaillet
from lpbench.heuristics.slot_sgs import local_search
from lpbench.instance import parse_instance

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--iterations", type=int, default=400)
ap.add_argument("--draws", default="0,20,40")
ap.add_argument("--models", default="jaillet-model1,jaillet-model2")
args = ap.parse_args()

print("| model | draw | n | total latency | ms per iteration |")
print("|---|---|---|---|---|")
for model in args.models.split(","):
    for k in map(int, args.draws.split(",")):
        inst = parse_instance(jaillet.instance(model, 0, k))
        t = time.perf_counter()
        _, best, done = local_search(inst, iterations=args.iterations, seed=k)
        ms = (time.perf_counter() - t) / done * 1e3
        print(f"| {model} | {k} | {inst.n} | {best} | {ms:.2f} |", flush=True)
