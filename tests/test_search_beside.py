"""The local search beside the certify step and the exact solve (``LatencyIP.search_beside``,
``slot_sgs.ClimbsBeside``): other climbs than the incumbent search's, on the core the step leaves idle,
stopped with the solve; its schedule is verified like any other."""
import threading
import time

import numpy as np
import pytest

from lpbench.formulations.latency_ip import LatencyIP, schedule_from_starts
from lpbench.generators import jaillet
from lpbench import cores
from lpbench.cores import both_cores
from lpbench.heuristics import slot_sgs
from lpbench.heuristics.slot_sgs import CLIMB_MOVES_PER_REQUEST, CLIMBS, ClimbsBeside, local_search
from lpbench.instance import parse_instance
from lpbench.solve import solve_instance
from lpbench.verify import verify


def draw(model="jaillet-model2", k=180, n=None):
    return parse_instance(jaillet.instance(model, 0, k, first=n))


def beside_threads() -> int:
    return sum(t.is_alive() and t.name == slot_sgs.THREAD_NAME for t in threading.enumerate())


def test_climbs_are_numbered_so_that_the_search_beside_tries_other_ones():
    """Climb c draws its moves from the RNG seeded by (seed, c): two climbs from ``first_climb`` = c are the
    better of climb c alone and climb c + 1 alone, and the climbs from ``CLIMBS`` on are not the default ones."""
    inst = draw(n=14)
    one_climb = CLIMB_MOVES_PER_REQUEST * inst.n
    c = CLIMBS
    both = local_search(inst, iterations=2 * one_climb, first_climb=c)[1]
    alone = [local_search(inst, iterations=one_climb, first_climb=x)[1] for x in (c, c + 1)]
    assert both == min(alone)
    firsts = [local_search(inst, iterations=one_climb, first_climb=x)[0] for x in range(4)]
    others = [local_search(inst, iterations=one_climb, first_climb=c + x)[0] for x in range(4)]
    assert any(not np.array_equal(f, g) for f, g in zip(firsts, others))


def test_a_set_stop_event_ends_the_search_like_a_passed_deadline():
    inst = draw(n=14)
    stop = threading.Event()
    stop.set()
    assert local_search(inst, deadline=time.perf_counter() + 60, stop_when=stop) == (None, None, 0)


def test_the_climbs_wait_while_both_cores_are_held():
    """While work on both cores runs (the exact search's pattern table), the climbs wait between kernel calls: held
    from their start, they have not even placed π₀ when stopped; released, they climb."""
    inst = draw()
    with both_cores():
        climbs = ClimbsBeside(inst, 0, time.perf_counter() + 30)
        time.sleep(0.5)
        assert not cores.FREE.is_set()
        held = climbs.result()
    assert held == (None, None, 0) and cores.FREE.is_set()
    climbs = ClimbsBeside(inst, 0, time.perf_counter() + 30)
    with both_cores():
        with both_cores():                          # nested holds count
            pass
        assert not cores.FREE.is_set()
    time.sleep(0.5)
    assert climbs.result()[2] > 0


def test_the_exact_search_holds_both_cores_while_it_tabulates_in_two_threads(monkeypatch):
    import contextlib

    from lpbench.formulations import latency_astar

    held = []

    @contextlib.contextmanager
    def watched():
        with both_cores():
            held.append(threading.active_count())
            yield

    monkeypatch.setattr(latency_astar, "both_cores", watched)
    latency_astar.astar_search(draw(n=14), deadline=time.perf_counter() + 20, plain_seconds=None)
    assert held and cores.FREE.is_set()             # held while it tabulated, released after


def test_climbs_beside_stop_when_asked_and_their_schedule_verifies():
    inst = draw()                                   # 25 requests
    climbs = ClimbsBeside(inst, 0, time.perf_counter() + 120)
    time.sleep(1.0)
    asked = time.perf_counter()
    start, value, done = climbs.result()
    assert time.perf_counter() - asked < 1.0        # stopped between kernel calls, not at its deadline
    assert done > 0 and beside_threads() == 0
    ver = verify(inst, schedule_from_starts(inst, start))
    assert ver.feasible and ver.metrics["total_latency"] == value


def test_solve_reports_the_search_beside_and_keeps_its_schedule_when_better():
    """On 25 requests (where the certify step's search, chain-bound and subset-bound run) the search beside runs
    until the end of the solve; its schedule is verified, reported, and is the objective when it beats the others.
    (The exact solve is CP-SAT's, which stops at its deadline; chosen when a HiGHS run abandoned at its deadline
    could abort the process at exit, which interrupt.join_abandoned now prevents.)"""
    rep = solve_instance(draw(), "latency-cp", "cpsat", 12, ["mc-sf"])
    beside = rep["search_beside"]
    assert beside is not None and beside["name"] == "local-search-beside" and beside["climbs"] > 0
    assert rep["best_known"] <= min(beside["objective"], rep["incumbent_search"]["objective"])
    if beside["objective"] < min(rep["incumbent_search"]["objective"], rep["ratios"]["mc-sf"]["objective"]):
        assert rep["objective"] <= beside["objective"]
    if rep["objective"] == beside["objective"] < rep["incumbent_search"]["objective"]:
        assert rep["objective_source"] == "heuristic local-search-beside"
    assert beside_threads() == 0


def test_no_search_beside_where_the_exact_portfolio_has_both_cores(monkeypatch):
    assert LatencyIP.search_beside(draw(n=18), time.perf_counter() + 10) is None    # the A* portfolio's sizes
    monkeypatch.setattr(LatencyIP, "beside_search", False)
    assert LatencyIP.search_beside(draw(), time.perf_counter() + 10) is None
    rep = solve_instance(draw(), "latency-cp", "cpsat", 6, ["mc-sf"])
    assert rep["search_beside"] is None


def test_the_search_beside_stops_when_the_certify_step_fails(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("certify step failed")

    monkeypatch.setattr(LatencyIP, "certify_bound", classmethod(broken))
    with pytest.raises(RuntimeError, match="certify step failed"):
        solve_instance(draw(), "latency-ip", "highs", 30, ["mc-sf"])
    assert beside_threads() == 0


def held_back(inst, start) -> int:
    """How many requests start later than their earliest fit beside the requests that start before them (0 for
    every schedule of the serial SGS: it places each at its earliest fit)."""
    from lpbench.heuristics.slot_sgs import eq3_ramps

    ramps = eq3_ramps(inst.prompt, inst.output)
    mem = np.zeros(int(start.max()) + 2 * int(inst.output.max()) + 4, dtype=np.int64)
    count = 0
    for j in np.lexsort((np.arange(inst.n), start)):
        k, L = int(inst.arrival[j]), len(ramps[j])
        while np.any(mem[k + 1:k + 1 + L] + ramps[j] > inst.memory):
            k += 1
        count += int(start[j] > k)
        mem[start[j] + 1:start[j] + 1 + L] += ramps[j]
    return count


def test_delay_moves_reach_a_schedule_the_sgs_cannot():
    """On the first 12 requests of jaillet-model1 draw 0 the optimum (1,135, latency-astar) holds request 7 back 6
    rounds after its earliest fit; the climbs alone end at 1,156, the SGS of the optimal order
    (benchmarks/sgs_delays.py). With the delay moves the same climbs end below, with a request held back, and the
    schedule verifies at the latency claimed. A kernel that ignored the delays fails this test."""
    inst = draw("jaillet-model1", 0, 12)
    start, plain, _ = local_search(inst, seed=0)
    held, value, _ = local_search(inst, seed=0, delay_moves=slot_sgs.DELAY_MOVES_PER_REQUEST)
    ver = verify(inst, schedule_from_starts(inst, held))
    assert plain == 1156 and value < plain and held_back(inst, start) == 0 < held_back(inst, held)
    assert ver.feasible and ver.metrics["total_latency"] == value


@pytest.mark.parametrize("seed", range(20))
def test_delay_moves_only_improve_the_same_climbs_and_verify(seed):
    """The delay moves are drawn after each climb's own moves and kept only if not worse, so with them every climb
    ends at most where it ended without: the best is never worse, and the schedule verifies at the latency claimed
    (delays push placements later: the memory profile is long enough, or the kernel would raise NoRoom)."""
    from test_certify import random_slot

    inst = random_slot(seed, n=14)
    _, plain, _ = local_search(inst, iterations=4 * CLIMB_MOVES_PER_REQUEST * inst.n, seed=seed)
    counted = []
    held, value, done = local_search(inst, iterations=4 * CLIMB_MOVES_PER_REQUEST * inst.n, seed=seed,
                                     delay_moves=slot_sgs.DELAY_MOVES_PER_REQUEST,
                                     on_climb=lambda: counted.append(1))
    ver = verify(inst, schedule_from_starts(inst, held))
    assert value <= plain and ver.feasible and ver.metrics["total_latency"] == value
    assert len(counted) == 4          # each climb counted once, whether it got its delay moves or not
    delayed, rest = divmod(done - 4 * CLIMB_MOVES_PER_REQUEST * inst.n, slot_sgs.DELAY_MOVES_PER_REQUEST * inst.n)
    assert rest == 0 and 1 <= delayed <= 4    # the order moves are the budget; the first climb ends below π₀'s SGS


def test_only_climbs_near_the_best_get_delay_moves(monkeypatch):
    """A climb gets its delay moves iff it ended within DELAY_NEAR of the best before it.
    The kernel's calls are recorded: each climb's order moves, then maybe its delay moves; the best is replayed from
    the SGS of π₀ and the climbs' ends. On a paper-size draw some climbs end farther off, so a search that made the
    delay moves after every climb, or after none, fails this test."""
    calls, real = [], slot_sgs._Ramps.climb

    def spy(self, order, start, mem, moves, deadline=None, value=None, stop_when=None, delay=None):
        out = real(self, order, start, mem, moves, deadline, value, stop_when, delay)
        calls.append((delay is not None, value, out[0]))
        return out

    monkeypatch.setattr(slot_sgs._Ramps, "climb", spy)
    inst = draw("jaillet-model2", 76)
    local_search(inst, iterations=12 * CLIMB_MOVES_PER_REQUEST * inst.n, first_climb=CLIMBS,
                 delay_moves=slot_sgs.DELAY_MOVES_PER_REQUEST)
    best, asked, expected = calls[0][1], [], []
    for i, (delays, _, end) in enumerate(calls):
        if delays:
            continue
        expected.append(end <= best * (1 + slot_sgs.DELAY_NEAR))
        asked.append(i + 1 < len(calls) and calls[i + 1][0])
        best = min(best, calls[i + 1][2] if asked[-1] else end)
    assert len(asked) == 12 and asked == expected and 0 < sum(asked) < 12


def test_the_climbs_beside_make_delay_moves(monkeypatch):
    """ClimbsBeside asks local_search for the delay moves (the incumbent search does not: it stays as it was)."""
    asked = {}
    real = slot_sgs.local_search

    def spy(inst, **kwargs):
        asked.update(kwargs)
        return real(inst, **kwargs)

    monkeypatch.setattr(slot_sgs, "local_search", spy)
    climbs = ClimbsBeside(draw(n=14), 0, time.perf_counter() + 0.5)
    climbs.result()
    assert asked["delay_moves"] == slot_sgs.DELAY_MOVES_PER_REQUEST and asked["first_climb"] == CLIMBS
