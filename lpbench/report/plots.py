"""Figures (matplotlib, written as PNG and PDF).

* :func:`ratio_histogram` -- seed 004 Fig. 2: histogram of competitive ratios on proven optima, with the
  certified intervals [policy / best known, policy / bound] of unproven instances drawn as intervals.
* :func:`latency_curve`   -- mean request latency against request count (or any numeric row column,
  e.g. an arrival rate) per policy, mean +- std over the run's instances at each x.
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


def ratio_histogram(df: pd.DataFrame, out, policy: str | None = None, bins: int = 20,
                    force: bool = False) -> list[Path]:
    p = df[(df["kind"] == "policy") & df["ratio_lower"].notna()]
    if policy:
        p = p[p["method"] == policy]
    p = p.drop_duplicates(["instance_hash", "method", "repetition", "formulation", "solver"])
    if p.empty:
        raise InputError("RUN: no policy row with a competitive ratio" + (f" for policy {policy!r}" if policy else ""))
    plt = _plt()
    proven = p[p["status"] == "optimal"]
    unproven = p[p["status"] != "optimal"].sort_values(["method", "ratio_lower", "ratio_upper"])
    hi = np.nanmax([p["ratio_lower"].max(), unproven["ratio_upper"].max() if len(unproven) else np.nan])
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
                ax.hist(g["ratio_lower"], bins=edges, alpha=0.6, color=color_of[name], label=f"{name} ({len(g)} proven optima)")
            ax.set_ylabel("instances")
            ax.yaxis.get_major_locator().set_params(integer=True)
        else:  # one row per unproven instance: [policy / best known, policy / bound]
            for name, g in unproven.groupby("method", sort=False):
                y = np.flatnonzero(unproven["method"].to_numpy() == name)
                color = color_of[name]
                ax.hlines(y, g["ratio_lower"], g["ratio_upper"].fillna(hi), lw=1.5, color=color,
                          label=f"{name}: certified interval ({len(g)} not proven)")
                ax.plot(g["ratio_lower"], y, "|", color=color, ms=6)
                ax.plot(g["ratio_upper"], y, "|", color=color, ms=6)
            ax.set_ylabel("instance (sorted)")
            ax.set_yticks([])
            ax.invert_yaxis()
        ax.legend(fontsize=8, loc="best")
    axes[0, 0].set_title("Competitive ratios" + (f" of {policy}" if policy else ""))
    axes[-1, 0].set_xlabel("competitive ratio (policy objective / optimum)")
    return _save(fig, out, force)


def latency_curve(df: pd.DataFrame, out, x: str = "requests", y: str = "mean_latency",
                  force: bool = False) -> list[Path]:
    if x not in df.columns:
        raise InputError(f"--x: unknown column {x!r}")
    p = df[(df["kind"] == "policy") & df[y].notna()].drop_duplicates(["instance_hash", "method", "repetition"])
    if p.empty:
        raise InputError(f"RUN: no policy row with {y}")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, g in p.groupby("method"):
        s = g.groupby(x)[y].agg(["mean", "std"]).sort_index()
        ax.errorbar(s.index, s["mean"], yerr=s["std"].fillna(0), marker="o", capsize=3, label=name)
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(y.replace("_", " "))
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
