"""The README's n-ladder table (issue 12) from the rows of ``bench_certify.py --json``, checked. Not a test.

    python benchmarks/bench_certify.py --models jaillet-model1 --count 20 --requests 8,9,10 --time-limit 60 --json m1.json
    python benchmarks/ladder_table.py m1.json [m2.json ...] [--earlier old1.json old2.json ...]

Per (model, n): draws proven, median and slowest proof, the open draws with their gaps, which bound proved
each draw, and MC-SF / OPT over the proven draws (exact there: OPT is the proven UB), with how many draws
MC-SF is optimal on. Before the table, two checks that exit 1 when they fail:

* across prefixes of one draw, OPT(n + 1) − OPT(n) >= o of request n + 1: a schedule of the first n + 1
  requests restricted to the first n is a schedule of them, and request n + 1 is at least its o rounds in the
  system, so a proven optimum that breaks this is wrong;
* against ``--earlier`` runs (their ``--json`` rows): every optimum proven in either lies in the other's
  certified interval [LB, UB].
"""
from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys

from lpbench.generators import jaillet


def load(paths: list[str]) -> list[dict]:
    """The rows of ``bench_certify.py --json`` files; other JSON files among them (a schedule such as
    ``rho0.8-starts.json``, which a glob of the reference folder also matches) are skipped."""
    rows = []
    for path in paths:
        with open(path) as fh:
            data = json.load(fh)
        if isinstance(data, list):
            rows += data
    return rows


def proven_optima(rows: list[dict]) -> dict[tuple, float]:
    """{(model, k, n): OPT} over the proven rows (OPT is a proven row's UB); exits when two rows prove different
    optima for one draw."""
    optima: dict[tuple, float] = {}
    for r in rows:
        if r["proven"]:
            key = (r["model"], r["k"], r["n"])
            if optima.setdefault(key, r["ub"]) != r["ub"]:
                raise SystemExit(f"{key}: two proven optima, {optima[key]} and {r['ub']}")
    return optima


def check(rows: list[dict], earlier: list[dict], seed: int) -> tuple[list[str], int]:
    """The failures of the two checks of the module docstring (empty: all hold), and how many pairs of consecutive
    proven prefixes the first one compared."""
    failures, pairs = [], 0
    opt = {(r["model"], r["k"], r["n"]): r["ub"] for r in rows if r["proven"]}
    for (model, k, n), value in sorted(opt.items()):
        nxt = opt.get((model, k, n + 1))
        if nxt is not None:
            pairs += 1
            o_next = jaillet.instance(model, seed, k)["requests"]["output"][n]
            if nxt - value < o_next:
                failures.append(f"{model} draw {k}: OPT({n + 1}) - OPT({n}) = {nxt - value} < o = {o_next}")
    now = {(r["model"], r["k"], r["n"]): r for r in rows}
    for old in earlier:
        key = (old["model"], old["k"], old["n"])
        new = now.get(key)
        if new is None:
            continue
        for a, b in ((new, old), (old, new)):
            if a["proven"] and not b["lb"] <= a["ub"] <= b["ub"]:
                failures.append(f"{key}: proven {a['ub']} outside [{b['lb']}, {b['ub']}]")
    return failures, pairs


def table(rows: list[dict]) -> str:
    out = ["| model | n | proven of 20 | median / slowest proof | open (gap) | proved by | "
           "MC-SF / OPT (proven draws): best / worst / mean | MC-SF optimal |",
           "|---|---|---|---|---|---|---|---|"]
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["model"], r["n"])].append(r)
    for (model, n), rs in sorted(groups.items()):
        proven = [r for r in rs if r["proven"]]
        times = sorted(r["seconds"] for r in proven)
        sources = collections.Counter(r["bound_source"] for r in proven).most_common()
        by = ", ".join(f"{'the search' if s == 'latency-astar' else f'`{s}`'} {c}" for s, c in sources)
        ratios = [r["mcsf"] / r["ub"] for r in proven]
        gaps = ", ".join(f"{r['k']} ({100 * r['gap']:.2f} %)" for r in rs if not r["proven"]) or "—"
        count = f"**{len(proven)}**" if len(proven) == len(rs) else str(len(proven))
        spread = (f"{min(ratios):.3f} / {max(ratios):.3f} / {statistics.mean(ratios):.3f}" if ratios else "—")
        timing = f"{statistics.median(times):.1f} / {times[-1]:.1f} s" if times else "—"
        label = "Model " + model.rsplit("model", 1)[-1]
        out.append(f"| {label} | {n} | {count} | {timing} | {gaps} | {by} | {spread} | "
                   f"{sum(x == 1 for x in ratios)} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="+", help="JSON files written by bench_certify.py --json (the table's runs)")
    ap.add_argument("--earlier", nargs="*", default=[], help="earlier runs' JSON files to check against")
    ap.add_argument("--seed", type=int, default=0, help="the --seed the rows were made with")
    args = ap.parse_args()
    rows = load(args.rows)
    failures, pairs = check(rows, load(args.earlier), args.seed)
    for line in failures:
        print("CHECK FAILED:", line)
    print(f"checks: {len(failures)} failed; {pairs} consecutive proven prefixes, "
          f"{len(args.earlier)} earlier files\n")
    print(table(rows))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
