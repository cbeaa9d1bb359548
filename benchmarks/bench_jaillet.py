"""Seed 004 §5.1 reproduction: hindsight optimum vs MC-SF on jaillet-model1/2 (a benchmark, not a test).

Superseded for runs and tables by the suite: ``lpbench bench benchmarks/suites/jaillet.toml`` (stored,
resumable, comparable with ``lpbench compare``) and ``lpbench table RUN --kind ratio|gap``. This script
stays for ``--build-only`` (model-building time alone) and for its existing JSONL results.

    python benchmarks/bench_jaillet.py --count 10 --time-limit 60 --out results/bench-jaillet.jsonl
    python benchmarks/bench_jaillet.py --count 10 --build-only

For each model and instance k = 0..count-1 (rng([seed, k]), as `lpbench generate`), it runs
``lpbench solve`` with HiGHS on ``latency-ip`` and with CP-SAT on ``latency-cp``, plus the cheap
bounds ``latency-lp`` and ``volume-bound``. One JSON line per (instance, run) is appended to --out
(resumable: finished runs are skipped). The summary prints, per backend, the number proven optimal,
the median solve seconds and the median / worst certified gap (best verified schedule vs that
backend's bound), then the MC-SF ratio summary in the paper's §5.1 layout, certified by the best
bound and best schedule over all runs: MC-SF / best-known (a lower end, = the ratio where proven)
and MC-SF / best bound (the upper end).
"""
import argparse
import json
import statistics
from pathlib import Path

from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.solve import solve_instance

RUNS = [("highs", "latency-ip", "highs"), ("cpsat", "latency-cp", "cpsat"),
        ("lp", "latency-lp", "highs"), ("volume", "volume-bound", "highs")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="jaillet-model1,jaillet-model2")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--time-limit", type=float, default=60)
    ap.add_argument("--out", default="results/bench-jaillet.jsonl")
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--build-only", action="store_true", help="time the latency-ip build alone")
    args = ap.parse_args()
    if args.build_only:
        return build_times(args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            d = json.loads(line)
            done.add((d["instance"], d["run"]))
    if not args.summary_only:
        for model in args.models.split(","):
            for k in range(args.count):
                inst = parse_instance(jaillet.instance(model, args.seed, k))
                for run, formulation, solver in RUNS:
                    if (inst.name, run) in done:
                        continue
                    rep = solve_instance(inst, formulation, solver, args.time_limit, ["mc-sf"])
                    rep.pop("_schedule")
                    rep.update(run=run, model=model, n=inst.n, memory=inst.memory)
                    with out.open("a") as fh:
                        fh.write(json.dumps(rep) + "\n")
                    print(f"{inst.name} n={inst.n} M={inst.memory} {run:7s} {rep['status']:10s} "
                          f"obj={rep['objective']} bound={rep['bound']} {rep['solve_seconds']:.1f}s", flush=True)
    summarise(out)


def build_times(args):
    """Model-building time of latency-ip (with MC-SF's incumbent bound), without solving."""
    import time

    from lpbench.formulations import FORMULATIONS
    from lpbench.policies import make_policy
    from lpbench.sim import simulate
    from lpbench.verify import verify

    secs, nvars = [], []
    for model in args.models.split(","):
        for k in range(args.count):
            inst = parse_instance(jaillet.instance(model, args.seed, k))
            ub = verify(inst, simulate(inst, make_policy("mc-sf", inst)).schedule).metrics["total_latency"]
            t0 = time.perf_counter()
            lp = FORMULATIONS.get("latency-ip")(inst, ub).build()
            secs.append(time.perf_counter() - t0)
            nvars.append(lp.n_vars)
    print(f"latency-ip build over {len(secs)} instances: median {statistics.median(secs):.3f} s, max {max(secs):.3f} s; "
          f"variables median {statistics.median(nvars):.0f}, max {max(nvars)}")


def summarise(path: Path):
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    by_model: dict = {}
    for r in rows:
        by_model.setdefault(r["model"], {}).setdefault(r["instance"], {})[r["run"]] = r
    for model, insts in sorted(by_model.items()):
        print(f"\n== {model}: {len(insts)} instances ==")
        print(f"{'backend':8s} {'proven':>7s} {'median s':>9s} {'median gap':>11s} {'worst gap':>10s}")
        for run in ("highs", "cpsat"):
            rs = [i[run] for i in insts.values() if run in i]
            if not rs:
                continue
            gaps = []
            for r in rs:
                lb = r["bound"]
                ub = r["best_known"]
                gaps.append((ub - lb) / ub if lb is not None else 1.0)
            proven = sum(r["status"] == "optimal" for r in rs)
            print(f"{run:8s} {proven:>4d}/{len(rs):<2d} {statistics.median(r['solve_seconds'] for r in rs):9.1f} "
                  f"{statistics.median(gaps):11.3f} {max(gaps):10.3f}")
        lo, hi, exact, proven_all = [], [], 0, 0
        for runs in insts.values():
            ub = min(r["best_known"] for r in runs.values())
            lb = max(r["bound"] for r in runs.values() if r["bound"] is not None)
            mcsf = next(iter(runs.values()))["ratios"]["mc-sf"]["objective"]
            lo.append(mcsf / ub)
            hi.append(mcsf / lb)
            if ub - lb < 0.5:  # integer objective: proven optimal
                proven_all += 1
                exact += mcsf == ub
        print(f"MC-SF / OPT, certified: best {min(lo):.3f} / worst {max(lo):.3f} / mean {statistics.mean(lo):.3f} "
              f"(MC-SF / best known); upper ends best {min(hi):.3f} / worst {max(hi):.3f} / mean "
              f"{statistics.mean(hi):.3f} (MC-SF / best bound); optimum proven on {proven_all}/{len(insts)}, "
              f"MC-SF exactly optimal on {exact} of those")


if __name__ == "__main__":
    main()
