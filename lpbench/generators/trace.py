"""Instances from request traces: the Azure LLM inference traces 2023 (CC-BY-4.0) and any CSV with
the columns ``TIMESTAMP,ContextTokens,GeneratedTokens``. Arrivals are seconds since the first request."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError


def from_trace_csv(path: str, memory: int, cost_model="infermax-llama2-7b-a100", limit: int | None = None,
                   limits: dict | None = None, name: str | None = None) -> dict:
    try:
        df = pd.read_csv(path, nrows=limit)
    except FileNotFoundError:
        raise InputError("no such trace file", source=path) from None
    missing = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"} - set(df.columns)
    if missing:
        raise InputError(f"trace is missing column(s) {', '.join(sorted(missing))}", source=path)
    ts = pd.to_datetime(df["TIMESTAMP"])
    arrival = (ts - ts.min()).dt.total_seconds().to_numpy()
    prompt = np.maximum(df["ContextTokens"].to_numpy(np.int64), 1)
    output = np.maximum(df["GeneratedTokens"].to_numpy(np.int64), 1)
    keep = prompt + output - 1 <= memory  # requests that can never fit are dropped, and counted
    data = {"name": name or f"trace-{len(df)}", "memory": int(memory), "model": "batch", "cost_model": cost_model,
            "requests": {"arrival": np.round(arrival[keep], 6).tolist(), "prompt": prompt[keep].tolist(),
                         "output": output[keep].tolist()}}
    if limits:
        data["limits"] = limits
    return data
