"""Where is the seed-004 gap: in the bound or in the schedule? (issue 12). Not a test.

    python benchmarks/bench_certify.py --models jaillet-model1 --count 20 --requests 8,9,10,11,12 --time-limit 60 --json ladder.json
    python benchmarks/bench_certify.py --count 10 --stride 20 --time-limit 10 --json paper.json
    python benchmarks/gap_decomposition.py ladder.json paper.json

Reads the per-draw rows that ``bench_certify.py --json`` writes and rebuilds each instance (draw k of
``--seed``, the first ``prefix`` requests). Where the row is proven, OPT is known, and the script prints
per (model, n) how far the closed-form ``volume-bound`` (the bound that decides at paper size) sits below
OPT, and ``chain-bound`` (``--chain-seconds`` each, up to 110 requests; the bound that decides at paper size
since it exists), and how far the incumbent local search (``lpbench.heuristics.slot_sgs.local_search``,
the full search, seed 0; the doc's tables were made before 43e46c0 with 2,000 moves of the numpy search) and
MC-SF sit above it. Where the row is not proven it prints the ratios to UB.

If a bound's ratio to OPT is steady across the n where OPT is known, the same ratio applied to the
unproven draws estimates how far their UB is from OPT: an estimate, not a certificate.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

from lpbench.formulations.chain import ChainBound, chain_bound
from lpbench.formulations.volume import VolumeBound
from lpbench.generators import jaillet
from lpbench.heuristics.slot_sgs import local_search
from lpbench.instance import parse_instance

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("rows", nargs="+", help="JSON files written by bench_certify.py --json")
ap.add_argument("--seed", type=int, default=0, help="the --seed the rows were made with")
ap.add_argument("--chain-seconds", type=float, default=5.0, help="time for chain-bound per row (0: skip it)")
ap.add_argument("--prefixes", default=None, help="comma list of n: only the rows of these prefixes (default: all)")
args = ap.parse_args()
prefixes = None if args.prefixes is None else {int(n) for n in args.prefixes.split(",")}

groups: dict[tuple, list] = {}
for path in args.rows:
    with open(path) as fh:
        for r in json.load(fh):
            if prefixes is not None and r["prefix"] not in prefixes:
                continue
            inst = parse_instance(jaillet.instance(r["model"], args.seed, r["k"], first=r["prefix"]))
            assert inst.n == r["n"], f"row {r['model']} k={r['k']} does not match its instance"
            volume = VolumeBound(inst).value()
            chain = (chain_bound(inst, time.perf_counter() + args.chain_seconds)[0]
                     if args.chain_seconds > 0 and inst.n <= ChainBound.max_requests else float("nan"))
            _, searched, _ = local_search(inst)
            ref = r["ub"]                                   # OPT where proven, else the best verified schedule
            groups.setdefault((r["model"], r["prefix"] or "full", r["proven"]), []).append(
                (volume / ref, chain / ref, searched / ref, r["mcsf"] / ref))

print("| model | n | draws | proven | volume-bound / ref: median (min) | chain-bound / ref: median (min) "
      "| local search / ref: median (max) | local search ≤ ref | MC-SF / ref median |")
print("|---|---|---|---|---|---|---|---|---|")
for (model, n, proven), v in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]).zfill(4), kv[0][2])):
    vol, chain, ls, mcsf = zip(*v)
    print(f"| {model} | {n} | {len(v)} | {'yes (ref = OPT)' if proven else 'no (ref = UB)'} "
          f"| {statistics.median(vol):.3f} ({min(vol):.3f}) | {statistics.median(chain):.3f} ({min(chain):.3f}) "
          f"| {statistics.median(ls):.4f} ({max(ls):.4f}) "
          f"| {sum(x <= 1 + 1e-9 for x in ls)} | {statistics.median(mcsf):.3f} |")
