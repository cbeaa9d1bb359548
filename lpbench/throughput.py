"""Throughput of a verified schedule over a horizon, beside seed 001's bound (notes seed-001 §1.5, §6.2, §6.11).

The one end-of-horizon rule, applied to every policy alike
--------------------------------------------------------------
* Window (t0, T]: T = ``horizon`` (default: the last arrival), t0 = ``warmup`` (default 0).
* A request counts iff its completion time (end of the batch generating its last token, from the
  verifier's replay) lies in (t0, T]. It contributes its l' = O - 1 decode tokens (the paper counts
  "throughput only after prompt completion", decode tokens only; the first token is the prefill
  batch's, see :mod:`lpbench.fluid`). Work in flight at T and partial decodes count nothing.
* After the last arrival the threshold policies flush (every type / segment with work is eligible), so
  every schedule completes and verifies; what completes after T is outside the window.
* Reported: completions and decode tokens per time unit, generated tokens (Σ O) per time unit, the
  ratio of decode-token throughput to Θ_UB(C) of the instance's types (:mod:`lpbench.fluid`), the ratio of
  completions to the most completions per time unit that the same knapsack LP allows (Σ y_j maximised, not
  the Σ y_j of Θ_UB's solution, which undercounts when memory binds), and mean latency and TTFT over the
  requests counted (and over all requests).
"""
from __future__ import annotations

import numpy as np

from .errors import InputError
from .fluid import capacity_bound, linear_coefficients


def measure(inst, ver, horizon: float | None = None, warmup: float = 0.0) -> dict:
    if not ver.feasible:
        raise InputError("schedule: fails verification; no throughput is reported for it")
    T = float(inst.arrival.max()) if horizon is None else float(horizon)
    if not T > warmup:
        if horizon is None:
            raise InputError(f"--horizon: the window ends at the last arrival {T:g} by default, which does not "
                             f"exceed the warm-up {warmup:g}; give --horizon T > {warmup:g}")
        raise InputError(f"--horizon: must exceed the warm-up {warmup:g}, got {T:g}")
    c = ver.completion
    inside = (c > warmup) & (c <= T)
    span = T - warmup
    decode = (inst.output - 1)[inside]
    latency = (c - inst.arrival)
    ttft = ver.first_token - inst.arrival
    out = {
        "window": [warmup, T],
        "completed": int(inside.sum()),
        "completions_per_time": float(inside.sum()) / span,
        "throughput": float(decode.sum()) / span,
        "generated_tokens_per_time": float(inst.output[inside].sum()) / span,
        "mean_latency": float(latency[inside].mean()) if inside.any() else None,
        "ttft_mean": float(ttft[inside].mean()) if inside.any() else None,
        "mean_latency_all": float(latency.mean()),
        "ttft_mean_all": float(ttft.mean()),
        "peak_memory": ver.metrics["peak_memory"],
        "evictions": ver.metrics["evictions"],
    }
    if inst.types is not None and inst.cost_model.form == "linear":
        d0, d1 = linear_coefficients(inst)
        bound, _ = capacity_bound(inst.types, d0, d1, inst.memory)  # valid for any load (notes §2.5)
        # the same LP with every completion worth 1 (its own greedy order: short memory-work first)
        completions_bound, _ = capacity_bound(inst.types, d0, d1, inst.memory, np.ones(len(inst.types.rate)))
        out.update(throughput_bound=bound, ratio=out["throughput"] / bound,
                   completions_bound=completions_bound,
                   completions_ratio=out["completions_per_time"] / completions_bound)
    return out
