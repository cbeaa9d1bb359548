"""Audit 12's compare and figure findings, on small synthetic runs (docs/audits.md):
F2 a simulation-only suite's policy rows (status ``verified``) are checked on their objective and latency metrics;
F3 the time check uses the task's wall time, and not for a fixed task; F5 the ratio histogram counts each
(instance, policy, repetition) once; F11 the latency curve says what it left out and carries a unit, and an open
ratio interval is drawn open."""
import numpy as np
import pandas as pd
import pytest

from lpbench.bench.compare import compare_runs
from lpbench.report import plots


def row(instance="slot-12", kind="policy", method="mc-sf", formulation=None, solver=None, repetition=0, **values):
    base = {"instance": instance, "instance_hash": "h-" + instance, "kind": kind, "method": method,
            "formulation": formulation, "solver": solver, "repetition": repetition, "model": "slot", "requests": 12,
            "objective_metric": "total_latency", "status": "verified", "objective": 95.0, "bound": None, "gap": None,
            "ratio_lower": None, "ratio_upper": None, "verified": True, "build_seconds": None, "solve_seconds": None,
            "wall_seconds": 1.0, "total_latency": 95.0, "mean_latency": 95 / 12, "p99_latency": 17.0,
            "ttft_mean": 2.0, "makespan": 19.0, "peak_memory": 24, "evictions": 0, "message": ""}
    base.update(values)
    return base


def regressions(base_rows, new_rows, **kw):
    diff = compare_runs(pd.DataFrame(base_rows), pd.DataFrame(new_rows), **kw)
    return {(r["instance"], r["kind"], r["method"]): r["regressions"] for r in diff.to_dict("records")}


# F2: simulation-only suites ---------------------------------------------------------------------------------------

def test_sim_only_policy_objective_that_grows_is_a_regression():
    """Audit case L: mc-sf's total latency on slot-12 doubled (95 -> 190) and compare exited 0."""
    reg = regressions([row()], [row(objective=190.0, total_latency=190.0, mean_latency=190 / 12)])
    assert "objective 95 -> 190" in reg["slot-12", "policy", "mc-sf"]
    assert "total_latency 95 -> 190" in reg["slot-12", "policy", "mc-sf"]


@pytest.mark.parametrize("metric, old, new", [("evictions", 0, 50), ("p99_latency", 17.0, 60.0),
                                              ("makespan", 19.0, 20.0), ("ttft_mean", 2.0, 2.5),
                                              ("peak_memory", 24, 30)])
def test_sim_only_latency_metric_that_grows_is_a_regression(metric, old, new):
    """Audit case L2: evictions 0 -> 50 and p99 x3 at an unchanged objective exited 0."""
    reg = regressions([row(**{metric: old})], [row(**{metric: new})])["slot-12", "policy", "mc-sf"]
    assert f"{metric} {old:g} -> {new:g}" in reg


def test_sim_only_improvement_and_float_noise_are_not_regressions():
    better = row(objective=80.0, total_latency=80.0, mean_latency=80 / 12, p99_latency=10.0, evictions=0,
                 makespan=18.0, peak_memory=20)
    assert regressions([row(evictions=3)], [better]) == {("slot-12", "policy", "mc-sf"): ""}
    noise = row(objective=95.0 * (1 + 1e-9), mean_latency=95 / 12 * (1 + 1e-9))
    assert regressions([row()], [noise]) == {("slot-12", "policy", "mc-sf"): ""}
    assert regressions([row()], [row()]) == {("slot-12", "policy", "mc-sf"): ""}


def test_metrics_of_a_policy_row_in_a_formulation_task_are_checked_those_of_a_formulation_row_not():
    """A policy's schedule is a seeded simulation in every task; a proven optimum's schedule is one of several
    (which one depends on timing, audit F4), so only its objective is compared."""
    form = dict(formulation="latency-ip", solver="highs")
    base = [row(kind="formulation", method="latency-ip", status="optimal", objective=91.0, bound=91.0, gap=0.0,
                total_latency=91.0, p99_latency=17.78, **form),
            row(status="optimal", ratio_lower=95 / 91, ratio_upper=95 / 91, bound=91.0, **form)]
    new = [{**base[0], "p99_latency": 17.45, "makespan": 25.0}, {**base[1], "evictions": 4}]
    reg = regressions(base, new)
    assert reg["slot-12", "formulation", "latency-ip"] == ""
    assert reg["slot-12", "policy", "mc-sf"] == "evictions 0 -> 4"


def test_a_lower_policy_objective_on_a_proven_instance_is_an_improvement():
    """The "optimal objective changed" rule is for the optimum (the formulation row); a policy row only regresses
    when its objective grows."""
    form = dict(formulation="latency-ip", solver="highs", status="optimal", bound=91.0)
    base = [row(kind="formulation", method="latency-ip", objective=91.0, **form),
            row(ratio_lower=95 / 91, ratio_upper=95 / 91, **form)]
    new = [base[0], row(objective=93.0, total_latency=93.0, mean_latency=93 / 12, ratio_lower=93 / 91,
                        ratio_upper=93 / 91, **form)]
    assert set(regressions(base, new).values()) == {""}
    new = [{**base[0], "objective": 92.0}, base[1]]
    assert regressions(base, new)["slot-12", "formulation", "latency-ip"] == "optimal objective 91 -> 92"


# F3: the time check ----------------------------------------------------------------------------------------------

def _task(status="optimal", wall=2.6, build=0.0, solve=0.0, policy_status=None):
    """A formulation task: its formulation row and one policy row, all stamped with the task's wall time."""
    form = dict(instance="tiny-slot", formulation="latency-ip", solver="highs", wall_seconds=wall)
    failed = status in ("error", "timeout")
    return [row(kind="formulation", method="latency-ip", status=status, objective=None if failed else 19.0,
                bound=None if failed else 19.0, build_seconds=None if failed else build,
                solve_seconds=None if failed else solve, **form),
            row(status=policy_status or ("optimal" if status == "optimal" else status), objective=20.0,
                total_latency=20.0, mean_latency=4.0, **form)]


def test_time_is_the_tasks_wall_time_not_build_plus_solve():
    """Audit case D5: wall 2.6 s -> 60 s with build + solve 0 (proven by the bound step) exited 0."""
    reg = regressions(_task(wall=2.6), _task(wall=60.0))
    assert reg["tiny-slot", "formulation", "latency-ip"] == "time 2.6s -> 60s"
    assert reg["tiny-slot", "policy", "mc-sf"] == ""  # once per task, on its formulation row
    # build + solve seconds are not what is compared when both rows have their wall time
    assert set(regressions(_task(build=0.1, solve=1.0), _task(build=0.1, solve=9.0)).values()) == {""}


def test_time_of_a_simulation_only_task_is_checked_on_its_policy_row():
    assert regressions([row(wall_seconds=1.0)], [row(wall_seconds=5.0)]) == {
        ("slot-12", "policy", "mc-sf"): "time 1s -> 5s"}


def test_time_falls_back_to_build_plus_solve_without_wall_time():
    base, new = _task(build=0.5, solve=0.5), _task(build=0.5, solve=1.6)
    for rows in (base, new):
        for r in rows:
            r.pop("wall_seconds")
    assert regressions(base, new)["tiny-slot", "formulation", "latency-ip"] == "time 1s -> 2.1s"
    # one run with, one without: both sides use build + solve
    with_wall = _task(build=0.5, solve=0.5, wall=100.0)
    assert regressions(with_wall, new)["tiny-slot", "formulation", "latency-ip"] == "time 1s -> 2.1s"
    assert regressions(with_wall, _task(build=0.5, solve=0.6, wall=np.nan)) == {
        ("tiny-slot", "formulation", "latency-ip"): "", ("tiny-slot", "policy", "mc-sf"): ""}


@pytest.mark.parametrize("before, after", [("error", "optimal"), ("timeout", "time_limit"),
                                           ("time_limit", "optimal")])
def test_a_fixed_or_improved_task_is_not_flagged_slower(before, after):
    """Audit cases G and G2: error -> optimal was flagged "time 0s -> 3s"."""
    base = _task(status=before, wall=0.3 if before == "error" else 2.0)
    new = _task(status=after, wall=30.0, solve=3.0)
    assert set(regressions(base, new).values()) == {""}


def test_a_slower_task_whose_status_did_not_improve_is_still_flagged():
    reg = regressions(_task(status="time_limit", wall=2.0), _task(status="time_limit", wall=4.0))
    assert reg["tiny-slot", "formulation", "latency-ip"] == "time 2s -> 4s"
    # the tolerance and the floor apply to the wall time as they did to build + solve
    assert regressions(_task(wall=1.0), _task(wall=1.5))["tiny-slot", "formulation", "latency-ip"] == ""
    assert regressions(_task(wall=0.1), _task(wall=0.5))["tiny-slot", "formulation", "latency-ip"] == ""
    # a task that now fails is a status regression (its time too: the killed task took that long)
    assert "status optimal -> timeout" in regressions(_task(), _task(status="timeout", wall=5.0))[
        "tiny-slot", "formulation", "latency-ip"]


# F5 and F11: figures ---------------------------------------------------------------------------------------------

@pytest.fixture
def figures(monkeypatch):
    """The figures drawn, kept open instead of written."""
    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, force=False: drawn.append(fig) or [])
    yield drawn
    plots._plt().close("all")


def _ratio_rows(instance, pair, lower, upper, status="optimal", method="mc-sf", repetition=0):
    formulation, solver = pair
    return row(instance=instance, method=method, formulation=formulation, solver=solver, status=status,
               ratio_lower=lower, ratio_upper=upper, repetition=repetition)


PAIRS = [("latency-ip", "highs"), ("latency-cp", "cpsat")]


def _bars(ax):
    return sum(p.get_height() for c in ax.containers for p in c.patches)


def test_ratio_histogram_counts_each_instance_once_over_its_pairs(figures):
    """Audit F5: 2 instances x 2 pairs, all proven: the legend said "4 proven optima" and the bars summed to 4."""
    rows = [_ratio_rows(i, pair, r, r, method=m) for i, r in (("a", 1.157), ("b", 1.23)) for pair in PAIRS
            for m in ("mc-sf", "mc-benchmark")]
    plots.ratio_histogram(pd.DataFrame(rows), "unused")
    (ax,) = figures[0].axes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "mc-benchmark (2 proven optima)", "mc-sf (2 proven optima)"]
    assert _bars(ax) == 4  # 2 instances x 2 policies
    assert ax.get_ylabel() == "instances"
    assert "tightest certificate of 2 (formulation, solver) pairs" in ax.get_title()


def test_ratio_histogram_takes_the_tightest_certificate(figures):
    rows = [
        # a: proven by one pair, open in the other -> one proven optimum, no interval
        _ratio_rows("a", PAIRS[0], 1.10, 1.10), _ratio_rows("a", PAIRS[1], 1.05, None, status="time_limit"),
        # b: two intervals -> the narrower one
        _ratio_rows("b", PAIRS[0], 1.10, 1.50, status="time_limit"),
        _ratio_rows("b", PAIRS[1], 1.20, 1.30, status="time_limit"),
        # c: open in one pair, finite in the other -> the finite one
        _ratio_rows("c", PAIRS[0], 1.30, None, status="time_limit"),
        _ratio_rows("c", PAIRS[1], 1.02, 1.40, status="time_limit"),
        # d: optimal status but an open interval (a relaxation at its own optimum) is not a proof
        _ratio_rows("d", PAIRS[0], 1.01, None), _ratio_rows("d", PAIRS[1], 1.03, None, status="time_limit")]
    chosen = plots._tightest(pd.DataFrame(rows)).set_index("instance")
    assert chosen.loc["a", "proven"] and chosen.loc["a", "formulation"] == "latency-ip"
    assert (chosen.loc["b", "ratio_lower"], chosen.loc["b", "ratio_upper"]) == (1.20, 1.30)
    assert (chosen.loc["c", "ratio_lower"], chosen.loc["c", "ratio_upper"]) == (1.02, 1.40)
    assert not chosen.loc["d", "proven"] and chosen.loc["d", "ratio_lower"] == 1.03  # the higher lower end
    plots.ratio_histogram(pd.DataFrame(rows), "unused")
    hist, intervals = figures[0].axes
    assert _bars(hist) == 1
    texts = [t.get_text() for t in intervals.get_legend().get_texts()]
    assert texts[0] == "mc-sf: certified interval (3 not proven, 1 open above)"
    assert any("open above" in t and "axis edge" in t for t in texts[1:])


def test_open_ratio_interval_is_drawn_open_to_the_axis_edge(figures):
    """Audit F11: an interval without an upper end was a finite bar ending at the panel maximum."""
    rows = [_ratio_rows("a", PAIRS[0], 1.10, 1.40, status="time_limit"),
            _ratio_rows("b", PAIRS[0], 1.20, None, status="time_limit"),
            _ratio_rows("c", PAIRS[0], 1.05, np.inf, status="time_limit")]
    plots.ratio_histogram(pd.DataFrame(rows), "unused")
    (ax,) = figures[0].axes
    right = ax.get_xlim()[1]
    assert right > 1.40
    segments = [(tuple(seg[0]), tuple(seg[1]), coll.get_linestyle()[0])
                for coll in ax.collections for seg in coll.get_segments()]
    solid = [s for s in segments if s[2][1] is None]
    dashed = [s for s in segments if s[2][1] is not None]
    assert [(a[0], b[0]) for a, b, _ in solid] == [(1.10, 1.40)]
    assert sorted(a[0] for a, _, _ in dashed) == [1.05, 1.20] and all(b[0] == right for _, b, _ in dashed)
    arrows = [ln for ln in ax.lines if ln.get_marker() == ">" and len(ln.get_xdata())]
    assert len(arrows) == 1 and list(arrows[0].get_xdata()) == [right, right]


def _latency_rows():
    ok = [row(instance=f"i{k}", requests=n, mean_latency=m, **{"model": "slot"})
          for k, (n, m) in enumerate([(5, 4.0), (12, 8.0), (12, 9.0)])]
    bad = [row(instance="i3", requests=12, status="error", mean_latency=None, objective=None),
           row(instance="i4", requests=5, status="skipped", mean_latency=None, objective=None),
           row(instance="i0", method="mc-benchmark", requests=5, mean_latency=4.4)]
    return ok + bad


def test_latency_curve_says_how_many_rows_it_left_out(figures):
    """Audit F11: error/timeout/skipped policy rows were dropped silently."""
    plots.latency_curve(pd.DataFrame(_latency_rows()), "unused")
    (ax,) = figures[0].axes
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == ["mc-benchmark", "mc-sf (2 of 5 left out: 1 error, 1 skipped)"]


def test_latency_curve_does_not_count_a_row_drawn_from_another_pair(figures):
    """A policy row is repeated per (formulation, solver): a failed solve's copy is not left out when another
    pair's copy carries the metric."""
    rows = [row(formulation="latency-ip", solver="highs", status="error", mean_latency=None),
            row(formulation="latency-cp", solver="cpsat", status="certified")]
    plots.latency_curve(pd.DataFrame(rows), "unused")
    assert [t.get_text() for t in figures[0].axes[0].get_legend().get_texts()] == ["mc-sf"]


@pytest.mark.parametrize("model, y, label", [("slot", "mean_latency", "mean latency (rounds)"),
                                             ("batch", "mean_latency", "mean latency (s)"),
                                             ("batch", "p99_latency", "p99 latency (s)"),
                                             ("slot", "evictions", "evictions")])
def test_latency_curve_y_axis_has_the_models_unit(figures, model, y, label):
    """As the memory and Gantt figures label time: rounds for slot instances, seconds for batch."""
    rows = [{**r, "model": model} for r in _latency_rows()]
    plots.latency_curve(pd.DataFrame(rows), "unused", y=y)
    assert figures[0].axes[0].get_ylabel() == label


def test_latency_curve_of_mixed_models_names_both_units(figures):
    rows = _latency_rows()
    rows[0]["model"] = "batch"
    plots.latency_curve(pd.DataFrame(rows), "unused")
    assert figures[0].axes[0].get_ylabel() == "mean latency (rounds for slot, s for batch instances)"

