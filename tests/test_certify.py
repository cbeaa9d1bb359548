"""Seed 004 at size: the solve pipeline's guarantees (a verified schedule is never hidden, models are
sized before they are built, the time limit bounds the whole call) and the certification bounds."""
import time

import numpy as np
import pytest

from lpbench.formulations import FORMULATIONS
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.interrupt import DEADLINE_GRACE as STOP_GRACE_SECONDS
from lpbench.solvers.base import SolveResult
from lpbench.solvers.highs import HighsBackend
from lpbench.solve import solve_instance

from conftest import run


def draw(model="jaillet-model1", k=0, n=None):
    return parse_instance(jaillet.instance(model, 0, k, first=n))


def test_solver_without_schedule_reports_the_best_verified_policy_schedule(monkeypatch):
    from lpbench.formulations.latency_ip import LatencyIP

    monkeypatch.setattr(HighsBackend, "solve", lambda self, model, profile, warm=None:
                        SolveResult("time_limit", None, None, 0.0, None, "no solution found"))
    monkeypatch.setattr(LatencyIP, "certify_max_requests", 0)  # the certify step's search proves this
    monkeypatch.setattr(LatencyIP, "astar_max_requests", 0)    # prefix in seconds: the IP would not run
    monkeypatch.setattr(LatencyIP, "chain_max_requests", 0)
    rep = solve_instance(draw(n=12), "latency-ip", "highs", 5, ["mc-sf", "mc-benchmark"])
    assert rep["status"] == "time_limit"
    assert rep["objective"] == rep["best_known"] <= rep["ratios"]["mc-sf"]["objective"]
    source = rep["objective_source"]
    assert source in ("policy mc-sf", "heuristic local-search", "search latency-event") and rep["verified"] is True
    assert rep["_schedule"] is not None and source.split()[1] in rep["message"]


def test_solver_schedule_is_the_source_when_it_is_best(monkeypatch):
    from lpbench.formulations.latency_ip import LatencyIP

    monkeypatch.setattr(LatencyIP, "certify_max_requests", 0)  # no proof by the relaxation or the
    monkeypatch.setattr(LatencyIP, "astar_max_requests", 0)    # certify step's search or chain: the IP
    monkeypatch.setattr(LatencyIP, "chain_max_requests", 0)    # is solved
    rep = solve_instance(draw(n=4), "latency-ip", "highs", 60, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["objective_source"] == "solver"


@pytest.mark.parametrize("formulation", ["latency-ip", "latency-lp", "latency-cp"])
def test_size_estimate_equals_the_built_model(formulation):
    inst = draw(k=1, n=15)
    form = FORMULATIONS.get(formulation)(inst, incumbent_objective=None)
    est = form.estimate_nonzeros()
    model = form.build()
    built = len(model.coo()[0]) if formulation != "latency-cp" else model.n_rows
    assert est == built


def test_too_large_a_model_is_refused_before_any_policy_runs(capsys, monkeypatch, tmp_path):
    """Too large even at the horizon of UB = ``volume-bound``: refused at once (the default 60 s limit would
    give the incumbent search 15 s first), with the size, the limit and a bound that scales."""
    monkeypatch.setenv("LPBENCH_MAX_NONZEROS", "1000")
    path = tmp_path / "d.json"
    path.write_text(__import__("json").dumps(jaillet.instance("jaillet-model1", 0, 0)))
    code, out, err = run(capsys, "solve", str(path), "--formulation", "latency-lp", "--policies", "mc-sf")
    assert code == 2 and "Traceback" not in err
    assert "latency-lp" in err and "limit 1,000" in err and "volume-bound" in err
    assert "simulating policy" not in err


def sizes(formulation, inst, objectives):
    return [FORMULATIONS.get(formulation)(inst, incumbent_objective=v).estimate_nonzeros() for v in objectives]


@pytest.mark.parametrize("k", range(6))
def test_early_size_check_never_refuses_what_fits_at_a_verified_incumbent(monkeypatch, k):
    """The early check sizes the model at UB = ``volume-bound``; no verified schedule lies below it, so with
    the limit at the size for a verified schedule's objective (MC-SF's) the early check passes, and one
    entry less than the size at ``volume-bound`` it refuses; not the exact model on up to 20 requests."""
    from lpbench.formulations.volume import VolumeBound
    from lpbench.policies import make_policy
    from lpbench.sim import simulate
    from lpbench.solve import refuse_too_large_early
    from lpbench.errors import InputError
    from lpbench.verify import verify

    inst = draw(k=k, n=22 + 4 * k)
    mcsf = verify(inst, simulate(inst, make_policy("mc-sf", inst)).schedule).metrics["total_latency"]
    floor = float(np.ceil(VolumeBound(inst).value() - 1e-6))
    for formulation in ("latency-ip", "latency-lp"):
        at_floor, at_mcsf = sizes(formulation, inst, [floor, mcsf])
        assert at_floor <= at_mcsf
        monkeypatch.setenv("LPBENCH_MAX_NONZEROS", str(at_mcsf))
        refuse_too_large_early(inst, FORMULATIONS.get(formulation))
        monkeypatch.setenv("LPBENCH_MAX_NONZEROS", str(at_floor - 1))
        with pytest.raises(InputError, match="matrix entries"):
            refuse_too_large_early(inst, FORMULATIONS.get(formulation))
    small = draw(k=k, n=20)   # the exact search may prove it without the model: sized after the certify step
    monkeypatch.setenv("LPBENCH_MAX_NONZEROS", "1")
    refuse_too_large_early(small, FORMULATIONS.get("latency-ip"))
    with pytest.raises(InputError, match="matrix entries"):
        refuse_too_large_early(small, FORMULATIONS.get("latency-lp"))


def test_a_model_that_fits_only_at_a_smaller_incumbent_is_sized_again_after_the_search(capsys, monkeypatch, tmp_path):
    """Between the size at ``volume-bound`` and the size at the best schedule found, the early check passes and
    the check after the incumbent search refuses (the policies ran first)."""
    data = jaillet.instance("jaillet-model1", 0, 2, first=12)
    inst = parse_instance(data)   # sizes 15,906 at volume-bound's 294, 38,801 at MC-SF's 389
    path = tmp_path / "d.json"
    path.write_text(__import__("json").dumps(data))
    from lpbench.formulations.volume import VolumeBound

    floor = float(np.ceil(VolumeBound(inst).value() - 1e-6))
    monkeypatch.setenv("LPBENCH_MAX_NONZEROS", str(sizes("latency-lp", inst, [floor])[0]))
    code, out, err = run(capsys, "solve", str(path), "--formulation", "latency-lp", "--policies", "mc-sf",
                         "--time-limit", "4")
    assert code == 2 and "Traceback" not in err and "matrix entries" in err
    assert "simulating policy mc-sf" in err


def test_an_exact_model_too_large_after_the_search_reports_what_it_found(capsys, monkeypatch, tmp_path):
    """The exact model: where the early check passes and the check at the best schedule's horizon refuses, the
    solve reports status ``refused`` with the size message, the best verified schedule and the certified bound,
    and exits 0 (it used to exit 2 and drop them: `lpbench solve` on a 100-request Azure prefix at rho = 0.8).
    30 requests with spread arrivals, whose model has 1,021 entries at UB = ``volume-bound`` and 102,100 at 1.1
    times it; the certify step stands in with ``volume-bound`` so that it cannot prove the optimum first."""
    import json

    from lpbench.formulations.latency_ip import LatencyIP
    from lpbench.formulations.volume import VolumeBound

    n = 30
    data = {"name": "wide30", "memory": 400, "requests": {
        "arrival": [2 * i for i in range(n)], "prompt": [10 + (7 * i) % 20 for i in range(n)],
        "output": [300] + [5 + (11 * i) % 40 for i in range(n - 1)]}}
    inst = parse_instance(data)
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    floor = float(np.ceil(VolumeBound(inst).value() - 1e-6))
    monkeypatch.setattr(LatencyIP, "certify_bound",
                        classmethod(lambda cls, inst, *rest: (floor, "volume-bound", "the test's stand-in", None)))
    monkeypatch.setenv("LPBENCH_MAX_NONZEROS", str(sizes("latency-ip", inst, [floor])[0]))
    code, out, err = run(capsys, "solve", str(path), "--policies", "mc-sf", "--time-limit", "5", "--json")
    rep = json.loads(out)
    assert code == 0 and "Traceback" not in err, err
    assert rep["status"] == "refused" and "matrix entries" in rep["message"] and rep["variables"] is None, rep
    assert rep["verified"] and rep["objective"] > floor and rep["bound"] == floor
    assert rep["ratios"]["mc-sf"]["lower"] >= 1


@pytest.mark.parametrize("solver, formulation", [("highs", "latency-ip"), ("cpsat", "latency-ip"),
                                                 ("cpsat", "latency-cp")])
def test_time_limit_bounds_the_whole_solve(solver, formulation):
    """The solver gets what simulation and building left of the limit, and returns within
    DEADLINE_GRACE of it: runs in phases that do not poll for interrupts are abandoned. Before:
    HiGHS's presolve ran 16.7 s past a 3 s limit on this 63k-column model, and CP-SAT's row-by-row
    conversion was not counted at all."""
    inst, limit = draw(k=3), 4.0
    t0 = time.perf_counter()
    rep = solve_instance(inst, formulation, solver, limit, None)
    elapsed = time.perf_counter() - t0
    before_solver = elapsed - rep["solve_seconds"]
    assert rep["solve_seconds"] <= max(limit - before_solver, 1.0) + STOP_GRACE_SECONDS + 0.5
    assert rep["objective"] is not None and rep["verified"]


def random_slot(seed, n=12):
    rng = np.random.default_rng(seed)
    M = int(rng.integers(8, 25))
    s = rng.integers(1, 4, n)
    o = np.array([rng.integers(1, M - si + 1) for si in s])
    return parse_instance({"memory": M, "requests": {"arrival": np.sort(rng.integers(0, 8, n)).tolist(),
                                                     "prompt": s.tolist(), "output": o.tolist()}})


@pytest.mark.parametrize("seed", range(50))
def test_serial_sgs_schedules_verify_with_the_latency_they_claim(seed):
    from lpbench.formulations.latency_ip import schedule_from_starts
    from lpbench.heuristics.slot_sgs import eq3_ramps, local_search, serial_sgs, total_latency
    from lpbench.verify import verify

    inst = random_slot(seed)
    a, s, o = inst.arrival.astype(np.int64), inst.prompt.astype(np.int64), inst.output.astype(np.int64)
    order = np.random.default_rng(seed).permutation(inst.n)
    ramps = eq3_ramps(s, o)
    start = serial_sgs(a, ramps, inst.memory, order)
    ver = verify(inst, schedule_from_starts(inst, start))
    assert ver.feasible and ver.metrics["total_latency"] == total_latency(a, ramps, start)
    first = serial_sgs(a, ramps, inst.memory, np.lexsort((np.arange(inst.n), o)))
    best_start, best, _ = local_search(inst, iterations=30, seed=seed)
    assert best <= total_latency(a, ramps, first) and best == total_latency(a, ramps, best_start)
    assert verify(inst, schedule_from_starts(inst, best_start)).feasible


def plain_sgs(a, ramps, M, order):
    """The serial SGS written out round by round: the oracle for the compiled one."""
    mem = {}
    start = np.zeros(len(a), dtype=np.int64)
    for i in order:
        k = int(a[i])
        while any(mem.get(k + 1 + d, 0) + int(x) > M for d, x in enumerate(ramps[i])):
            k += 1
        for d, x in enumerate(ramps[i]):
            mem[k + 1 + d] = mem.get(k + 1 + d, 0) + int(x)
        start[i] = k
    return start


@pytest.mark.parametrize("seed", range(20))
def test_the_compiled_climb_equals_a_plain_climb(seed):
    """The kernel re-places only from the first position a move changes and drops a refused move's copy of
    the profile: after every batch of moves its order, starts and value are those of a climb that runs the
    plain SGS in full per move (the move as np.insert / np.delete or a swap), on ramps of eq. (3) and on
    constant (reserved) ones."""
    from lpbench.heuristics.slot_sgs import _Ramps, eq3_ramps, serial_sgs, total_latency

    inst = random_slot(seed, n=12)
    a, M = inst.arrival.astype(np.int64), int(inst.memory)
    rng = np.random.default_rng(seed)
    for ramps in (eq3_ramps(inst.prompt, inst.output),
                  [np.full(int(o), int(s + o)) for s, o in zip(inst.prompt, inst.output)]):
        order = rng.permutation(inst.n)
        assert np.array_equal(serial_sgs(a, ramps, M, order), plain_sgs(a, ramps, M, order))
        layout = _Ramps(a, ramps, M)
        fast = order.astype(np.int64)
        start, mem, value = layout.sgs(fast)
        ref, ref_value = order.copy(), total_latency(a, ramps, plain_sgs(a, ramps, M, order))
        assert value == ref_value
        for _ in range(4):
            moves = (rng.integers(inst.n, size=15), rng.integers(inst.n, size=15), rng.random(15) < 0.5)
            value, made = layout.climb(fast, start, mem, moves)
            for i, j, swap in zip(*moves):
                if swap:
                    cand = ref.copy()
                    cand[i], cand[j] = ref[j], ref[i]
                else:
                    cand = np.insert(np.delete(ref, i), j, ref[i])
                v = total_latency(a, ramps, plain_sgs(a, ramps, M, cand))
                if v <= ref_value:
                    ref, ref_value = cand, v
            assert made == 15 and value == ref_value and np.array_equal(fast, ref)
            assert np.array_equal(start, plain_sgs(a, ramps, M, ref))


def test_a_search_whose_deadline_passes_before_its_first_sgs_returns_no_schedule():
    """On 10,000 requests under load one SGS takes seconds; the search gives up between batches of
    placements instead of overrunning, and the formulation then offers no incumbent."""
    import time

    from lpbench.formulations.latency_ip import LatencyIP
    from lpbench.heuristics.slot_sgs import local_search

    inst = random_slot(0, n=12)
    assert local_search(inst, deadline=time.perf_counter() - 1) == (None, None, 0)
    assert LatencyIP.search_incumbent(inst, deadline=time.perf_counter() - 1) is None
    start, value, done = local_search(inst, iterations=50, deadline=time.perf_counter() + 60)
    assert done == 50 and value is not None


def test_a_ramp_above_memory_is_refused_not_scanned_forever():
    from lpbench.heuristics.slot_sgs import serial_sgs

    with pytest.raises(ValueError, match="exceeds the memory"):
        serial_sgs(np.zeros(2, dtype=np.int64), [np.array([1, 2]), np.array([3, 9])], 8, np.array([0, 1]))


def test_local_search_is_deterministic_and_beats_mcsf_on_a_draw():
    from lpbench.heuristics.slot_sgs import local_search

    inst = draw(k=40)
    one, two = local_search(inst, iterations=150, seed=3), local_search(inst, iterations=150, seed=3)
    assert one[1] == two[1] and np.array_equal(one[0], two[0])
    rep = solve_instance(inst, "latency-cp", "cpsat", 8, ["mc-sf"])
    assert rep["incumbent_search"]["name"] == "local-search"
    assert rep["objective"] < rep["ratios"]["mc-sf"]["objective"]   # MC-SF is certainly not optimal here
    assert rep["ratios"]["mc-sf"]["lower"] > 1


@pytest.mark.parametrize("seed", range(50))
def test_window_search_schedules_verify_and_never_lose(seed):
    """Each window is re-placed on the others' fixed ramps and kept only if its latency sum drops, so every
    schedule it returns is feasible, claims the latency the verifier computes, and is no worse than its start."""
    from lpbench.formulations.latency_ip import schedule_from_starts
    from lpbench.heuristics.slot_sgs import eq3_ramps, serial_sgs, total_latency, window_search
    from lpbench.verify import verify

    inst = random_slot(seed, n=30)
    a, s, o = inst.arrival.astype(np.int64), inst.prompt.astype(np.int64), inst.output.astype(np.int64)
    ramps = eq3_ramps(s, o)
    start = serial_sgs(a, ramps, inst.memory, np.random.default_rng(seed).permutation(inst.n))
    found, value, tried = window_search(a, ramps, inst.memory, start, seed=seed, passes=2, width=8)
    ver = verify(inst, schedule_from_starts(inst, found))
    assert ver.feasible and ver.metrics["total_latency"] == value == total_latency(a, ramps, found)
    assert value <= total_latency(a, ramps, start) and tried >= 2 * (inst.n // 4 - 1)
    again = window_search(a, ramps, inst.memory, start, seed=seed, passes=2, width=8)
    assert again[1] == value and np.array_equal(again[0], found)


def test_window_search_improves_random_orders():
    """A random priority order's SGS leaves room: the window search improves most of them (a search that
    never accepted a window would pass the test above)."""
    from lpbench.heuristics.slot_sgs import eq3_ramps, serial_sgs, total_latency, window_search

    better = 0
    for seed in range(20):
        inst = random_slot(seed, n=30)
        a, s, o = inst.arrival.astype(np.int64), inst.prompt.astype(np.int64), inst.output.astype(np.int64)
        ramps = eq3_ramps(s, o)
        start = serial_sgs(a, ramps, inst.memory, np.random.default_rng(seed).permutation(inst.n))
        better += window_search(a, ramps, inst.memory, start, seed=seed, passes=2, width=8)[1] < total_latency(a, ramps, start)
    assert better >= 15


def test_large_instances_search_from_the_best_policy_window_by_window(monkeypatch):
    """Above ``window_search_above`` requests the formulation's incumbent search improves the schedule it is
    given; the pipeline gives it the best verified policy schedule and verifies what comes back."""
    from lpbench.formulations.latency_ip import LatencyIP
    from lpbench.solve import run_policies
    from lpbench.verify import verify

    monkeypatch.setattr(LatencyIP, "window_search_above", 20)
    inst = random_slot(7, n=30)
    mcsf = run_policies(inst, ["mc-sf"], "total_latency", 0, None, {})[0]
    name, schedule, info = LatencyIP.search_incumbent(inst, deadline=time.perf_counter() + 30, incumbent=mcsf.schedule)
    ver = verify(inst, schedule)
    assert name == "window-search" and info["windows"] > 0
    assert ver.feasible and ver.metrics["total_latency"] <= mcsf.objective


def test_window_search_keeps_a_window_only_if_it_gains(monkeypatch):
    """With the climb replaced by an SGS of the window in reverse start order and no moves (feasible, mostly
    worse), the search must return its start unchanged or better: a worse window is never kept."""
    from lpbench.heuristics import slot_sgs
    from lpbench.heuristics.slot_sgs import eq3_ramps, local_search, total_latency, window_search

    real = slot_sgs._climb

    def reversed_sgs(a, flat, off, dur, M, order, delay, start, mem, first, stop, *moves):
        if first == 0:            # the window's first placement call: reverse its order
            order[:] = order[::-1].copy()
        return real(a, flat, off, dur, M, order, delay, start, mem, first, stop, *slot_sgs.NO_MOVES)

    monkeypatch.setattr(slot_sgs, "_climb", reversed_sgs)
    worse = 0
    for seed in range(10):
        inst = random_slot(seed, n=20)
        a, s, o = inst.arrival.astype(np.int64), inst.prompt.astype(np.int64), inst.output.astype(np.int64)
        ramps = eq3_ramps(s, o)
        monkeypatch.setattr(slot_sgs, "_climb", real)
        start, value, _ = local_search(inst, iterations=200, seed=seed)
        monkeypatch.setattr(slot_sgs, "_climb", reversed_sgs)
        found, after, tried = window_search(a, ramps, inst.memory, start, seed=seed, passes=1, width=6)
        assert tried > 0 and after <= value == total_latency(a, ramps, start)
        worse += after == value
    assert worse >= 5        # most reversed windows lose, so most searches end where they started


def test_window_search_past_its_deadline_returns_its_start():
    from lpbench.heuristics.slot_sgs import eq3_ramps, serial_sgs, total_latency, window_search

    inst = random_slot(3, n=30)
    a, s, o = inst.arrival.astype(np.int64), inst.prompt.astype(np.int64), inst.output.astype(np.int64)
    ramps = eq3_ramps(s, o)
    start = serial_sgs(a, ramps, inst.memory, np.arange(inst.n))
    found, value, tried = window_search(a, ramps, inst.memory, start, deadline=time.perf_counter() - 1)
    assert tried == 0 and np.array_equal(found, start) and value == total_latency(a, ramps, start)
