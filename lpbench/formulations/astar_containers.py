"""The numba containers of ``latency-astar``'s search and bound caches, made by compiled functions.

Made and used only inside compiled code: from Python, each first use of a typed container's method compiles
it (0.1-1.0 s each, not cached on disk; scratch timing of Dict.empty, a set, List.empty_list, an append and a
get), which cost about 3 s per process before the search had started. This
module imports numba, so :mod:`lpbench.formulations.latency_astar` imports it only when a search starts."""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict, List

from .compiled import compiled
from .latency_astar import AGE_WORDS, MESSAGE_COLUMNS, add_row, heap_push, remember   # AGE_WORDS: ages in words

_KEY = types.UniTuple(types.int64, 2 + AGE_WORDS)
_AGES = types.UniTuple(types.int64, AGE_WORDS)
_REST = types.UniTuple(types.int64, 3)


@njit(cache=True)
def new_caches():
    """The bound's caches: running sets (packed ages -> slot; by slot, one array of Σ remaining, e and the prefix
    sums of U: ``latency_astar.pack_running``), waiting sets (bitmask -> slot) and their parts by slot (one array
    each: ``latency_astar.pack_waiting``), and the h of the rest of W beside (P) (``latency_astar.state_bound``)."""
    return (Dict.empty(_AGES, types.int64), List.empty_list(types.int64[:]), Dict.empty(types.int64, types.int64),
            List.empty_list(types.int64[:]), Dict.empty(_REST, types.int64))


@compiled   # njit, with heap_push, add_row and remember compiled in
def new_search(W, t, t_key, f):
    """The search's heap of (f, −g, node), nodes (W, t, age words, path), paths (t, X, parent), each a numpy
    array of rows inside a one-element list (so that the kernels can swap in a larger one), ``sizes`` (rows in
    use of each), best_g (state key -> least g) and the filter of its keys (one array in a list:
    ``latency_astar.remember``), holding the start state (W, t) with nothing running at g = 0 and f."""
    heap, nodes, paths = (List.empty_list(types.int64[:, :]), List.empty_list(types.int64[:, :]),
                          List.empty_list(types.int64[:, :]))
    heap.append(np.empty((1024, 3), dtype=np.int64))
    nodes.append(np.empty((1024, 3 + AGE_WORDS), dtype=np.int64))
    paths.append(np.empty((1024, 3), dtype=np.int64))
    sizes = np.zeros(3, dtype=np.int64)
    heap_push(heap, sizes, f, 0, add_row(nodes, sizes, 1, W, t, 0, 0, 0, 0, -1))
    best_g = Dict.empty(_KEY, types.int64)
    seen = List.empty_list(types.int64[:])
    seen.append(np.zeros(16, dtype=np.int64))
    remember(best_g, seen, (W, t_key, 0, 0, 0, 0), 0)
    return heap, nodes, paths, sizes, best_g, seen


@njit(cache=True)
def new_outbox():
    """The states one part of ``latency_astar._best_first_parallel`` sends the other (``latency_astar.send``): an
    array of rows inside a one-element list, so that the kernel can swap in a larger one."""
    outbox = List.empty_list(types.int64[:, :])
    outbox.append(np.empty((1024, MESSAGE_COLUMNS), dtype=np.int64))
    return outbox
