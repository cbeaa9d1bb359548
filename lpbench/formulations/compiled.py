"""Numba kernels compiled on first call, so that importing lpbench does not import numba."""
from __future__ import annotations

import functools
import types


def compiled(kernel=None, *, inline: bool = False, nogil: bool = False):
    """``kernel`` (a plain Python function over numpy arrays and scalars), compiled by numba's ``njit`` at its
    first call and cached on disk (``cache=True``: a few seconds the first time after an install, a fraction
    of a second in later processes). A kernel may call other ``compiled`` kernels by their global names:
    it is compiled against their compiled forms. numba's disk cache is keyed on the source file, so it does
    not see a change in a called kernel of another file: after such an edit, delete the ``*.nbi`` / ``*.nbc``
    files in ``__pycache__``. ``@compiled(inline=True)``: compiled kernels that call this one get its body
    inlined (numba's ``inline="always"``), so no call passes arguments, whose arrays and containers numba may
    reference-count in and out of each call: for kernels called millions of times with many arguments
    (``latency_astar.state_bound``; 8 % off that search in one scratch measurement). ``@compiled(nogil=True)``:
    the kernel releases the GIL while it runs, so Python threads can run it side by side."""
    if kernel is None:
        return functools.partial(compiled, inline=inline, nogil=nogil)

    @functools.cache
    def jitted():
        from numba import njit

        names = {name: dep.jitted() for name in kernel.__code__.co_names
                 if hasattr(dep := kernel.__globals__.get(name), "jitted")}
        body = kernel if not names else types.FunctionType(
            kernel.__code__, {**kernel.__globals__, **names}, kernel.__name__, kernel.__defaults__,
            kernel.__closure__)
        return njit(cache=True, nogil=nogil, inline="always" if inline else "never")(body)

    @functools.wraps(kernel)
    def call(*args):
        return jitted()(*args)

    call.jitted = jitted
    return call


def cached(*kernels) -> bool:
    """Whether each ``compiled`` kernel (or ``njit(cache=True)`` dispatcher) is ready without compiling: compiled
    in this process, or held by numba's disk cache for its current source. A cold compilation can take a minute
    (``latency_astar``'s search: 51.5 s on the 2-core machine after an install, 0.8 s from the cache, by ``lpbench
    warmup``, which compiles every kernel, run with the caches deleted and again), so a step under a deadline
    asks this first (:func:`fits`). Reads numba's cache index through its private ``_cache`` (numba 0.59-0.68);
    where that is not there, answers True, which is the behaviour without the check."""
    for kernel in kernels:
        dispatcher = kernel.jitted() if hasattr(kernel, "jitted") else kernel    # or numba's own njit dispatcher
        if dispatcher.signatures:
            continue
        try:
            if not dispatcher._cache._cache_file._load_index():
                return False
        except AttributeError:
            continue
    return True


def fits(seconds_left: float, cold_seconds: float, *kernels) -> bool:
    """Whether a step whose ``kernels`` take ``cold_seconds`` to compile cold can run in ``seconds_left``:
    always when they are :func:`cached`, else only when the compilation fits."""
    return seconds_left >= cold_seconds or cached(*kernels)
