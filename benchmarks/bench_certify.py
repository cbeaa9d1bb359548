"""Certification benchmark for seed 004 §5.1 (issue 12): how many Jaillet draws lpbench certifies,
and what the certificates say about MC-SF.

    python benchmarks/bench_certify.py --count 100 --time-limit 60            # 100 Model-1 + 100 Model-2 draws
    python benchmarks/bench_certify.py --count 200 --time-limit 60            # the paper's 2 x 200 (about 7 h)
    python benchmarks/bench_certify.py --count 10 --time-limit 10 --stride 10 # a stratified subset, minutes
    python benchmarks/bench_certify.py --count 20 --requests 8,10,12 --time-limit 20   # the n-ladder: first n requests
    python benchmarks/bench_certify.py --models jaillet-model1 --draws 1,3 --requests 17   # chosen draws again

Per draw (``jaillet.instance(model, seed, k)``, k = 0, stride, 2·stride, ..., or the ``--draws`` listed):
``solve_instance`` with the chosen formulation and solver (default ``latency-cp`` on CP-SAT, hinted with
the best policy schedule), which verifies every schedule and reports the best verified objective (UB) and
the best certified bound (LB: the solver's or the closed-form ``volume-bound``); ``--lp`` also computes the
``latency-lp`` bound (slow: about 30 s at 50 requests) and keeps the larger LB.

Printed: the share certified within 0.1 % ((UB − LB)/UB ≤ 1e-3), the share proven optimal, the
median and worst gap, and MC-SF in the layout of seed 004 §5.1 (best / worst / mean of the certified
ratio interval [MC-SF / UB, MC-SF / LB], the number where MC-SF is proven optimal, and the number
where a verified schedule beats it, i.e. where MC-SF is *certainly not* optimal under eq. (3)).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from lpbench.formulations import latency_astar
from lpbench.formulations.latency_ip import LatencyIP
from lpbench.generators import jaillet
from lpbench.heuristics import slot_sgs
from lpbench.instance import parse_instance
from lpbench.solve import solve_instance
from lpbench.warmup import warm_up

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--models", default="jaillet-model1,jaillet-model2")
ap.add_argument("--count", type=int, default=10, help="draws per model")
ap.add_argument("--stride", type=int, default=1, help="use draws k = 0, stride, 2*stride, ...")
ap.add_argument("--draws", help="comma list of draws k to run (instead of --count and --stride)")
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--time-limit", type=float, default=60.0)
ap.add_argument("--formulation", default="latency-cp")
ap.add_argument("--solver", default="cpsat")
ap.add_argument("--lp", action="store_true", help="also compute the latency-lp bound")
ap.add_argument("--requests", help="comma list of n: solve the first n requests of each draw (the n-ladder)")
ap.add_argument("--no-relaxation", action="store_true",
                help="do not run the completion-cp or chain-bound relaxations or the latency-astar search before the exact solve "
                     "(the state before issue 12's completion bounds; volume-bound keeps its gap term)")
ap.add_argument("--astar-max-requests", type=int,
                help="run the certify step's search portfolio on up to this many requests (default: "
                     "LatencyIP.astar_max_requests); above it, completion-cp runs instead")
ap.add_argument("--chain-share", type=float,
                help="share of the time limit for the certify step where chain-bound runs (default: "
                     "LatencyIP.chain_share)")
ap.add_argument("--no-split-per-position", action="store_true",
                help="chain-bound without its split per position (its fourth step; the polish gets its time): the "
                     "state before 9f42256")
ap.add_argument("--no-pair-split", action="store_true",
                help="chain-bound without its split per position and pair (its fifth step, after the split per "
                     "position stalls): the state before it")
ap.add_argument("--no-rest-search", action="store_true",
                help="chain-bound's left-out requests by volume only, without latency-astar on them: the state "
                     "before the search on them was added")
ap.add_argument("--no-first-completion", action="store_true",
                help="chain-bound charges its first completion its c alone, not beside the requests it leaves out "
                     "(the state before 2026-12-03)")
ap.add_argument("--no-first-three", action="store_true",
                help="chain-bound with the plain top of its chain, not the first three completions as a block in "
                     "absolute time (the state before 096dafe)")
ap.add_argument("--no-first-four", action="store_true",
                help="chain-bound without the first four completions' block (the state before 2026-12-03, fifth "
                     "session)")
ap.add_argument("--no-own-floors", action="store_true",
                help="chain-bound's split search without own floors by position: the state before they were added "
                     "(2026-12-02)")
ap.add_argument("--subset-max-requests", type=int,
                help="run subset-bound after the chain on up to this many requests (default: "
                     "LatencyIP.subset_max_requests; 0: off)")
ap.add_argument("--full-search-max-requests", type=int,
                help="run latency-astar on all the requests first in the certify step above 20 requests, up to this "
                     "many (default: LatencyIP.full_search_max_requests; 0: off)")
ap.add_argument("--full-search-share", type=float,
                help="share of the certify step left for that search (default: LatencyIP.full_search_share)")
ap.add_argument("--delay-near", type=float,
                help="the climbs beside make delay moves only after climbs that end within this fraction of the best "
                     "(default: slot_sgs.DELAY_NEAR; inf: after every climb, as before 760dd96)")
ap.add_argument("--no-search-beside", action="store_true",
                help="no local search beside the certify step and the exact solve (LatencyIP.beside_search)")
ap.add_argument("--pattern-members", type=int,
                help="latency-astar's (P) tabulates up to this many requests of largest peak (default: "
                     "latency_astar.PATTERN_MEMBERS beside the event model, LatencyIP.solo_pattern_members where "
                     "the search runs alone)")
ap.add_argument("--event-beside-spread", action="store_true",
                help="run the event model beside the search where arrivals are spread too, with the table of "
                     "latency_astar.PATTERN_MEMBERS (as before 5a07a25; LatencyIP.event_beside_spread_arrivals)")
ap.add_argument("--search-alone-simultaneous", action="store_true",
                help="where every request arrives at once (Model 1), run the search alone on both cores (two parts, "
                     "LatencyIP.solo_pattern_members) instead of beside the event model "
                     "(LatencyIP.event_beside_simultaneous_arrivals = False)")
ap.add_argument("--full-search-threads", type=int, choices=(1, 2),
                help="threads of the search on all the requests above 20 (default: LatencyIP.full_search_threads; 2: "
                     "its two-part search, the local search beside it waiting meanwhile)")
ap.add_argument("--copies", type=int,
                help="and up to this many others as lighter copies (default: latency_astar.COPY_ROOM)")
ap.add_argument("--copy-groups", type=int, choices=(1, 2),
                help="in up to this many groups, each copying its own least (s, o) (default: latency_astar.COPY_GROUPS)")
ap.add_argument("--json", help="write one row per draw to this JSON file (a new one, unless --force)")
ap.add_argument("--force", action="store_true", help="let --json overwrite an existing file")
args = ap.parse_args()
if args.json and not args.force and os.path.exists(args.json):
    ap.error(f"--json: {args.json} exists; pass --force to overwrite it, or name a new file")


def listed_draws(text: str) -> list[int]:
    """The draws of ``--draws``: a comma list of integers k >= 0 (else exit 2 naming the value)."""
    try:
        ks = [int(k) for k in text.split(",")]
    except ValueError:
        ks = []
    if not ks or min(ks) < 0:
        ap.error(f"--draws: expected a comma list of draws k >= 0, got {text!r}")
    return ks


draws = listed_draws(args.draws) if args.draws is not None else list(range(0, args.count * args.stride, args.stride))
for flag, value in (("--pattern-members", args.pattern_members), ("--copies", args.copies)):
    if value is not None and value < 0:
        ap.error(f"{flag}: {value} is negative; expected a number of requests >= 0")
if args.pattern_members is not None:
    latency_astar.PATTERN_MEMBERS = LatencyIP.solo_pattern_members = args.pattern_members
if args.event_beside_spread:
    LatencyIP.event_beside_spread_arrivals = True
if args.search_alone_simultaneous:
    LatencyIP.event_beside_simultaneous_arrivals = False
if args.full_search_threads is not None:
    LatencyIP.full_search_threads = args.full_search_threads
if args.copies is not None:
    latency_astar.COPY_ROOM = args.copies
if args.copy_groups is not None:
    latency_astar.COPY_GROUPS = args.copy_groups
if args.chain_share is not None:
    LatencyIP.chain_share = args.chain_share
if args.no_split_per_position:
    from lpbench.formulations import chain as chain_module
    chain_module.SPLIT_SHARE = 0.0
    chain_module.split_search = lambda *args, **kwargs: {}
elif args.no_pair_split or args.no_own_floors:
    import functools
    from lpbench.formulations import chain as chain_module
    steps_off = {name: False for name, off in (("pair", args.no_pair_split), ("floors", args.no_own_floors)) if off}
    chain_module.split_search = functools.partial(chain_module.split_search, **steps_off)
if args.no_rest_search:
    from lpbench.formulations import chain as chain_module
    chain_module.REST_SHARE = 0.0
if args.no_first_completion:
    from lpbench.formulations import chain as chain_module
    chain_module.JOINT_SHARE = 0.0
if args.no_first_three:
    from lpbench.formulations import chain as chain_module
    chain_module.FIRST_THREE = False
if args.no_first_four:
    from lpbench.formulations import chain as chain_module
    chain_module.FIRST_FOUR = False
if args.delay_near is not None:
    if not args.delay_near >= 0:
        ap.error(f"--delay-near: {args.delay_near} is not a fraction >= 0 (inf: after every climb)")
    slot_sgs.DELAY_NEAR = args.delay_near
if args.no_search_beside:
    LatencyIP.beside_search = False
if args.subset_max_requests is not None:
    LatencyIP.subset_max_requests = args.subset_max_requests
if args.full_search_max_requests is not None:
    if not 0 <= args.full_search_max_requests <= latency_astar.MAX_REQUESTS:
        ap.error(f"--full-search-max-requests: {args.full_search_max_requests} is not a number of requests from 0 "
                 f"to {latency_astar.MAX_REQUESTS} (latency-astar's limit)")
    LatencyIP.full_search_max_requests = args.full_search_max_requests
if args.full_search_share is not None:
    if not 0 < args.full_search_share < 1:
        ap.error(f"--full-search-share: {args.full_search_share} is not a share between 0 and 1 (exclusive)")
    LatencyIP.full_search_share = args.full_search_share
if args.no_relaxation or args.astar_max_requests is not None:
    LatencyIP.astar_max_requests = 0 if args.no_relaxation else args.astar_max_requests
    if args.no_relaxation:
        LatencyIP.certify_max_requests = LatencyIP.chain_max_requests = 0


def draw(model, k, n):
    return parse_instance(jaillet.instance(model, args.seed, k, first=n))


warm_up()      # compile the kernels first (a minute after an install), so that no draw's time limit pays for it
rows = []
ladder = [int(x) for x in args.requests.split(",")] if args.requests else [None]
for model, n, k in ((m, n, k) for m in args.models.split(",") for n in ladder for k in draws):
    inst = draw(model, k, n)
    t0 = time.perf_counter()
    rep = solve_instance(inst, args.formulation, args.solver, args.time_limit, ["mc-sf"])
    lb, ub = rep["bound"], rep["best_known"]
    if args.lp:
        lp = solve_instance(inst, "latency-lp", "highs", max(args.time_limit, 120), ["mc-sf"])
        if lp["status"] == "optimal":
            lb = max(lb, float(-(-lp["bound"] // 1)))   # every objective is an integer
    mcsf = rep["ratios"]["mc-sf"]["objective"]
    proven = rep["status"] == "optimal" or lb >= ub
    row = {"model": model, "k": k, "n": inst.n, "prefix": n, "bound_source": rep["bound_source"], "M": inst.memory,
           "status": rep["status"], "ub": ub, "lb": lb,
           "gap": (ub - lb) / ub, "proven": proven, "mcsf": mcsf, "mcsf_beaten": ub < mcsf,
           "ub_source": rep["objective_source"],
           "search_ub": (rep.get("incumbent_search") or {}).get("objective"),   # the local search's schedule
           "beside_ub": (rep.get("search_beside") or {}).get("objective"),      # and the search beside the steps
           "seconds": time.perf_counter() - t0}
    rows.append(row)
    print(f"{model} k={k:3d} n={inst.n:2d} M={inst.memory:2d} {rep['status']:<10} UB {ub:8.0f} LB {lb:8.0f} "
          f"gap {row['gap']:6.2%}  MC-SF {mcsf:8.0f} ({'beaten' if row['mcsf_beaten'] else 'best known'}) "
          f"{row['seconds']:5.1f}s", flush=True)

if args.json:
    with open(args.json, "w") as fh:
        json.dump(rows, fh, indent=1)

print(f"\n{args.formulation} on {args.solver}, {args.time_limit:g} s per draw" + (", + latency-lp bound" if args.lp else ""))
print("| model | draws | n | bound sources | certified ≤ 0.1 % | proven | median gap | worst gap | MC-SF / UB best / worst / mean "
      "| MC-SF / LB worst | MC-SF proven optimal | MC-SF beaten by a verified schedule |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for model, n in ((m, n) for m in args.models.split(",") for n in ladder):
    rs = [r for r in rows if r["model"] == model and r["prefix"] == n]
    if not rs:
        continue
    lo = [r["mcsf"] / r["ub"] for r in rs]
    hi = [r["mcsf"] / r["lb"] for r in rs]
    gaps = [r["gap"] for r in rs]
    sources = ", ".join(f"{src} {sum(r['bound_source'] == src for r in rs)}" for src in sorted({r["bound_source"] for r in rs}))
    print(f"| {model} | {len(rs)} | {min(r['n'] for r in rs)}–{max(r['n'] for r in rs)} | {sources} "
          f"| {sum(g <= 1e-3 for g in gaps)} | {sum(r['proven'] for r in rs)} "
          f"| {statistics.median(gaps):.1%} | {max(gaps):.1%} "
          f"| {min(lo):.3f} / {max(lo):.3f} / {statistics.mean(lo):.3f} | {max(hi):.3f} "
          f"| {sum(r['proven'] and not r['mcsf_beaten'] for r in rs)} | {sum(r['mcsf_beaten'] for r in rs)} |")
sys.exit(0)
