"""Real-data-style instances: Poisson arrivals in seconds (rate lambda per second) with (prompt,
output) pairs drawn uniformly, with replacement, from a trace CSV (``ContextTokens,
GeneratedTokens``, e.g. the Azure 2023 traces) or from a JSON length table
``{"prompt": [...], "output": [...]}`` (pairs by position). Batch model."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..errors import InputError


def length_table(path: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        if path.endswith(".json"):
            with open(path) as fh:
                t = json.load(fh)
            prompt, output = np.asarray(t["prompt"], dtype=np.int64), np.asarray(t["output"], dtype=np.int64)
        else:
            df = pd.read_csv(path, usecols=["ContextTokens", "GeneratedTokens"])
            prompt, output = df["ContextTokens"].to_numpy(np.int64), df["GeneratedTokens"].to_numpy(np.int64)
    except FileNotFoundError:
        raise InputError("--lengths: no such file", source=path) from None
    except (KeyError, ValueError, json.JSONDecodeError) as e:
        raise InputError(f"--lengths: expected a CSV with ContextTokens,GeneratedTokens or a JSON "
                         f"{{\"prompt\": [...], \"output\": [...]}} table ({e})", source=path) from None
    if len(prompt) == 0 or len(prompt) != len(output):
        raise InputError("--lengths: the table must have equally many prompts and outputs, at least one", source=path)
    return np.maximum(prompt, 1), np.maximum(output, 1)


def instance(seed: int, k: int, n: int, rate: float, memory: int, prompt: np.ndarray, output: np.ndarray,
             cost_model, limits: dict | None = None) -> dict:
    rng = np.random.default_rng([seed, k])
    fit = np.flatnonzero(prompt + output - 1 <= memory)
    if len(fit) == 0:
        raise InputError(f"--memory: no (prompt, output) pair of the length table fits in memory {memory}")
    pick = rng.choice(fit, n)
    arrival = np.cumsum(rng.exponential(1.0 / rate, n))
    arrival -= arrival[0]
    data = {"name": f"poisson-r{rate:g}-s{seed}-{k:03d}", "memory": int(memory), "model": "batch",
            "cost_model": cost_model,
            "requests": {"arrival": np.round(arrival, 6).tolist(), "prompt": prompt[pick].tolist(),
                         "output": output[pick].tolist()}}
    if limits:
        data["limits"] = limits
    return data
