"""Audit 10 (solver backends): one test per fix. Small hand-built models, given to the backends directly."""
from __future__ import annotations

import json
import math
import time
import warnings

import numpy as np
import pytest
from conftest import TINY, run

from lpbench import tomlfile
from lpbench.errors import InputError, LpbenchWarning
from lpbench.formulations.base import LinearModel
from lpbench.solvers import BACKENDS, SolverProfile, load_profiles

INF = math.inf
UNBOUNDED = "unbounded (or infeasible): a formulation bug"


def _profile(backend, time_limit=10.0, **options):
    return SolverProfile(name="p", backend=backend, time_limit=time_limit, rel_gap=1e-6, threads=1, options=options)


def _solve(backend, model, time_limit=10.0, **options):
    return BACKENDS.get(backend)().solve(model, _profile(backend, time_limit, **options))


def _gurobi():
    gp = pytest.importorskip("gurobipy")
    try:
        gp.Env(empty=True).start()
    except gp.GurobiError:
        pytest.skip("no usable gurobipy licence")


def _unbounded(integer):
    m = LinearModel(name="unbounded")
    m.add_vars("x", 2, -INF, INF, integer=integer, cost=[1, 0])
    m.add_rows("r", 1, [0, 0], [0, 1], [1, 1], upper=5)
    return m


def _lp(n=30, seed=0):
    """min c x, A x >= b, 0 <= x <= 10: a small dense LP with a unique-ish optimum that needs simplex iterations."""
    rng = np.random.default_rng(seed)
    m = LinearModel(name="lp")
    m.add_vars("x", n, 0, 10, integer=False, cost=rng.uniform(1, 5, n))
    rows, cols = np.divmod(np.arange(n * n), n)
    m.add_rows("r", n, rows, cols, rng.uniform(0, 3, n * n), lower=rng.uniform(5, 20, n))
    return m


# -- F1: the Pyomo backend keeps to its time limit, the Pyomo build included -------------------------------------
def test_pyomo_keeps_its_time_limit_including_the_build():
    pytest.importorskip("pyomo")
    n_rows, per_row, n = 40_000, 40, 20_000   # 1.6 M entries: several seconds of Pyomo build alone
    rng = np.random.default_rng(1)
    m = LinearModel(name="big")
    m.add_vars("x", n, 0, 1, integer=True, cost=rng.uniform(-1, 1, n))
    m.add_rows("r", n_rows, np.repeat(np.arange(n_rows), per_row), rng.integers(0, n, n_rows * per_row),
               rng.uniform(0.5, 2, n_rows * per_row), upper=rng.uniform(5, 10, n_rows))
    m.csr()  # the model's own arrays are built before the clock, as solve() builds them
    limit = 1.5
    t = time.perf_counter()
    res = _solve("pyomo", m, limit, solver="appsi_highs")
    wall = time.perf_counter() - t
    assert wall <= limit * 1.5 + 1.0, wall
    assert res.status == "time_limit" and res.objective is None and res.bound is None, res


def test_pyomo_refuses_a_solver_whose_time_limit_option_is_unknown(monkeypatch):
    pytest.importorskip("pyomo")
    from lpbench.solvers import pyomo_backend

    monkeypatch.setattr(pyomo_backend, "LIMIT_NAMES", {k: v for k, v in pyomo_backend.LIMIT_NAMES.items()
                                                        if k != "appsi_highs"})
    with pytest.raises(InputError, match="does not know the time-limit option of Pyomo solver 'appsi_highs'"):
        _solve("pyomo", _lp(), solver="appsi_highs")


# -- F5: Pyomo options are checked (exit 2, the field named) ------------------------------------------------------
@pytest.mark.parametrize("options, expect", [
    ('{ solver = "appsi_highs", solver_options = "x" }', "options.solver_options: must be a table"),
    ('{ solvr = "glpk" }', "options.solvr: unknown key for the pyomo backend; expected one of solver, solver_options"),
    ('{ solver = 3 }', "options.solver: must be a Pyomo solver name"),
    ('{ solver = "appsi_highs", solver_options = { time_limit = 1000 } }', "options.solver_options.time_limit"),
])
def test_pyomo_profile_options_are_checked_when_read(capsys, options, expect, solvers_toml):
    solvers_toml(f'[solver.a]\nbackend = "pyomo"\noptions = {options}\n')
    with pytest.raises(InputError, match="solver.a." + expect.split(":")[0]):
        load_profiles()
    code, _, err = run(capsys, "solve", TINY, "--formulation", "latency-lp", "--solver", "a", "-q")
    assert code == 2 and expect in err and len(err.strip().splitlines()) == 1, (code, err)


def test_pyomo_unknown_highs_solver_option_is_refused():
    pytest.importorskip("pyomo")
    with pytest.raises(InputError, match="options.solver_options.no_such_opt: HiGHS rejects 1"):
        _solve("pyomo", _lp(), solver="appsi_highs", solver_options={"no_such_opt": 1})


# -- F8/F9: Pyomo reports only a feasible point's objective, and never invents a bound -----------------------------
def test_pyomo_reports_no_objective_for_a_point_that_is_not_feasible(capfd):
    pytest.importorskip("pyomo")
    model = _lp()
    best = _solve("highs", model)
    assert best.status == "optimal"
    res = _solve("pyomo", model, solver="appsi_highs", solver_options={"simplex_iteration_limit": 1})
    assert res.status != "optimal"
    assert res.bound is None   # an LP short of optimal has no bound (appsi gives its primal value)
    if res.objective is not None:  # only a verified feasible point may be reported
        assert model.max_violation(res.x) <= 1e-6 and res.objective >= best.objective - 1e-6
    opt = _solve("pyomo", model, solver="appsi_highs")
    assert opt.status == "optimal" and opt.objective == pytest.approx(best.objective)
    assert opt.bound == opt.objective  # a proven LP optimum: the objective is the bound
    assert capfd.readouterr().err == ""   # F14: Pyomo's log is captured, not printed


def _knapsack(seed: int, n: int, k: int, capacity: tuple[int, int]) -> LinearModel:
    """A random multi-dimensional 0/1 knapsack (minimise −value): n items, k capacity rows drawn in ``capacity``."""
    rng = np.random.default_rng(seed)
    m = LinearModel(name="knap")
    m.add_vars("x", n, 0, 1, integer=True, cost=-rng.integers(10, 100, n))
    rows, cols = np.divmod(np.arange(k * n), n)
    m.add_rows("r", k, rows, cols, rng.integers(10, 100, k * n), upper=rng.integers(*capacity, k))
    return m


# -- F14: nothing on stderr under -q --------------------------------------------------------------------------------
def test_pyomo_prints_nothing_under_quiet(capfd):
    pytest.importorskip("pyomo")
    # a MIP stopped at a limit with a solution: Pyomo warned "Loading a SolverResults object with an 'aborted'
    # status, but containing a solution"
    m = _knapsack(3, n=60, k=25, capacity=(500, 900))
    res = _solve("pyomo", m, solver="appsi_highs", solver_options={"mip_max_nodes": 1})
    assert res.status in ("feasible", "optimal", "time_limit", "error")
    assert capfd.readouterr().err == ""


# -- F3: a bad Gurobi option is bad input (exit 2), as for HiGHS and CP-SAT ------------------------------------------
@pytest.mark.parametrize("options, expect", [({"NoSuchParam": 1}, "options.NoSuchParam: Gurobi rejects 1"),
                                             ({"MIPGap": -3}, "options.MIPGap: Gurobi rejects -3")])
def test_gurobi_bad_option_is_input_error(options, expect):
    _gurobi()
    with pytest.raises(InputError, match=expect):
        _solve("gurobi", _lp(5), **options)


# -- F7: never a non-finite bound -------------------------------------------------------------------------------------
def test_gurobi_non_finite_bound_is_none():
    from lpbench.solvers.gurobi import _finite

    assert _finite(-INF) is None and _finite(INF) is None and _finite(-1e100) is None and _finite(3.5) == 3.5
    _gurobi()
    m = _knapsack(5, n=400, k=60, capacity=(2000, 4000))
    res = _solve("gurobi", m, time_limit=0.001)
    assert res.bound is None or math.isfinite(res.bound), res
    json.dumps({"bound": res.bound}, allow_nan=False)


# -- F6: unbounded is an error with one message, in every backend -----------------------------------------------------
@pytest.mark.parametrize("backend, integer", [("highs", True), ("highs", False), ("cpsat", True), ("pyomo", True),
                                              ("pyomo", False), ("gurobi", True), ("gurobi", False)])
def test_unbounded_is_an_error_never_a_verdict(backend, integer):
    if backend == "gurobi":
        _gurobi()
    if backend == "pyomo":
        pytest.importorskip("pyomo")
    opts = {"solver": "appsi_highs"} if backend == "pyomo" else {}
    res = _solve(backend, _unbounded(integer), **opts)
    assert res.status == "error" and UNBOUNDED in res.message and res.objective is None, res


# -- F10: CP-SAT rounds fractional integer bounds inwards -------------------------------------------------------------
@pytest.mark.parametrize("lo, up, cost, status, obj", [(0.5, 2.5, 1, "optimal", 1.0), (-5, -0.5, -1, "optimal", 1.0),
                                                       (0.2, 0.8, 1, "infeasible", None),
                                                       (1 - 1e-12, 3, 1, "optimal", 1.0)])
def test_cpsat_fractional_integer_bounds(lo, up, cost, status, obj):
    m = LinearModel(name="frac")
    m.add_vars("x", 1, lo, up, integer=True, cost=[cost])
    res = _solve("cpsat", m)
    assert res.status == status and res.objective == obj, res


# -- F4: user solver profiles add to the shipped ones -----------------------------------------------------------------
def test_user_solver_profiles_add_to_the_shipped_ones(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("LPBENCH_SOLVERS", raising=False)
    monkeypatch.setattr(tomlfile, "_NOTED", set())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "solvers.toml").write_text('[solver.highs]\nbackend = "cpsat"\n\n[solver.mine]\nbackend = "highs"\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profiles = load_profiles()
        load_profiles()
    assert profiles["highs"].backend == "cpsat"           # the cwd file's definition wins ...
    assert {"mine", "cpsat", "pyomo-highs", "highs-quick"} <= set(profiles)  # ... and the shipped ones stay
    shadow = [w for w in caught if issubclass(w.category, LpbenchWarning)]
    assert len(shadow) == 1 and "'highs'" in str(shadow[0].message) and "shadows the shipped" in str(shadow[0].message)
    env = tmp_path / "env.toml"
    env.write_text('[solver.mine]\nbackend = "cpsat"\n')
    monkeypatch.setenv("LPBENCH_SOLVERS", str(env))
    profiles = load_profiles()
    assert profiles["mine"].backend == "cpsat" and profiles["highs"].backend == "cpsat" and "cpsat" in profiles
    code, out, err = run(capsys, "list", "solvers")
    assert code == 0 and "highs-quick" in out and "mine" in out, (code, out, err)
