"""Seed 003 reproductions that no suite expresses (a benchmark, not a test).

The §5.1 CSP sweep itself is the suite ``benchmarks/suites/csp51.toml``; its table is
``lpbench table RUN --kind csp51`` (README, "Seed 003 §5.1"). This script prints the rest:

1. Fig. 11 style: mean TTFT of Rank_I, Rank_O and Rank_org on the six S/L mixes (B requests); the mixes are
   not a suite generator and the table is a TTFT ratio layout that ``lpbench table`` does not have.
2. With ``--milp highs[,gurobi]``: the §5.1 instances (I <= 2^milp_max_log) with the MILP form
   (``--formulation infermax-milp``) on those backends, one line per (I, solver) with the model's row count
   (what Gurobi's size-limited licence is measured against); ``lpbench table`` has no per-instance
   formulation table with rows.

    python benchmarks/bench_infermax.py --time-limit 60 --B 256 --milp highs,gurobi --milp-max-log 6
"""
import argparse
import sys

from lpbench.errors import InputError
from lpbench.generators import infermax
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.solve import solve_instance
from lpbench.solvers import get_profile
from lpbench.verify import verify


def milp_sweep(solvers: list[str], time_limit: float, max_log: int):
    print(f"\n§5.1 with infermax-milp; makespan in ms; {time_limit:g}s per instance")
    print(f"{'I':>5} {'solver':>7} {'status':>13} {'MILP':>9} {'bound':>9} {'gap':>7} {'rows':>7} {'solve s':>8}")
    for k in range(max_log + 1):
        I = 2**k
        inst = parse_instance(infermax.csp51(I))
        for solver in solvers:
            rep = solve_instance(inst, "infermax-milp", solver, time_limit=time_limit)
            obj = "" if rep["objective"] is None else f"{rep['objective'] * 1e3:9.4f}"
            bound = "" if rep["bound"] is None else f"{rep['bound'] * 1e3:9.4f}"
            gap = "" if rep["gap"] is None else f"{rep['gap']:7.3f}"
            print(f"{I:>5} {solver:>7} {rep['status']:>13} {obj:>9} {bound:>9} {gap:>7} {rep['rows']:>7} "
                  f"{rep['solve_seconds']:8.1f}", flush=True)


def rank_table(B: int, seed: int):
    print(f"\nFig. 11 style: mean TTFT (s), six S/L mixes, B = {B}, seed {seed}, M = 100,000, C = 4096, P = 512")
    names = ("rank-i", "rank-o", "rank-org")
    print(f"{'mix':>11} " + " ".join(f"{n:>9}" for n in names) + "  Rank_O/Rank_I  Rank_org/Rank_I")
    for pair in infermax.PAIRS:
        inst = parse_instance(infermax.mix(pair, B, seed))
        ttft = {}
        for n in names:
            ver = verify(inst, simulate(inst, make_policy(n, inst)).schedule)
            assert ver.feasible
            ttft[n] = ver.metrics["ttft_mean"]
        print(f"{pair:>11} " + " ".join(f"{ttft[n]:9.4f}" for n in names)
              + f"  {ttft['rank-o'] / ttft['rank-i']:13.2f}  {ttft['rank-org'] / ttft['rank-i']:15.2f}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--time-limit", type=float, default=120, help="solver seconds per MILP solve")
    ap.add_argument("--B", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--milp", default="", help="comma-separated solver profiles for the MILP sweep")
    ap.add_argument("--milp-max-log", type=int, default=6)
    args = ap.parse_args()
    solvers = [s for s in args.milp.split(",") if s]
    try:
        for s in solvers:  # an unknown profile fails before any work
            get_profile(s)
        rank_table(args.B, args.seed)
        if solvers:
            milp_sweep(solvers, args.time_limit, args.milp_max_log)
    except InputError as e:  # e.g. gurobipy not installed: the message, not a traceback
        print(f"bench_infermax.py: {e}", file=sys.stderr)
        sys.exit(2)
