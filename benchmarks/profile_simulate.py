"""Where a simulation spends its time (not a test): cProfile over one policy on the Azure conversation
trace (the instance of ``bench_simulate.py``), and how many batches went through ``next_batch`` rather
than a run of repeated batches (``Policy.steady_batches``).

    python benchmarks/profile_simulate.py --policy rank-i [--limit 6000] [--top 25]
"""
import argparse
import cProfile
import pstats
from pathlib import Path

from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.traces import ImportSpec, import_trace

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--trace", default=str(ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"))
ap.add_argument("--policy", required=True)
ap.add_argument("--limit", type=int)
ap.add_argument("--top", type=int, default=25)
args = ap.parse_args()
head, cols = import_trace(args.trace, ImportSpec.for_format("azure", memory=100_000, limit=args.limit,
                                                            token_budget=16384))
inst = parse_instance({**head, "requests": {k: v.tolist() for k, v in cols.items()}})
policy = make_policy(args.policy, inst)
prof = cProfile.Profile()
prof.enable()
res = simulate(inst, policy)
prof.disable()
stats = pstats.Stats(prof)
calls = sum(v[1] for k, v in stats.stats.items() if k[2] == "next_batch")
print(f"{args.policy}: {res.schedule.n_batches} batches, {calls} from next_batch, "
      f"{res.schedule.n_batches - calls} in runs; {res.seconds:.2f} s under cProfile")
stats.sort_stats("tottime").print_stats(args.top)
