"""``lpbench bench | compare | table | plot``: batch regression jobs, their store, tables and figures."""
from __future__ import annotations

import sys
from collections import Counter

from .errors import InputError

FAILED = ("error", "timeout")


def cmd_bench(args) -> int:
    from .bench.executors import run_tasks
    from .bench.store import RunStore
    from .bench.suite import load_suite

    suite = load_suite(args.suite)  # every check happens here, before any work
    tasks = [t.to_dict() for t in suite.tasks()]
    store = RunStore.resume(args.out, args.resume, suite) if args.resume else RunStore.create(args.out, suite,
                                                                                                args.executor)
    todo = store.pending(tasks)
    if not args.quiet:
        print(f"lpbench: run {store.path}: {len(tasks)} tasks, {len(tasks) - len(todo)} already stored, "
              f"{len(todo)} to run ({args.executor} executor)", file=sys.stderr, flush=True)
    counts: Counter = Counter()
    failures = []
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="task", file=sys.stderr, dynamic_ncols=True)
    try:
        for task, rows in run_tasks(todo, args.executor, args.workers, args.scheduler):
            store.write(task, rows)
            counts[rows[0]["status"]] += 1
            if rows[0]["status"] in FAILED:
                failures.append((task["key"], rows[0]["status"], rows[0]["message"]))
            if bar is not None:
                bar.set_postfix_str(" ".join(f"{k}={v}" for k, v in sorted(counts.items())), refresh=False)
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing to do"
    print(f"{store.path}: ran {len(todo)} of {len(tasks)} tasks ({summary})")
    for key, status, message in failures:
        print(f"  {status}: {key}: {message}")
    return 1 if failures else 0


def add_parsers(sub) -> None:
    from .bench.executors import EXECUTORS

    s = sub.add_parser("bench", help="run a suite (TOML) of instances x formulations x solvers x policies "
                       "into a Parquet results store")
    s.add_argument("suite", help="suite file, see benchmarks/suites/")
    s.add_argument("--executor", choices=EXECUTORS, default="local", help="local process pool (default) or dask")
    s.add_argument("--scheduler", help="dask scheduler address (tcp://host:8786); default: a LocalCluster")
    s.add_argument("--workers", type=int, help="parallel tasks (local) or LocalCluster workers (default cores/2)")
    s.add_argument("--out", default="results", help="results directory (default results/)")
    s.add_argument("--resume", metavar="RUN", help="finish run RUN (a name under --out or a path): only missing tasks")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar (for CI)")
    s.set_defaults(func=cmd_bench)
