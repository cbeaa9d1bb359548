"""latency-astar (issue 12): the A* search against brute force, its early-stop bound and its lower-bound
parts against direct computations, and the pipeline on a Jaillet prefix."""
import itertools
import time

import numpy as np
import pytest

from lpbench.formulations.latency_astar import _Bounds, astar_search
from lpbench.formulations.latency_ip import LatencyIP, schedule_from_starts
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.solve import solve_instance
from lpbench.verify import verify
from test_latency import brute_force, slot_instance


def random_instances(count=60):
    """Small instances with arrivals, tight and loose memory (brute force stays fast)."""
    for seed in range(count):
        rng = np.random.default_rng(1000 + seed)
        n = int(rng.integers(3, 6))
        yield seed, slot_instance(1000 + seed, n=n, max_o=int(rng.integers(2, 6)), max_s=3, max_a=int(rng.integers(0, 4)))


def total_latency(inst, starts):
    return int((starts + inst.output - inst.arrival).sum())


@pytest.fixture(scope="module")
def solved():
    return [(seed, inst, brute_force(inst)) for seed, inst in random_instances()]


def test_optimum_equals_brute_force(solved):
    for seed, inst, opt in solved:
        found = astar_search(inst)
        assert found.status == "optimal" and found.objective == opt == found.bound, seed
        ver = verify(inst, schedule_from_starts(inst, found.starts))   # the schedule behind it is real
        assert ver.feasible and ver.metrics["total_latency"] == opt, seed


def test_incumbent_proven_or_beaten(solved):
    for seed, inst, opt in solved[:20]:
        found = astar_search(inst)
        same = astar_search(inst, upper=opt, upper_starts=found.starts)       # nothing better exists
        assert same.status == "optimal" and same.objective == opt and same.bound == opt
        worse = astar_search(inst, upper=opt + 3, upper_starts=found.starts)  # a better one is found
        assert worse.objective == opt and total_latency(inst, worse.starts) == opt


def test_early_stop_bound_is_certified(solved):
    """Stopped after a few states, the least open f is still <= OPT (and the root bound is too)."""
    stopped = 0
    for seed, inst, opt in solved:
        for cap in (1, 5, 20):
            found = astar_search(inst, max_states=cap)
            assert found.bound <= opt, (seed, cap)
            stopped += found.status == "feasible"
        a, s, o = (inst.arrival.tolist(), inst.prompt.tolist(), inst.output.tolist())
        assert _Bounds(a, s, o, inst.memory).h((1 << inst.n) - 1, (), int(min(a))) <= opt, seed
    assert stopped > 50            # the early stop was exercised


def test_deadline_returns_bound_and_incumbent():
    inst = jaillet_prefix(1, 10)
    start = np.arange(inst.n) * int(inst.output.max())                     # serial: always feasible
    found = astar_search(inst, upper=total_latency(inst, start), upper_starts=start,
                         deadline=time.perf_counter() + 0.3)
    assert found.status == "time_limit" and found.bound <= 549 <= found.objective   # OPT = 549 (proven below)
    assert list(found.starts) == list(start)


def random_bounds(rng, n, memory, max_s):
    """The bound tables of a random all-at-zero instance: s ~ U{1..max_s}, o ~ U{1..M − s}."""
    M = int(rng.integers(*memory))
    s = rng.integers(1, max_s + 1, n).tolist()
    o = [int(rng.integers(1, M - si + 1)) for si in s]
    return _Bounds([0] * n, s, o, M), s, o, M


def test_chain_table_against_permutations():
    rng = np.random.default_rng(3)
    for _ in range(10):
        b, _, _, _ = random_bounds(rng, 6, (8, 20), 3)
        n = 6
        for S in range(1, 1 << n):
            members = [j for j in range(n) if S >> j & 1]
            for j in members:
                best = min(sum((len(members) - 1 - pos) * b.w[p[pos]][p[pos + 1]] for pos in range(len(p) - 1))
                           for p in ([j, *rest] for rest in itertools.permutations([k for k in members if k != j])))
                assert b.G[S, j] == best


def test_earliest_start_beside_running_requests():
    """e_j against placing j one offset at a time and counting memory round by round."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = 5
        b, s, o, M = random_bounds(rng, n, (10, 30), 4)
        act, load = [], np.zeros(3 * M, dtype=int)
        for i in rng.permutation(n)[:int(rng.integers(0, 3))]:
            if o[i] == 1:
                continue                                   # a running request has age 1..o − 1
            age = int(rng.integers(1, o[i]))
            prof = np.zeros(3 * M, dtype=int)
            prof[1:o[i] - age + 1] = s[i] + age + np.arange(1, o[i] - age + 1)
            if np.all(load + prof <= M):
                act.append((int(i), age))
                load += prof
        _, e, *_ = b.running(tuple(sorted(act)))
        for j in range(n):
            delta = 0
            while True:
                prof = np.zeros(3 * M, dtype=int)
                prof[delta + 1:delta + o[j] + 1] = s[j] + np.arange(1, o[j] + 1)
                if np.all(load + prof <= M):
                    break
                delta += 1
            assert e[j] == delta


def jaillet_prefix(k, n):
    data = jaillet.instance("jaillet-model1", 0, k)
    data["requests"] = {key: v[:n] for key, v in data["requests"].items()}
    return parse_instance(data)


def test_pipeline_proves_jaillet_prefix():
    """First 8 requests of jaillet-model1 draw 0: OPT = 701 (also proven by HiGHS, test_completion)."""
    rep = solve_instance(jaillet_prefix(0, 8), "latency-astar", None, 30, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["objective"] == 701 and rep["bound"] == 701 and rep["verified"]
    assert rep["backend"] == "astar" and rep["ratios"]["mc-sf"]["lower"] == pytest.approx(725 / 701)


def test_ten_requests_proven():
    """Draw 1, first 10 requests: 549, the value CP-SAT's latency-cp proves (README n-ladder)."""
    found = astar_search(jaillet_prefix(1, 10))
    assert found.status == "optimal" and found.objective == 549


def test_certify_step_proves_and_returns_a_better_schedule(monkeypatch):
    """latency-ip's certify step runs the search: with MC-SF (725) as the only incumbent it finds 701 and
    solve reports that schedule, verified, as the optimum without building the IP."""
    monkeypatch.setattr(LatencyIP, "search_incumbent", staticmethod(lambda inst, deadline, seed=0: None))
    rep = solve_instance(jaillet_prefix(0, 8), "latency-ip", "highs", 30, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["objective"] == 701 and rep["verified"]
    assert rep["bound_source"] == "latency-astar" and rep["objective_source"] == "search latency-astar"
    assert rep["variables"] is None                    # the IP was not built
    assert rep["ratios"]["mc-sf"]["upper"] == pytest.approx(725 / 701)


def test_certify_portfolio_cpsat_side_and_prompt_stop():
    """Draw 2, first 10 requests (many small requests): the event model on CP-SAT, beside the search,
    proves 318; on draw 0's first 8 the search proves 701 at once, and CP-SAT is stopped instead of
    running to its limit."""
    rep = solve_instance(jaillet_prefix(2, 10), "latency-ip", "highs", 60, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["objective"] == 318 and rep["bound_source"] == "latency-event"
    assert rep["variables"] is None                    # proven in the certify step
    t0 = time.perf_counter()
    rep = solve_instance(jaillet_prefix(0, 8), "latency-cp", "cpsat", 60, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["bound_source"] == "latency-astar"
    assert time.perf_counter() - t0 < 30               # the step's CP-SAT would otherwise run about 50 s


def test_portfolio_stopped_by_its_deadline_returns_a_certified_bound():
    """Draw 1, first 12 requests (not proven in 60 s; best known 626): after 2 s neither side has
    finished, and the step returns the larger certified bound, above the floor and below 626."""
    from lpbench.solvers.base import SolverProfile

    inst = jaillet_prefix(1, 12)
    start = np.arange(inst.n) * int(inst.output.max())                     # serial: always feasible
    serial = schedule_from_starts(inst, start)
    bound, source, message, better = LatencyIP.search_portfolio(
        inst, total_latency(inst, start), serial, 100.0, SolverProfile("cpsat", "cpsat"), time.perf_counter() + 2)
    assert 100 <= bound <= 626 and source in ("latency-astar", "latency-event") and "optimal" not in message
    assert better is None or (better[0] == "latency-event"
                               and verify(inst, better[1]).metrics["total_latency"] < total_latency(inst, start))
