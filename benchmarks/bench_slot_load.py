"""Seed 004 under load at scale (issue 12): the certified volume-bound and lagrange-bound against MC-SF on
10,000-request slot instances. Not a test; figures go in the README.

    python benchmarks/bench_slot_load.py                      # rho = 0.5, 0.8, 1.0
    python benchmarks/bench_slot_load.py --rho 0.8 --requests 2000
    python benchmarks/bench_slot_load.py --rho 0.8 --lagrange-seconds 150 --lagrange-steps 3000   # the LP value, converged

Instance: request lengths (s_i, o_i) drawn with replacement from the Azure 2023 conversation trace
(ContextTokens, GeneratedTokens; pairs with s + o > M dropped), M = 16,492 (seed 004 §5.2's
Llama2-70B / 2×A100 KV size), slot model. Arrivals: n rounds drawn uniformly from [0, n / λ) (a
Poisson process conditioned on n arrivals), λ = ρ·M / E[vol], so ρ is the offered memory-time per
round over M. Printed per bound: its value over Σ o (the no-queueing value), its time, and MC-SF / bound
(the upper end of MC-SF's certified ratio interval, MC-SF's total latency verified). `lagrange-bound`
gets --lagrange-seconds (its subgradient search stops there; every step's bound is valid).

Then the other side of the interval: the best verified schedule UB among ``mc-sf-backfill`` at the
depths of --backfill (MC-SF without its head-of-line stop), with MC-SF / UB (MC-SF is at least this far
from OPT, so *no* valid bound can give MC-SF / bound below it) and UB / lagrange (the certified
interval on OPT's own value). `use` is the mean memory in use over M, over the rounds up to the last
arrival, for MC-SF and for UB's schedule (at ρ = 1.0, where the offered use is 1, anything less grows the queue).
Last, UBws: UB's schedule improved by --search-seconds of the window search (the incumbent search of
``latency-ip`` and ``lagrange-bound`` above 100 requests), verified, with MC-SF / UBws and UBws / lagrange.
"""
import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lpbench.formulations.lagrange import LagrangeBound, memory_profile
from lpbench.formulations.latency_ip import schedule_from_starts, starts_from_schedule
from lpbench.heuristics.slot_sgs import eq3_ramps, window_search
from lpbench.formulations.volume import VolumeBound
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.solvers.base import SolverProfile
from lpbench.verify import verify

ROOT = Path(__file__).resolve().parents[1]


def memory_use(inst, sched, until: int) -> float:
    """Mean of eq. (3)'s memory over M after each of rounds 0..until-1 (IP rounds 1..until)."""
    start = starts_from_schedule(inst, sched)
    H = until + 1
    return float(memory_profile(start, inst.prompt.astype(np.int64), inst.output.astype(np.int64), H)[1:].mean()
                 / inst.memory)
ap = argparse.ArgumentParser()
ap.add_argument("--trace", default=str(ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"))
ap.add_argument("--rho", default="0.5,0.8,1.0")
ap.add_argument("--requests", type=int, default=10_000)
ap.add_argument("--memory", type=int, default=16_492)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--lagrange-seconds", type=float, default=60.0)
ap.add_argument("--lagrange-steps", type=int, default=LagrangeBound.iterations,
                help="subgradient steps at most (the seconds may stop it first)")
ap.add_argument("--backfill", default="4,16", help="mc-sf-backfill depths tried for the best verified schedule")
ap.add_argument("--search-seconds", type=float, default=60.0,
                help="seconds of window search (lpbench.heuristics.slot_sgs.window_search) from the best of those")
args = ap.parse_args()
LagrangeBound.iterations = args.lagrange_steps

df = pd.read_csv(args.trace, usecols=["ContextTokens", "GeneratedTokens"])
S, O = df["ContextTokens"].to_numpy(), df["GeneratedTokens"].to_numpy()
keep = (S + O <= args.memory) & (O >= 1) & (S >= 1)
S, O = S[keep], O[keep]
n, M = args.requests, args.memory
print(f"{n} requests, M = {M}, lengths from {Path(args.trace).name}")
print(f"{'rho':>5} {'sum_o':>9} {'MC-SF/sum_o':>11} {'volume/sum_o':>12} {'s':>5} {'MC-SF/volume':>12} "
      f"{'lagrange/sum_o':>14} {'s':>5} {'steps':>5} {'MC-SF/lagrange':>14} {'UB/sum_o':>8} {'depth':>5} "
      f"{'MC-SF/UB':>8} {'UB/lagrange':>11} {'use MC-SF':>9} {'use UB':>6} {'UBws/sum_o':>9} {'s':>5} "
      f"{'windows':>7} {'MC-SF/UBws':>9} {'UBws/lagrange':>12}")
for rho in (float(x) for x in args.rho.split(",")):
    rng = np.random.default_rng([args.seed, int(rho * 1000)])
    idx = rng.integers(0, len(S), n)
    s, o = S[idx], O[idx]
    lam = rho * M / float(np.mean(s * o + o * (o + 1) / 2))
    arrival = np.sort(rng.integers(0, int(np.ceil(n / lam)), n))
    inst = parse_instance({"name": f"azure-slot-rho{rho}", "memory": M,
                           "requests": {"arrival": arrival.tolist(), "prompt": s.tolist(), "output": o.tolist()}})
    mcsf = simulate(inst, make_policy("mc-sf", inst)).schedule
    ver = verify(inst, mcsf)
    assert ver.feasible
    until = int(arrival.max()) + 1
    use_mcsf = memory_use(inst, mcsf, until)
    tel = ver.metrics["total_latency"]
    t0 = time.perf_counter()
    volume = VolumeBound(inst).value()
    tv = time.perf_counter() - t0
    lagrange = LagrangeBound(inst)
    res = lagrange.solve(SolverProfile("lagrange", "closed-form", args.lagrange_seconds))
    steps = lagrange.steps
    for bound in (volume, res.bound):
        assert tel >= bound, "a verified schedule below a certified bound is a bug"
    ub, depth, use_ub, ub_sched = tel, 1, use_mcsf, mcsf
    for d in (int(x) for x in args.backfill.split(",")):
        sched = simulate(inst, make_policy("mc-sf-backfill", inst, depth=d)).schedule
        ver = verify(inst, sched)
        assert ver.feasible and ver.metrics["total_latency"] >= res.bound
        if ver.metrics["total_latency"] < ub:
            ub, depth, use_ub, ub_sched = ver.metrics["total_latency"], d, memory_use(inst, sched, until), sched
    t0 = time.perf_counter()
    a64, o64 = inst.arrival.astype(np.int64), inst.output.astype(np.int64)
    found, _, windows = window_search(a64, eq3_ramps(inst.prompt, o64), M, starts_from_schedule(inst, ub_sched),
                                      seed=args.seed, deadline=t0 + args.search_seconds)
    ts = time.perf_counter() - t0
    ver = verify(inst, schedule_from_starts(inst, found))
    assert ver.feasible and ver.metrics["total_latency"] >= res.bound
    searched = ver.metrics["total_latency"]
    so = float(o.sum())
    print(f"{rho:5.2f} {so:9.0f} {tel / so:11.3f} {volume / so:12.3f} {tv:5.1f} {tel / volume:12.3f} "
          f"{res.bound / so:14.3f} {res.solve_seconds:5.1f} {steps:>5} {tel / res.bound:14.3f} {ub / so:8.3f} "
          f"{depth:>5} {tel / ub:8.3f} {ub / res.bound:11.3f} {use_mcsf:9.3f} {use_ub:6.3f} {searched / so:9.4f} "
          f"{ts:5.1f} {windows:>7} {tel / searched:9.3f} {searched / res.bound:12.3f}", flush=True)
