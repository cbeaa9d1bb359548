"""Executors: run tasks, yield ``(task, rows)`` as each finishes (in completion order).

* ``local`` -- a pool of ``workers`` threads, each driving one task process at a time
  (:func:`~lpbench.bench.runner.run_isolated`: one fresh process per task, killed at its deadline).
* ``dask`` -- a ``distributed.Client`` connected by ``connect_scheduler`` (a ``dask scheduler`` address, a
  dask-jobqueue cluster's ``scheduler_address``; its caller closes it), or a ``LocalCluster`` on 127.0.0.1 with
  ``workers`` processes.
  Each Dask task calls the same ``run_isolated``, so a hang or a crash is handled inside the worker;
  a worker that dies anyway (``KilledWorker``, a lost connection) still yields the task's error rows.
"""
from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Iterator

from ..errors import InputError
from .runner import failure_rows, run_isolated

EXECUTORS = ("local", "dask")
CONNECT_TIMEOUT = "20s"  # how long a --scheduler may take to answer


def default_workers() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


def run_local(tasks: list[dict], workers: int) -> Iterator[tuple[dict, list[dict]]]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_isolated, t): t for t in tasks}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()  # run_isolated never raises for a task's own failure


def run_dask(tasks: list[dict], workers: int, client=None) -> Iterator[tuple[dict, list[dict]]]:
    """On ``client`` (left open) when given, else on a LocalCluster of ``workers`` processes made and closed here."""
    Client, LocalCluster = _distributed("Client", "LocalCluster")
    from distributed import as_completed as dask_completed

    cluster = None
    if client is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None)
        client = Client(cluster)
    try:
        futures = {}
        for t in tasks:
            futures[client.submit(run_isolated, t, key=f"lpbench-{t['key']}", pure=False, retries=0)] = t
        for fut in dask_completed(list(futures)):
            task = futures[fut]
            try:
                rows = fut.result()
            except Exception as e:  # KilledWorker, CommClosedError: the worker died under this task
                rows = failure_rows(task, "error", f"dask: {type(e).__name__}: {e}")
            yield task, rows
    finally:
        if cluster is not None:
            client.close()
            try:
                cluster.close()
            except Exception as e:  # every row is in: a nanny still restarting a killed worker can fail
                print(f"warning: Dask LocalCluster shutdown: {type(e).__name__}: {e}", file=sys.stderr)


def _distributed(*names):
    try:
        import distributed
    except ImportError:
        raise InputError("--executor: 'dask' needs dask[distributed]; pip install 'lpbench[bench]'") from None
    return [getattr(distributed, name) for name in names]


def check_options(executor: str, workers: int | None, scheduler: str | None) -> None:
    """Refuse bad executor options (``InputError``, exit 2); no connection is made."""
    if executor not in EXECUTORS:
        raise InputError(f"--executor: expected one of {', '.join(EXECUTORS)}, got {executor!r}")
    if workers is not None and workers < 1:
        raise InputError(f"--workers: must be a positive integer, got {workers}")
    if scheduler and executor != "dask":
        raise InputError("--scheduler: only with --executor dask")


def connect_scheduler(scheduler: str):
    """A client of ``scheduler``, for the caller to close: ``bench`` connects once, before it creates a run, so an
    unreachable scheduler is refused with nothing written, and runs its tasks on that connection."""
    (Client,) = _distributed("Client")
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, ValueError, TypeError) as e:  # unreachable, or not an address
        raise InputError(f"--scheduler: cannot reach {scheduler!r} ({e})") from None


def run_tasks(tasks: list[dict], executor: str = "local", workers: int | None = None,
              client=None) -> Iterator[tuple[dict, list[dict]]]:
    """``client``: a ``connect_scheduler`` client for ``dask`` (default: a LocalCluster)."""
    check_options(executor, workers, None)
    workers = workers or default_workers()
    if executor == "local":
        return run_local(tasks, workers)
    return run_dask(tasks, workers, client)
