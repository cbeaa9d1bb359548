"""``lpbench bench | compare | table | plot``: batch regression jobs, their store, tables and figures."""
from __future__ import annotations

import math
import sys
from collections import Counter

from .cli_options import refuse_unread, remember_parser
from .errors import InputError


def cmd_bench(args) -> int:
    """Every check (the suite, the executor options, --out or the run to resume, a --scheduler's answer)
    comes before the run directory is created: bad input leaves nothing behind."""
    from .bench.executors import check_options, connect_scheduler
    from .bench.store import RunStore, check_out
    from .bench.suite import load_suite

    suite = load_suite(args.suite)
    tasks = [t.to_dict() for t in suite.tasks()]
    check_options(args.executor, args.workers, args.scheduler)
    store = RunStore.resume(args.out, args.resume, suite) if args.resume else None
    client = None
    try:
        if store is None:
            check_out(args.out)
        client = connect_scheduler(args.scheduler) if args.scheduler else None
        store = store or RunStore.create(args.out, suite, args.executor)
        return _run_bench(args, tasks, store, client)
    finally:
        if store is not None:
            store.close()
        if client is not None:
            client.close()


def _run_bench(args, tasks, store, client) -> int:
    """Ctrl-C (or a failed write) stops the run at once: the queued tasks are cancelled, the running task
    processes killed, every task that finished is written, and the run is named with the command that
    resumes it (exit 130, also under -q)."""
    from .bench.executors import run_tasks
    from .bench.runner import FAILED

    todo = store.pending(tasks)
    if not args.quiet:
        print(f"lpbench: run {store.path}: {len(tasks)} tasks, {len(tasks) - len(todo)} already stored, "
              f"{len(todo)} to run ({args.executor} executor)", file=sys.stderr, flush=True)
    counts: Counter = Counter()
    failures = []
    written: set[str] = set()
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="task", file=sys.stderr, dynamic_ncols=True)

    def record(task, rows):
        store.write(task, rows)
        written.add(task["key"])
        counts[rows[0]["status"]] += 1
        if rows[0]["status"] in FAILED:
            failures.append((task["key"], rows[0]["status"], rows[0]["message"]))
        if bar is not None:
            bar.set_postfix_str(" ".join(f"{k}={v}" for k, v in sorted(counts.items())), refresh=False)
            bar.update(1)

    execution = None
    try:
        execution = run_tasks(todo, args.executor, args.workers, client)
        for task, rows in execution:
            record(task, rows)
    except (KeyboardInterrupt, Exception) as e:
        try:
            for task, rows in execution.stop() if execution is not None else []:  # finished, not yet written
                if task["key"] not in written:
                    try:
                        record(task, rows)
                    except Exception:  # e.g. the write that failed, failing again: the others are still kept
                        pass
        except KeyboardInterrupt:  # a second Ctrl-C: leave now
            pass
        if not isinstance(e, KeyboardInterrupt):
            raise
        if bar is not None:
            bar.close()
            bar = None
        stored = len(tasks) - len(todo) + len(written)
        print(f"lpbench: interrupted: run {store.path} holds {stored} of {len(tasks)} tasks; resume it with "
              f"{store.resume_command()}", file=sys.stderr, flush=True)
        return 130
    finally:
        if execution is not None:
            execution.close()
        if bar is not None:
            bar.close()
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing to do"
    print(f"{store.path}: ran {len(todo)} of {len(tasks)} tasks ({summary})")
    for key, status, message in failures:
        print(f"  {status}: {key}: {message}")
    return 1 if failures else 0


def cmd_compare(args) -> int:
    import json

    from .bench.compare import compare_runs
    from .bench.store import read_run

    for flag, value in (("--time-tol", args.time_tol), ("--time-floor", args.time_floor)):
        if not 0 <= value < math.inf:  # also refuses nan
            raise InputError(f"{flag}: must be a finite number >= 0, got {value}")
    diff = compare_runs(read_run(args.baseline), read_run(args.new), args.time_tol, args.time_floor)
    bad = diff[diff["regressions"] != ""]
    if args.json:
        print(json.dumps({"regressions": len(bad), "rows": json.loads(diff.to_json(orient="records"))}))
    else:
        show = diff[["instance", "kind", "method", "formulation", "solver", "repetition", "status_base", "status_new",
                     "objective_base", "objective_new", "bound_base", "bound_new", "seconds_base", "seconds_new",
                     "regressions"]]
        print(show.to_markdown(index=False, floatfmt=".6g"))
        print(f"{len(bad)} regression(s) in {len(diff)} matched rows" if len(bad) else
              f"no regression in {len(diff)} matched rows")
    return 1 if len(bad) else 0


def cmd_table(args) -> int:
    from .bench.store import read_run
    from .report.tables import TABLES, render

    frame = read_run(args.run)
    by = [c for c in (args.by or "").split(",") if c]
    for c in by:
        if c not in frame.columns:
            raise InputError(f"--by: unknown column {c!r}; e.g. family, model, requests, instance, objective_metric")
    kinds = list(TABLES) if args.kind == "all" else [args.kind]
    if by and args.kind == "csp51":
        raise InputError("--by: the csp51 table has one row per instance and takes no --by")
    printed = 0
    for k in kinds:
        table = TABLES[k](frame) if k == "csp51" else TABLES[k](frame, by=by)
        if table.empty and len(kinds) == 1:
            raise InputError(f"--kind: run {args.run} has no rows for the {k} table")
        if table.empty:
            continue
        if len(kinds) > 1 and args.format != "csv":
            print(f"\n{k}\n" if args.format == "md" else f"\n% {k}")
        print(render(table, args.format))
        printed += 1
    if not printed:  # e.g. a run of failed tasks: say what it holds rather than print nothing
        held = ", ".join(f"{v} {k}" for k, v in sorted(Counter(frame["status"].fillna("no status")).items()))
        print(f"lpbench: run {args.run} has no rows for any table: {len(frame)} rows ({held})", file=sys.stderr)
    return 0


#: the options each plot kind reads; any other one given is refused (exit 2) rather than ignored
PLOT_OPTIONS = {"ratio": ("run", "policy"), "latency": ("run", "x"),
                "memory": ("instance", "policy", "formulation", "solver", "time_limit", "seed"),
                "gantt": ("instance", "policy", "formulation", "solver", "time_limit", "seed")}


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def _check_plot_options(args) -> None:
    """Refuse an option the kind does not read, and a schedule chosen twice (or not at all)."""
    takes = PLOT_OPTIONS[args.kind]
    refuse_unread(args, f"plot {args.kind}", takes)
    need = "run" if "run" in takes else "instance"
    if getattr(args, need) is None:
        raise InputError(f"{_flag(need)}: required for plot {args.kind}")
    if need == "instance":
        if (args.policy is None) == (args.formulation is None):
            raise InputError(f"--policy, --formulation: plot {args.kind} draws one schedule: give one of them, "
                             f"got {'both' if args.policy else 'neither'}")
        for option in ("solver", "time_limit"):
            if getattr(args, option) is not None and args.formulation is None:
                raise InputError(f"{_flag(option)}: only with --formulation")


def _one_schedule(args):
    """The schedule to draw: a policy's (simulated, verified) or a formulation's (solved, verified)."""
    from .instance import load_instance, require_requests
    from .solve import run_policies, solve_instance

    inst = load_instance(args.instance)
    require_requests(inst, f"plot {args.kind}", args.instance)
    seed = args.seed or 0
    if args.formulation:
        rep = solve_instance(inst, args.formulation, args.solver or "highs", args.time_limit, [], seed)
        if rep["_schedule"] is None:
            raise InputError(f"--formulation: {args.formulation} returned no schedule (status {rep['status']})")
        return inst, rep["_schedule"], f"({args.formulation}, {rep['status']})"
    (run,) = run_policies(inst, [args.policy], "total_latency", seed)
    return inst, run.schedule, f"({args.policy})"


def cmd_plot(args) -> int:
    """Both targets (OUT.png, OUT.pdf) and the options are checked before a run is read or a schedule computed."""
    from .report import plots

    _check_plot_options(args)
    plots.targets(args.out, args.force, make_parents=False)  # as every single-file --out: the directory must exist
    if args.kind in ("ratio", "latency"):
        from .bench.store import read_run

        frame = read_run(args.run)
        paths = (plots.ratio_histogram(frame, args.out, args.policy, force=args.force) if args.kind == "ratio"
                 else plots.latency_curve(frame, args.out, args.x or "requests", force=args.force))
    else:
        inst, sched, label = _one_schedule(args)
        draw = plots.memory_plot if args.kind == "memory" else plots.gantt
        paths = draw(inst, sched, args.out, label, force=args.force)
    for p in paths:
        print(p)
    return 0


def add_parsers(sub) -> None:
    from .cli import POSITIVE_FLOAT, POSITIVE_INT, SEED  # the shared argument checks (exit 2, one line)

    from .bench.executors import EXECUTORS

    s = sub.add_parser("bench", help="run a suite (TOML) of instances x formulations x solvers x policies "
                       "into a Parquet results store")
    s.add_argument("suite", help="suite file, see benchmarks/suites/")
    s.add_argument("--executor", choices=EXECUTORS, default="local", help="local process pool (default) or dask")
    s.add_argument("--scheduler", help="dask scheduler address (tcp://host:8786); default: a LocalCluster")
    s.add_argument("--workers", type=POSITIVE_INT, help="parallel tasks (local) or LocalCluster workers (default cores/2)")
    s.add_argument("--out", default="results", help="results directory (default results/)")
    s.add_argument("--resume", metavar="RUN", help="finish run RUN (a name under --out or a path): only missing tasks")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar (for CI)")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("compare", help="regression check of run NEW against run BASELINE (exit 1 on a regression)")
    s.add_argument("baseline", help="run directory")
    s.add_argument("new", help="run directory")
    s.add_argument("--time-tol", type=float, default=0.5, help="allowed relative growth of a task's wall seconds "
                   "(build+solve where a run lacks them; default 0.5 = +50%%)")
    s.add_argument("--time-floor", type=float, default=0.5, help="ignore time growth below this many seconds "
                   "(default 0.5)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_compare)

    from .report import PLOT_KINDS, TABLE_FORMATS, TABLE_KINDS

    s = sub.add_parser("table", help="paper-style tables of a run (Markdown, LaTeX or CSV)")
    s.add_argument("run", help="run directory")
    s.add_argument("--kind", choices=["all", *TABLE_KINDS], default="all",
                   help="latency (seed 004 Table 1), ratio (seed 004 §5.1), gap, solves (one row per solve), "
                        "csp51 (seed 003 §5.1); default all")
    s.add_argument("--format", choices=TABLE_FORMATS, default="md")
    s.add_argument("--by", help="comma-separated columns to group by as well, e.g. family (a generator's draws), "
                                "model or requests")
    s.set_defaults(func=cmd_table)

    s = sub.add_parser("plot", help="figures (PNG and PDF): ratio histogram, latency curve, KV memory, Gantt chart")
    s.add_argument("kind", choices=PLOT_KINDS)
    s.add_argument("--out", required=True, help="output path; writes OUT.png and OUT.pdf (a .png or .pdf ending "
                   "of OUT is dropped)")
    s.add_argument("--force", action="store_true", help="allow OUT.png and OUT.pdf to overwrite existing files")
    s.add_argument("--run", help="run directory (ratio, latency)")
    s.add_argument("--x", help="x column of the latency plot (default requests)")
    s.add_argument("--instance", help="instance file (memory, gantt)")
    s.add_argument("--policy", help="policy whose schedule is drawn (memory, gantt; or --formulation) or whose "
                   "ratios (ratio; default all policies)")
    s.add_argument("--formulation", help="draw this formulation's optimal schedule instead (memory, gantt)")
    s.add_argument("--solver", help="solver profile with --formulation (default highs)")
    s.add_argument("--time-limit", type=POSITIVE_FLOAT, help="solver seconds with --formulation")
    s.add_argument("--seed", type=SEED, help="seed of a randomised policy or of the solver (memory, gantt; "
                   "default 0)")
    s.set_defaults(func=cmd_plot)
    remember_parser(s)
