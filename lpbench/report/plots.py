"""Figures (matplotlib, written as PNG and PDF).

* :func:`ratio_histogram` -- seed 004 Fig. 2: histogram of competitive ratios on proven optima, with the
  certified intervals [policy / best known, policy / bound] of unproven instances drawn as intervals (an open
  one, without a finite bound, dashed to the axis edge with an arrow). Each (instance, policy, repetition) counts
  once, with its tightest certificate over the run's (formulation, solver) pairs.
* :func:`latency_curve`   -- mean request latency against request count (or any numeric row column,
  e.g. an arrival rate) per policy, mean +- std over the run's instances at each x; the y axis in rounds (slot)
  or seconds (batch), and the legend counts the policy rows left out (error, timeout, skipped).
* :func:`memory_plot`     -- KV footprint after each batch of one schedule, against memory M.
* :func:`gantt`           -- one schedule: a row per request, prefill and decode work as bars, evictions
  as red crosses.
The timeline is a replay of the schedule through :mod:`lpbench.semantics` and the instance's cost model,
the same rules the verifier applies (the schedule is verified before it is drawn).

Each figure is written as ``OUT.png`` and ``OUT.pdf`` (:func:`targets`) through :mod:`lpbench.outputs`: both
targets are checked before anything is drawn (an existing file needs ``force``; a directory, a path under a
regular file and the like are refused), and each file is rendered in memory, then written atomically (a
symbolic link at a target is replaced, never written through).
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..instance import Instance
from ..outputs import check_target, write_atomic
from ..schedule import Schedule
from ..semantics import RequestStates
from .tables import proven


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def timeline(inst: Instance, sched: Schedule) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(work, evictions, memory): work = one row per (batch, request) with start, end, phase and tokens;
    evictions = (time, request); memory = KV footprint after each batch (start, end, kv)."""
    st = RequestStates.of(inst)
    work, ev, mem = [], [], []
    for j in range(sched.n_batches):
        r, c, e = sched.batch(j)
        start = float(sched.start[j])
        if len(e):
            st.evict(e)
            ev += [(start, int(i)) for i in e]
        decode = st.is_decode(r)
        end = start + float(inst.cost_model.batch_time(c, st.m[r], decode))
        work += [(j, start, end, int(i), "decode" if d else "prefill", int(k)) for i, k, d in zip(r, c, decode)]
        _, fin = st.process(r, c)
        mem.append((start, end, st.kv_total))
        st.release(r[fin])
    return (pd.DataFrame(work, columns=["batch", "start", "end", "request", "phase", "tokens"]),
            pd.DataFrame(ev, columns=["time", "request"]), pd.DataFrame(mem, columns=["start", "end", "kv"]))


def targets(out: str | Path, force: bool = False, make_parents: bool = True) -> list[Path]:
    """``OUT.png`` and ``OUT.pdf``, both checked (``InputError`` for a path that must not be written; a missing
    directory too unless ``make_parents``). A ``.png`` or ``.pdf`` ending of ``out`` is dropped; any other is kept
    (``fig.v2`` gives ``fig.v2.png``)."""
    text = str(out)
    base = Path(out)
    if base.name in ("", ".", ".."):
        raise InputError(f"--out: {text!r} is not a file name; give OUT for OUT.png and OUT.pdf")
    if text.endswith(("/", os.sep)) or base.is_dir():
        # Path("pl/") is Path("pl"): the figures would land beside the directory, as pl.png and pl.pdf
        raise InputError(f"--out: {text} is a directory; give a file name (OUT for OUT.png and OUT.pdf)")
    if base.suffix in (".png", ".pdf"):
        base = base.with_suffix("")
    paths = [base.with_name(base.name + ".png"), base.with_name(base.name + ".pdf")]
    for p in paths:
        check_target(p, force, make_parents=make_parents)
    return paths


def _save(fig, out: str | Path, force: bool = False) -> list[Path]:
    """Render ``fig`` as PNG and PDF, then write both to :func:`targets`."""
    paths = targets(out, force)
    images = []
    for p in paths:
        buf = io.BytesIO()
        fig.savefig(buf, format=p.suffix[1:], dpi=150, bbox_inches="tight")
        images.append(buf.getvalue())
    _plt().close(fig)
    for p, data in zip(paths, images):
        write_atomic(p, lambda tmp, data=data: Path(tmp).write_bytes(data), force)
    return paths


def _tightest(p: pd.DataFrame) -> pd.DataFrame:
    """One row per (instance, policy, repetition): its tightest certificate over the (formulation, solver)
    pairs -- a proven row (status optimal, interval collapsed) if any, else the narrowest interval (an open one,
    without an upper end, counts as infinitely wide), then the higher lower end; ties go to the first pair by name."""
    p = p.copy()
    upper = pd.to_numeric(p["ratio_upper"], errors="coerce")
    lower = pd.to_numeric(p["ratio_lower"], errors="coerce")
    p["_open"] = upper.isna() | ~np.isfinite(upper)
    p["proven"] = proven(p)
    p["_width"] = (upper - lower).where(~p["_open"], np.inf)
    p["_neg_lower"] = -lower
    for c in ("formulation", "solver"):
        p["_" + c] = p[c].fillna("-").astype(str) if c in p.columns else "-"
    p = p.sort_values(["proven", "_width", "_neg_lower", "_formulation", "_solver"],
                      ascending=[False, True, True, True, True], kind="mergesort")
    return p.drop_duplicates(["instance_hash", "method", "repetition"]).drop(
        columns=["_width", "_neg_lower", "_formulation", "_solver"])


def ratio_histogram(df: pd.DataFrame, out, policy: str | None = None, bins: int = 20,
                    force: bool = False) -> list[Path]:
    """Histogram of the ratios on proven optima over an interval panel for the rest. Each (instance, policy,
    repetition) is counted once, with its tightest certificate over the run's (formulation, solver) pairs
    (:func:`_tightest`; a policy row is repeated per pair). Proven as in ``ratio_table``: status optimal and a
    collapsed interval. An open interval (no finite upper end) is drawn dashed to the axis edge, with an arrow."""
    p = df[(df["kind"] == "policy") & df["ratio_lower"].notna()]
    if policy:
        p = p[p["method"] == policy]
    if p.empty:
        raise InputError("RUN: no policy row with a competitive ratio" + (f" for policy {policy!r}" if policy else ""))
    pairs = p[["formulation", "solver"]].fillna("-").drop_duplicates().shape[0]
    p = _tightest(p)
    reps = p["repetition"].nunique() if "repetition" in p.columns else 1
    one, many = ("instance", "instances") if reps <= 1 else ("(instance, repetition)", "(instance, repetition)s")
    plt = _plt()
    proven = p[p["proven"]]
    unproven = p[~p["proven"]].sort_values(["method", "ratio_lower", "ratio_upper"])
    finite_upper = unproven.loc[~unproven["_open"], "ratio_upper"]
    hi = np.nanmax([p["ratio_lower"].max(), finite_upper.max() if len(finite_upper) else np.nan])
    # the right edge of the shared x axis: open intervals end there, with an arrow
    right = max(hi, 1.0 + 1e-3) * (1.06 if unproven["_open"].any() else 1.0001)
    panels = [k for k, part in (("hist", proven), ("intervals", unproven)) if len(part)]
    heights = [3 if k == "hist" else max(2.0, 0.12 * len(unproven)) for k in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(6.4, sum(heights) + 1.0), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color_of = {m: cycle[k % len(cycle)] for k, m in enumerate(sorted(p["method"].unique()))}
    for ax, k in zip(axes[:, 0], panels):
        if k == "hist":
            edges = np.linspace(1.0, max(hi, 1.0 + 1e-3) * 1.0001, bins + 1)
            for name, g in proven.groupby("method"):
                ax.hist(g["ratio_lower"], bins=edges, alpha=0.6, color=color_of[name],
                        label=f"{name} ({len(g)} proven {'optimum' if len(g) == 1 else 'optima'})")
            ax.set_ylabel(many)
            ax.yaxis.get_major_locator().set_params(integer=True)
        else:  # one row per unproven (instance, repetition): [policy / best known, policy / bound]
            for name, g in unproven.groupby("method", sort=False):
                y = np.flatnonzero(unproven["method"].to_numpy() == name)
                color = color_of[name]
                is_open = g["_open"].to_numpy()
                n_open = int(is_open.sum())
                label = (f"{name}: certified interval ({len(g)} not proven"
                         + (f", {n_open} open above" if n_open else "") + ")")
                lo = g["ratio_lower"].to_numpy(float)
                up = pd.to_numeric(g["ratio_upper"], errors="coerce").to_numpy(float)
                if (~is_open).any():
                    ax.hlines(y[~is_open], lo[~is_open], up[~is_open], lw=1.5, color=color, label=label)
                    ax.plot(up[~is_open], y[~is_open], "|", color=color, ms=6)
                    label = None
                if n_open:  # no finite upper end: dashed to the axis edge, an arrow head there
                    ax.hlines(y[is_open], lo[is_open], right, lw=1.5, color=color, ls=(0, (3, 2)), label=label)
                    ax.plot(np.full(n_open, right), y[is_open], ">", color=color, ms=5, clip_on=False)
                ax.plot(lo, y, "|", color=color, ms=6)
            if unproven["_open"].any():
                ax.plot([], [], ls=(0, (3, 2)), marker=">", color="gray", ms=5,
                        label="open above: no finite upper end (drawn to the axis edge)")
            ax.set_ylabel(f"{one} (sorted)")
            ax.set_yticks([])
            ax.invert_yaxis()
        # beside the axes: inside, it covered bars (the two-pair ratio figure of audit 12)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if unproven["_open"].any():
        axes[-1, 0].set_xlim(right=right)
    title = "Competitive ratios" + (f" of {policy}" if policy else "")
    if pairs > 1:
        title += f"\n(each {one} once: its tightest certificate of {pairs} (formulation, solver) pairs)"
    axes[0, 0].set_title(title, fontsize=10 if pairs > 1 else None)
    axes[-1, 0].set_xlabel("competitive ratio (policy objective / optimum)")
    return _save(fig, out, force)


def _time_unit(df: pd.DataFrame, column: str) -> str:
    """`` (rounds)`` / `` (s)`` for a time metric, by the rows' instance model (slot: rounds, batch: seconds), as
    the memory and Gantt figures label their time axes; ``""`` for a count or a KV size."""
    if column not in ("total_latency", "mean_latency", "p99_latency", "ttft_mean", "makespan"):
        return " (KV tokens)" if column == "peak_memory" else ""
    models = set(df["model"].dropna()) if "model" in df.columns else set()
    if models == {"slot"}:
        return " (rounds)"
    if models == {"batch"}:
        return " (s)"
    return " (rounds for slot, s for batch instances)" if models else ""


def latency_curve(df: pd.DataFrame, out, x: str = "requests", y: str = "mean_latency",
                  force: bool = False) -> list[Path]:
    """Mean +- std of ``y`` over the run's (instance, repetition)s at each ``x``, per policy. A policy row
    without ``y`` (an ``error``, ``timeout`` or ``skipped`` row) cannot be drawn: the legend says how many were
    left out per policy, and by status, so a point averaged over fewer instances is not mistaken for all."""
    if x not in df.columns:
        raise InputError(f"--x: unknown column {x!r}")
    pol = df[df["kind"] == "policy"]
    keys = ["instance_hash", "method", "repetition"]
    p = pol[pol[y].notna()].drop_duplicates(keys)
    if p.empty:
        raise InputError(f"RUN: no policy row with {y}")
    # an (instance, policy, repetition) with no row carrying y (a policy row is repeated per (formulation, solver))
    drawn = set(map(tuple, p[keys].to_numpy().tolist()))
    missing = pol.drop_duplicates(keys)
    missing = missing[[k not in drawn for k in map(tuple, missing[keys].to_numpy().tolist())]]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name in sorted(set(p["method"]) | set(missing["method"])):
        g = p[p["method"] == name]
        left = missing[missing["method"] == name]
        label = name
        if len(left):
            why = ", ".join(f"{v} {k}" for k, v in sorted(left["status"].fillna("no status").value_counts().items()))
            label += f" ({len(left)} of {len(g) + len(left)} left out: {why})"
        if g.empty:
            ax.plot([], [], marker="o", ls="none", label=label)
            continue
        s = g.groupby(x)[y].agg(["mean", "std"]).sort_index()
        ax.errorbar(s.index, s["mean"], yerr=s["std"].fillna(0), marker="o", capsize=3, label=label)
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(y.replace("_", " ") + _time_unit(p, y))
    ax.set_title(f"{y.replace('_', ' ')} against {x.replace('_', ' ')} per policy")
    ax.legend(fontsize=8)
    return _save(fig, out, force)


def memory_plot(inst: Instance, sched: Schedule, out, label: str = "", force: bool = False) -> list[Path]:
    _, ev, mem = timeline(inst, sched)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    # the footprint after batch j holds from its start until the next batch starts (or the last one ends)
    t = np.r_[mem["start"].to_numpy(), mem["end"].to_numpy()[-1:]]
    kv = np.r_[mem["kv"].to_numpy(), 0]
    ax.fill_between(t, kv, step="post", alpha=0.5, linewidth=0, label="KV footprint after each batch")
    ax.axhline(inst.memory, color="red", ls="--", label=f"memory M = {inst.memory}")
    if len(ev):
        ax.plot(ev["time"], np.full(len(ev), inst.memory), "x", color="black", label=f"evictions ({len(ev)})")
    ax.set_xlabel("time" + (" (rounds)" if inst.model == "slot" else " (s)"))
    ax.set_ylabel("KV tokens")
    ax.set_title(f"KV memory over time: {inst.name} {label}".strip())
    ax.set_ylim(0, inst.memory * 1.3)
    ax.legend(fontsize=8, loc="upper right", ncols=3)
    return _save(fig, out, force)


def gantt(inst: Instance, sched: Schedule, out, label: str = "", force: bool = False) -> list[Path]:
    work, ev, _ = timeline(inst, sched)
    plt = _plt()
    n = inst.n
    fig, ax = plt.subplots(figsize=(7.5, max(2.5, 0.22 * n + 1.2)))
    colors = {"prefill": "tab:orange", "decode": "tab:blue"}
    for phase, g in work.groupby("phase"):
        ax.barh(g["request"], g["end"] - g["start"], left=g["start"], height=0.7, color=colors[phase],
                label=phase, edgecolor="white", linewidth=0.4 if inst.model == "slot" else 0)
    if len(ev):
        ax.plot(ev["time"], ev["request"], "x", color="red", ms=7, mew=2, label="eviction")
    ax.scatter(inst.arrival, np.arange(n), marker="|", color="black", s=60, label="arrival")
    ax.set_yticks(np.arange(n), [str(i) for i in inst.ids] if n <= 60 else None)
    ax.invert_yaxis()
    ax.set_xlabel("time" + (" (rounds)" if inst.model == "slot" else " (s)"))
    ax.set_ylabel("request")
    ax.set_title(f"Schedule: {inst.name} {label}".strip())
    # outside the axes: inside, it covered the first requests' bars (slot-12, latency-ip)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out, force)
