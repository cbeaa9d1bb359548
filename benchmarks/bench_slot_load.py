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
Then UBws: UB's schedule improved by --search-seconds of the window search (the incumbent search of
``latency-ip`` and ``lagrange-bound`` above 100 requests), verified, with MC-SF / UBws and UBws / lagrange.
Last, UBlp: the same search for the same seconds, with windows of --lp-width requests, from the serial SGS
in the order of the requests' starts in the Lagrangian subproblem at the bound's λ (LP-guided list
scheduling; ties by shorter o), verified, with MC-SF / UBlp and UBlp / lagrange.

    python benchmarks/bench_slot_load.py --rho 0.8 --save-starts DIR          # DIR/rho0.8-starts.json: the best
    python benchmarks/bench_slot_load.py --check DIR/rho0.8-starts.json      # verify a saved schedule alone

    python benchmarks/bench_slot_load.py --rho 0.8 --requests 1000 --write-instances DIR   # the instance as a file

--save-starts writes the best verified schedule of each ρ (its start rounds, the instance's parameters and
its total latency) without overwriting an existing file; --check rebuilds that instance from the trace,
verifies the schedule with lpbench's verifier and prints its total latency over Σo and MC-SF / it.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lpbench.formulations.lagrange import LagrangeBound, dual_value, memory_profile
from lpbench.formulations.latency_ip import schedule_from_starts, starts_from_schedule
from lpbench.heuristics.slot_sgs import eq3_ramps, serial_sgs, window_search
from lpbench.formulations.volume import VolumeBound
from lpbench.instance import parse_instance
from lpbench.outputs import write_json
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
                help="seconds of window search (lpbench.heuristics.slot_sgs.window_search) from the best of those, "
                     "and again from the Lagrangian order")
ap.add_argument("--lp-width", type=int, default=80, help="window width of the search from the Lagrangian order")
ap.add_argument("--save-starts", metavar="DIR", help="write each rho's best verified schedule to DIR/rho<rho>-starts.json")
ap.add_argument("--check", metavar="FILE", help="verify a schedule written by --save-starts, and nothing else")
ap.add_argument("--write-instances", metavar="DIR",
                help="write each rho's instance to DIR/azure-slot-rho<rho>-n<requests>.json (not over an existing "
                     "file), and nothing else")
args = ap.parse_args()
LagrangeBound.iterations = args.lagrange_steps

df = pd.read_csv(args.trace, usecols=["ContextTokens", "GeneratedTokens"])
S, O = df["ContextTokens"].to_numpy(), df["GeneratedTokens"].to_numpy()


def load_instance(rho: float, n: int, M: int, seed: int):
    """The instance of the module docstring for (rho, n, M, seed)."""
    keep = (S + O <= M) & (O >= 1) & (S >= 1)
    s_all, o_all = S[keep], O[keep]
    rng = np.random.default_rng([seed, int(rho * 1000)])
    idx = rng.integers(0, len(s_all), n)
    s, o = s_all[idx], o_all[idx]
    lam = rho * M / float(np.mean(s * o + o * (o + 1) / 2))
    arrival = np.sort(rng.integers(0, int(np.ceil(n / lam)), n))
    return parse_instance({"name": f"azure-slot-rho{rho}", "memory": M,
                           "requests": {"arrival": arrival.tolist(), "prompt": s.tolist(), "output": o.tolist()}})


if args.check:
    saved = json.loads(Path(args.check).read_text())
    inst = load_instance(saved["rho"], saved["requests"], saved["memory"], saved["seed"])
    ver = verify(inst, schedule_from_starts(inst, np.asarray(saved["starts"], dtype=np.int64)))
    if not ver.feasible:
        print(f"{args.check}: infeasible: {ver.violations[0]}")
        sys.exit(1)
    mcsf = verify(inst, simulate(inst, make_policy("mc-sf", inst)).schedule).metrics["total_latency"]
    so = float(inst.output.sum())
    tel = ver.metrics["total_latency"]
    print(f"{args.check}: feasible, total latency {tel:.0f} = {tel / so:.4f} x sum o (file says "
          f"{saved['total_latency']}); MC-SF {mcsf / so:.4f} x sum o, MC-SF / it {mcsf / tel:.4f}")
    sys.exit(0 if int(round(tel)) == saved["total_latency"] else 1)

if args.write_instances:
    for rho in (float(x) for x in args.rho.split(",")):
        inst = load_instance(rho, args.requests, args.memory, args.seed)
        path = Path(args.write_instances) / f"azure-slot-rho{rho}-n{args.requests}.json"
        if path.exists():
            sys.exit(f"{path}: exists; not overwritten (remove it or choose another DIR)")
        write_json(path, {**inst.to_dict(columnar=True), "name": path.stem}, flag="--write-instances")
        print(path)
    sys.exit(0)

n, M = args.requests, args.memory
print(f"{n} requests, M = {M}, lengths from {Path(args.trace).name}")
print(f"{'rho':>5} {'sum_o':>9} {'MC-SF/sum_o':>11} {'volume/sum_o':>12} {'s':>5} {'MC-SF/volume':>12} "
      f"{'lagrange/sum_o':>14} {'s':>5} {'steps':>5} {'MC-SF/lagrange':>14} {'UB/sum_o':>8} {'depth':>5} "
      f"{'MC-SF/UB':>8} {'UB/lagrange':>11} {'use MC-SF':>9} {'use UB':>6} {'UBws/sum_o':>9} {'s':>5} "
      f"{'windows':>7} {'MC-SF/UBws':>9} {'UBws/lagrange':>12} {'SGS(lp)/sum_o':>13} {'UBlp/sum_o':>10} "
      f"{'windows':>7} {'MC-SF/UBlp':>10} {'UBlp/lagrange':>13}")
for rho in (float(x) for x in args.rho.split(",")):
    inst = load_instance(rho, n, M, args.seed)
    arrival, o = inst.arrival, inst.output
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
    a64, s64, o64 = (x.astype(np.int64) for x in (inst.arrival, inst.prompt, inst.output))
    ramps = eq3_ramps(s64, o64)
    t0 = time.perf_counter()
    found, _, windows = window_search(a64, ramps, M, starts_from_schedule(inst, ub_sched), seed=args.seed,
                                      deadline=t0 + args.search_seconds)
    ts = time.perf_counter() - t0
    ver = verify(inst, schedule_from_starts(inst, found))
    assert ver.feasible and ver.metrics["total_latency"] >= res.bound
    searched = ver.metrics["total_latency"]
    # UBlp: the serial SGS in the order of the Lagrangian subproblem's starts at the bound's λ, then the search
    _, k = dual_value(a64, s64, o64, M, lagrange.lam)
    listed = serial_sgs(a64, ramps, M, np.lexsort((o64, k)))
    ver = verify(inst, schedule_from_starts(inst, listed))
    assert ver.feasible and ver.metrics["total_latency"] >= res.bound
    sgs_lp = ver.metrics["total_latency"]
    lp_found, _, lp_windows = window_search(a64, ramps, M, listed, seed=args.seed,
                                            deadline=time.perf_counter() + args.search_seconds, width=args.lp_width)
    ver = verify(inst, schedule_from_starts(inst, lp_found))
    assert ver.feasible and ver.metrics["total_latency"] >= res.bound
    searched_lp = ver.metrics["total_latency"]
    if args.save_starts:
        best_tel, best_starts = min((searched, found), (searched_lp, lp_found), key=lambda x: x[0])
        out = Path(args.save_starts) / f"rho{rho}-starts.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            print(f"  {out} exists: not overwritten", file=sys.stderr)
        else:
            out.write_text(json.dumps({"rho": rho, "requests": n, "memory": M, "seed": args.seed,
                                       "total_latency": int(best_tel), "starts": [int(x) for x in best_starts]}))
    so = float(o.sum())
    print(f"{rho:5.2f} {so:9.0f} {tel / so:11.3f} {volume / so:12.3f} {tv:5.1f} {tel / volume:12.3f} "
          f"{res.bound / so:14.3f} {res.solve_seconds:5.1f} {steps:>5} {tel / res.bound:14.3f} {ub / so:8.3f} "
          f"{depth:>5} {tel / ub:8.3f} {ub / res.bound:11.3f} {use_mcsf:9.3f} {use_ub:6.3f} {searched / so:9.4f} "
          f"{ts:5.1f} {windows:>7} {tel / searched:9.3f} {searched / res.bound:12.3f} {sgs_lp / so:13.4f} "
          f"{searched_lp / so:10.4f} {lp_windows:>7} {tel / searched_lp:10.3f} {searched_lp / res.bound:13.3f}",
          flush=True)
