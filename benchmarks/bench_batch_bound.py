"""batch-bound at trace scale (not a test; figures go in the README).

    python benchmarks/bench_batch_bound.py [--policies mc-sf,vllm,...] [--trace PATH]

The instance of bench_simulate.py: Azure 2023 conversation hour (19,366 requests), InferMax
Llama-2-7B/A100 cost model, M = 100,000 KV tokens, C = 16384. Times the certified bound (total
latency and makespan), then simulates and verifies each policy and prints policy / bound.
"""
import argparse
import sys
import time
from pathlib import Path

from lpbench.formulations.batch_bound import BatchBound
from lpbench.instance import parse_instance
from lpbench.traces import ImportSpec, import_trace
from lpbench.policies import applicable, make_policy
from lpbench.sim import simulate
from lpbench.verify import verify

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--trace", default=str(ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"))
ap.add_argument("--memory", type=int, default=100_000)
ap.add_argument("--token-budget", type=int, default=16384)
ap.add_argument("--policies", default="all", help="comma-separated, or 'all' applicable (slow: up to 5 min each)")
args = ap.parse_args()

head, cols = import_trace(args.trace, ImportSpec.for_format("azure", memory=args.memory, token_budget=args.token_budget))
inst = parse_instance({**head, "requests": {k: v.tolist() for k, v in cols.items()}})
t0 = time.perf_counter()
b = BatchBound(inst).bounds()
secs = time.perf_counter() - t0
print(f"instance: {inst.n} requests; batch-bound in {secs:.2f}s: total latency >= {b['total_latency']:.1f}s "
      f"(isolated {b['isolated_total_latency']:.1f}s, SRPT {b['srpt_total_latency']:.1f}s), "
      f"makespan >= {b['makespan']:.1f}s", flush=True)
names = applicable(inst) if args.policies == "all" else args.policies.split(",")
print(f"{'policy':<20} {'total latency s':>16} {'/ bound':>9} {'makespan s':>11} {'/ bound':>8} {'sim+verify s':>13}")
for name in names:
    t1 = time.perf_counter()
    res = simulate(inst, make_policy(name, inst))
    ver = verify(inst, res.schedule)
    if not ver.feasible:
        sys.exit(f"{name}: schedule fails verification: {ver.violations[0]}")
    m = ver.metrics
    assert m["total_latency"] >= b["total_latency"] and m["makespan"] >= b["makespan"], name
    print(f"{name:<20} {m['total_latency']:16.1f} {m['total_latency'] / b['total_latency']:9.2f} "
          f"{m['makespan']:11.1f} {m['makespan'] / b['makespan']:8.4f} {time.perf_counter() - t1:13.1f}", flush=True)
