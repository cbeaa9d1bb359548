"""Where a simulation spends its time (not a test): cProfile over one policy on the Azure conversation
trace or the synthetic long-context workload (the instances of ``bench_simulate.py``), and how many
batches went through ``next_batch`` rather than a run of repeated batches (``Policy.steady_batches``).

    python benchmarks/profile_simulate.py --policy rank-i [--limit 6000] [--long-context] [--top 25]

``--plain`` simulates without cProfile, for an instruction count that does not depend on the machine's load
(callgrind is deterministic; ``--build-only`` counts the instance's import, to subtract)::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
        python benchmarks/profile_simulate.py --policy rank-o --plain
"""
import argparse
import cProfile
import pstats

from bench_simulate import LONG_CONTEXT_HELP, azure_hour, long_context

from lpbench.policies import make_policy
from lpbench.sim import simulate

ap = argparse.ArgumentParser()
ap.add_argument("--trace")
ap.add_argument("--policy", required=True)
ap.add_argument("--limit", type=int)
ap.add_argument("--long-context", action="store_true", help=LONG_CONTEXT_HELP)
ap.add_argument("--top", type=int, default=25)
ap.add_argument("--plain", action="store_true", help="simulate without cProfile (for callgrind)")
ap.add_argument("--build-only", action="store_true", help="build the instance and the policy, do not simulate")
args = ap.parse_args()
inst = long_context() if args.long_context else azure_hour(*([args.trace] if args.trace else []), limit=args.limit)
policy = make_policy(args.policy, inst)
if args.build_only or args.plain:
    if args.plain:
        res = simulate(inst, policy)
        print(f"{args.policy}: {res.schedule.n_batches} batches in {res.seconds:.2f} s")
    raise SystemExit(0)
prof = cProfile.Profile()
prof.enable()
res = simulate(inst, policy)
prof.disable()
stats = pstats.Stats(prof)
calls = sum(v[1] for k, v in stats.stats.items() if k[2] == "next_batch")
print(f"{args.policy}: {res.schedule.n_batches} batches, {calls} from next_batch, "
      f"{res.schedule.n_batches - calls} in runs; {res.seconds:.2f} s under cProfile")
stats.sort_stats("tottime").print_stats(args.top)
