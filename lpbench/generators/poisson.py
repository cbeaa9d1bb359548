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
    """The (prompt, output) pairs of ``--lengths``: non-negative integer token counts, a 0 counted as 1 (a
    trace's empty completions); anything else is refused with the column and the first bad value."""
    expected = ("expected a CSV with ContextTokens,GeneratedTokens or a JSON {\"prompt\": [...], \"output\": [...]} "
                "table")
    try:
        if path.endswith(".json"):
            with open(path) as fh:
                t = json.load(fh)
            if not isinstance(t, dict) or not all(isinstance(t.get(k), list) for k in ("prompt", "output")):
                raise InputError(f"--lengths: {expected}, got {type(t).__name__} of another shape", source=path)
            prompt, output = _token_counts(t["prompt"], "prompt", path), _token_counts(t["output"], "output", path)
        else:
            df = pd.read_csv(path, usecols=["ContextTokens", "GeneratedTokens"])
            prompt = _token_counts(df["ContextTokens"], "ContextTokens", path)
            output = _token_counts(df["GeneratedTokens"], "GeneratedTokens", path)
    except FileNotFoundError:
        raise InputError("--lengths: no such file", source=path) from None
    except IsADirectoryError:
        raise InputError("--lengths: is a directory, not a length table", source=path) from None
    except (KeyError, ValueError, UnicodeDecodeError, RecursionError) as e:  # json.JSONDecodeError is a ValueError
        raise InputError(f"--lengths: {expected} ({e})", source=path) from None
    if len(prompt) == 0 or len(prompt) != len(output):
        raise InputError("--lengths: the table must have equally many prompts and outputs, at least one", source=path)
    return np.maximum(prompt, 1), np.maximum(output, 1)


def _token_counts(values, column: str, path: str) -> np.ndarray:
    """``values`` as int64 token counts: each a finite integer in [0, MAX_INT]."""
    from ..instance import MAX_INT

    raw = list(values)
    number = (int, float, np.integer, np.floating)
    x = np.array([v if isinstance(v, number) and not isinstance(v, (bool, np.bool_)) else np.nan for v in raw],
                 dtype=np.float64)
    bad = ~(np.isfinite(x) & (x == np.floor(x)) & (x >= 0) & (x <= MAX_INT))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"--lengths: {column}[{i}] must be a token count (an integer >= 0), got {raw[i]!r}",
                         source=path)
    return x.astype(np.int64)


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
