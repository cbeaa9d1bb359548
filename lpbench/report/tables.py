"""Tables from a run's rows, each a pandas DataFrame (``render`` writes Markdown, LaTeX or CSV).

* :func:`latency_table`  -- seed 004 Table 1 layout: per policy, the average / std / max / min over the
  run's experiments (instances x repetitions) of each experiment's mean request latency.
* :func:`ratio_table`    -- seed 004 §5.1 competitive-ratio summary per policy (and certifying formulation
  x solver): best / worst / mean ratio, how many exactly optimal (ratio 1 on a proven optimum), how many
  proven, and the certified interval [min lower end, max upper end] over the unproven ones.
* :func:`gap_table`      -- optimality gap and solve seconds per formulation x solver. The gap is (best
  verified schedule - the row's bound) / best verified schedule, a relaxation's too; "optimal" counts rows
  whose solver reached its own optimum (for a relaxation: its bound is final, not that it meets a schedule).
* :func:`solves_table`   -- one row per solve: status, objective, bound, gap, model size and seconds.
* :func:`csp51_table`    -- seed 003 §5.1: per instance, the CSP's makespan, status and bound against the
  best eviction-free (``*-ef``) and the best evicting policy.
Policy rows are repeated once per (formulation, solver) that certified them; tables that describe the
policy alone count each (instance, policy, repetition) once. ``by`` columns group the rows as well: they come
first, and a table's own key that is also a ``by`` column appears once (``--by method`` or ``--by solver``
changes the order, not the groups). LaTeX output escapes ``_``, ``&``, ``%`` and the other special characters.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from . import TABLE_FORMATS


def _keys(by: list[str] | None, own: list[str]) -> list[str]:
    """The ``by`` columns, then the table's ``own`` keys, each once."""
    return list(dict.fromkeys([*(by or []), *own]))


def _policies(df: pd.DataFrame) -> pd.DataFrame:
    p = df[(df["kind"] == "policy") & df["objective"].notna()]
    return p.drop_duplicates(["instance_hash", "method", "repetition"])


def latency_table(df: pd.DataFrame, by: list[str] | None = None, column: str = "mean_latency") -> pd.DataFrame:
    p = _policies(df)
    keys = _keys(by, ["method"])
    t = p.groupby(keys)[column].agg(["mean", "std", "max", "min", "count"])
    t.columns = ["average", "std. dev.", "max", "min", "experiments"]
    return t.reset_index().rename(columns={"method": "algorithm"})


def proven(p: pd.DataFrame) -> pd.Series:
    """Policy rows whose ratio is proven: status optimal and the interval collapsed, as solve reports a proven
    optimum (a relaxation solved to its own optimum has status optimal too, but its interval stays open unless its
    bound meets the best schedule). The ratio table and the ratio histogram both count by it."""
    upper = pd.to_numeric(p["ratio_upper"], errors="coerce")
    lower = pd.to_numeric(p["ratio_lower"], errors="coerce")
    return (p["status"] == "optimal") & np.isfinite(upper) & ((upper - lower).abs() <= 1e-9 * lower)


def ratio_table(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    p = df[(df["kind"] == "policy") & df["ratio_lower"].notna()].copy()
    p["proven"] = proven(p)
    p["exact"] = p["proven"] & (p["ratio_lower"] <= 1 + 1e-9)
    keys = _keys(by, ["method", "formulation", "solver"])

    def summary(g):
        pr = g[g["proven"]]
        un = g[~g["proven"]]
        return pd.Series({
            "instances": len(g), "proven": int(g["proven"].sum()), "exactly optimal": int(g["exact"].sum()),
            "best": pr["ratio_lower"].min() if len(pr) else None,
            "worst": pr["ratio_lower"].max() if len(pr) else None,
            "mean": pr["ratio_lower"].mean() if len(pr) else None,
            # an unproven row without a bound leaves the interval open above
            "certified interval (unproven)": (f"[{un['ratio_lower'].min():.4g}, "
                                              + (f"{un['ratio_upper'].max():.4g}]" if un["ratio_upper"].notna().all()
                                                 else "inf)") if len(un) else "-")})

    rows = [dict(zip(keys, k if isinstance(k, tuple) else (k,))) | summary(g).to_dict()
            for k, g in p.groupby(keys)]
    return pd.DataFrame(rows).rename(columns={"method": "policy"})


def gap_table(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    f = df[df["kind"] == "formulation"]
    keys = _keys(by, ["formulation", "solver"])
    rows = []
    for k, g in f.groupby(keys):
        rows.append(dict(zip(keys, k)) | {
            "instances": len(g), "optimal": int((g["status"] == "optimal").sum()),
            "failed": int(g["status"].isin(["error", "timeout"]).sum()),
            "median gap": g["gap"].median(), "max gap": g["gap"].max(),
            "median solve s": g["solve_seconds"].median(), "max solve s": g["solve_seconds"].max(),
            "median build s": g["build_seconds"].median()})
    return pd.DataFrame(rows)


def _natural_key(names: pd.Series) -> pd.Series:
    """The trailing number of an instance name (csp51-I2 before csp51-I16), NaN where there is none."""
    return names.str.extract(r"(\d+)$")[0].astype(float)


def solves_table(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Every formulation row as it was solved (e.g. the seed 003 §5.1 MILP sweep): status, objective and
    bound in the formulation's own metric and unit, gap, variables and rows (what a size-limited solver
    licence counts), build and solve seconds. The repetition column appears only when the run has several."""
    f = df[df["kind"] == "formulation"]
    keys = _keys(by, ["instance", "formulation", "solver", "repetition"])
    table = f[_keys(keys, ["status", "objective", "bound", "gap", "variables", "rows", "build_seconds",
                           "solve_seconds"])]
    table = (table.assign(_k=_natural_key(table["instance"]))
             .sort_values(_keys(by, ["_k", "instance", "formulation", "solver", "repetition"]), kind="stable")
             .drop(columns="_k")
             .rename(columns={"build_seconds": "build s", "solve_seconds": "solve s"}))
    if table["repetition"].nunique() <= 1:
        table = table.drop(columns="repetition")
    return table.astype({"variables": "Int64", "rows": "Int64"}).reset_index(drop=True)


def csp51_table(df: pd.DataFrame, formulation: str = "infermax-csp") -> pd.DataFrame:
    """Seed 003 §5.1 (the layout of ``benchmarks/bench_infermax.py`` before the suite runner): per instance
    and solver, the CSP's status, makespan and bound, the best eviction-free (``*-ef``) and the best other
    ("evicting") policy with their ratios to the CSP, the evictions of the CSP's reported schedule, and its
    solve seconds. Times in ms (the paper's unit). ``I`` is read from the generator's name ``csp51-I<I>``
    (other names keep an ``instance`` column); the solver column appears only when the run has several.
    A policy's objective is taken from a row in the CSP's metric (makespan), never from one of another
    formulation's (a suite that also runs ``batch-bound`` has total-latency rows for the same policies).
    A tie between policies goes to the alphabetically first."""
    f = df[(df["kind"] == "formulation") & (df["formulation"] == formulation)]
    ms = 1e3
    rows = []
    for _, r in f.iterrows():
        # the policies' objectives in the CSP's own metric (a suite may also certify them by a total-latency model)
        same = df[df["objective_metric"] == r["objective_metric"]]
        pol = _policies(same).sort_values("method", kind="stable")
        ps = pol[pol["instance_hash"] == r["instance_hash"]]
        ef, ev = ps[ps["method"].str.endswith("-ef")], ps[~ps["method"].str.endswith("-ef")]
        best_ef = ef.loc[ef["objective"].idxmin()] if len(ef) else None
        best_ev = ev.loc[ev["objective"].idxmin()] if len(ev) else None
        csp = r["objective"] if pd.notna(r["objective"]) and r["objective"] > 0 else None
        rows.append({"instance": r["instance"], "solver": r["solver"], "status": r["status"],
                     "CSP ms": None if csp is None else csp * ms,
                     "bound ms": None if pd.isna(r["bound"]) else r["bound"] * ms,
                     "best EF ms": None if best_ef is None else best_ef["objective"] * ms,
                     "(EF policy)": None if best_ef is None else best_ef["method"],
                     "best evict ms": None if best_ev is None else best_ev["objective"] * ms,
                     "(evict policy)": None if best_ev is None else best_ev["method"],
                     "EF/CSP": None if best_ef is None or csp is None else best_ef["objective"] / csp,
                     "evict/CSP": None if best_ev is None or csp is None else best_ev["objective"] / csp,
                     "CSP evictions": r.get("evictions"),
                     "solve s": r["solve_seconds"]})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    size = table["instance"].str.extract(r"^csp51-I(\d+)$")[0]
    if size.notna().all():  # the generator's sweep: a column I, in numeric order
        table = table.assign(instance=size.astype(int)).rename(columns={"instance": "I"})
        order = ["I", "solver"]
    else:
        table = table.assign(_k=_natural_key(table["instance"]))
        order = ["_k", "instance", "solver"]
    table = table.sort_values(order, kind="stable").drop(columns=["_k"], errors="ignore")
    if table["solver"].nunique() <= 1:
        table = table.drop(columns="solver")
    table["CSP evictions"] = table["CSP evictions"].astype("Int64")
    return table.reset_index(drop=True)


TABLES = {"latency": latency_table, "ratio": ratio_table, "gap": gap_table, "solves": solves_table,
          "csp51": csp51_table}


def render(table: pd.DataFrame, fmt: str, floatfmt: str = ".4g") -> str:
    if fmt == "md":
        return table.to_markdown(index=False, floatfmt=floatfmt)
    if fmt == "latex":
        return table.to_latex(index=False, float_format=lambda v: format(v, floatfmt), na_rep="-", escape=True)
    if fmt == "csv":
        return table.to_csv(index=False)
    raise InputError(f"--format: expected one of {', '.join(TABLE_FORMATS)}, got {fmt!r}")
