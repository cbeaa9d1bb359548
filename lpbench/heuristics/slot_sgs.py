"""Incumbents for the seed-004 slot model: a serial schedule-generation scheme (SGS) and an iterated
local search over its priority order. Not an online policy: it sees the whole instance (hindsight).

**Serial SGS.** Requests are placed one at a time in a priority order π, each at the earliest start
k >= a_i at which its ramp s_i + d (rounds k + d, d = 1..o_i) fits under M on top of the requests
already placed. Every placement keeps eq. (3) at every t, so the result is a feasible schedule of
``latency-ip``; unlike MC-SF it may place a request *before* earlier-placed ones (backfilling).

**Local search.** ``CLIMBS`` hill climbs of 200 moves per request each, every one from π₀ (ascending
o_i, MC-SF's order): a move swaps two positions or moves one request to another position
(:func:`move`), and is kept if the total latency is not worse. The moves are drawn from an RNG seeded by
(seed, climb) and the number of iterations is fixed, so the result is deterministic; an optional deadline
may cut the search short (then the result depends on the machine's speed, and the caller says so), and
if it passes before the first SGS is complete the search returns no schedule. It is checked between
kernel calls, so one long placement can overrun it: on 10,000 requests of the Azure trace under load
(``bench_slot_load.py``'s instances at ρ = 0.8 and 1.0; scratch script) a 3 s deadline returned after
4.0-4.6 s, where the numpy search took 63 s for its first SGS at ρ = 0.8.
Every schedule it returns is verified by the caller before use (``solve``).

**Window search.** At thousands of requests a move of the full search re-places up to all of them, so above
100 requests (``LatencyIP.window_search_above``) the incumbent search instead improves the best verified
policy schedule window by window (:func:`window_search`): ``WINDOW`` requests consecutive in start order are
re-placed and climbed on the fixed ramps of all the others, and kept only if their latency sum drops.

**Beside.** :class:`ClimbsBeside` runs more climbs, numbered after the default ones, in a thread beside the
certify step and the exact solve (``LatencyIP.search_beside``); the kernel releases the GIL for it. Each of these
climbs that ends near the best (``DELAY_NEAR``) goes on with moves that hold one request back a few rounds after its
earliest fit (delays, ``DELAY_MOVES_PER_REQUEST``): schedules the serial SGS alone cannot produce.

**Speed.** The placements and the climb run in one numba kernel (:func:`_climb`): a move works on a copy
of the memory profile from the lowest arrival among the requests it re-places (those from the first
position it changes on), takes out their ramps, re-places them in the new order, and keeps the copy only
if the move is kept. 0.04-0.09 ms per move at 33-57 requests, against 1.8-3.2 ms in numpy before
(``python benchmarks/bench_local_search.py``), so at paper size the 10 s runs' quarter of the limit makes
about 40,000 moves where it made about 1,000, and the 60 s runs' all 16 climbs; what that bought is in
``docs/seed004-certification.md``. On 8-16 requests the 16 climbs take 0.1-0.6 s
(``python benchmarks/bench_local_search.py --requests 8,12,16 --models jaillet-model1 --draws 0``).
"""
from __future__ import annotations

import threading
import time

import numpy as np

from .. import cores
from ..formulations.compiled import compiled, fits
from ..interrupt import expired

#: moves per hill climb (per request), and climbs (each from π₀, with its own moves), cut by the deadline. At
#: paper size (about 10,000 moves per climb): 4 x 10,000 found schedules as good as 1 x 40,000 and 8 x 5,000 on
#: six draws, and 16 x 10,000 0-1.2 % better than 4 (median 0.5 %, eight draws) in 4x the time, which the
#: 60 s runs have (docs/seed004-certification.md)
CLIMB_MOVES_PER_REQUEST, CLIMBS = 200, 16
#: requests per window of :func:`window_search`, and its moves per window (per request). On 10,000 Azure-length
#: requests at ρ = 0.8 (total latency / Σo; scratch script): in 15 s from mc-sf-backfill's 1.2008, 40 x 40,
#: 80 x 20, 160 x 10 and 320 x 5 end at 1.1916-1.1968, alike; in 180 s from depth 4's 1.1835, 80 x 20 reached
#: 1.1664, 160 x 10 1.1608
WINDOW, WINDOW_MOVES_PER_REQUEST = 160, 10
#: passes in a row without a kept window after which the window search stops (each pass draws new moves)
WINDOW_PATIENCE = 3
#: the climbs beside the certify step (:class:`ClimbsBeside`) end each climb with this many moves per request that
#: hold one request back: a *delay* d_r places r at its earliest fit at or after (its earliest fit + d_r), d_r drawn
#: from 0..``MOST_DELAY`` (geometric, a quarter of them 0). The serial SGS alone cannot leave a request later than its
#: earliest fit, and optima sometimes do (``benchmarks/sgs_delays.py``: 4 of 6 draws of 12 requests). In 40 s of
#: climbs with and without them on 15 paper-size draws, one core each, the best was lower with them on 5 (by 3-14,
#: at most 0.33 %), higher on 2 (by 2 and 3) and equal on 8 (docs/seed004-certification.md, "Schedules the serial
#: SGS cannot reach: delays")
DELAY_MOVES_PER_REQUEST, MOST_DELAY, DELAY_MOVE = 50, 16, 2
#: ... but only climbs that end within this fraction above the best so far get them. Over 32 climbs beside on each of
#: 16 paper-size draws (``python benchmarks/beside_delays.py``), the delay moves took 17 % of the time, lowered 147 of
#: 512 climbs, by at most 0.78 %, and made a new best 4 times, each from a climb within 0.42 % of the best; climbs
#: within 1 % took 61 % of the delay moves' time
DELAY_NEAR = 0.01
#: moves "without limit" for a search that ends at its deadline (:class:`ClimbsBeside`), and its thread's name
UNLIMITED, THREAD_NAME = 1 << 62, "lpbench-climbs-beside"
BATCH_SECONDS = 0.05    # moves or placements per kernel call: about this long, so that a deadline is kept within it
NO_MOVES = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def eq3_ramps(s: np.ndarray, o: np.ndarray) -> list[np.ndarray]:
    """Footprint of each request in the rounds after its start under eq. (3): s_i + 1, ..., s_i + o_i."""
    return [int(si) + np.arange(1, int(oi) + 1, dtype=np.int64) for si, oi in zip(s, o)]


@compiled
def move(order, i, j, swap, out):
    """``out`` = ``order`` with positions i and j swapped (``swap``), else the request at i moved to position j."""
    out[:] = order
    if swap:
        out[i], out[j] = order[j], order[i]
        return
    if i < j:
        out[i:j] = order[i + 1:j + 1]
    elif j < i:
        out[j + 1:i + 1] = order[j:i]
    out[j] = order[i]


@compiled(nogil=True)
def _fit(work, flat, r0, L, M, k, last):
    """The least start >= k at which the ramp ``flat[r0:r0 + L]`` (rounds start + 1 ...) fits under M on top of
    ``work``; -1 if none does up to ``last``."""
    while k <= last:
        fits = True
        for d in range(L):
            if work[k + 1 + d] + flat[r0 + d] > M:
                fits = False
                break
        if fits:
            return k
        k += 1
    return -1


@compiled(nogil=True)
def _climb(a, flat, off, dur, M, order, delay, start, mem, first, stop, move_i, move_j, kind):
    """Place order[first:stop] (serial SGS on top of ``mem``, which holds order[:first]), then make the moves
    (move_i, move_j, kind; only with stop = n) one by one, each kept if the total latency is not worse: kind 0
    moves the request at position move_i to position move_j, kind 1 swaps the two, kind 2 sets the delay of the
    request at position move_i to move_j. A request r is placed at its earliest fit k >= a_r, then, if
    delay[r] > 0, at the earliest fit at or after k + delay[r] (:data:`DELAY_MOVES_PER_REQUEST`).
    ``flat[off[r]:off[r] + dur[r]]`` is request r's ramp. ``order``, ``delay``, ``start``, ``mem`` are updated in
    place. Returns (False, 0) if a placement ran past the end of ``mem`` (a ramp above M), else (True, the total
    latency once all are placed)."""
    n, last = len(order), len(mem) - dur.max() - 1
    cand, trial, work, dcand = order.copy(), start.copy(), mem.copy(), delay.copy()
    base = (dur - a).sum()
    value = -1
    for it in range(-1, len(move_i)):
        lo = 0
        if it >= 0:                                   # the next move: take out its requests' ramps
            if kind[it] == DELAY_MOVE:
                cand[:] = order
                first = move_i[it]
                dcand[order[first]] = move_j[it]
            else:
                move(order, move_i[it], move_j[it], kind[it] == 1, cand)
                first = min(move_i[it], move_j[it])
            lo = len(mem)                             # every read and write below is at rounds > a_r >= lo
            for p in range(first, n):
                lo = min(lo, a[order[p]])
            work[lo:] = mem[lo:]
            trial[:] = start
            for p in range(first, n):
                r = order[p]
                for d in range(dur[r]):
                    work[start[r] + 1 + d] -= flat[off[r] + d]
        for p in range(first, stop if it < 0 else n):  # serial SGS of cand[first:]
            r, L, r0 = cand[p], dur[cand[p]], off[cand[p]]
            k = _fit(work, flat, r0, L, M, a[r], last)
            if k >= 0 and dcand[r] > 0:               # held back: the next fit from k + its delay
                k = _fit(work, flat, r0, L, M, k + dcand[r], last)
            if k < 0:
                return False, 0
            for d in range(L):
                work[k + 1 + d] += flat[r0 + d]
            trial[r] = k
        total = base + trial.sum()
        if it < 0 or total <= value:                  # kept (the first placement always)
            order[first:] = cand[first:]
            delay[:] = dcand
            start[:] = trial
            mem[lo:] = work[lo:]
            value = total
        else:
            dcand[:] = delay
    return True, value


#: compiling :func:`_climb` takes this long when numba's disk cache does not hold it (the first run after an
#: install or an edit: 8.1 s on the 2-core machine, 0.7 s from the cache, as ``lpbench warmup`` reports them
#: with the caches deleted and again)
COLD_COMPILE_SECONDS = 8.0
#: what the search reports when :func:`kernel_ready` says no
NOT_COMPILED = (f"its compiled kernel is not built yet (about {COLD_COMPILE_SECONDS:.0f} s once after an install; "
                "run `lpbench warmup` first)")


def kernel_ready(seconds_left: float) -> bool:
    """Whether the search can start with ``seconds_left`` to its deadline without overrunning it by compiling
    (:func:`~lpbench.formulations.compiled.fits`)."""
    return fits(seconds_left, COLD_COMPILE_SECONDS, _climb)


class _Ramps:
    """The ramps of an instance in the kernel's layout, and a memory profile long enough for any placement."""

    def __init__(self, a: np.ndarray, ramps: list[np.ndarray], M: int, most_delay: int = 0):
        self.a, self.M = np.asarray(a, dtype=np.int64), int(M)
        self.dur = np.array([len(r) for r in ramps], dtype=np.int64)
        self.off = np.concatenate([[0], np.cumsum(self.dur)[:-1]]).astype(np.int64)
        self.flat = np.concatenate(ramps).astype(np.int64) if ramps else np.zeros(0, dtype=np.int64)
        # latency-ip's serial horizon (a): every placement fits by then, so the scan never passes it; with delays of
        # at most ``most_delay``, each placement ends at most (its ramp + that delay) after the last end before it
        self.size = int(self.a.max() + self.dur.sum()) + len(self.a) * int(most_delay) + 2 * int(self.dur.max()) + 4

    def run(self, order, start, mem, first: int, stop: int, moves=NO_MOVES, delay=None) -> int:
        """:func:`_climb` of ``moves`` (move_i, move_j, swap or kind) with the requests' ``delay`` (default none)."""
        delay = np.zeros(len(order), dtype=np.int64) if delay is None else delay
        move_i, move_j, kind = moves
        fits, value = _climb(self.a, self.flat, self.off, self.dur, self.M, order, delay, start, mem, first, stop,
                             move_i, move_j, kind.astype(np.int64, copy=False))
        if not fits:
            raise NoRoom("no start fits a ramp before the end of the memory profile (on a full profile: the "
                         "ramp exceeds the memory M)")
        return int(value)

    def place(self, order, start, mem, deadline: float | None = None, stop_when=None) -> int | None:
        """Serial SGS of ``order`` on top of ``mem`` (zeros, or the fixed ramps of other requests), filling
        ``start`` and ``mem`` in place, in kernel calls of about ``BATCH_SECONDS`` with the deadline checked
        between them (on 10,000 requests under load one SGS takes seconds): the total latency, or None if the
        deadline passed first (or ``stop_when``, a threading.Event, was set). :class:`NoRoom` if a ramp runs past
        the end of ``mem``."""
        n, done, batch, value = len(order), 0, 64, 0
        while done < n:
            if expired(deadline, stop_when):
                return None
            t = time.perf_counter()
            value = self.run(order, start, mem, done, min(n, done + batch))   # the total once all are placed
            done, batch = done + batch, next_batch(batch, time.perf_counter() - t)
        return value

    def climb(self, order, start, mem, moves, deadline: float | None = None, value: int | None = None,
              stop_when=None, delay=None):
        """The moves from the full placement (``start``, ``mem``) of ``order`` (with the requests' ``delay``,
        updated in place; default none), in kernel calls of about ``BATCH_SECONDS`` until the deadline (or
        ``stop_when`` is set): (total latency, moves made); ``value`` is the total before them.
        :class:`NoRoom` if a re-placed ramp runs past the end of ``mem`` (the moves kept before it stand: the
        kernel commits only kept moves)."""
        at, batch, size = 0, 16, len(moves[0])
        while at < size and not expired(deadline, stop_when):
            t = time.perf_counter()
            value = self.run(order, start, mem, len(order), len(order), tuple(m[at:at + batch] for m in moves),
                             delay)
            at, batch = min(at + batch, size), next_batch(batch, time.perf_counter() - t)
        return value, at

    def sgs(self, order: np.ndarray, deadline: float | None = None,
            stop_when=None) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(starts, memory profile, total latency) of the serial SGS in ``order`` (:meth:`place`); None if
        ``deadline`` passed first (or ``stop_when`` was set)."""
        order = np.array(order, dtype=np.int64)
        start, mem = np.zeros(len(order), dtype=np.int64), np.zeros(self.size, dtype=np.int64)
        value = self.place(order, start, mem, deadline, stop_when)
        return None if value is None else (start, mem, value)


class NoRoom(ValueError):
    """A placement ran past the end of the memory profile it was given."""


def next_batch(batch: int, seconds: float) -> int:
    """Placements or moves for the next kernel call: towards ``BATCH_SECONDS``, at most doubling (later
    placements scan further, so one call must not grow past what the last one measured)."""
    return max(1, int(batch * min(2.0, BATCH_SECONDS / max(seconds, 1e-6))))


def serial_sgs(a: np.ndarray, ramps: list[np.ndarray], M: int, order: np.ndarray) -> np.ndarray:
    """Start round of each request when placed in ``order`` at its earliest memory-feasible start.

    ``ramps[i][d - 1]`` is request i's memory in round k + d after its start k; it runs len(ramps[i]) rounds
    (eq. (3): :func:`eq3_ramps`; other readings of the model in ``benchmarks/seed004_readings.py``)."""
    return _Ramps(a, ramps, M).sgs(order)[0]


def total_latency(a, ramps, start) -> int:
    """Σ_i (start_i + rounds_i - a_i): request i completes in the last round of its ramp."""
    return int((start + np.array([len(r) for r in ramps]) - a).sum())


def planned_moves(n: int) -> int:
    """Moves of the full search on n requests: ``CLIMBS`` climbs of ``CLIMB_MOVES_PER_REQUEST``·n."""
    return CLIMBS * CLIMB_MOVES_PER_REQUEST * n


def memory_of(layout: _Ramps, start: np.ndarray, size: int) -> np.ndarray:
    """The memory profile of ``start`` in the kernel's layout (request r holds ramp d in round start_r + 1 + d)."""
    rounds = np.repeat(start + 1 - layout.off, layout.dur) + np.arange(len(layout.flat))
    return np.bincount(rounds, weights=layout.flat, minlength=size).astype(np.int64)


def window_search(a, ramps, M: int, start: np.ndarray, seed: int = 0, passes: int | None = None,
                  deadline: float | None = None, width: int = WINDOW):
    """Improve a feasible schedule ``start`` window by window; (start rounds, total latency, windows tried).

    The full local search re-places every request after the first position a move changes, which at
    thousands of requests is thousands of placements per move. Here a window is ``width`` requests
    consecutive in start order; every other request stays where it is and its ramps are a fixed background
    under M. The window's requests are placed by the serial SGS in their start order on that background and
    climbed (``WINDOW_MOVES_PER_REQUEST``·width moves of :func:`move`, as in :func:`iterated_sgs`); the result
    replaces the window's starts only if the window's latency sum is lower. Every placement fits under M on
    top of the background, so each kept window leaves a feasible schedule whose total latency is lower by
    what the window gained (the background's latencies do not change). Windows start at a random offset
    and overlap by half; one pass covers all requests. It stops after ``passes`` passes, or (``passes=None``)
    after ``WINDOW_PATIENCE`` passes in a row that keep no window; a ``deadline`` may cut it short. It is
    checked between kernel calls of about ``BATCH_SECONDS`` (:meth:`_Ramps.place`, :meth:`_Ramps.climb`):
    on 10,000 requests at ρ = 1.0 one window's climb in a single call took about 50 s
    (``bench_slot_load.py``, before 262d0fb).
    Deterministic given ``seed`` unless the deadline cuts it."""
    layout = _Ramps(a, ramps, M)
    a, dur, off, flat = layout.a, layout.dur, layout.off, layout.flat
    n, start = len(a), np.array(start, dtype=np.int64)
    if n < 2:
        return start, total_latency(a, ramps, start), 0
    width = min(width, n)
    margin = width * int(dur.max()) + 2 * int(dur.max()) + 4        # room for a window's serial horizon
    mem = memory_of(layout, start, max(layout.size, int((start + dur).max()) + 1) + margin)
    tried, done, idle = 0, 0, 0
    while done < passes if passes is not None else idle < WINDOW_PATIENCE:
        rng, kept = np.random.default_rng([seed, done]), 0
        by_start = np.lexsort((np.arange(n), start))
        for b in range(int(rng.integers(width)) - width // 2, n - width // 2, max(1, width // 2)):
            if expired(deadline):
                return start, total_latency(a, ramps, start), tried
            win = by_start[max(b, 0):b + width]
            k = len(win)
            lo = int(a[win].min())
            hi = int((start[win] + dur[win]).max()) + 1 + int(dur[win].sum()) + 2 * int(dur[win].max()) + 4
            hi = min(hi, len(mem))
            part = _Ramps(a[win] - lo, [flat[off[r]:off[r] + dur[r]] for r in win], M)
            work = mem[lo:hi] - memory_of(part, start[win] - lo, hi - lo)   # the background
            size = WINDOW_MOVES_PER_REQUEST * k
            moves = (rng.integers(k, size=size), rng.integers(k, size=size), rng.random(size) < 0.5)
            order, trial = np.arange(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
            tried += 1
            try:                                      # work ends holding the window's placement
                if part.place(order, trial, work, deadline) is None:
                    continue                          # the deadline passed: the next window returns
            except NoRoom:                            # past the end of the slice: leave the window as it is
                continue
            try:
                part.climb(order, trial, work, moves, deadline)
            except NoRoom:
                pass                                  # the moves kept before it stand
            if (trial + part.dur - part.a).sum() < (start[win] - lo + part.dur - part.a).sum():
                start[win] = trial + lo
                mem[lo:hi] = work
                kept += 1
        done, idle = done + 1, 0 if kept else idle + 1
    return start, total_latency(a, ramps, start), tried


def local_search(inst, iterations: int | None = None, seed: int = 0, deadline: float | None = None,
                 first_climb: int = 0, stop_when=None, delay_moves: int = 0, on_climb=None):
    """(start rounds, total latency, moves made) of the best schedule found from π₀ = ascending o;
    ``iterations``: moves of the order in all (default :func:`planned_moves`); ``first_climb``, ``stop_when``,
    ``delay_moves``, ``on_climb``: as in :func:`iterated_sgs`."""
    a = inst.arrival.astype(np.int64)
    ramps = eq3_ramps(inst.prompt, inst.output)
    return iterated_sgs(a, inst.output, ramps, int(inst.memory), iterations, seed, deadline, first_climb, stop_when,
                        delay_moves, on_climb)


class _Gate:
    """The climbs' ``stop_when``: set by :meth:`ClimbsBeside.result`; its check waits while both cores are held."""

    def __init__(self):
        self._stopped = threading.Event()

    def set(self) -> None:
        self._stopped.set()

    def is_set(self) -> bool:
        while not cores.FREE.wait(0.05) and not self._stopped.is_set():
            pass
        return self._stopped.is_set()


class ClimbsBeside:
    """More climbs of :func:`local_search` (from climb ``CLIMBS`` on: others than its default ones), those near the
    best (``DELAY_NEAR``) ended by ``DELAY_MOVES_PER_REQUEST`` delay moves, in a thread of their own until
    ``deadline`` or :meth:`result`. The kernel releases the GIL, so on two cores they run beside the caller's own
    work (``LatencyIP.search_beside``); they wait, between kernel calls, while work on both cores runs
    (:func:`lpbench.cores.both_cores`): where the exact search built its pattern table in two threads beside them,
    subset-bound lost 0.9-1.0 % of its bound on two of 13 draws. How many climbs are made depends on the machine's
    speed and load."""

    def __init__(self, inst, seed: int, deadline: float):
        self._stop = _Gate()
        self._out, self._error, self.climbs = (None, None, 0), None, 0
        self._thread = threading.Thread(target=self._run, args=(inst, seed, deadline), name=THREAD_NAME, daemon=True)
        self._thread.start()

    def _run(self, inst, seed: int, deadline: float) -> None:
        try:
            self._out = local_search(inst, iterations=UNLIMITED, seed=seed, deadline=deadline, first_climb=CLIMBS,
                                     stop_when=self._stop, delay_moves=DELAY_MOVES_PER_REQUEST,
                                     on_climb=self._climbed)
        except BaseException as error:      # raised again in the caller's thread by result()
            self._error = error

    def _climbed(self) -> None:
        self.climbs += 1

    def result(self) -> tuple[np.ndarray | None, int | None, int]:
        """Stop the climbs and return (start rounds, total latency, moves made) of the best, as
        :func:`local_search` does; ``climbs`` is then the number of climbs made (the last may be cut short)."""
        self._stop.set()
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out


def neighbour(order: np.ndarray, rng) -> tuple[np.ndarray, int]:
    """A random neighbour of ``order`` (:func:`move`, positions i, j drawn, a swap with probability 1/2) and
    the first position it changes."""
    i, j = (int(x) for x in rng.integers(len(order), size=2))
    cand = np.empty_like(order)
    move(order, i, j, bool(rng.random() < 0.5), cand)
    return cand, min(i, j)


def iterated_sgs(a, o, ramps, M: int, iterations: int | None = None, seed: int = 0,
                 deadline: float | None = None, first_climb: int = 0, stop_when=None, delay_moves: int = 0,
                 on_climb=None):
    """The local search on any footprints ``ramps``; π₀ sorts by ``o`` (ties by position). ``iterations``
    moves of the order in all (default :func:`planned_moves`), in climbs of ``CLIMB_MOVES_PER_REQUEST``·n, the c-th
    (c = ``first_climb``, ``first_climb`` + 1, ...) with moves drawn from the RNG seeded by (seed, c), so a search
    from ``first_climb`` = ``CLIMBS`` tries other climbs than the default one. ``delay_moves``: after each climb,
    that many moves per request that set one request's delay (0 to ``MOST_DELAY`` rounds, drawn from the same RNG
    after the climb's own moves, so the climbs are the same with and without them), if the climb ended within
    ``DELAY_NEAR`` of the best so far (the delay moves gained at most 0.78 % where measured). ``stop_when`` (a
    threading.Event): also stop, between kernel calls, once it is set. ``on_climb``: called after each climb (the
    last may be cut short). Returns (starts, total latency, moves made, the delay moves included); (None, None, 0)
    if the deadline passed (or ``stop_when`` was set) before the SGS of π₀ was complete."""
    n = len(a)
    iterations = planned_moves(n) if iterations is None else iterations
    layout = _Ramps(a, ramps, M, MOST_DELAY if delay_moves else 0)
    pi0 = np.lexsort((np.arange(n), o)).astype(np.int64)   # ascending o, ties by position (MC-SF's order)
    first = layout.sgs(pi0, deadline, stop_when)
    if first is None:
        return None, None, 0
    best_start, _, best = first
    done, ordered, climb = 0, 0, first_climb
    while ordered < iterations and not expired(deadline, stop_when):
        rng = np.random.default_rng([seed, climb])
        size = min(CLIMB_MOVES_PER_REQUEST * n, iterations - ordered)
        moves = (rng.integers(n, size=size), rng.integers(n, size=size), rng.random(size) < 0.5)
        order, start, mem = pi0.copy(), first[0].copy(), first[1].copy()
        value, made = layout.climb(order, start, mem, moves, deadline, first[2], stop_when)
        done, ordered = done + made, ordered + made
        if delay_moves and made == size and value <= best * (1 + DELAY_NEAR):
            delay, size = np.zeros(n, dtype=np.int64), delay_moves * n
            held = (rng.integers(n, size=size), np.minimum(rng.geometric(0.25, size=size) - 1, MOST_DELAY),
                    np.full(size, DELAY_MOVE))
            value, made = layout.climb(order, start, mem, held, deadline, value, stop_when, delay)
            done += made
        if value < best:
            best, best_start = value, start.copy()
        if on_climb is not None:
            on_climb()
        climb += 1
    return best_start, best, done
