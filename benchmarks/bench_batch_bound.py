"""batch-bound at trace scale, and where the gap to the policies sits (not a test; figures go in
docs/batch-model-bounds.md).

    python benchmarks/bench_batch_bound.py [--policies mc-group,mc-work,mc-sf,...] [--trace PATH] [--window 300]

The instance of bench_simulate.py: Azure 2023 conversation hour (19,366 requests), InferMax
Llama-2-7B/A100 cost model, M = 100,000 KV tokens, C = 16384. Times the certified bound (total
latency and makespan), then simulates and verifies each policy and prints policy / bound.

Diagnosis (the gap is located, not closed): per arrival window, the offered load (Σ p_i of the
arrivals, memory share rule, over the window length), the latency of those arrivals in one optimal
schedule of the single-server relaxation (its SRPT schedule) and under each policy; then, per class
of p_i (quantiles 50/90/99 %), the same sums, and each policy's total split into time to first token
and decode time (first token to completion), with its batch count, mean batch size and duration.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

from lpbench.formulations.batch_bound import BatchBound, srpt_completions
from lpbench.instance import parse_instance
from lpbench.policies import applicable, make_policy
from lpbench.sim import simulate
from lpbench.traces import ImportSpec, import_trace
from lpbench.verify import verify

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--trace", default=str(ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"))
ap.add_argument("--memory", type=int, default=100_000)
ap.add_argument("--token-budget", type=int, default=16384)
ap.add_argument("--policies", default="all", help="comma-separated, or 'all' applicable (slow: up to 5 min each)")
ap.add_argument("--window", type=float, default=300.0, help="arrival window of the diagnosis, seconds")
args = ap.parse_args()

head, cols = import_trace(args.trace, ImportSpec.for_format("azure", memory=args.memory, token_budget=args.token_budget))
inst = parse_instance({**head, "requests": {k: v.tolist() for k, v in cols.items()}})
t0 = time.perf_counter()
bb = BatchBound(inst)
b = bb.bounds()
secs = time.perf_counter() - t0
print(f"instance: {inst.n} requests; batch-bound in {secs:.2f}s: total latency >= {b['total_latency']:.1f}s "
      f"(isolated {b['isolated_total_latency']:.1f}s, SRPT {b['srpt_total_latency']:.1f}s), "
      f"makespan >= {b['makespan']:.1f}s", flush=True)
names = applicable(inst) if args.policies == "all" else args.policies.split(",")
print(f"{'policy':<20} {'total latency s':>16} {'/ bound':>9} {'makespan s':>11} {'/ bound':>8} {'sim+verify s':>13}")
latency, split = {}, {}
a = inst.arrival
for name in names:
    t1 = time.perf_counter()
    res = simulate(inst, make_policy(name, inst))
    ver = verify(inst, res.schedule)
    if not ver.feasible:
        sys.exit(f"{name}: schedule fails verification: {ver.violations[0]}")
    m = ver.metrics
    assert m["total_latency"] >= b["total_latency"] and m["makespan"] >= b["makespan"], name
    latency[name] = ver.completion - a
    split[name] = ((ver.first_token - a).sum(), (ver.completion - ver.first_token).sum(), m["busy_time"],
                   m["batches"], len(res.schedule.req) / m["batches"])
    print(f"{name:<20} {m['total_latency']:16.1f} {m['total_latency'] / b['total_latency']:9.2f} "
          f"{m['makespan']:11.1f} {m['makespan'] / b['makespan']:8.4f} {time.perf_counter() - t1:13.1f}", flush=True)

p = bb.works()[0]
relax = srpt_completions(a, p) - a
print(f"\nsingle-server work sum p_i = {p.sum():.1f}s over arrivals in [{a.min():.0f}, {a.max():.0f}]s; "
      f"relaxation's SRPT schedule: total latency {relax.sum():.1f}s")
for name, (ttft, dec, busy, nb, size) in split.items():
    print(f"{name:<20} busy {busy:8.1f}s  time to first token {ttft:12.1f}s  decode {dec:12.1f}s  "
          f"{nb} batches, mean {size:.1f} requests, {1e3 * busy / nb:.1f} ms")
cols_ = ["relaxation"] + list(latency)
print(f"\n{'window s':>11} {'arrivals':>8} {'load':>6} " + " ".join(f"{c:>14}" for c in cols_))
w = np.floor(a / args.window).astype(int)
for k in range(w.max() + 1):
    s = w == k
    vals = [relax[s].sum()] + [v[s].sum() for v in latency.values()]
    print(f"{k * args.window:5.0f}-{(k + 1) * args.window:<5.0f} {s.sum():8d} {p[s].sum() / args.window:6.3f} "
          + " ".join(f"{v:14.1f}" for v in vals))
q = np.quantile(p, [0.5, 0.9, 0.99])
print(f"\n{'p_i class s':>17} {'requests':>8} " + " ".join(f"{c:>14}" for c in cols_))
for lo, hi in zip([0.0, *q], [*q, np.inf]):
    s = (p >= lo) & (p < hi)
    vals = [relax[s].sum()] + [v[s].sum() for v in latency.values()]
    print(f"{lo:7.3f}-{hi:<9.3f} {s.sum():8d} " + " ".join(f"{v:14.1f}" for v in vals))
