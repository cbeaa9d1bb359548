"""infermax-csp (CP-SAT) proof status, gap and time against the number of requests B, over solver
seeds (issue 13; not a test; the figures go in docs/infermax-csp-scaling.md).

    python benchmarks/bench_csp_scaling.py --B 4,8,16,32,64 --seeds 0,1,2,3,4 --time-limit 60
    python benchmarks/bench_csp_scaling.py --B 16,32,64 --anatomy   # where the gaps are (no solving)

Families: the six S/L mixes of seed 003 §4.6 (``infermax-mix --mix PAIR``, generator seed 0) and the
memory-binding uniform family (I = 64, O = 16, M = 320). Per (family, B): the CSP's size (batches J,
CP-SAT variables), the status of each solver seed, how many seeds ended with a schedule found or
kept by CP-SAT (``cp-sched``: the warm start is a complete hint, so CP-SAT reports at least the best
policy schedule unless presolve alone takes the whole limit), the largest gap, the bound's source,
the min / median / max solve time (the hint completion included; 0 for a root proof) and the largest
wall time of the whole ``solve_instance`` call (policies, the packed incumbent search, building and
solving). Instances whose model exceeds the CSP's size limit are reported as ``refused`` (before building).
"""
import argparse
import json
import statistics
import time

from lpbench.formulations.infermax_csp import InferMaxCSP, batch_horizon
from lpbench.generators import infermax
from lpbench.heuristics.infermax_pack import best_packed_schedule
from lpbench.instance import parse_instance
from lpbench.semantics import RequestStates
from lpbench.solve import run_policies, solve_instance
from lpbench.verify import verify

ap = argparse.ArgumentParser()
ap.add_argument("--B", default="4,8,16,32,64")
ap.add_argument("--seeds", default="0,1,2,3,4")
ap.add_argument("--time-limit", type=float, default=60.0)
ap.add_argument("--families", default="uniform-mem," + ",".join(infermax.PAIRS))
ap.add_argument("--anatomy", action="store_true",
                help="instead of solving: per family and B, the best policy schedule and the packed incumbent "
                     "(makespan, batches, batches with a decode / a prefill step) against the bound (V12)-(V15)")
ap.add_argument("--cpsat-defaults", type=json.loads, default=None,
                help="JSON object replacing InferMaxCSP.cpsat_defaults, e.g. '{}' for CP-SAT's own presolve")
args = ap.parse_args()
if args.cpsat_defaults is not None:
    InferMaxCSP.cpsat_defaults = args.cpsat_defaults


def family(name, B):
    if name == "uniform-mem":
        return infermax.uniform(64, 16, B, memory=320)
    return infermax.mix(name, B)


def phases(inst, sched):
    """(batches, batches with a decode step, batches with a prefill step) of a schedule."""
    st, nd, npf = RequestStates(inst.prompt, inst.output, inst.model), 0, 0
    for j in range(sched.n_batches):
        req, tok, ev = sched.batch(j)
        st.evict(ev)
        dec = st.is_decode(req)
        nd, npf = nd + dec.any(), npf + (~dec).any()
        _, fin = st.process(req, tok)
        st.release(req[fin])
    return sched.n_batches, int(nd), int(npf)


if args.anatomy:
    print(f"{'family':<12} {'B':>3} {'bound s':>10} {'best policy':<14} {'makespan':>10} {'N/Nd/Np':>14} {'gap':>9}"
          f"   {'packed':<36} {'makespan':>10} {'N/Nd/Np':>14} {'gap':>9}")
    for fam in args.families.split(","):
        for B in (int(b) for b in args.B.split(",")):
            inst = parse_instance(family(fam, B))
            bound = InferMaxCSP(inst, 1.0).root_bound()
            best = min(run_policies(inst, None, "makespan", skipped={}), key=lambda r: r.objective)
            row = (f"{fam:<12} {B:>3} {bound:10.6f} {best.name:<14} {best.objective:10.6f} "
                   f"{'/'.join(map(str, phases(inst, best.schedule))):>14} {(best.objective - bound) / best.objective:9.3e}")
            packed = best_packed_schedule(inst)
            if packed is not None:
                ms = verify(inst, packed[1]).metrics["makespan"]
                row += (f"   {packed[0]:<36} {ms:10.6f} {'/'.join(map(str, phases(inst, packed[1]))):>14} "
                        f"{(ms - bound) / ms:9.3e}")
            print(row, flush=True)
    raise SystemExit(0)

seeds = [int(s) for s in args.seeds.split(",")]
print(f"CP-SAT, time limit {args.time_limit:g}s, solver seeds {seeds}, CSP defaults {InferMaxCSP.cpsat_defaults}")
print(f"{'family':<12} {'B':>3} {'J':>5} {'vars':>8} {'statuses':<34} {'cp-sched':>8} {'max gap':>8} "
      f"{'bound':<11} {'time min/med/max s':>22} {'wall s':>6}")
for fam in args.families.split(","):
    for B in (int(b) for b in args.B.split(",")):
        inst = parse_instance(family(fam, B))
        st, gaps, times, sources, sched, wall = [], [], [], set(), 0, 0.0
        for s in seeds:
            t0 = time.perf_counter()
            rep = solve_instance(inst, "infermax-csp", "cpsat", args.time_limit, solver_seed=s)
            wall = max(wall, time.perf_counter() - t0)
            st.append(rep["status"])
            gaps.append(rep["gap"] if rep["gap"] is not None else float("nan"))
            times.append(rep["solve_seconds"])
            sources.add(rep["bound_source"] or "-")
            sched += rep["objective_source"] == "solver"
        J = batch_horizon(inst, rep["best_known"])  # as the CSP computes it from its incumbent
        print(f"{fam:<12} {B:>3} {J:>5} {rep['variables'] or 0:>8} {','.join(st):<34} {sched:>4}/{len(seeds):<3} "
              f"{max(gaps):8.4f} {'/'.join(sorted(sources)):<11} "
              f"{min(times):6.1f}/{statistics.median(times):6.1f}/{max(times):6.1f} {wall:6.1f}", flush=True)
