"""Incumbents for the seed-004 slot model: a serial schedule-generation scheme (SGS) and an iterated
local search over its priority order. Not an online policy: it sees the whole instance (hindsight).

**Serial SGS.** Requests are placed one at a time in a priority order π, each at the earliest start
k >= a_i at which its ramp s_i + d (rounds k + d, d = 1..o_i) fits under M on top of the requests
already placed. Every placement keeps eq. (3) at every t, so the result is a feasible schedule of
``latency-ip``; unlike MC-SF it may place a request *before* earlier-placed ones (backfilling).

**Local search.** From π₀ (ascending o_i, MC-SF's order), repeat: swap two positions or move one
request to another position; keep the candidate if its total latency is not worse. The RNG is seeded
and the number of iterations is fixed, so the result is deterministic; an optional deadline may cut
the search short (then the result depends on the machine's speed, and the caller says so).
Every schedule it returns is verified by the caller before use (``solve``).
"""
from __future__ import annotations

import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


CHUNK = 32  # candidate starts examined per vectorised step
SEARCH_ITERATIONS = 2000


def eq3_ramps(s: np.ndarray, o: np.ndarray) -> list[np.ndarray]:
    """Footprint of each request in the rounds after its start under eq. (3): s_i + 1, ..., s_i + o_i."""
    return [int(si) + np.arange(1, int(oi) + 1, dtype=np.int64) for si, oi in zip(s, o)]


def serial_sgs(a: np.ndarray, ramps: list[np.ndarray], M: int, order: np.ndarray) -> np.ndarray:
    """Start round of each request when placed in ``order`` at its earliest memory-feasible start.

    ``ramps[i][d - 1]`` is request i's memory in round k + d after its start k; it runs len(ramps[i]) rounds
    (eq. (3): :func:`eq3_ramps`; other readings of the model in ``benchmarks/seed004_readings.py``)."""
    dur = np.array([len(r) for r in ramps], dtype=np.int64)
    T = int(a.max() + dur.sum()) + 2        # latency-ip's serial horizon (a): every placement fits by then
    mem = np.zeros(T + int(dur.max()) + CHUNK + 2, dtype=np.int64)
    start = np.zeros(len(a), dtype=np.int64)
    for i in order:
        ramp, L, k = ramps[i], int(dur[i]), int(a[i])
        while True:  # peak of mem + ramp over rounds k+1..k+L, for CHUNK candidate starts at a time
            windows = sliding_window_view(mem[k + 1:k + CHUNK + L], L)
            fits = np.flatnonzero((windows + ramp).max(axis=1) <= M)
            if len(fits):
                k += int(fits[0])
                break
            k += len(windows)
        mem[k + 1:k + 1 + L] += ramp
        start[i] = k
    return start


def total_latency(a, ramps, start) -> int:
    """Σ_i (start_i + rounds_i - a_i): request i completes in the last round of its ramp."""
    return int((start + np.array([len(r) for r in ramps]) - a).sum())


def local_search(inst, iterations: int = 2000, seed: int = 0, deadline: float | None = None):
    """(start rounds, total latency, iterations done) of the best order found from π₀ = ascending o."""
    a = inst.arrival.astype(np.int64)
    ramps = eq3_ramps(inst.prompt, inst.output)
    return iterated_sgs(a, inst.output, ramps, int(inst.memory), iterations, seed, deadline)


def iterated_sgs(a, o, ramps, M: int, iterations: int = 2000, seed: int = 0, deadline: float | None = None):
    """The local search on any footprints ``ramps``; π₀ sorts by ``o`` (ties by position)."""
    n = len(a)
    rng = np.random.default_rng(seed)
    order = np.lexsort((np.arange(n), o))               # ascending o, ties by position (MC-SF's order)
    best_start = serial_sgs(a, ramps, M, order)
    best = total_latency(a, ramps, best_start)
    done = 0
    for done in range(1, iterations + 1):
        if deadline is not None and time.perf_counter() > deadline:
            break
        cand = order.copy()
        i, j = rng.integers(n, size=2)
        if rng.random() < 0.5:
            cand[i], cand[j] = cand[j], cand[i]
        else:
            cand = np.insert(np.delete(cand, i), j, order[i])
        start = serial_sgs(a, ramps, M, cand)
        value = total_latency(a, ramps, start)
        if value <= best:
            order, best, best_start = cand, value, start
    return best_start, best, done
