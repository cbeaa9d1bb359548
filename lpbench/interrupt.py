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

The same mechanism enforces time limits: with a ``deadline``, ``stop()`` is called when it passes and
the run is abandoned (:class:`Abandoned` with ``timed_out``) if it has not returned
``DEADLINE_GRACE`` seconds later. HiGHS's own time_limit is not checked in its MIP set-up or
presolve (measured: 16.7 s in presolve under a 3 s limit on a 63k-column latency-ip).

A process that starts with SIGINT ignored (a background job of a shell without job control, ``nohup``)
keeps ignoring it during the solve too: the handler is installed only over Python's own. Before, it was
installed regardless, so such a process ignored a SIGINT that came a moment before the solver started
(while the model was passed to HiGHS, 0.3 s on a 54-request latency-ip) and honoured one a moment later.
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
#: seconds a solver may run past its deadline, after being told to stop, before it is abandoned
DEADLINE_GRACE = 1.0
#: worker threads left running; the console entry point then exits without interpreter teardown
ABANDONED: list[threading.Thread] = []


class Abandoned(Exception):
    """The solver did not stop within GRACE seconds of Ctrl-C (or DEADLINE_GRACE seconds of its
    deadline: ``timed_out``); its thread was abandoned."""

    def __init__(self, message: str, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


def run_interruptible(work: Callable[[], T], stop: Callable[[], None], deadline: float | None = None,
                      stop_when: threading.Event | None = None) -> T:
    """``work()`` with SIGINT mapped to ``stop()``, and ``stop()`` also called once ``deadline`` (a
    ``time.perf_counter()`` time) has passed, or once ``stop_when`` is set (another search finished
    first). Outside the main thread there are no signals, and a SIGINT the process inherited as ignored stays
ignored; the deadline holds in both cases."""
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

    main = threading.current_thread() is threading.main_thread()
    handle = main and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    if not handle and deadline is None:
        return work()
    previous = signal.signal(signal.SIGINT, on_sigint) if handle else None
    try:
        worker = threading.Thread(target=target, name="lpbench-solve", daemon=True)
        worker.start()
        stopped_at = None
        timed_out = False
        while worker.is_alive():
            worker.join(0.05)
            if not worker.is_alive():
                break
            if stop_when is not None and stop_when.is_set() and not timed_out:
                stop()
                stop_when = None
            if deadline is not None and not timed_out and time.perf_counter() > deadline:
                timed_out = True
                stop()
                timed_out_at = time.monotonic()
            if timed_out and time.monotonic() - timed_out_at > DEADLINE_GRACE:
                ABANDONED.append(worker)
                raise Abandoned(f"the solver did not stop within {DEADLINE_GRACE:g}s of its time limit "
                                "(a phase that polls no interrupt)", timed_out=True)
            if REQUESTED.is_set():
                stopped_at = stopped_at or time.monotonic()
                if time.monotonic() - stopped_at > GRACE:
                    ABANDONED.append(worker)
                    raise Abandoned(f"the solver did not stop within {GRACE:g}s of Ctrl-C")
    finally:
        if handle:
            signal.signal(signal.SIGINT, previous)
    if "error" in box:
        raise box["error"]
    return box["value"]
