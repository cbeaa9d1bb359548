"""Can the local search's serial SGS reach the optimum? (issue 12). Not a test.

    python benchmarks/sgs_delays.py --model jaillet-model1 --requests 12 --draws 0,1,2,3,4,5

The incumbent search (:mod:`lpbench.heuristics.slot_sgs`) places each request at its earliest fit on top of those
placed before it, so it only reaches schedules in which no request could start earlier given the ones before it.
For each draw (its first ``--requests`` requests) the script proves OPT with ``latency-astar`` and prints:

* the SGS of the optimal schedule's own start order (ties by o): OPT when the optimum is such a schedule;
* the requests the optimum holds back, with by how much: in start order, the rounds between the earliest fit of
  each request beside those started before it and its optimal start;
* the shipped local search (seed 0) and the best it becomes with one *delay*: one request placed at its earliest
  fit at or after (its earliest fit + d), d = 1 .. max o, the order unchanged.

Every schedule is checked against eq. (3) by lpbench's verifier before its latency is printed.
docs/seed004-certification.md ("Schedules the serial SGS cannot reach: delays") has the measured output.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from lpbench.formulations.latency_astar import astar_search
from lpbench.formulations.latency_ip import schedule_from_starts
from lpbench.generators import jaillet
from lpbench.heuristics.slot_sgs import eq3_ramps, local_search
from lpbench.instance import parse_instance
from lpbench.verify import verify


def earliest_fit(mem: np.ndarray, ramp: np.ndarray, M: int, k: int) -> int:
    """The least start >= k at which ``ramp`` (rounds k + 1 ...) fits under M on top of ``mem``."""
    while np.any(mem[k + 1:k + 1 + len(ramp)] + ramp > M):
        k += 1
    return k


def place(a, ramps, M: int, order, delay) -> np.ndarray:
    """Serial SGS of ``order``, request j at its earliest fit at or after (its earliest fit + delay[j])."""
    size = int(a.max()) + sum(len(r) for r in ramps) + len(a) * int(delay.max()) + 2 * max(map(len, ramps)) + 4
    mem = np.zeros(size, dtype=np.int64)
    start = np.zeros(len(a), dtype=np.int64)
    for j in order:
        k = earliest_fit(mem, ramps[j], M, int(a[j]))
        if delay[j]:
            k = earliest_fit(mem, ramps[j], M, k + int(delay[j]))
        start[j] = k
        mem[k + 1:k + 1 + len(ramps[j])] += ramps[j]
    return start


def held_back(a, ramps, M: int, start) -> list[tuple[int, int]]:
    """(request, rounds) of the requests that start later than their earliest fit beside those started before."""
    mem = np.zeros(int(start.max()) + 2 * max(map(len, ramps)) + 4, dtype=np.int64)
    out = []
    for j in np.lexsort((np.arange(len(a)), start)):
        k = earliest_fit(mem, ramps[j], M, int(a[j]))
        if start[j] > k:
            out.append((int(j), int(start[j] - k)))
        mem[start[j] + 1:start[j] + 1 + len(ramps[j])] += ramps[j]
    return out


def verified(inst, start) -> int:
    """Total latency of the schedule with these starts, after lpbench's verifier accepted it."""
    result = verify(inst, schedule_from_starts(inst, start))
    if not result.feasible:
        raise AssertionError(f"infeasible schedule: {result.violations[:3]}")
    return int(result.metrics["total_latency"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="jaillet-model1")
    ap.add_argument("--requests", type=int, default=12)
    ap.add_argument("--draws", default="0,1,2,3,4,5")
    ap.add_argument("--seconds", type=float, default=60.0, help="time for the exact search per draw")
    args = ap.parse_args()
    for k in (int(x) for x in args.draws.split(",")):
        inst = parse_instance(jaillet.instance(args.model, 0, k, first=args.requests))
        a, o, M = inst.arrival.astype(np.int64), inst.output.astype(np.int64), int(inst.memory)
        ramps = eq3_ramps(inst.prompt, o)
        ls_start, ls, _ = local_search(inst, seed=0)
        found = astar_search(inst, upper=ls + 1, deadline=time.perf_counter() + args.seconds)
        row = {"draw": k, "n": inst.n, "local_search": verified(inst, ls_start)}
        if found.status != "optimal":
            row["OPT"] = None
            print(json.dumps(row), flush=True)
            continue
        opt = np.asarray(found.starts, dtype=np.int64)
        zero = np.zeros(inst.n, dtype=np.int64)
        row["OPT"] = verified(inst, opt)
        row["sgs_of_optimal_order"] = verified(inst, place(a, ramps, M, np.lexsort((o, opt)), zero))
        row["optimum_holds_back"] = held_back(a, ramps, M, opt)
        order, best = np.lexsort((np.arange(inst.n), ls_start)), (row["local_search"], None)
        if verified(inst, place(a, ramps, M, order, zero)) == best[0]:      # the search's schedule is this order's SGS
            for j in range(inst.n):
                for d in range(1, int(o.max()) + 1):
                    delay = zero.copy()
                    delay[j] = d
                    value = verified(inst, place(a, ramps, M, order, delay))
                    if value < best[0]:
                        best = (value, (j, d))
        row["local_search_with_one_delay"] = best
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
