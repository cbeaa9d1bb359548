"""Seed 001 fluid instances: Poisson requests drawn from a ``types`` block (notes seed-001 §1.1), and a
types block derived from an instance's requests (the seed's §6.3 rule: bin the output lengths).

Drawing: type j gets N_j ~ Poisson(λ_j T) arrivals, uniform on [0, T) (a Poisson process on [0, T)),
each the lpbench request prompt l_j, output l'_j + 1 (stage mapping of :mod:`lpbench.fluid`); all
types' arrivals are merged and sorted. ``numpy.random.default_rng([seed, k])`` for instance k.

Deriving (decision; the seed bins decode lengths 1..500 into 10 bins of 50 and uses each bin's mean
prefill): with l' = O - 1, bin k = ceil(l' / width) for l' >= 1 (k = 1 for l' = 0), capped at ``bins``
(longer outputs join the last bin instead of being dropped); per non-empty bin a type with prompt =
round(mean I), output = max(1, round(mean l')), rate = count / arrival span.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..instance import PromptTypes


def derive_types(inst, width: int = 50, bins: int = 10) -> PromptTypes:
    if inst.n < 2:
        raise InputError("--from: deriving rates needs at least two requests")
    span = float(inst.arrival.max() - inst.arrival.min())
    if span <= 0:
        raise InputError("--from: all requests arrive at once; rates (count / arrival span) are undefined")
    decode = inst.output - 1
    k = np.minimum(np.maximum(np.ceil(decode / width), 1), bins).astype(np.int64)
    prompt, output, rate = [], [], []
    for b in np.unique(k):
        sel = k == b
        prompt.append(max(1, int(round(float(inst.prompt[sel].mean())))))
        output.append(max(1, int(round(float(decode[sel].mean())))))
        rate.append(float(sel.sum()) / span)
    return PromptTypes(np.array(prompt, np.int64), np.array(output, np.int64), np.array(rate))


def draw(types: PromptTypes, horizon: float, seed: int, k: int = 0) -> dict:
    """Poisson requests over [0, horizon) as v1 columnar ``requests``."""
    rng = np.random.default_rng([seed, k])
    counts = rng.poisson(types.rate * horizon)
    arrival = np.concatenate([rng.uniform(0, horizon, c) for c in counts])
    of = np.repeat(np.arange(types.m), counts)
    order = np.argsort(arrival, kind="stable")
    arrival, of = arrival[order], of[order]
    return {"arrival": np.round(arrival, 9).tolist(), "prompt": types.prompt[of].tolist(),
            "output": (types.output[of] + 1).tolist()}


#: the most requests a drawn instance may expect (Σ λ_j · horizon): ten million make a JSON file of about 300 MB
MAX_EXPECTED_REQUESTS = 10_000_000


def instance(base, types: PromptTypes, horizon: float, seed: int, k: int = 0) -> dict:
    if not 0 < horizon < float("inf"):
        raise InputError(f"--horizon: must be a positive time, got {horizon:g}")
    expected = float(types.rate.sum()) * horizon
    if expected > MAX_EXPECTED_REQUESTS:
        raise InputError(f"--horizon: {horizon:g} time units at total rate {float(types.rate.sum()):g} would draw about "
                         f"{expected:.3g} requests, above {MAX_EXPECTED_REQUESTS:,}; use a shorter horizon")
    reqs = draw(types, horizon, seed, k)
    if not reqs["arrival"]:
        raise InputError(f"--horizon: no request arrives in [0, {horizon:g}) with seed {seed}; use a longer horizon")
    return {"name": f"fluid-{base.name}-T{horizon:g}-s{seed}-{k:03d}", "memory": int(base.memory), "model": "batch",
            "cost_model": base.cost_model.spec() if base.cost_model_spec is None else base.cost_model_spec,
            **({} if base.eviction is None else {"eviction": base.eviction}),
            "types": types.to_list(), "requests": reqs}
