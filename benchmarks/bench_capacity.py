"""Seed 002 and seed 000 capacity reproductions (not a test; the tables go in the README).

    python benchmarks/bench_capacity.py seed002 [--requests 10000] [--policies ...] [--workers 2]
    python benchmarks/bench_capacity.py seed000 [--requests 10000] [--workers 2]
    python benchmarks/bench_capacity.py distserve [--engines 2] [--requests 4000] [--seeds 2] [--capacity-requests 2000]

seed002: the capacity of each seed-002 policy as a fraction of the work-conserving bound λ* (notes
§5.3), on three workloads with B = 512: the shipped instance (uniform prompt 1..257, output 1..224,
piecewise Llama-3-70B (2.3)), the same lengths on the CodeLlama-34B staircase (v3), and deterministic
(129, 113) requests (m_p + m_d = 129 + 112) on the piecewise model.
seed000: SLAI vs Sarathi-Serve on an openchat_sharegpt4-like length table (Table 1: lognormal prompt
median 1730, P90 5696; decode median 415, P90 834; total <= 8192), 5 % paying users (TBT SLO 0.1 s,
free 0.5 s), budget 512, a Mistral-7B/RTX-6000-Ada-like linear batch time 15.2 ms + 0.0574 ms/token
(the least-squares fit of the SLAI repo's Fig-6a data, notes §1.8), M = 230,000 KV tokens; median TTFT
and P99 TBT per class at fixed rates, and the SLO capacity (median TTFT <= 0.5 s, P99 TBT within SLO).
distserve: the same workload and engines, K of them (default 2): DistServe (⌊K/2⌋ prefill engines, the
rest decode, seed 000 Alg. 5; also with packed prefill batches, and K − 1 prefill engines when K > 2)
against Sarathi-Serve and SLAI on K colocated engines (routing round-robin), KV moved at 5.2e-6 s per token (Mistral-7B's 128 KiB per token over 25 GB/s PCIe 4.0,
lpbench/policies/distserve.py); median TTFT and P99 TBT at fixed total rates, then the SLO capacity.
"""
import argparse
import dataclasses
import time

import numpy as np

from lpbench.capacity import SearchConfig, search
from lpbench.instance import load_instance, parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.verify import verify

ap = argparse.ArgumentParser()
ap.add_argument("which", choices=["seed002", "seed000", "distserve"])
ap.add_argument("--requests", type=int, default=10000)
ap.add_argument("--seeds", type=int, default=3)
ap.add_argument("--workers", type=int, default=1)
ap.add_argument("--policies")
ap.add_argument("--engines", type=int, default=2, help="distserve: K engines")
ap.add_argument("--rates", default="2,4,6", help="distserve: total arrival rates (req/s) of the fixed-rate table "
                "('': no table)")
ap.add_argument("--configs", help="distserve: run only the configurations whose label contains one of these "
                "comma-separated strings")
ap.add_argument("--capacity-requests", type=int, default=2000, help="distserve: requests per capacity simulation "
                "(0: no capacity search)")
args = ap.parse_args()


def with_cost(inst_data, cost):
    return parse_instance({**inst_data, "cost_model": cost})


def seed002():
    base = load_instance("instances/li-llama3-70b-b512.json")
    data = base.to_dict()
    n = 400
    det = {"name": "det-129-112", "memory": 10**7, "model": "batch", "cost_model": "li-llama3-70b-2xa100",
           "limits": {"token_budget": 512},
           "requests": {"arrival": (np.arange(n) * 0.1).tolist(), "prompt": [129] * n, "output": [113] * n}}
    workloads = [("uniform, piecewise Llama-3-70B", base),
                 ("uniform, staircase CodeLlama-34B", with_cost(data, "li-codellama34b-a100-staircase")),
                 ("(129, 112), piecewise Llama-3-70B", parse_instance(det))]
    policies = (args.policies or "sarathi-serve,orca,vllm-chunked,vllm-vanilla,fastertransformer").split(",")
    print("| workload | λ* (req/s) | " + " | ".join(policies) + " |")
    print("|---|---|" + "---|" * len(policies))
    for label, inst in workloads:
        cells, bound = [], None
        for p in policies:
            t0 = time.perf_counter()
            rep = search(inst, p, SearchConfig(requests=args.requests, seeds=args.seeds), workers=args.workers)
            bound = rep["bound"]
            cells.append(f"{rep['ratio']:.3f} ({time.perf_counter() - t0:.0f} s)")
        print(f"| {label} | {bound:.3f} | " + " | ".join(cells) + " |", flush=True)


def openchat_like(rate, n, seed, paying=0.05, limits=None):
    rng = np.random.default_rng(seed)
    prompt = np.maximum(1, np.round(1730 * np.exp(0.93 * rng.standard_normal(n)))).astype(int)
    output = np.maximum(2, np.round(415 * np.exp(0.545 * rng.standard_normal(n)))).astype(int)
    over = prompt + output > 8192
    prompt[over] = np.maximum(1, 8192 - output[over])
    cls = np.where(rng.uniform(size=n) < paying, "paying", "free")
    arrival = np.cumsum(rng.exponential(1 / rate, n))
    return parse_instance({"name": f"openchat-like-r{rate:g}", "memory": 230_000, "model": "batch",
                           "cost_model": {"form": "piecewise", "c": 0.0152, "a": 0.0000574, "b0": 0},
                           "limits": {"token_budget": 512, **(limits or {})},
                           "requests": {"arrival": (arrival - arrival[0]).tolist(), "prompt": prompt.tolist(),
                                        "output": output.tolist(), "class": cls.tolist(),
                                        "tbt_slo": [0.1 if c == "paying" else 0.5 for c in cls]}})


def seed000():
    policies = ("sarathi-serve", "slai")
    print("| rate (req/s) | policy | median TTFT (s) | P99 TBT paying (s) | P99 TBT free (s) | verified |")
    print("|---|---|---|---|---|---|")
    for rate in (1.0, 2.0, 3.0):
        inst = openchat_like(rate, args.requests, 0)
        for p in policies:
            s = simulate(inst, make_policy(p, inst)).schedule
            v = verify(inst, s)
            req, gap = v.tbt
            cls = np.asarray(inst.request_class, dtype=object)[req]
            p99 = {c: float(np.percentile(gap[cls == c], 99)) for c in ("paying", "free")}
            print(f"| {rate:g} | {p} | {v.metrics['ttft_p50']:.3f} | {p99['paying']:.3f} | {p99['free']:.3f} | "
                  f"{v.feasible} |", flush=True)
    print()
    print("| policy | SLO capacity (req/s) | bound λ* (req/s) | ratio | seconds |")
    print("|---|---|---|---|---|")
    inst = openchat_like(2.0, 2000, 1)
    for p in policies:
        t0 = time.perf_counter()
        rep = search(inst, p, SearchConfig(requests=args.requests, seeds=args.seeds, slo_ttft=0.5), workers=args.workers)
        print(f"| {p} | {rep['capacity']:.3f} | {rep['bound']:.3f} | {rep['ratio']:.3f} | "
              f"{time.perf_counter() - t0:.0f} |", flush=True)


def distserve():
    K = args.engines
    engines = {"engines": K, "routing": "round-robin", "kv_transfer_per_token": 131072 / 25e9}
    configs = [("distserve", {}, f"distserve {K // 2}P+{K - K // 2}D"),
               ("distserve", {"pack": 1}, f"distserve {K // 2}P+{K - K // 2}D, packed")]
    if K > 2:
        configs.append(("distserve", {"prefill_engines": K - 1}, f"distserve {K - 1}P+1D"))
    configs += [("sarathi-serve", {}, f"sarathi-serve {K} colocated"), ("slai", {}, f"slai {K} colocated")]
    if args.configs:
        configs = [c for c in configs if any(part in c[2] for part in args.configs.split(","))]
    print("| total rate (req/s) | configuration | median TTFT (s) | P99 TBT paying (s) | P99 TBT free (s) | "
          "verified | simulate (s) |")
    print("|---|---|---|---|---|---|---|")
    for rate in (float(r) for r in args.rates.split(",") if r):
        inst = openchat_like(rate, args.requests, 0, limits=engines)
        for p, params, label in configs:
            res = simulate(inst, make_policy(p, inst, **params))
            v = verify(inst, res.schedule)
            req, gap = v.tbt
            cls = np.asarray(inst.request_class, dtype=object)[req]
            p99 = {c: float(np.percentile(gap[cls == c], 99)) for c in ("paying", "free")}
            print(f"| {rate:g} | {label} | {v.metrics['ttft_p50']:.3f} | {p99['paying']:.3f} | {p99['free']:.3f} | "
                  f"{v.feasible} | {res.seconds:.1f} |", flush=True)
    if not args.capacity_requests:
        return
    print()
    print(f"| configuration | SLO capacity (req/s) | stable capacity (req/s) | bound {K} λ* (req/s) | seconds |")
    print("|---|---|---|---|---|")
    inst = openchat_like(2.0, 2000, 1, limits=engines)
    for p, params, label in configs:
        t0 = time.perf_counter()
        cfg = SearchConfig(requests=args.capacity_requests, seeds=args.seeds, params=tuple(params.items()))
        slo = search(inst, p, dataclasses.replace(cfg, slo_ttft=0.5), workers=args.workers)
        stable = search(inst, p, cfg, workers=args.workers)
        print(f"| {label} | {slo['capacity']:.3f} | {stable['capacity']:.3f} | {slo['bound']:.3f} | "
              f"{time.perf_counter() - t0:.0f} |", flush=True)


{"seed002": seed002, "seed000": seed000, "distserve": distserve}[args.which]()
