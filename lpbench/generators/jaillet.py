"""Seed 004 §5.1 synthetic instances (notes seed-004 §5.1, §6.1.7), slot model.

Per trial: M ~ U{30..50}; per request s_i ~ U{1..5}, o_i ~ U{1..M - s_i} (so s_i + o_i <= M).
* Model 1 (all at once): n ~ U{40..60}, every a_i = 0.
* Model 2 (online stochastic): T ~ U{40..60}, lambda ~ U[0.5, 1.5] (continuous, drawn once per trial);
  for each t in 1..T, Poisson(lambda) requests arrive at t. Decision: a trial with no arrival at all
  is redrawn (probability < e^-20).

Instance k of ``generate(model, seed, count)`` uses ``numpy.random.default_rng([seed, k])``, so a
(seed, k) pair always gives the same instance.
"""
from __future__ import annotations

import numpy as np


def _requests(rng, M: int, arrival: np.ndarray) -> dict:
    n = len(arrival)
    s = rng.integers(1, 6, n)
    o = np.array([rng.integers(1, M - si + 1) for si in s])
    return {"arrival": arrival.astype(int).tolist(), "prompt": s.tolist(), "output": o.tolist()}


def model1(rng) -> tuple[int, np.ndarray]:
    M = int(rng.integers(30, 51))
    n = int(rng.integers(40, 61))
    return M, np.zeros(n, dtype=np.int64)


def model2(rng) -> tuple[int, np.ndarray]:
    M = int(rng.integers(30, 51))
    T = int(rng.integers(40, 61))
    lam = float(rng.uniform(0.5, 1.5))
    while True:
        counts = rng.poisson(lam, T)
        if counts.sum() > 0:
            break
    return M, np.repeat(np.arange(1, T + 1), counts)


def instance(model: str, seed: int, k: int, first: int | None = None) -> dict:
    """Draw k of ``model`` under ``seed``; with ``first``, only its first ``first`` requests (the n-ladder's
    prefixes; same name and memory, the draw's random numbers unchanged)."""
    rng = np.random.default_rng([seed, k])
    M, arrival = (model1 if model == "jaillet-model1" else model2)(rng)
    requests = _requests(rng, M, arrival)
    if first is not None:
        requests = {key: values[:first] for key, values in requests.items()}
    return {"name": f"{model}-s{seed}-{k:03d}", "memory": M, "model": "slot", "requests": requests}
