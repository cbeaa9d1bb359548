"""Seed 003 Fig. 11 style: mean TTFT of Rank_I, Rank_O and Rank_org on the six S/L mixes (a benchmark, not a test).

The §5.1 sweeps are suites: ``benchmarks/suites/csp51.toml`` (the CSP, ``lpbench table RUN --kind csp51``)
and ``benchmarks/suites/csp51-milp.toml`` (the MILP form, ``lpbench table RUN --kind solves``); see the
README, "Seed 003 §5.1". This table stays a script: the S/L mixes are not a suite generator, and its
layout (TTFT per mix and the ratios to Rank_I) is not an ``lpbench table`` kind.

    python benchmarks/bench_infermax.py --B 256
"""
import argparse

from lpbench.generators import infermax
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.verify import verify


def rank_table(B: int, seed: int):
    print(f"Fig. 11 style: mean TTFT (s), six S/L mixes, B = {B}, seed {seed}, M = 100,000, C = 4096, P = 512")
    names = ("rank-i", "rank-o", "rank-org")
    print(f"{'mix':>11} " + " ".join(f"{n:>9}" for n in names) + "  Rank_O/Rank_I  Rank_org/Rank_I")
    for pair in infermax.PAIRS:
        inst = parse_instance(infermax.mix(pair, B, seed))
        ttft = {}
        for n in names:
            ver = verify(inst, simulate(inst, make_policy(n, inst)).schedule)
            assert ver.feasible
            ttft[n] = ver.metrics["ttft_mean"]
        print(f"{pair:>11} " + " ".join(f"{ttft[n]:9.4f}" for n in names)
              + f"  {ttft['rank-o'] / ttft['rank-i']:13.2f}  {ttft['rank-org'] / ttft['rank-i']:15.2f}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rank_table(args.B, args.seed)
