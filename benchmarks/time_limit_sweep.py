"""Does every slot formulation return within its time limit? (issue 12, "every backend returns within 10 % of its
time limit"). Not a test: one `lpbench solve` process per (instance, formulation, limit), timed from the outside,
so the seconds include the interpreter's start-up (about 1 s here; `volume-bound`'s row shows it).

    python benchmarks/time_limit_sweep.py                       # limits 5 and 15 s, five instances (20 min)
    python benchmarks/time_limit_sweep.py --limits 5 --instances m1-53

Instances: full jaillet-model1 draw 0 (53 requests), jaillet-model2 draw 28 (102), the first 18 requests of
jaillet-model1 draw 3 (the exact search's size), the 1,000-request Azure slot instance at load 0.8 of
`bench_slot_load.py`, and full jaillet-model2 draw 76 (26 requests, where the certify step runs `subset-bound`),
written to a temporary folder. Formulations that refuse the instance (too many requests, too
large a model) are listed with their exit code 2 and the seconds the refusal took. Columns: exit code, wall seconds,
wall / limit, status, objective, bound.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lpbench.generators import jaillet

ROOT = Path(__file__).resolve().parents[1]
FORMULATIONS = ["latency-ip", "latency-ip --solver cpsat", "latency-cp", "latency-event", "latency-astar", "latency-lp",
                "completion-cp", "chain-bound", "volume-chain-bound", "subset-bound", "lagrange-bound", "volume-lp",
                "volume-bound"]
INSTANCES = {"m1-53": ("jaillet-model1", 0, None), "m2-102": ("jaillet-model2", 28, None),
             "m1-18": ("jaillet-model1", 3, 18), "slot-1000": None, "m2-26": ("jaillet-model2", 76, None)}


def write_instances(folder: Path, names: list[str]) -> dict[str, Path]:
    paths = {}
    for name in names:
        path = folder / f"{name}.json"
        if INSTANCES[name] is None:
            subprocess.run([sys.executable, str(ROOT / "benchmarks/bench_slot_load.py"), "--rho", "0.8", "--requests",
                            "1000", "--write-instances", str(folder)], check=True, capture_output=True)
            (folder / "azure-slot-rho0.8-n1000.json").rename(path)
        else:
            model, k, first = INSTANCES[name]
            path.write_text(json.dumps(jaillet.instance(model, 0, k, first=first)))
        paths[name] = path
    return paths


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limits", default="5,15", help="comma list of --time-limit values (s)")
    ap.add_argument("--instances", default=",".join(INSTANCES), help=f"comma list of {', '.join(INSTANCES)}")
    ap.add_argument("--formulations", default=",".join(FORMULATIONS), help="comma list (a solver as 'F --solver S')")
    args = ap.parse_args()
    names = args.instances.split(",")
    unknown = [n for n in names if n not in INSTANCES]
    if unknown:
        ap.error(f"--instances: unknown {unknown}; expected some of {list(INSTANCES)}")
    print("| limit s | instance | formulation | exit | wall s | wall / limit | status | objective | bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_instances(Path(tmp), names)
        for limit in (float(x) for x in args.limits.split(",")):
            for name in names:
                for form in args.formulations.split(","):
                    cmd = ["lpbench", "solve", str(paths[name]), "--formulation", *form.split(), "--time-limit",
                           f"{limit:g}", "--json", "-q"]
                    t = time.perf_counter()
                    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=10 * limit + 300)
                    wall = time.perf_counter() - t
                    status = objective = bound = "—"
                    if proc.returncode in (0, 130) and proc.stdout.strip():
                        rep = json.loads(proc.stdout)
                        status, objective, bound = rep["status"], rep["objective"], rep["bound"]
                        objective = "—" if objective is None else f"{objective:,.0f}"
                        bound = "—" if bound is None else f"{bound:,.0f}"
                    elif proc.returncode == 2:
                        status = "refused"
                    print(f"| {limit:g} | {name} | {form} | {proc.returncode} | {wall:.1f} | {wall / limit:.2f} | "
                          f"{status} | {objective} | {bound} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
