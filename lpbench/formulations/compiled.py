"""Numba kernels compiled on first call, so that importing lpbench does not import numba."""
from __future__ import annotations

import functools


def compiled(kernel):
    """``kernel`` (a plain Python function over numpy arrays and scalars), compiled by numba's ``njit`` at its
    first call and cached on disk (``cache=True``: a few seconds the first time after an install, a fraction
    of a second in later processes)."""

    @functools.cache
    def jitted():
        from numba import njit

        return njit(cache=True)(kernel)

    @functools.wraps(kernel)
    def call(*args):
        return jitted()(*args)

    return call
