"""Where `chain-bound` loses, on draws whose optimum is proven (issue 12). Not a test.

    python benchmarks/partition_loss.py benchmarks/reference/issue12/*.json benchmarks/reference/issue12/earlier/*.json

`chain-bound` is a partition bound: it charges a set U of requests by the chain (Lemmas 2 and 2' along their
completion order) and the requests it leaves out by what they need alone (``bound_alone``: the larger of Σ o and
`volume-bound` on them), since a schedule restricted to a part is a schedule of that part. So its value is at most

    OPT(U) + bound_alone(rest)  <=  OPT,

and what it loses below OPT splits into two factors, whose product is `chain-bound` / OPT:

* **the partition**, (OPT(U) + bound_alone(rest)) / OPT: what the left-out requests wait for memory that U's
  requests hold, and what U waits for them, which no bound on the parts alone can see;
* **the chain on its own set**, (chain-bound − bound_alone(rest)) / OPT(U): how far the chain's rows are from
  U's own optimum.

Since ed24f4b `chain-bound` may charge the left-out requests more than ``bound_alone`` (the exact search on them), and
since 2026-12-03 its first completion beside them (``--no-first-completion`` turns that off), so its value may exceed
OPT(U) + bound_alone(rest): the second factor then holds what those two add, and can exceed 1.

The script reads the rows that ``bench_certify.py --json`` writes (draw k of ``--seed``, first ``prefix``
requests), keeps each proven draw or prefix once (OPT is its UB; ``ladder_table.proven_optima``), runs `chain-bound` for
``--chain-seconds``, takes the set U of its best value (its trace), and proves OPT(U) with `latency-astar`
(``--astar-seconds``; rows whose U it does not prove are listed without the two factors). One line per row,
then the medians per model and prefix (full draws apart), and over all rows.

With ``--estimate`` it reads the rows that are *not* proven instead (paper size, where U has 40 or more requests
and OPT(U) is out of reach) and puts the run's UB for OPT and the local search's best schedule of U alone
(``--search-seconds``) for OPT(U): both factors are then estimates, not certificates (each UB is above its
optimum, by about 0.2 % at the median where the optimum is known at 21-31 requests).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ladder_table import load, proven_optima
from lpbench.formulations import chain as chain_module
from lpbench.formulations.chain import chain_bound, drop_orders
from lpbench.formulations.latency_astar import astar_search
from lpbench.formulations.volume import bound_alone
from lpbench.generators import jaillet
from lpbench.heuristics.slot_sgs import local_search
from lpbench.instance import parse_instance
from lpbench.sim.multi import sub_instance

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("rows", nargs="+", help="JSON files written by bench_certify.py --json (only proven rows are used)")
ap.add_argument("--seed", type=int, default=0, help="the --seed the rows were made with")
ap.add_argument("--chain-seconds", type=float, default=10.0, help="time for chain-bound per row")
ap.add_argument("--astar-seconds", type=float, default=60.0, help="time for latency-astar on U per row")
ap.add_argument("--min-requests", type=int, default=1, help="only rows of at least this many requests")
ap.add_argument("--estimate", action="store_true",
                help="the rows not proven, with UBs for OPT and OPT(U) (the local search): estimates")
ap.add_argument("--search-seconds", type=float, default=15.0, help="with --estimate: the local search on U")
ap.add_argument("--no-first-completion", action="store_true",
                help="chain-bound's first completion at its c alone, not beside the requests it leaves out (the "
                     "state before 2026-12-03)")
args = ap.parse_args()
if args.no_first_completion:
    chain_module.JOINT_SHARE = 0.0

rows = [r for r in load(args.rows) if r["n"] >= args.min_requests]
prefix = {(r["model"], r["k"], r["n"]): r["prefix"] for r in rows}          # how to rebuild each draw's instance
if args.estimate:                                   # the best UB of the rows not proven, per draw
    reference: dict[tuple, float] = {}
    for r in rows:
        if not r["proven"]:
            key = (r["model"], r["k"], r["n"])
            reference[key] = min(float(r["ub"]), reference.get(key, float("inf")))
    print("Estimates: OPT is the rows' best UB, OPT(U) the local search's best schedule of U alone.\n")
else:
    reference = proven_optima(rows)
print("| model | k | n | OPT | chain-bound / OPT | \\|U\\| | OPT(U) | partition: (OPT(U) + rest) / OPT "
      "| chain on U: (chain − rest) / OPT(U) |")
print("|---|---|---|---|---|---|---|---|---|")
ratios: dict[tuple, list] = {}                       # per (model, "full" or the prefix's n): the three ratios
for (model, k, n), opt in sorted(reference.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
    inst = parse_instance(jaillet.instance(model, args.seed, k, first=prefix[model, k, n]))
    trace: list = []
    value, _ = chain_bound(inst, time.perf_counter() + args.chain_seconds, trace)
    if not trace or value > max(t[3] for t in trace):          # volume-bound: no set U gave the value
        print(f"| {model} | {k} | {n} | {opt:.0f} | {value / opt:.3f} | — | — | — | — |")
        continue
    key, r = max(trace, key=lambda t: t[3])[:2]
    order = drop_orders(inst.prompt.astype(np.int64), inst.output.astype(np.int64))[key]
    keep, rest = np.sort(order[r:]), np.sort(order[:r])
    alone = bound_alone(inst, rest)
    if args.estimate:
        opt_u = float(local_search(sub_instance(inst, keep), deadline=time.perf_counter() + args.search_seconds)[1])
    else:
        res = astar_search(sub_instance(inst, keep), deadline=time.perf_counter() + args.astar_seconds)
        if res.status != "optimal":
            print(f"| {model} | {k} | {n} | {opt:.0f} | {value / opt:.3f} | {len(keep)} | not proven ({res.status}) "
                  "| — | — |")
            continue
        opt_u = float(res.objective)
    part, chain_u = (opt_u + alone) / opt, (value - alone) / opt_u
    group = (model, "full" if prefix[model, k, n] is None else f"n = {n}")
    ratios.setdefault(group, []).append((value / opt, part, chain_u))
    print(f"| {model} | {k} | {n} | {opt:.0f} | {value / opt:.3f} | {len(keep)} | {opt_u:.0f} | {part:.3f} "
          f"| {chain_u:.3f} |", flush=True)
groups = sorted(ratios.items()) + ([(("all", "rows"), [x for v in ratios.values() for x in v])] if ratios else [])
for (model, which), v in groups:
    med = [statistics.median(x) for x in zip(*v)]
    low = [min(x) for x in zip(*v)]
    print(f"\n{model}, {which}: {len(v)} rows: chain-bound / OPT median {med[0]:.3f} (least {low[0]:.3f}); the "
          f"partition {med[1]:.3f} ({low[1]:.3f}); the chain on U {med[2]:.3f} ({low[2]:.3f})")
