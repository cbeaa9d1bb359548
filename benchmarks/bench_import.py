"""Streaming import at scale (not a test; figures go in the README).

    python benchmarks/bench_import.py --rows 10000000 [--dir /tmp]

Writes a synthetic Azure-format trace of ROWS rows (TIMESTAMP,ContextTokens,GeneratedTokens; Poisson
arrivals at 1000/s, lengths uniform), imports it with ``lpbench import azure`` in a child process and
reports wall time, the child's peak resident memory (ru_maxrss) and the output size, then deletes both.
"""
import argparse
import os
import resource
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--rows", type=int, default=10_000_000)
ap.add_argument("--dir", default="/tmp")
args = ap.parse_args()

src = Path(args.dir) / f"lpbench-bench-import-{os.getpid()}.csv"
out = src.with_suffix(".json")
rng = np.random.default_rng(0)
t0 = datetime(2024, 5, 10)
with open(src, "w") as fh:
    fh.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
    done = 0
    while done < args.rows:
        k = min(1_000_000, args.rows - done)
        us = np.cumsum(rng.integers(1, 2000, k)) + (done * 1000)
        p, o = rng.integers(1, 8000, k), rng.integers(1, 1000, k)
        fh.writelines(f"{(t0 + timedelta(microseconds=int(u))):%Y-%m-%d %H:%M:%S.%f}0,{a},{b}\n"
                      for u, a, b in zip(us, p, o))
        done += k
print(f"trace: {args.rows:,} rows, {src.stat().st_size / 1e6:.0f} MB", flush=True)
try:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lpbench.cli", "import", "azure", str(src), "--out", str(out)], check=True)
    wall = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"import: {wall:.1f} s, peak RSS {rss:.0f} MB, instance {out.stat().st_size / 1e6:.0f} MB")
finally:
    src.unlink(missing_ok=True)
    out.unlink(missing_ok=True)
