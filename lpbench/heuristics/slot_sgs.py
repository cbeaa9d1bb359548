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

**Speed** (same results, iteration for iteration): a placement scans candidate starts in vectorised
windows that double after each miss, and a move re-places only from the first position it changes,
from the memory profile kept after each placement of the current order (after every few, when the
profiles of a long horizon would exceed ``SNAPSHOT_BYTES``). 2.0-2.3x faster than at
178800d on jaillet draws 0, 20, 40 of both models (33-57 requests: 1.8-3.2 ms per iteration from
3.7-6.8 ms; ``python benchmarks/bench_local_search.py``); at the 10 s limit the search, cut to a quarter
of it, gets about twice the iterations.
"""
from __future__ import annotations

import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


CHUNK = 32  # candidate starts examined in the first vectorised step of a placement (doubled after each miss)
SEARCH_ITERATIONS = 2000


def eq3_ramps(s: np.ndarray, o: np.ndarray) -> list[np.ndarray]:
    """Footprint of each request in the rounds after its start under eq. (3): s_i + 1, ..., s_i + o_i."""
    return [int(si) + np.arange(1, int(oi) + 1, dtype=np.int64) for si, oi in zip(s, o)]


#: the memory profiles the local search keeps (one per ``stride`` positions of the order) take at most this
#: many bytes; a long horizon keeps fewer, and a move re-places from the last one before it changes
SNAPSHOT_BYTES = 64 << 20


class _Placer:
    """Serial SGS on fixed footprints, able to resume from a position of an order: it keeps the memory
    profile after every ``stride``-th placement of the last order it placed in full (``snapshots[q]``: after
    order[:q·stride]), ``stride`` as small as ``SNAPSHOT_BYTES`` allows."""

    def __init__(self, a: np.ndarray, ramps: list[np.ndarray], M: int):
        self.a, self.ramps, self.M = a, ramps, M
        self.dur = np.array([len(r) for r in ramps], dtype=np.int64)
        T = int(a.max() + self.dur.sum()) + 2    # latency-ip's serial horizon (a): every placement fits by then
        self.size = T + int(self.dur.max()) + CHUNK + 2
        self.stride = max(1, -(-(len(a) + 1) * self.size * 8 // SNAPSHOT_BYTES))
        self.snapshots: np.ndarray | None = None

    def place(self, i: int, mem: np.ndarray) -> int:
        """Earliest start k >= a_i with mem + ramp_i <= M over rounds k+1..k+L; adds the ramp to ``mem``."""
        ramp, L, k, chunk = self.ramps[i], int(self.dur[i]), int(self.a[i]), CHUNK
        while True:  # peak of mem + ramp over rounds k+1..k+L, for `chunk` candidate starts at a time
            windows = sliding_window_view(mem[k + 1:k + chunk + L], L)
            fits = np.flatnonzero((windows + ramp).max(axis=1) <= self.M)
            if len(fits):
                k += int(fits[0])
                break
            k += len(windows)
            chunk *= 2            # a miss: the first fit is likely far (memory is full early), look further
        mem[k + 1:k + 1 + L] += ramp
        return k

    def run(self, order: np.ndarray, start: np.ndarray | None = None, first: int = 0):
        """(starts, snapshots) of the SGS in ``order``; with ``start`` (the starts of the last full order) and
        ``first``, order[:first] must equal that order's prefix, whose placements are reused up to the last
        snapshot at or before ``first``."""
        n, stride = len(order), self.stride
        snaps = np.empty((n // stride + 1, self.size), dtype=np.int64)
        q = first // stride
        if q == 0:
            snaps[0] = 0
            start = np.zeros(n, dtype=np.int64)
        else:
            snaps[:q + 1] = self.snapshots[:q + 1]
            start = start.copy()
        mem = snaps[q].copy()
        for p in range(q * stride, n):
            start[order[p]] = self.place(order[p], mem)
            if (p + 1) % stride == 0:
                snaps[(p + 1) // stride] = mem
        return start, snaps


def serial_sgs(a: np.ndarray, ramps: list[np.ndarray], M: int, order: np.ndarray) -> np.ndarray:
    """Start round of each request when placed in ``order`` at its earliest memory-feasible start.

    ``ramps[i][d - 1]`` is request i's memory in round k + d after its start k; it runs len(ramps[i]) rounds
    (eq. (3): :func:`eq3_ramps`; other readings of the model in ``benchmarks/seed004_readings.py``)."""
    placer = _Placer(a, ramps, M)
    mem = np.zeros(placer.size, dtype=np.int64)
    start = np.zeros(len(a), dtype=np.int64)
    for i in order:
        start[i] = placer.place(i, mem)
    return start


def total_latency(a, ramps, start) -> int:
    """Σ_i (start_i + rounds_i - a_i): request i completes in the last round of its ramp."""
    return int((start + np.array([len(r) for r in ramps]) - a).sum())


def local_search(inst, iterations: int = 2000, seed: int = 0, deadline: float | None = None):
    """(start rounds, total latency, iterations done) of the best order found from π₀ = ascending o."""
    a = inst.arrival.astype(np.int64)
    ramps = eq3_ramps(inst.prompt, inst.output)
    return iterated_sgs(a, inst.output, ramps, int(inst.memory), iterations, seed, deadline)


def neighbour(order: np.ndarray, rng) -> tuple[np.ndarray, int]:
    """A random neighbour of ``order`` and the first position it changes: two positions i, j drawn, then
    (with probability 1/2) a swap of them, else the request at i moved to position j."""
    i, j = rng.integers(len(order), size=2)
    if rng.random() < 0.5:
        cand = order.copy()
        cand[i], cand[j] = cand[j], cand[i]
    else:
        cand = np.insert(np.delete(order, i), j, order[i])
    return cand, int(min(i, j))


def iterated_sgs(a, o, ramps, M: int, iterations: int = 2000, seed: int = 0, deadline: float | None = None):
    """The local search on any footprints ``ramps``; π₀ sorts by ``o`` (ties by position)."""
    n = len(a)
    rng = np.random.default_rng(seed)
    placer = _Placer(a, ramps, M)
    order = np.lexsort((np.arange(n), o))               # ascending o, ties by position (MC-SF's order)
    best_start, placer.snapshots = placer.run(order)
    best = total_latency(a, ramps, best_start)
    done = 0
    for done in range(1, iterations + 1):
        if deadline is not None and time.perf_counter() > deadline:
            break
        cand, first = neighbour(order, rng)
        # positions before ``first`` are unchanged: their placements (and the profile after them) are reused
        start, snaps = placer.run(cand, best_start, first)
        value = total_latency(a, ramps, start)
        if value <= best:
            order, best, best_start, placer.snapshots = cand, value, start, snaps
    return best_start, best, done
