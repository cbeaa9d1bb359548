"""Which climbs beside the certify step gain from the delay moves? (issue 12). Not a test.

    python benchmarks/beside_delays.py --climbs 32 --draws 0,8,16,24,32,40,48,56

For each draw of each model (all its requests) the script makes the climbs of :class:`ClimbsBeside` (numbered from
``CLIMBS``, seed 0) one by one, each followed by ``DELAY_MOVES_PER_REQUEST`` delay moves whatever it ended at, and
records the value after the climb's own moves, after the delay moves, and the best before the climb. It prints how
much time the delay moves take, how many climbs they lower and by how much, which of them make a new best and how far
above the best the climb had ended, and the share of the delay moves' time spent on climbs within a given distance
of the best: the evidence for ``slot_sgs.DELAY_NEAR``. The values are totals of the kernel's own placements; the
shipped search's schedules are verified where it is used (``solve``).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from lpbench.generators import jaillet
from lpbench.heuristics import slot_sgs as S
from lpbench.instance import parse_instance
from lpbench.warmup import warm_up

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--models", default="jaillet-model1,jaillet-model2")
ap.add_argument("--draws", default="0,8,16,24,32,40,48,56", help="comma list of draws k")
ap.add_argument("--climbs", type=int, default=32, help="climbs per draw")
args = ap.parse_args()
try:
    draws = [int(k) for k in args.draws.split(",")]
except ValueError:
    draws = []
if not draws or min(draws) < 0 or args.climbs < 1:
    ap.error(f"expected --draws as a comma list of draws k >= 0 (got {args.draws!r}) and --climbs >= 1 "
             f"(got {args.climbs})")


def climbs(inst, count: int) -> list[tuple[int, int, int, float, float]]:
    """(value after the order moves, after the delay moves, best before, seconds of each) per climb."""
    a, o, n = inst.arrival.astype(np.int64), inst.output, inst.n
    layout = S._Ramps(a, S.eq3_ramps(inst.prompt, inst.output), int(inst.memory), S.MOST_DELAY)
    pi0 = np.lexsort((np.arange(n), o)).astype(np.int64)
    first = layout.sgs(pi0)
    best, rows = first[2], []
    for climb in range(S.CLIMBS, S.CLIMBS + count):      # the moves iterated_sgs draws for these climbs
        rng = np.random.default_rng([0, climb])
        size = S.CLIMB_MOVES_PER_REQUEST * n
        moves = (rng.integers(n, size=size), rng.integers(n, size=size), rng.random(size) < 0.5)
        order, start, mem = pi0.copy(), first[0].copy(), first[1].copy()
        t0 = time.perf_counter()
        climbed, _ = layout.climb(order, start, mem, moves, None, first[2])
        t1 = time.perf_counter()
        delay, size = np.zeros(n, dtype=np.int64), S.DELAY_MOVES_PER_REQUEST * n
        held = (rng.integers(n, size=size), np.minimum(rng.geometric(0.25, size=size) - 1, S.MOST_DELAY),
                np.full(size, S.DELAY_MOVE))
        delayed, _ = layout.climb(order, start, mem, held, None, climbed, None, delay)
        rows.append((int(climbed), int(delayed), int(best), t1 - t0, time.perf_counter() - t1))
        best = min(best, delayed)
    return rows


warm_up()
rows = []
for model in args.models.split(","):
    for k in draws:
        inst = parse_instance(jaillet.instance(model, 0, k))
        mine = climbs(inst, args.climbs)
        rows += mine
        print(f"{model} draw {k}: n = {inst.n}, best {min(r[1] for r in mine)}, "
              f"{sum(r[3] + r[4] for r in mine):.1f} s", flush=True)

order_s, delay_s = sum(r[3] for r in rows), sum(r[4] for r in rows)
lowered = [(c - d) / c for c, d, _, _, _ in rows if d < c]
made = sorted((c - b) / b for c, d, b, _, _ in rows if d < b <= c)
print(f"\n{len(rows)} climbs: the delay moves took {delay_s:.1f} s of {order_s + delay_s:.1f} s "
      f"({delay_s / (order_s + delay_s):.0%})")
print(f"they lowered {len(lowered)} climbs, by at most {max(lowered, default=0):.2%}"
      f" (median {float(np.median(lowered)) if lowered else 0:.2%})")
print(f"they made a new best {len(made)} times" + (", from climbs ending " + ", ".join(f"{x:.2%}" for x in made)
                                                 + " above the best" if made else ""))
for near in (0.0, 0.002, 0.005, 0.01, 0.02):
    share = sum(r[4] for r in rows if r[0] <= r[2] * (1 + near)) / delay_s
    print(f"climbs within {near:.1%} of the best: {share:.0%} of the delay moves' time")
