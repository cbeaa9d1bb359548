"""The two exact CP-SAT models of seed 004 side by side on Jaillet prefixes (issue 12): ``latency-cp``
(eq. (3) at every round, ramp intervals in a cumulative) and ``latency-event`` (eq. (3) at the n
completion times only, exact by Lemma 1). Each gets the same incumbent as a hint (the local search of
``latency-ip``, 5 s) and the same time limit and workers; every schedule is verified.

    python benchmarks/bench_event.py --cases 10:2,12:7,12:13,12:5,12:1,40:0 --time-limit 30
    python benchmarks/bench_event.py --cases 15:0,15:1,15:2,15:3,16:0,16:1,16:2,16:3 --time-limit 30 --event-only
    python benchmarks/bench_event.py --cases 12:7,12:1,14:7 --event-only --threads 1 --cp-option use_objective_lb_search=true

A case n:k is ``jaillet.instance(model, seed, k)`` cut to its first n requests (as in bench_certify.py's
n-ladder). Printed per model: status, best objective / proven bound, seconds.
"""
from __future__ import annotations

import argparse
import time

from lpbench.formulations.latency_cp import LatencyCP
from lpbench.formulations.latency_event import LatencyEvent
from lpbench.formulations.latency_ip import LatencyIP
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.solvers.base import SolverProfile
from lpbench.tomlfile import tomllib
from lpbench.verify import verify
from lpbench.warmup import warm_up

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--model", default="jaillet-model1")
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--cases", default="10:2,12:7,12:13", help="comma list of n:k (first n requests of draw k)")
ap.add_argument("--time-limit", type=float, default=30.0)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--event-only", action="store_true", help="skip latency-cp")
ap.add_argument("--cp-option", action="append", default=[], metavar="NAME=VALUE",
                help="a CP-SAT parameter for both models (repeatable; a TOML key = value, as in solvers.toml), "
                     "e.g. use_objective_lb_search=true")
args = ap.parse_args()
warm_up()   # the local search below has 5 s: its kernel must not be compiling then (lpbench warmup)
options = tomllib.loads("\n".join(args.cp_option))   # the syntax of [profile.options] in solvers.toml

models = (LatencyEvent,) if args.event_only else (LatencyCP, LatencyEvent)
for case in args.cases.split(","):
    n, k = (int(v) for v in case.split(":"))
    inst = parse_instance(jaillet.instance(args.model, args.seed, k, first=n))
    _, hint, _ = LatencyIP.search_incumbent(inst, time.perf_counter() + 5, seed=args.seed)
    incumbent = verify(inst, hint).metrics["total_latency"]
    row = [f"{args.model} n={n} k={k} incumbent {incumbent:g}"]
    for cls in models:
        t0 = time.perf_counter()
        form = cls(inst, incumbent_objective=incumbent)
        form.build()
        res = form.solve(SolverProfile("cpsat", "cpsat", time_limit=args.time_limit, threads=args.threads,
                                        options=options), hint)
        if res.x is not None:
            ver = verify(inst, form.extract(res.x))
            assert ver.feasible and ver.metrics["total_latency"] == res.objective, (cls.name, case)
        found = "no schedule" if res.objective is None else f"{res.objective:g}"   # core search may find none
        bound = "no bound" if res.bound is None else f"{res.bound:g}"
        row.append(f"{cls.name}: {res.status} {found} / {bound} {time.perf_counter() - t0:.1f}s")
    print(" | ".join(row), flush=True)
