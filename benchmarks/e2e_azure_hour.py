"""End to end: the Azure 2023 conversation hour, priced by a calibrated Llama2-70B/A100 profile, every
batch-model policy simulated and verified, each with its competitive-ratio interval against a certified
lower bound (not a test; the output goes in the README).

    python benchmarks/e2e_azure_hour.py [--rate-scale 0.1] [--profile splitwise-llama2-70b-tp2-a100]

Steps: ``lpbench import azure`` of the trace (all 19,366 requests; arrival times divided by
``--rate-scale``), M = ``--memory`` KV tokens, C = ``--token-budget``; then each policy of
``lpbench list policies`` defined for the batch model is simulated and its schedule verified
(``lpbench.verify``); a schedule that fails verification is reported and gets no ratio. Each policy
runs in a child process with a wall-clock limit (``--policy-time-limit``); one that does not finish in
time is reported as such, with no number.

Lower bound (``isolation_bound``, a valid one that needs no solver; the trace-scale batch bound of the
batch-certification issue replaces it when it lands). For the infermax form with coefficients >= 0,
request i's latency is at least the time of the batches that process it, since batches run one after
another and all of them start after a_i and end by C_i; each such batch takes at least the time of i's
own part of it (every term of seed 003 §3.2 is >= 0 and grows with the batch, phi >= 0). Its prompt
needs batches whose chunks c_k on m_k = c_1 + ... + c_{k-1} sum to at least a_o I + a_p I^2 (the
telescoped attention term Σ (c_k^2 + 2 c_k m_k) = I^2) + b_o + b_p + s_p; an eviction only adds work.
Its token j >= 2 is generated in a distinct batch whose KV after it covers K = I + j - 1 tokens: as a
decode that batch costs >= a_o + b_o + b_d + s_d + a_d K, as the last chunk of a refill >= a_o + b_o +
b_p + s_p + a_p (2K - 1) (2cK - c^2 >= 2K - 1 for 1 <= c <= K); the smaller of the two is counted.
Summing, total latency >= Σ_i L_i. It ignores queueing and memory entirely, so under load it is loose:
the ratio upper ends below measure the policies against an optimum that could be far above the bound.
"""
import argparse
import multiprocessing as mp
import time
from pathlib import Path

import numpy as np

from lpbench.instance import parse_instance
from lpbench.policies import POLICIES, make_policy
from lpbench.semantics import BATCH
from lpbench.sim import simulate
from lpbench.traces import ImportSpec, import_trace
from lpbench.verify import verify

ROOT = Path(__file__).resolve().parents[1]


def isolation_bound(inst) -> np.ndarray:
    """Per-request latency lower bounds L_i in seconds (infermax form; see the module docstring)."""
    cm = inst.cost_model
    if cm.form != "infermax" or any(v < 0 for v in cm.coefficients.values()):
        raise SystemExit(f"isolation_bound: needs the infermax form with coefficients >= 0, got {cm!r}")
    I, O = inst.prompt.astype(float), inst.output.astype(float)
    prefill = cm.a_o * I + cm.b_o + cm.a_p * I * I + cm.b_p + cm.s_p
    out = np.empty(inst.n)
    for i in range(inst.n):
        K = I[i] + np.arange(1, O[i])  # j = 2..O: K = I + j - 1
        dec = cm.a_o + cm.b_o + cm.b_d + cm.s_d + cm.a_d * K
        refill = cm.a_o + cm.b_o + cm.b_p + cm.s_p + cm.a_p * (2 * K - 1)
        out[i] = prefill[i] + np.minimum(dec, refill).sum()
    return cm.layers * out * 1e-3


ap = argparse.ArgumentParser()
ap.add_argument("--trace", default=str(ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"))
ap.add_argument("--profile", default="splitwise-llama2-70b-tp2-a100")
ap.add_argument("--memory", type=int, default=50_000, help="KV tokens (2xA100-80GB, 70B fp16: about 50k)")
ap.add_argument("--token-budget", type=int, default=16384)
ap.add_argument("--rate-scale", type=float, default=0.1)
ap.add_argument("--policies", help="comma-separated (default: every batch-model policy)")
ap.add_argument("--policy-time-limit", type=float, default=300.0, help="seconds per policy (simulate + verify)")
args = ap.parse_args()

t0 = time.perf_counter()
head, cols = import_trace(args.trace, ImportSpec.for_format("azure", memory=args.memory, cost_model=args.profile,
                                                            token_budget=args.token_budget,
                                                            rate_scale=args.rate_scale))
inst = parse_instance({**head, "requests": {k: v.tolist() for k, v in cols.items()}})
lb = isolation_bound(inst)
bound = float(lb.sum())
print(f"instance: {inst.n} requests over {inst.arrival[-1]:.0f} s (rate scale {args.rate_scale:g}), profile "
      f"{args.profile}, M = {inst.memory}, C = {args.token_budget}; built in {time.perf_counter() - t0:.1f} s")
print(f"lower bound (isolation, certified): total latency {bound:.6g} s, mean {bound / inst.n:.4g} s")
names = args.policies.split(",") if args.policies else [n for n, c in POLICIES.items() if BATCH in c.models]


def run_one(name: str, queue) -> None:
    """Simulate and verify one policy (in a child process); put (feasible, metrics, problem)."""
    res = simulate(inst, make_policy(name, inst))
    ver = verify(inst, res.schedule)
    problem = None
    if ver.feasible:  # per request, latency >= L_i: a violation is a bug in the bound or the semantics
        short = np.flatnonzero(ver.completion - inst.arrival < lb - 1e-9 * np.maximum(1.0, lb))
        if len(short):
            problem = f"request {short[0]} finishes faster than its isolation bound"
    queue.put((ver.feasible, ver.metrics, problem))


rows = []
ctx = mp.get_context("fork")
for name in names:
    t1 = time.perf_counter()
    queue = ctx.Queue()
    child = ctx.Process(target=run_one, args=(name, queue))
    child.start()
    child.join(args.policy_time_limit)
    if child.is_alive():
        child.terminate()
        child.join()
        rows.append((name, None, {}, time.perf_counter() - t1))
        print(f"  {name:<20} did not finish in {args.policy_time_limit:g} s", flush=True)
        continue
    feasible, m, problem = queue.get()
    assert problem is None, f"{name}: {problem} (a bug)"
    rows.append((name, feasible, m, time.perf_counter() - t1))
    print(f"  {name:<20} verified={feasible} mean_latency={m.get('mean_latency', float('nan')):.4g} s "
          f"({time.perf_counter() - t1:.1f} s)", flush=True)
if not any(r[1] for r in rows):
    raise SystemExit("no policy produced a verified schedule in time")
best = min(r[2]["total_latency"] for r in rows if r[1])
print()
print("| policy | verified | mean latency (s) | p99 latency (s) | makespan (s) | evictions | ratio interval [policy/best, policy/bound] |")
print("|---|---|---|---|---|---|---|")
for name, ok, m, _ in sorted(rows, key=lambda r: r[2].get("total_latency", np.inf)):
    if ok is None:
        print(f"| {name} | not finished in {args.policy_time_limit:g} s | - | - | - | - | - |")
        continue
    if not ok:
        print(f"| {name} | NO | - | - | - | - | - |")
        continue
    tl = m["total_latency"]
    print(f"| {name} | yes | {m['mean_latency']:.2f} | {m['p99_latency']:.2f} | {m['makespan']:.0f} | "
          f"{m.get('evictions', 0)} | [{tl / best:.3f}, {tl / bound:.3f}] |")
print(f"\nbest verified mean latency {best / inst.n:.3f} s; isolation bound {bound / inst.n:.3f} s "
      f"(best / bound = {best / bound:.3f}: the optimum lies in [bound, best])")
