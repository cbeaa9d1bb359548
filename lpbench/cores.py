"""The machine's two cores, shared. Work that runs on both at once (``latency-astar``'s pattern table, built in two
threads) holds :func:`both_cores` meanwhile, and background work (the search beside the certify step,
:class:`~lpbench.heuristics.slot_sgs.ClimbsBeside`) waits while anyone holds it."""
from __future__ import annotations

import contextlib
import threading

#: set while no one holds :func:`both_cores`
FREE = threading.Event()
FREE.set()
_lock = threading.Lock()
_holders = 0


@contextlib.contextmanager
def both_cores():
    """Hold both cores for the ``with`` block (nested and concurrent holds count)."""
    global _holders
    with _lock:
        _holders += 1
        FREE.clear()
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                FREE.set()
