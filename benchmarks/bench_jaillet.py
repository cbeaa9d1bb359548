"""Seed 004 §5.1: model-building time of ``latency-ip`` alone (a benchmark, not a test).

The solves and the §5.1 summaries are the suite ``benchmarks/suites/jaillet.toml``:

    lpbench bench benchmarks/suites/jaillet.toml --workers 2
    lpbench table results/RUN --kind gap --by family      # gaps and solve seconds per formulation x solver
    lpbench table results/RUN --kind ratio --by family    # MC-SF / MC-Benchmark ratios, certified intervals

A suite times the build only together with a solve, so this script keeps that one measurement:

    python benchmarks/bench_jaillet.py --count 10 --build-only

For each model and instance k = 0..count-1 (rng([seed, k]), as ``lpbench generate``), it builds
``latency-ip`` with MC-SF's verified total latency as the incumbent bound, without solving, and prints
the median / max build seconds and variable counts.
"""
import argparse
import statistics
import sys
import time

from lpbench.formulations import FORMULATIONS
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.verify import verify

SUITE = ("the solves and their tables are the suite: lpbench bench benchmarks/suites/jaillet.toml, then "
         "lpbench table results/RUN --kind gap|ratio --by family")


def build_times(models: list[str], seed: int, count: int) -> None:
    """Model-building time of latency-ip (with MC-SF's incumbent bound), without solving."""
    secs, nvars = [], []
    for model in models:
        for k in range(count):
            inst = parse_instance(jaillet.instance(model, seed, k))
            ub = verify(inst, simulate(inst, make_policy("mc-sf", inst)).schedule).metrics["total_latency"]
            t0 = time.perf_counter()
            lp = FORMULATIONS.get("latency-ip")(inst, ub).build()
            secs.append(time.perf_counter() - t0)
            nvars.append(lp.n_vars)
    print(f"latency-ip build over {len(secs)} instances: median {statistics.median(secs):.3f} s, max {max(secs):.3f} s; "
          f"variables median {statistics.median(nvars):.0f}, max {max(nvars)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=SUITE)
    ap.add_argument("--models", default="jaillet-model1,jaillet-model2")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--build-only", action="store_true", help="time the latency-ip build alone (the only mode left)")
    args = ap.parse_args()
    if not args.build_only:
        print(f"bench_jaillet.py: only --build-only is left here; {SUITE}", file=sys.stderr)
        return 2
    build_times(args.models.split(","), args.seed, args.count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
