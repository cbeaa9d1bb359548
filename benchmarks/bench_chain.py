"""chain-bound at and above paper size (issue 12): the time to build its tables of triple bonuses, and what
the search reaches in a given time.

    python benchmarks/bench_chain.py --draws jaillet-model2:60,jaillet-model2:88,jaillet-model2:28 --seconds 10

Per draw (``jaillet.instance(model, 0, k)``, its first ``--first`` requests if given): n, the seconds to build the
tables (``triple_bonus``, and ``search_table`` where the code has it: "—" before c914c71), the evaluations of sets U
the search made in ``--seconds`` (``chain_bound``'s trace; a set polished again counts again), the bound and the set
that gave it, the best value before the split per position (the search's fourth step, since 9f42256; "—" where it did
not run) and after it (before the split per position and pair, the fifth step), the milliseconds of one
``_split_tables`` call on the best set's m requests (mean of 5), and the process's peak resident memory so far.

The last five columns are the cost of the first four completions' block (``FIRST_FOUR``; cffa4eb): the exact
evaluations ``_QPath.exact`` made, the seconds they took in all, the seconds of those in the block's kernels
(``_four_below`` and ``_four_raise``, timed around each call), and the quadruples raised per evaluation that ran the
block (median / most), with the largest m among them.
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from lpbench.formulations import chain
from lpbench.formulations.chain import chain_bound
from lpbench.formulations.completion import separation, triple_bonus, triple_excess
from lpbench.generators import jaillet
from lpbench.instance import parse_instance

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--draws", default="jaillet-model2:60,jaillet-model2:88,jaillet-model2:28",
                help="comma list of model:k")
ap.add_argument("--seconds", type=float, default=10.0)
ap.add_argument("--first", type=int, default=None, help="only the first N requests of each draw (a ladder prefix)")
ap.add_argument("--no-first-completion", action="store_true",
                help="chain-bound's first completion at its c alone, not beside the requests it leaves out (the "
                     "state before 2026-12-03)")
ap.add_argument("--no-first-four", action="store_true",
                help="without the first four completions' block (FIRST_FOUR off; the state before cffa4eb): the "
                     "searches follow the values without it either way, so the exact evaluations are the same ones "
                     "and the difference in their seconds is the block's cost")
args = ap.parse_args()
if args.no_first_completion:
    chain.JOINT_SHARE = 0.0
if args.no_first_four:
    chain.FIRST_FOUR = False


class FourCost:
    """Times ``_QPath.exact`` and the four-block's kernels, and counts the quadruples each exact evaluation raises
    (the second return of ``_four_raise``'s second call, 1 for its first)."""

    def __init__(self):
        self.reset()
        exact, below, raise_ = chain._QPath.exact, chain._four_below, chain._four_raise

        def timed_exact(q, lam):
            self.raised, start = 0, time.perf_counter()
            out = exact(q, lam)
            self.exact_s += time.perf_counter() - start
            self.evaluations += 1
            if self.raised:
                self.counts.append(self.raised)
                self.largest_m = max(self.largest_m, q.m)
            return out

        def timed(kernel, counts):
            def call(*a):
                start = time.perf_counter()
                out = kernel(*a)
                self.kernel_s += time.perf_counter() - start
                if counts:
                    self.raised += int(out[1])
                return out
            return call

        chain._QPath.exact = timed_exact
        chain._four_below, chain._four_raise = timed(below, False), timed(raise_, True)

    def reset(self):
        self.evaluations, self.exact_s, self.kernel_s, self.counts, self.largest_m, self.raised = 0, 0.0, 0.0, [], 0, 0

    def columns(self) -> str:
        counts = f"{int(np.median(self.counts))} / {max(self.counts)}" if self.counts else "—"
        return f"{self.evaluations} | {self.exact_s:.2f} | {self.kernel_s:.2f} | {counts} | {self.largest_m or '—'}"


cost = FourCost()

print("| draw | n | triple_bonus s | search_table s | evaluations | bound | set | before the split | per position | "
      "m | split tables ms | peak RSS MB | exact evaluations | exact s | four-block kernels s | quadruples raised | "
      "largest m |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for item in args.draws.split(","):
    model, k = item.split(":")
    inst = parse_instance(jaillet.instance(model, 0, int(k), first=args.first))
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
    cost.reset()
    bound, which = chain_bound(inst, time.perf_counter() + args.seconds, trace)
    before = max((row[3] for row in trace if isinstance(row[2], int)), default="—")
    position = next((row[3] for row in trace if row[2] == "split per position"), "—")
    key, r = max(trace, key=lambda row: row[3])[:2] if trace else ("shortest", 0)
    keep = np.sort(chain.drop_orders(s, o)[key][r:])
    m = len(keep)
    D1, D2 = triple_excess((s + o)[keep], o[keep], separation(inst)[np.ix_(keep, keep)], int(inst.memory))
    shares = np.full((m, m, m), chain.SPLIT_FINE * chain.SPLIT[0] // chain.SPLIT[1])
    Bx, Bt = np.zeros((m,) * 4, dtype=np.int32), np.full((m,) * 4, np.inf, dtype=np.float32)
    chain._split_tables(D1, D2, shares, chain.SPLIT_FINE, np.arange(m + 1), Bx, Bt)   # compiled or loaded: not timed
    t = time.perf_counter()
    for _ in range(5):
        chain._split_tables(D1, D2, shares, chain.SPLIT_FINE, np.arange(m + 1), Bx, Bt)
    tables_ms = 1000 * (time.perf_counter() - t) / 5
    del Bx, Bt, D1, D2
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    four = cost.columns()
    print(f"| {model} k={k} | {inst.n} | {bonus:.2f} | {search} | {len(trace)} | {bound} | {which} | "
          f"{before if position != '—' else '—'} | {position} | {m} | {tables_ms:.0f} | {peak} | "
          f"{four} |", flush=True)
