"""Real-data-style instances: Poisson arrivals in seconds (rate lambda per second) with (prompt,
output) pairs drawn uniformly, with replacement, from a trace CSV (``ContextTokens,
GeneratedTokens``, e.g. the Azure 2023 traces) or from a JSON length table
``{"prompt": [...], "output": [...]}`` (pairs by position). Batch model. At most
:data:`lpbench.generators.MAX_REQUESTS` requests per instance (``--requests``), and every arrival time must stay
within an instance's bound (``--rate`` not so small that n / rate exceeds it)."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ..errors import InputError
from . import announce, check_requests


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
            prompt = _token_counts(df["ContextTokens"], "ContextTokens", path, csv=True)
            output = _token_counts(df["GeneratedTokens"], "GeneratedTokens", path, csv=True)
    except FileNotFoundError:
        raise InputError("--lengths: no such file", source=path) from None
    except IsADirectoryError:
        raise InputError("--lengths: is a directory, not a length table", source=path) from None
    except (KeyError, ValueError, UnicodeDecodeError, RecursionError) as e:  # json.JSONDecodeError is a ValueError
        raise InputError(f"--lengths: {expected} ({e})", source=path) from None
    if len(prompt) == 0 or len(prompt) != len(output):
        raise InputError("--lengths: the table must have equally many prompts and outputs, at least one", source=path)
    return np.maximum(prompt, 1), np.maximum(output, 1)


def _number(v, csv: bool) -> float:
    """A cell as a float (nan when it is no number). In a CSV column that holds any text, pandas keeps every
    cell as a string (``'5'``), so a CSV cell's text is parsed; a JSON string is not a number."""
    if isinstance(v, (bool, np.bool_)):
        return math.nan
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    if csv and isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return math.nan
    return math.nan


def _token_counts(values, column: str, path: str, csv: bool = False) -> np.ndarray:
    """``values`` as int64 token counts: each a finite integer in [0, MAX_INT]; the first bad one is named by
    its index (and, in a CSV, its data row)."""
    from ..instance import MAX_INT

    raw = list(values)
    x = np.array([_number(v, csv) for v in raw], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(x) & (x == np.floor(x)) & (x >= 0) & (x <= MAX_INT))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f" (data row {i + 1} of the CSV)" if csv else ""
        raise InputError(f"--lengths: {column}[{i}] must be a token count (an integer >= 0), got {raw[i]!r}{where}",
                         source=path)
    return x.astype(np.int64)


def instance(seed: int, k: int, n: int, rate: float, memory: int, prompt: np.ndarray, output: np.ndarray,
             cost_model, limits: dict | None = None, log=announce) -> dict:
    from ..instance import MAX_ARRIVAL as latest  # the latest arrival time an instance may hold

    check_requests(n, "--requests")
    if not (math.isfinite(rate) and rate > 0):
        raise InputError(f"--rate: must be a positive number of arrivals per second, got {rate!r}")
    span = (n - 1) / rate  # the expected last arrival (s)

    def too_slow(last: float) -> InputError:
        return InputError(f"--rate: {rate:g} arrivals per second spread the {n:,} requests over about {last:.3g} s, "
                          f"above the {latest:g} s an arrival time may be; use a larger --rate or fewer --requests")
    if not math.isfinite(1.0 / rate) or span > latest:
        raise too_slow(span)
    fit = np.flatnonzero(prompt + output - 1 <= memory)
    if len(fit) == 0:
        raise InputError(f"--memory: no (prompt, output) pair of the length table fits in memory {memory}")
    name = f"poisson-r{rate:g}-s{seed}-{k:03d}"
    if log:
        log(name, n)
    rng = np.random.default_rng([seed, k])
    pick = rng.choice(fit, n)
    arrival = np.cumsum(rng.exponential(1.0 / rate, n))
    arrival -= arrival[0]
    if not arrival[-1] <= latest:  # this draw ran past the bound (the expected span is within it)
        raise too_slow(float(arrival[-1]))
    data = {"name": name, "memory": int(memory), "model": "batch",
            "cost_model": cost_model,
            "requests": {"arrival": np.round(arrival, 6).tolist(), "prompt": prompt[pick].tolist(),
                         "output": output[pick].tolist()}}
    if limits:
        data["limits"] = limits
    return data
