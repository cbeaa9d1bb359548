"""chain-bound at and above paper size (issue 12): the time to build its tables of triple bonuses, and what
the search reaches in a given time.

    python benchmarks/bench_chain.py --draws jaillet-model2:60,jaillet-model2:88,jaillet-model2:28 --seconds 10

Per draw (``jaillet.instance(model, 0, k)``): n, the seconds to build the tables (``triple_bonus``, and
``search_table`` where the code has it: "—" before c914c71), the evaluations of sets U the search made in ``--seconds`` (``chain_bound``'s trace; a set polished again counts again),
the bound and the set that gave it, and the process's peak resident memory so far.
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from lpbench.formulations import chain
from lpbench.formulations.chain import chain_bound
from lpbench.formulations.completion import separation, triple_bonus
from lpbench.generators import jaillet
from lpbench.instance import parse_instance

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--draws", default="jaillet-model2:60,jaillet-model2:88,jaillet-model2:28",
                help="comma list of model:k")
ap.add_argument("--seconds", type=float, default=10.0)
args = ap.parse_args()

print("| draw | n | triple_bonus s | search_table s | evaluations | bound | set | peak RSS MB |")
print("|---|---|---|---|---|---|---|---|")
for item in args.draws.split(","):
    model, k = item.split(":")
    inst = parse_instance(jaillet.instance(model, 0, int(k)))
    s, o = inst.prompt.astype(np.int64), inst.output.astype(np.int64)
    t = time.perf_counter()
    B3 = triple_bonus(s + o, o, separation(inst), int(inst.memory), inst.n, dtype=np.int32)
    bonus = time.perf_counter() - t
    search = "—"
    if hasattr(chain, "search_table"):           # the search's own copy, built once (since c914c71)
        t = time.perf_counter()
        chain.search_table(B3)
        search = f"{time.perf_counter() - t:.2f}"
    del B3
    trace: list = []
    bound, which = chain_bound(inst, time.perf_counter() + args.seconds, trace)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"| {model} k={k} | {inst.n} | {bonus:.2f} | {search} | {len(trace)} | {bound} | {which} | {peak} |", flush=True)
