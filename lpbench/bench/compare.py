"""Regression check between two runs: rows matched on the instance content hash (not the file name),
the row kind, method, formulation, solver and repetition.

A regression is any of (minimisation throughout):
* ``objective``  -- a formulation row's objective changed on an instance proven optimal in both runs; a policy
                    row's objective grew (``objective X -> Y``);
* ``metrics``    -- on a policy row that holds the policy's own verified schedule in both runs (status
                    ``verified``, ``optimal`` or ``certified``), one of the latency metrics (``total_latency``,
                    ``mean_latency``, ``p99_latency``, ``ttft_mean``, ``makespan``, ``peak_memory``,
                    ``evictions``; :data:`~lpbench.bench.runner.LATENCY_METRICS`) grew (``evictions 0 -> 50``).
                    A policy's schedule is a deterministic simulation for the task's seed, so any change is a
                    change of the code; lower is better for all of them, so a decrease is an improvement and is
                    not flagged. This is what a simulation-only suite (status ``verified``: no bound, gap or
                    ratio) is checked on. A formulation row's metrics are not compared: a proven optimum can be
                    reached by several schedules, and which one a solve keeps depends on timing;
* ``status``     -- the status got worse (optimal < feasible/time_limit/certified/verified < licence_limit/refused
                    < infeasible/skipped < timeout < error), or a baseline row is missing from NEW; ``refused`` (a model
                    too large to build) ranks with ``licence_limit``: both report the run's verified schedule;
* ``bound``      -- a certified lower bound decreased, or a gap or a ratio interval's upper end grew;
* ``verified``   -- a schedule verified in BASELINE no longer verifies;
* ``time``       -- the task's time grew by more than ``time_tol`` (relative) and by at least ``time_floor``
                    seconds (timings on a loaded machine jitter by tens of milliseconds). The time is the task's
                    ``wall_seconds`` (the whole task: policies, incumbent search, bound step, build and solve)
                    when both rows have it, else ``build_seconds + solve_seconds``. It is checked once per task,
                    on its formulation row (on the policy row of a simulation-only task), and not when the
                    baseline row failed (``error``/``timeout``: it has no meaningful time) or the status
                    improved (a task that now finishes may well take longer).
All tolerances other than time's are relative, ``1e-6`` of the baseline value (at least ``1e-6``).
"""
from __future__ import annotations

import math

import pandas as pd

from .runner import FAILED, LATENCY_METRICS

KEY = ["instance_hash", "kind", "method", "formulation", "solver", "repetition"]
RANK = {"optimal": 0, "feasible": 1, "time_limit": 1, "certified": 1, "verified": 1, "licence_limit": 2, "refused": 2,
        "infeasible": 3, "skipped": 3, "timeout": 4, "error": 5}
#: statuses of a policy row that holds the policy's own verified schedule (its objective and metrics)
SIMULATED = ("verified", "optimal", "certified")
TOL = 1e-6


def _num(v):
    return None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else float(v)


def _true(v) -> bool:
    return v is not None and v is not pd.NA and not (isinstance(v, float) and math.isnan(v)) and bool(v)


def _worse_up(old, new) -> bool:
    """``new`` exceeds ``old`` beyond the tolerance (a missing new value where an old one existed too)."""
    old, new = _num(old), _num(new)
    if old is None:
        return False
    return new is None or new > old + TOL * max(1.0, abs(old))


def _g(v) -> str:
    v = _num(v)
    return "None" if v is None else f"{v:g}"


def compare_runs(base: pd.DataFrame, new: pd.DataFrame, time_tol: float = 0.5,
                 time_floor: float = 0.5) -> pd.DataFrame:
    """One row per matched (or missing) key with the values side by side and ``regressions`` (';'-joined).
    ``seconds_base``/``seconds_new`` are the times compared: the task's wall time where both runs have it."""
    def keyed(frame):
        f = frame.copy()
        for c in ("formulation", "solver"):
            f[c] = f[c].fillna("-")
        f["build_solve"] = f["build_seconds"].fillna(0) + f["solve_seconds"].fillna(0)
        f["wall"] = f["wall_seconds"] if "wall_seconds" in f.columns else float("nan")
        for m in LATENCY_METRICS:
            if m not in f.columns:
                f[m] = None
        return f.drop_duplicates(KEY).set_index(KEY)

    b, n = keyed(base), keyed(new)
    out = []
    for key in b.index.union(n.index):
        rb = b.loc[key] if key in b.index else None
        rn = n.loc[key] if key in n.index else None
        kind, formulation = key[1], key[3]
        reg = []
        if rb is not None and rn is not None and _num(rb["wall"]) is not None and _num(rn["wall"]) is not None:
            sec_b, sec_n = float(rb["wall"]), float(rn["wall"])
        elif rb is not None and rn is not None:
            sec_b, sec_n = float(rb["build_solve"]), float(rn["build_solve"])
        else:  # shown only: the one row's own time
            one = rb if rb is not None else rn
            sec = float(one["wall"]) if _num(one["wall"]) is not None else float(one["build_solve"])
            sec_b, sec_n = (sec, None) if rb is not None else (None, sec)
        if rn is None:
            reg.append("missing in NEW")
        elif rb is not None:
            sb, sn = rb["status"], rn["status"]
            if RANK.get(sn, 5) > RANK.get(sb, 5):
                reg.append(f"status {sb} -> {sn}")
            if kind == "formulation":
                if sb == "optimal" and sn == "optimal" and _num(rb["objective"]) is not None and (
                        _num(rn["objective"]) is None
                        or abs(rn["objective"] - rb["objective"]) > TOL * max(1.0, abs(rb["objective"]))):
                    reg.append(f"optimal objective {rb['objective']:g} -> {_g(rn['objective'])}")
            elif sb in SIMULATED and sn in SIMULATED:  # the policy's own schedule: deterministic for the seed
                if _worse_up(rb["objective"], rn["objective"]):
                    reg.append(f"objective {_g(rb['objective'])} -> {_g(rn['objective'])}")
                for m in LATENCY_METRICS:
                    if _worse_up(rb[m], rn[m]):
                        reg.append(f"{m} {_g(rb[m])} -> {_g(rn[m])}")
            if _num(rb["bound"]) is not None and (_num(rn["bound"]) is None
                                                  or rn["bound"] < rb["bound"] - TOL * max(1.0, abs(rb["bound"]))):
                reg.append(f"bound {rb['bound']:g} -> {_g(rn['bound'])}")
            if _worse_up(rb["gap"], rn["gap"]):
                reg.append(f"gap {rb['gap']:g} -> {_g(rn['gap'])}")
            if _worse_up(rb["ratio_upper"], rn["ratio_upper"]):
                reg.append(f"ratio upper {rb['ratio_upper']:g} -> {_g(rn['ratio_upper'])}")
            if _true(rb["verified"]) and not _true(rn["verified"]):
                reg.append("schedule no longer verifies")
            # once per task: its formulation row, or the one policy row of a simulation-only task
            timed = kind == "formulation" or formulation == "-"
            improved = RANK.get(sn, 5) < RANK.get(sb, 5)
            if (timed and sb not in FAILED and not improved and sec_n > sec_b * (1 + time_tol)
                    and sec_n - sec_b >= time_floor):
                reg.append(f"time {sec_b:.3g}s -> {sec_n:.3g}s")
        src = rn if rn is not None else rb
        out.append({**dict(zip(KEY, key)), "instance": src["instance"],
                    "status_base": None if rb is None else rb["status"], "status_new": None if rn is None else rn["status"],
                    "objective_base": None if rb is None else _num(rb["objective"]),
                    "objective_new": None if rn is None else _num(rn["objective"]),
                    "bound_base": None if rb is None else _num(rb["bound"]),
                    "bound_new": None if rn is None else _num(rn["bound"]),
                    "seconds_base": sec_b, "seconds_new": sec_n,
                    "regressions": "; ".join(reg)})
    return pd.DataFrame(out)
