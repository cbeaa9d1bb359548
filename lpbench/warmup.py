"""``lpbench warmup``: compile every numba kernel once, on small Jaillet prefixes, so that later runs load them from
numba's disk cache. A kernel is compiled at its first call after an install (or an edit of its file), and the
exact search's take about a minute: a step under a time limit skips a search whose kernels are not compiled and
whose compilation would not fit (``compiled.fits``), and says so."""
from __future__ import annotations

import time

import numpy as np


def _prefix(n: int):
    from .generators import jaillet
    from .instance import parse_instance

    return parse_instance(jaillet.instance("jaillet-model1", 0, 3, first=n))


def _local_search() -> None:
    from .heuristics.slot_sgs import local_search

    local_search(_prefix(6), iterations=50)


def _exact_search() -> None:
    from .formulations.latency_astar import astar_search

    astar_search(_prefix(6), pattern_size=0)
    astar_search(_prefix(12), pattern_size=3, copy_room=1, plain_seconds=None)   # the table's path too
    astar_search(_prefix(8), pattern_size=0, threads=2)                             # and the two-part search


def _chain_bound() -> None:
    from .formulations.chain import (COLD_COMPILE_SECONDS, FOUR_COMPILE_SECONDS, SPLIT_FINE, _block_of, _exact_tail,
                                     _first_three, _four_below, _four_raise, _split_tables, _tail_minima,
                                     _top_minima, chain_bound)
    from .formulations.compiled import cached

    kernels = (_tail_minima, _exact_tail, _first_three, _top_minima, _four_below, _four_raise)
    seconds = 0.5 if cached(*kernels) else COLD_COMPILE_SECONDS + FOUR_COMPILE_SECONDS + 0.5   # else it skips them
    chain_bound(_prefix(24), time.perf_counter() + seconds)
    m = 3                                                     # the split's tables, at their types
    D = np.zeros((7, m, m, m), dtype=np.int64)
    _split_tables(D, D, np.zeros((m, m, m), dtype=np.int64), SPLIT_FINE, np.arange(m + 1),
                  np.zeros((m,) * 4, dtype=np.int32), np.zeros((m,) * 4, dtype=np.float32))
    one = np.zeros(m, dtype=np.int64)                         # the split search's reading of the block's gaps
    _block_of(one, one, one, np.zeros((m, m), dtype=np.int64), 1, 1, 1, one[0], one[0], one[1], one[2])


def _volume_chain_bound() -> None:
    from .formulations.volume_chain import volume_chain_bound

    volume_chain_bound(_prefix(30), time.perf_counter() + 0.5)


#: (what, how): each step calls the kernels of one method on a small instance
STEPS = (("local search (incumbent of latency-ip / latency-cp)", _local_search),
         ("exact search (latency-astar, and the certify step on up to 40 requests)", _exact_search),
         ("chain-bound", _chain_bound),
         ("volume-chain-bound", _volume_chain_bound))


def warm_up(log=None) -> list[tuple[str, float]]:
    """Run every step of ``STEPS``; (what, seconds) per step, each logged as it ends when ``log`` is given."""
    done = []
    for what, step in STEPS:
        t0 = time.perf_counter()
        step()
        done.append((what, time.perf_counter() - t0))
        if log:
            log(f"  {what}: {done[-1][1]:.1f} s")
    return done
