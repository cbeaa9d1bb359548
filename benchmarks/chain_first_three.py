"""chain-bound with and without the first three (or four) completions' block, draw by draw (issue 12; not a test).

Runs ``chain_bound`` alone on each draw for the same time with ``chain.FIRST_THREE`` (or, with ``--flag FIRST_FOUR``,
``chain.FIRST_FOUR``) off and on, in the same process and in alternating order (the first draw off first), and prints
both bounds and their ratio, then the median, least and largest ratio per model (lpbench/formulations/chain.py, "The
first three completions in absolute time", "The first four completions").

    python benchmarks/chain_first_three.py --seconds 5 --draws 0,20,40,60,80,100,120,140,160,180
    python benchmarks/chain_first_three.py --flag FIRST_FOUR --seconds 10 --draws 0,40,80,120
"""
from __future__ import annotations

import argparse
import statistics
import time

from lpbench.formulations import chain
from lpbench.generators import jaillet
from lpbench.instance import parse_instance


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--draws", default="0,20,40,60,80,100,120,140,160,180", help="draw indices k of both models")
    ap.add_argument("--models", default="jaillet-model1,jaillet-model2")
    ap.add_argument("--flag", default="FIRST_THREE", choices=("FIRST_THREE", "FIRST_FOUR"), help="the block to switch")
    args = ap.parse_args()
    print(f"| draw | n | {args.flag} off | {args.flag} on | ratio |")
    print("|---|---|---|---|---|")
    ratios: dict = {}
    turn = 0
    for model in args.models.split(","):
        for k in (int(x) for x in args.draws.split(",")):
            inst = parse_instance(jaillet.instance(model, 0, k))
            bounds = {}
            for on in ((False, True) if turn % 2 == 0 else (True, False)):
                setattr(chain, args.flag, on)
                bounds[on] = chain.chain_bound(inst, time.perf_counter() + args.seconds)[0]
            turn += 1
            ratio = bounds[True] / bounds[False]
            ratios.setdefault(model, []).append(ratio)
            print(f"| {model}:{k} | {inst.n} | {bounds[False]:,} | {bounds[True]:,} | {ratio:.4f} |", flush=True)
    for model, values in ratios.items():
        print(f"{model}: median {statistics.median(values):.4f}, least {min(values):.4f}, largest {max(values):.4f}")


if __name__ == "__main__":
    main()
