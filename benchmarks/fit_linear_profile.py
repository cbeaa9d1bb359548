"""Fit the seed-001 linear cost model tau = d0 + d1 * KV to measured decode-iteration times.

Data: ../shared/data/splitwise-perf/perf_model.csv (splitwise, MIT): median ``token_time`` (ms per
decode iteration) of Llama2-70B on A100-80GB at a tensor-parallel degree. The KV of a decode batch
is taken at mid-generation: batch_size * (prompt_size + token_size / 2). Prints d0, d1 in seconds
and the R^2; models/linear-llama2-70b-tp2-a100.toml records the output of

    python benchmarks/fit_linear_profile.py --tp 2
"""
import argparse
from pathlib import Path

import numpy as np
import pandas as pd

ap = argparse.ArgumentParser()
ap.add_argument("--csv", default=str(Path(__file__).resolve().parents[1].parent / "shared/data/splitwise-perf/perf_model.csv"))
ap.add_argument("--model", default="llama2-70b")
ap.add_argument("--hardware", default="a100-80gb")
ap.add_argument("--tp", type=int, default=2)
args = ap.parse_args()

d = pd.read_csv(args.csv)
d = d[(d.model == args.model) & (d.hardware == args.hardware) & (d.tensor_parallel == args.tp)]
g = d.groupby(["prompt_size", "batch_size", "token_size"])["token_time"].median().reset_index()
kv = (g.batch_size * (g.prompt_size + g.token_size / 2)).to_numpy(float)
y = g.token_time.to_numpy(float) / 1000.0
A = np.column_stack([np.ones_like(kv), kv])
(d0, d1), *_ = np.linalg.lstsq(A, y, rcond=None)
r2 = 1 - ((y - A @ [d0, d1]) ** 2).sum() / ((y - y.mean()) ** 2).sum()
print(f"points={len(y)} d0={d0:.6g} s d1={d1:.6g} s/token R2={r2:.3f}")
