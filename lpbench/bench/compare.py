"""Regression check between two runs: rows matched on the instance content hash (not the file name),
the row kind, method, formulation, solver and repetition.

A regression is any of (minimisation throughout):
* ``objective``  -- the objective changed on an instance proven optimal in both runs;
* ``status``     -- the status got worse (optimal < feasible/time_limit/certified/verified < licence_limit/refused
                    < infeasible/skipped < timeout < error), or a baseline row is missing from NEW; ``refused`` (a model
                    too large to build) ranks with ``licence_limit``: both report the run's verified schedule;
* ``bound``      -- a certified lower bound decreased, or a gap or a ratio interval's upper end grew;
* ``verified``   -- a schedule verified in BASELINE no longer verifies;
* ``time``       -- build + solve seconds grew by more than ``time_tol`` (relative) and by at least
                    ``time_floor`` seconds (timings on a loaded machine jitter by tens of milliseconds).
"""
from __future__ import annotations

import math

import pandas as pd

KEY = ["instance_hash", "kind", "method", "formulation", "solver", "repetition"]
RANK = {"optimal": 0, "feasible": 1, "time_limit": 1, "certified": 1, "verified": 1, "licence_limit": 2, "refused": 2,
        "infeasible": 3, "skipped": 3, "timeout": 4, "error": 5}
TOL = 1e-6


def _num(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _true(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v)) and bool(v)


def _worse_up(old, new) -> bool:
    """``new`` exceeds ``old`` beyond the tolerance (a missing new value where an old one existed too)."""
    old, new = _num(old), _num(new)
    if old is None:
        return False
    return new is None or new > old + TOL * max(1.0, abs(old))


def compare_runs(base: pd.DataFrame, new: pd.DataFrame, time_tol: float = 0.5,
                 time_floor: float = 0.5) -> pd.DataFrame:
    """One row per matched (or missing) key with the values side by side and ``regressions`` (';'-joined)."""
    def keyed(frame):
        f = frame.copy()
        for c in ("formulation", "solver"):
            f[c] = f[c].fillna("-")
        f["seconds"] = f["build_seconds"].fillna(0) + f["solve_seconds"].fillna(0)
        return f.drop_duplicates(KEY).set_index(KEY)

    b, n = keyed(base), keyed(new)
    out = []
    for key in b.index.union(n.index):
        rb = b.loc[key] if key in b.index else None
        rn = n.loc[key] if key in n.index else None
        reg = []
        if rn is None:
            reg.append("missing in NEW")
        elif rb is not None:
            sb, sn = rb["status"], rn["status"]
            if RANK.get(sn, 5) > RANK.get(sb, 5):
                reg.append(f"status {sb} -> {sn}")
            if sb == "optimal" and sn == "optimal" and _num(rb["objective"]) is not None and (
                    _num(rn["objective"]) is None
                    or abs(rn["objective"] - rb["objective"]) > TOL * max(1.0, abs(rb["objective"]))):
                reg.append(f"optimal objective {rb['objective']:g} -> {rn['objective']}")
            if _num(rb["bound"]) is not None and (_num(rn["bound"]) is None
                                                  or rn["bound"] < rb["bound"] - TOL * max(1.0, abs(rb["bound"]))):
                reg.append(f"bound {rb['bound']:g} -> {rn['bound']}")
            if _worse_up(rb["gap"], rn["gap"]):
                reg.append(f"gap {rb['gap']:g} -> {rn['gap']}")
            if _worse_up(rb["ratio_upper"], rn["ratio_upper"]):
                reg.append(f"ratio upper {rb['ratio_upper']:g} -> {rn['ratio_upper']}")
            if _true(rb["verified"]) and not _true(rn["verified"]):
                reg.append("schedule no longer verifies")
            if rn["seconds"] > rb["seconds"] * (1 + time_tol) and rn["seconds"] - rb["seconds"] >= time_floor:
                reg.append(f"time {rb['seconds']:.3g}s -> {rn['seconds']:.3g}s")
        src = rn if rn is not None else rb
        out.append({**dict(zip(KEY, key)), "instance": src["instance"],
                    "status_base": None if rb is None else rb["status"], "status_new": None if rn is None else rn["status"],
                    "objective_base": None if rb is None else _num(rb["objective"]),
                    "objective_new": None if rn is None else _num(rn["objective"]),
                    "bound_base": None if rb is None else _num(rb["bound"]),
                    "bound_new": None if rn is None else _num(rn["bound"]),
                    "seconds_base": None if rb is None else rb["seconds"],
                    "seconds_new": None if rn is None else rn["seconds"],
                    "regressions": "; ".join(reg)})
    return pd.DataFrame(out)
