"""Run one bench task and flatten its report into rows; isolate it in a child process with a deadline.

``execute`` is the in-process work (``solve_instance`` or a verified simulation). ``run_isolated`` runs
``python -m lpbench.bench.runner`` with the task as JSON on stdin and its rows as JSON on stdout, kills it
after ``time_limit + grace`` seconds, and turns every failure -- an exception, a crash, a hang, a killed
process -- into rows with status ``error`` or ``timeout`` and the message: a task never loses its rows.
Both executors call ``run_isolated``, so a local and a Dask run handle failures the same way.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
import traceback
from datetime import datetime, timezone

from .. import __version__

#: columns whose values depend on the machine or the clock, not on the computation
TIMING_COLUMNS = ("build_seconds", "solve_seconds", "wall_seconds", "timestamp", "machine", "python",
                  "git_commit", "run")
SOLVER_DISTRIBUTIONS = {"highs": "highspy", "cpsat": "ortools", "gurobi": "gurobipy", "pyomo": "pyomo"}
LATENCY_METRICS = ("total_latency", "mean_latency", "p99_latency", "ttft_mean", "makespan", "peak_memory",
                   "evictions")
#: the statuses of :func:`failure_rows`: a task that crashed, hung or was killed, with no result (``bench`` lists
#: them at the end; ``compare`` does not time them)
FAILED = ("error", "timeout")


def _version(dist: str | None) -> str | None:
    try:
        return importlib.metadata.version(dist) if dist else None
    except importlib.metadata.PackageNotFoundError:
        return None


def _base(task: dict) -> dict:
    return {"task_key": task["key"], "instance": task["instance"], "instance_hash": task["instance_hash"],
            "requests": len(task["instance_data"]["requests"]["arrival"]),
            "model": task["instance_data"].get("model", "slot"), "repetition": task["repetition"],
            "seed": task["seed"], "time_limit": task["time_limit"], "lpbench_version": __version__,
            "python": platform.python_version(), "machine": platform.node()}


def _row(task: dict, kind: str, method: str, **values) -> dict:
    row = {**_base(task), "kind": kind, "method": method, "formulation": task["formulation"],
           "solver": task["solver"], "backend": None, "solver_version": None, "status": None,
           "objective_metric": task["metric"], "objective": None, "bound": None, "gap": None,
           "ratio_lower": None, "ratio_upper": None, "build_seconds": None, "solve_seconds": None,
           "verified": None, "variables": None, "rows": None, "message": "",
           **{m: None for m in LATENCY_METRICS}}
    row.update(values)
    return row


def execute(task: dict) -> list[dict]:
    """The work of one task, in this process. Raises on failure (``run_isolated`` turns it into rows)."""
    from ..instance import parse_instance
    from ..solve import run_policies, solve_instance
    from ..verify import verify

    inst = parse_instance(task["instance_data"], name=task["instance"])
    if task["formulation"] is None:
        (run,) = run_policies(inst, task["policies"], task["metric"], seed=task["seed"])
        return [_row(task, "policy", run.name, status="verified", objective=run.objective, verified=True,
                     **{m: run.metrics.get(m) for m in LATENCY_METRICS})]
    # a policy that cannot serve the instance or does not finish becomes a 'skipped' row, not a lost solve
    rep = solve_instance(inst, task["formulation"], task["solver"], task["time_limit"], task["policies"],
                         task["seed"], strict=False)
    schedule = rep.pop("_schedule")
    metrics = rep.pop("_policy_metrics")
    # the reported schedule's own metrics (e.g. the CSP's evictions in the seed 003 §5.1 table), from the verifier
    own = verify(inst, schedule).metrics if schedule is not None else {}
    common = dict(backend=rep["backend"], solver_version=_version(SOLVER_DISTRIBUTIONS.get(rep["backend"])),
                  objective_metric=rep["objective_metric"])
    rows = [_row(task, "formulation", task["formulation"], status=rep["status"], objective=rep["objective"],
                 bound=rep["bound"], gap=rep["gap"], build_seconds=rep["build_seconds"],
                 solve_seconds=rep["solve_seconds"], verified=rep["verified"], variables=rep["variables"],
                 rows=rep["rows"], message=rep["message"] or "", **{m: own.get(m) for m in LATENCY_METRICS},
                 **common)]
    proven = rep["exact"] and rep["status"] == "optimal" and rep["verified"]
    for name, r in rep["ratios"].items():
        rows.append(_row(task, "policy", name, status="optimal" if proven else "certified", objective=r["objective"],
                         bound=rep["bound"], ratio_lower=r["lower"], ratio_upper=r["upper"], verified=True,
                         **{m: metrics[name].get(m) for m in LATENCY_METRICS}, **common))
    for name, why in rep["skipped_policies"].items():
        rows.append(_row(task, "policy", name, status="skipped", message=why, **common))
    return rows


def failure_rows(task: dict, status: str, message: str) -> list[dict]:
    """A failed task still yields its rows: the formulation (or the policy) and each policy, with the error."""
    rows = [_row(task, "formulation" if task["formulation"] else "policy", task["formulation"] or task["policies"][0],
                 status=status, message=message)]
    if task["formulation"]:
        rows += [_row(task, "policy", p, status=status, message=message) for p in task["policies"]]
    return rows


def _stamp(rows: list[dict], wall: float) -> list[dict]:
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for r in rows:
        r["wall_seconds"] = wall
        r["timestamp"] = now
    return rows


class TaskStopped(Exception):
    """The task was not run, or its process was killed by :meth:`Stopper.stop`: it has no rows (``--resume``
    runs it again)."""


class Stopper:
    """The task processes that one local run has started, so that Ctrl-C can stop them: :meth:`stop` kills the
    process group of every running one (each runs in its own session, so a terminal's SIGINT never reaches it)
    and refuses to start any more."""

    def __init__(self):
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()
        self.stopped = False

    def start(self, argv: list[str]) -> subprocess.Popen:
        with self._lock:
            if self.stopped:
                raise TaskStopped("not started: the run was stopped")
            proc = _popen(argv)
            self._running.add(proc)
            return proc

    def finished(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._running.discard(proc)

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
            for proc in self._running:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):  # already gone
                    pass


#: set by :func:`_popen` to the pid of the process that starts a task (:func:`exit_when_orphaned` watches it)
PARENT_ENV = "LPBENCH_TASK_PARENT"


def _popen(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, PARENT_ENV: str(os.getpid())})


def run_isolated(task: dict, command: list[str] | None = None, stopper: Stopper | None = None) -> list[dict]:
    """Run ``task`` in a fresh ``python -m lpbench.bench.runner`` (or ``command``, which reads the task as
    JSON on stdin and prints its rows as JSON); rows for every outcome. With a ``stopper`` (the local executor's),
    a task it stopped raises :class:`TaskStopped` instead: it was interrupted, not failed."""
    deadline = task["time_limit"] + task["grace"]
    t0 = time.perf_counter()
    argv = command or [sys.executable, "-m", "lpbench.bench.runner"]
    proc = stopper.start(argv) if stopper is not None else _popen(argv)
    try:
        try:
            out, err = proc.communicate(json.dumps(task), timeout=deadline)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the task's own process group: the child and anything it started
            proc.communicate()
            return _stamp(failure_rows(task, "timeout", f"killed after {deadline:g}s (time_limit "
                                       f"{task['time_limit']:g} + grace {task['grace']:g})"),
                          time.perf_counter() - t0)
    finally:
        if stopper is not None:
            stopper.finished(proc)
    wall = time.perf_counter() - t0
    if proc.returncode == 0:
        try:
            return _stamp(json.loads(out), wall)
        except json.JSONDecodeError:
            pass
    if stopper is not None and stopper.stopped:
        raise TaskStopped(f"killed: the run was stopped (exit {proc.returncode})")
    if proc.returncode < 0:
        msg = f"worker killed by signal {signal.Signals(-proc.returncode).name}"
    else:
        tail = (err or "").strip().splitlines()
        msg = tail[-1] if tail else f"worker exited with code {proc.returncode}"
    return _stamp(failure_rows(task, "error", msg), wall)


def main() -> int:
    task = json.loads(sys.stdin.read())
    # self-destruct a little after the driver's deadline, so a hung task dies even if its driver was killed
    signal.alarm(int(task["time_limit"] + task["grace"]) + 5)
    try:
        rows = execute(task)
    except Exception as e:  # reported as rows, with the exception's own words
        traceback.print_exc(file=sys.stderr)
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    json.dump(rows, sys.stdout)
    return 0


def exit_when_orphaned(period: float = 0.2) -> None:
    """End this task process, and everything in its process group, as soon as its parent is gone (the driver or a
    Dask worker killed, or Ctrl-C'd with the terminal's group): no one could read its rows any more, and before, it
    ran on to its alarm. The parent is polled from a daemon thread every ``period`` seconds. Only a task started by
    :func:`_popen`, which names its parent in ``$LPBENCH_TASK_PARENT`` (a parent that died during this process's
    start-up is seen too); a runner started by hand is left alone."""
    try:
        parent = int(os.environ.get(PARENT_ENV, ""))
    except ValueError:
        return

    def watch():
        while os.getppid() == parent:
            time.sleep(period)
        if os.getsid(0) == os.getpid():  # run_isolated's session: the task's own group, its solvers' children too
            os.killpg(os.getpgrp(), signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="lpbench-orphan-watch", daemon=True).start()


if __name__ == "__main__":
    from ..interrupt import ABANDONED

    exit_when_orphaned()
    code = main()
    if any(t.is_alive() for t in ABANDONED):  # as lpbench.cli.console_main: a solver thread abandoned at its
        sys.stdout.flush()                    # deadline aborts the interpreter's teardown (SIGABRT, rows lost)
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
