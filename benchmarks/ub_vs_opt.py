"""How far the schedules of runs that did not prove a draw are from its optimum, where another run proved it (issue 12).
Not a test.

    python benchmarks/ub_vs_opt.py benchmarks/reference/issue12/*.json benchmarks/reference/issue12/earlier/*.json

Reads the rows that ``bench_certify.py --json`` writes. A draw (model, k, n) is known where some row proved it
(its UB is then OPT; two rows proving different optima stop the script). For every other row of that draw, UB / OPT
is how far the best verified schedule of that run was from the optimum: one line per draw, the run's time limit
read from the file name ("-10s-", "-60s-"), then the median and the largest per time limit.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics

from ladder_table import load, proven_optima

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("rows", nargs="+", help="JSON files written by bench_certify.py --json")
ap.add_argument("--min-requests", type=int, default=21, help="only draws of at least this many requests")
args = ap.parse_args()

runs = []                                          # (the run's time limit, its rows), one per file
for path in args.rows:
    limit = re.search(r"-(\d+)s-", os.path.basename(path))
    runs.append((limit.group(1) + " s" if limit else "?", load([path])))
optimum = proven_optima([r for _, rows in runs for r in rows])

ratios: dict[tuple, dict[str, list[float]]] = {}
for limit, rows in runs:
    for r in rows:
        key = (r["model"], r["k"], r["n"])
        if key in optimum and not r["proven"] and r["n"] >= args.min_requests:
            ratios.setdefault(key, {}).setdefault(limit, []).append(r["ub"] / optimum[key])

print("| model | k | n | OPT | UB / OPT of the runs that did not prove it, per time limit: median (largest), runs |")
print("|---|---|---|---|---|")
per_limit: dict[str, list[float]] = {}
for key in sorted(ratios):
    cells = []
    for limit, v in sorted(ratios[key].items()):
        cells.append(f"{limit}: {statistics.median(v):.4f} ({max(v):.4f}), {len(v)}")
        per_limit.setdefault(limit, []).append(statistics.median(v))
    model, k, n = key
    print(f"| {model} | {k} | {n} | {optimum[key]:.0f} | {'; '.join(cells)} |")
for limit, v in sorted(per_limit.items()):
    print(f"\n{limit}: {len(v)} draws, UB / OPT (each draw's median over its runs) median {statistics.median(v):.4f}, "
          f"largest {max(v):.4f}, equal to OPT on {sum(x == 1 for x in v)}")
