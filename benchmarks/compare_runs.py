"""Two runs of ``bench_certify.py --json``, draw by draw (issue 12). Not a test.

    python benchmarks/compare_runs.py NEW.json OLD.json

Per model, over the draws both runs have: median, worst and mean gap old -> new, on how many draws the UB (the best
verified schedule) and the LB (the certified bound) fell or rose, and their mean and extreme relative changes. The
runs must be of the same instances (model, draw, n); a draw in one run only is listed and left out. How much of a
change is the code and how much the machine shows only when both ran on the same machine, one after the other.
"""
from __future__ import annotations

import argparse
import json
import statistics


def rows(path: str) -> dict[tuple[str, int, int], dict]:
    """The rows of one ``--json`` file by (model, draw, n); exit 2 naming the file if it is not such a file."""
    try:
        with open(path) as fh:
            return {(r["model"], r["k"], r["n"]): r for r in json.load(fh)}
    except (OSError, ValueError, KeyError, TypeError) as error:
        ap.error(f"{path}: expected the rows that bench_certify.py --json writes ({type(error).__name__}: {error})")


def changes(new: list[float], old: list[float]) -> str:
    rel = [(x - y) / y for x, y in zip(new, old)]
    return (f"lower on {sum(d < 0 for d in rel)}, higher on {sum(d > 0 for d in rel)}, mean {statistics.mean(rel):+.3%}"
            f" (from {min(rel):+.3%} to {max(rel):+.3%})")


ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("new")
ap.add_argument("old")
args = ap.parse_args()
new, old = rows(args.new), rows(args.old)
for key in sorted(new.keys() ^ old.keys()):
    print(f"only in {args.new if key in new else args.old}: {key[0]} draw {key[1]} (n = {key[2]})")
for model in sorted({key[0] for key in new.keys() & old.keys()}):
    keys = sorted(key for key in new.keys() & old.keys() if key[0] == model)
    gap_new, gap_old = [new[k]["gap"] for k in keys], [old[k]["gap"] for k in keys]
    print(f"{model}, {len(keys)} draws: median gap {statistics.median(gap_old):.2%} -> "
          f"{statistics.median(gap_new):.2%}, "
          f"worst {max(gap_old):.2%} -> {max(gap_new):.2%}, mean {statistics.mean(gap_old):.2%} -> "
          f"{statistics.mean(gap_new):.2%}; gap lower on {sum(x < y for x, y in zip(gap_new, gap_old))}, higher on "
          f"{sum(x > y for x, y in zip(gap_new, gap_old))}")
    for side in ("ub", "lb"):
        print(f"  {side.upper()}: " + changes([new[k][side] for k in keys], [old[k][side] for k in keys]))
