"""Ctrl-C during a solve (issue 14): stop the backend within a second and keep its best solution.

:func:`run_interruptible` runs a blocking solver call in a worker thread while the main thread
waits; a SIGINT in that time sets :data:`REQUESTED` and calls the backend's own stop
(HiGHS: the ``kCallbackSimplexInterrupt`` / ``kCallbackIpmInterrupt`` / ``kCallbackMipInterrupt``
callbacks interrupt when REQUESTED is set; CP-SAT: ``CpSolver.stop_search()``; Gurobi:
``Model.terminate()``). The solver returns its incumbent as usual and the backend reports the status
``interrupted``; the pipeline then verifies that schedule and the CLI writes it and exits 130.
A second Ctrl-C raises ``KeyboardInterrupt`` at once (exit 130, nothing kept).

Not every phase of a solver polls its interrupt: HiGHS's MIP presolve on a large model runs for
tens of seconds without calling any callback (measured on a Jaillet draw, 65,885 binaries). So the
wait is bounded: if the solver has not returned ``GRACE`` seconds after the stop request,
:class:`Abandoned` is raised, the worker thread is left to die with the process, and the pipeline
keeps the best schedule it already holds (the verified policy incumbent).
"""
from __future__ import annotations

import signal
import threading
import time
from typing import Callable, TypeVar

T = TypeVar("T")

#: set by the SIGINT handler while a solve runs; backends read it to report ``interrupted``
REQUESTED = threading.Event()
#: seconds a solver may take to honour a stop request before it is abandoned
GRACE = 0.5
#: worker threads left running; the console entry point then exits without interpreter teardown
ABANDONED: list[threading.Thread] = []


class Abandoned(Exception):
    """The solver did not stop within GRACE seconds of Ctrl-C; its thread was abandoned."""


def run_interruptible(work: Callable[[], T], stop: Callable[[], None]) -> T:
    """``work()`` with SIGINT mapped to ``stop()``. Outside the main thread (no signals there)
    it is a plain call."""
    if threading.current_thread() is not threading.main_thread():
        return work()
    box: dict = {}

    def target():
        try:
            box["value"] = work()
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    def on_sigint(signum, frame):
        if REQUESTED.is_set():
            raise KeyboardInterrupt
        REQUESTED.set()
        stop()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        worker = threading.Thread(target=target, name="lpbench-solve", daemon=True)
        worker.start()
        stopped_at = None
        while worker.is_alive():
            worker.join(0.05)
            if REQUESTED.is_set():
                stopped_at = stopped_at or time.monotonic()
                if time.monotonic() - stopped_at > GRACE:
                    ABANDONED.append(worker)
                    raise Abandoned(f"the solver did not stop within {GRACE:g}s of Ctrl-C")
    finally:
        signal.signal(signal.SIGINT, previous)
    if "error" in box:
        raise box["error"]
    return box["value"]
