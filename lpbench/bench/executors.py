"""Executors: run tasks, yield ``(task, rows)`` as each finishes (in completion order).

* ``local`` -- a pool of ``workers`` threads, each driving one task process at a time
  (:func:`~lpbench.bench.runner.run_isolated`: one fresh process per task, killed at its deadline).
  On Ctrl-C (or any exception in the caller's loop) ``stop()`` cancels the queued tasks and kills the running
  ones at once: every task finished until then keeps its rows, the killed ones have none (``--resume`` reruns them).
* ``dask`` -- a ``distributed.Client`` connected by ``connect_scheduler`` (a ``dask scheduler`` address, a
  dask-jobqueue cluster's ``scheduler_address``; its caller closes it), or a ``LocalCluster`` on 127.0.0.1 with
  ``workers`` processes.
  Each Dask task calls the same ``run_isolated``, so a hang or a crash is handled inside the worker;
  a worker that dies anyway (``KilledWorker``, a lost connection) still yields the task's error rows.
  On Ctrl-C ``stop()`` sets the run's ``distributed.Event``: every worker kills the task processes it is running
  for the run (:func:`dask_task`). A task process whose worker died ends by itself
  (:func:`lpbench.bench.runner.exit_when_orphaned`).
"""
from __future__ import annotations

import os
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Iterator

from ..errors import InputError
from .runner import Stopper, TaskStopped, failure_rows, run_isolated

EXECUTORS = ("local", "dask")
CONNECT_TIMEOUT = "20s"  # how long a --scheduler may take to answer


def default_workers() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


class LocalRun:
    """Iterate for ``(task, rows)`` in completion order. After an exception in the caller's loop (Ctrl-C, a failed
    write) call :meth:`stop`: it cancels the queued tasks, kills the running ones (their tasks get no rows, so a
    ``--resume`` runs them again) and returns every task that had finished; :meth:`close` always."""

    def __init__(self, tasks: list[dict], workers: int):
        self.stopper = Stopper()
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.futures = {self.pool.submit(run_isolated, t, None, self.stopper): t for t in tasks}

    def __iter__(self) -> Iterator[tuple[dict, list[dict]]]:
        for fut in as_completed(self.futures):
            try:
                rows = fut.result()  # run_isolated never raises for a task's own failure
            except TaskStopped:
                continue
            yield self.futures[fut], rows

    def stop(self) -> list[tuple[dict, list[dict]]]:
        self.close()
        return [(t, f.result()) for f, t in self.futures.items()
                if f.done() and not f.cancelled() and f.exception() is None]

    def close(self) -> None:
        self.stopper.stop()
        self.pool.shutdown(wait=True, cancel_futures=True)  # the killed tasks' threads return at once


def dask_task(task: dict, stop_event: str) -> list[dict] | None:
    """``run_isolated`` on a Dask worker, with a :class:`Stopper` that the run's ``distributed.Event`` named
    ``stop_event`` triggers: when the driver sets it (Ctrl-C), the task's process group is killed at once and the
    task returns None (stopped: no rows, so ``--resume`` runs it again)."""
    from distributed import Event, get_client

    stopper = Stopper()
    event = Event(stop_event, client=get_client())
    finished = threading.Event()

    def watch():  # a set event returns at once; the timeout only bounds how long this outlives its task
        while not finished.is_set():
            try:
                if event.wait(timeout=5):
                    stopper.stop()
                    return
            except Exception:  # the scheduler is gone: the task still ends at its own deadline
                return

    threading.Thread(target=watch, name="lpbench-stop-watch", daemon=True).start()
    try:
        return run_isolated(task, None, stopper)
    except TaskStopped:
        return None
    finally:
        finished.set()


class DaskRun:
    """As :class:`LocalRun`, on ``client`` (left open) when given, else on a LocalCluster of ``workers`` processes
    made here and closed by :meth:`close`. :meth:`stop` sets the run's stop event, which kills the running task
    processes on every worker (:func:`dask_task`), and cancels the tasks not started."""

    def __init__(self, tasks: list[dict], workers: int, client=None):
        Client, LocalCluster = _distributed("Client", "LocalCluster")
        self.cluster = None
        if client is None:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=None)
            client = Client(self.cluster)
        self.client = client
        #: the name of the ``distributed.Event`` that :meth:`stop` sets (one per run)
        self.stop_event = f"lpbench-stop-{uuid.uuid4().hex}"
        self.futures = {}
        for t in tasks:
            self.futures[client.submit(dask_task, t, self.stop_event, key=f"lpbench-{t['key']}", pure=False,
                                       retries=0)] = t

    def _rows(self, fut, timeout=None) -> list[dict]:
        task = self.futures[fut]
        try:
            return fut.result(timeout=timeout)
        except Exception as e:  # KilledWorker, CommClosedError: the worker died under this task
            return failure_rows(task, "error", f"dask: {type(e).__name__}: {e}")

    def __iter__(self) -> Iterator[tuple[dict, list[dict]]]:
        from distributed import as_completed as dask_completed

        for fut in dask_completed(list(self.futures)):
            rows = self._rows(fut)
            if rows is not None:
                yield self.futures[fut], rows

    def _set_stop_event(self) -> None:
        """Set the run's stop event, waiting at most 2 s: a scheduler that does not answer must not hang Ctrl-C
        (its workers' task processes then end at their deadline, or as orphans when their worker dies)."""
        (Event,) = _distributed("Event")

        def set_event():
            try:
                Event(self.stop_event, client=self.client).set()
            except Exception:
                pass

        setter = threading.Thread(target=set_event, name="lpbench-stop-set", daemon=True)
        setter.start()
        setter.join(2.0)

    def stop(self) -> list[tuple[dict, list[dict]]]:
        self._set_stop_event()
        done = []
        for fut, task in self.futures.items():
            if fut.status == "finished":
                try:
                    rows = fut.result(timeout=2)
                except Exception:  # gone with a worker that took the SIGINT too: resume runs it again
                    continue
                if rows is not None:
                    done.append((task, rows))
        if self.cluster is None:  # a shared scheduler: drop the rest there (our LocalCluster goes with close())
            try:
                self.client.cancel([f for f in self.futures if f.status != "finished"])
            except Exception:
                pass
        return done

    def close(self) -> None:
        if self.cluster is not None:
            self._set_stop_event()  # every task's watcher returns before the scheduler goes (no CancelledError logs)
            self.client.close()
            try:
                self.cluster.close()
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
              client=None) -> LocalRun | DaskRun:
    """The tasks, started: iterate for ``(task, rows)``; ``stop()`` after an interruption, ``close()`` always.
    ``client``: a ``connect_scheduler`` client for ``dask`` (default: a LocalCluster)."""
    check_options(executor, workers, None)
    workers = workers or default_workers()
    if executor == "local":
        return LocalRun(tasks, workers)
    return DaskRun(tasks, workers, client)
