"""Simulation speed on a real 20,000-request-scale trace (not a test; figures go in the README).

    python benchmarks/bench_simulate.py [--trace ../shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv]
    python benchmarks/bench_simulate.py --long-context    # the synthetic long-context workload (issue 9)
    python benchmarks/bench_slot_load.py --rho 0.8 --requests 10000 --write-instances DIR
    python benchmarks/bench_simulate.py --instance DIR/azure-slot-rho0.8-n10000.json \
        --policies alpha-beta-clearing,alpha-protection,mc-benchmark,mc-sf,mc-sf-backfill   # slot model

``schedule=`` is a digest of the whole schedule (starts, requests, tokens, evictions): an A/B run of two
versions (one through ``PYTHONPATH``) shows that they build the same schedules at full scale.

Builds a batch-model instance from the Azure 2023 conversation trace (19,366 requests), InferMax
Llama-2-7B/A100 cost model, M = 100,000 KV tokens (seed 003 default) and C = 16384 (its §6 run; the trace has prompts above 4096), then times each
policy's simulation (wall clock, and the process's CPU time, which depends less on what else shares the
machine) and the independent verification separately. ``profile_simulate.py`` imports the two workloads
from here.
"""
import argparse
import hashlib
import time

import numpy as np
from pathlib import Path

from lpbench.errors import InputError
from lpbench.instance import load_instance, parse_instance
from lpbench.traces import ImportSpec, import_trace
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.verify import verify

ROOT = Path(__file__).resolve().parents[1]
TRACE = str(ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv")
LONG_CONTEXT_HELP = ("synthetic long-context workload instead of the trace: 12,000 requests, Poisson over an hour, "
                     "prompt lognormal (median 7,000, sigma 1) capped at 128,000 (one request at the cap), output "
                     "lognormal (median 250, sigma 0.8); InferMax Llama-2-7B, M = 200,000, C = 16,384")


def azure_hour(trace=TRACE, memory=100_000, token_budget=16384, limit=None):
    head, cols = import_trace(trace, ImportSpec.for_format("azure", memory=memory, limit=limit,
                                                           token_budget=token_budget))
    return parse_instance({**head, "requests": {k: v.tolist() for k, v in cols.items()}})


def long_context(seed=0, n=12_000, memory=200_000, token_budget=16384):
    rng = np.random.default_rng(seed)
    prompt = np.clip(np.round(7000 * np.exp(rng.standard_normal(n))), 1, 128_000).astype(np.int64)
    prompt[rng.integers(n)] = 128_000
    output = np.clip(np.round(250 * np.exp(0.8 * rng.standard_normal(n))), 1, None).astype(np.int64)
    output = np.minimum(output, memory + 1 - prompt)
    arrival = np.sort(rng.uniform(0, 3600, n))
    return parse_instance({
        "name": "long-context-12k", "memory": memory, "model": "batch", "cost_model": "infermax-llama2-7b-a100",
        "limits": {"token_budget": token_budget},
        "requests": {"arrival": arrival.round(6).tolist(), "prompt": prompt.tolist(), "output": output.tolist()}})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", default=TRACE)
    ap.add_argument("--memory", type=int, default=100_000)
    ap.add_argument("--policies", default="vllm,sarathi")
    ap.add_argument("--token-budget", type=int, default=16384)
    ap.add_argument("--limit", type=int, help="only the trace's first LIMIT requests (quick A/B comparisons)")
    ap.add_argument("--long-context", action="store_true", help=LONG_CONTEXT_HELP)
    ap.add_argument("--instance", help="an instance file instead of the trace (e.g. a slot instance written by "
                                       "bench_slot_load.py --write-instances)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.instance:
        inst = load_instance(args.instance)
    elif args.long_context:
        inst = long_context(token_budget=args.token_budget)
    else:
        inst = azure_hour(args.trace, args.memory, args.token_budget, args.limit)
    print(f"instance: {inst.n} requests, {int(inst.prompt.sum())} prompt + {int(inst.output.sum())} output tokens, "
          f"built in {time.perf_counter() - t0:.2f}s")
    unit = " rounds" if inst.model == "slot" else "s"
    for name in args.policies.split(","):
        cpu = time.process_time()
        try:
            res = simulate(inst, make_policy(name, inst))
        except InputError as e:
            print(f"{name:10s} skipped: {e.problems[0]}")
            continue
        cpu = time.process_time() - cpu
        t1 = time.perf_counter()
        ver = verify(inst, res.schedule)
        tv = time.perf_counter() - t1
        m = ver.metrics
        s = res.schedule
        digest = hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in
                                         (s.start, s.ptr, s.req, s.tokens, s.eptr, s.evict))).hexdigest()[:12]
        print(f"{name:10s} simulate {res.seconds:6.2f}s (cpu {cpu:6.2f}s)  verify {tv:6.2f}s  verified={ver.feasible}  "
              f"batches={m.get('batches')}  evictions={m.get('evictions')}  "
              f"mean_latency={m.get('mean_latency', 0):.3f}{unit}  schedule={digest}", flush=True)


if __name__ == "__main__":
    main()
