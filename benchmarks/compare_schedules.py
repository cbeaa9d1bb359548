"""Schedule identity check for changes to shared simulator/policy code (not a test: about 2 minutes).

    python benchmarks/compare_schedules.py save /tmp/ref.pkl     # at the old commit
    python benchmarks/compare_schedules.py check /tmp/ref.pkl    # at the new commit

Simulates every applicable policy on 12 random batch instances (tests/helpers.py, memory-tight, with and
without a token budget), the shipped infermax-7b-mix40 and the first 1,500 Azure conversation requests,
and compares every schedule batch for batch (starts, requests, tokens, evictions)."""
import argparse
import pickle
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from helpers import random_batch_instance  # noqa: E402

from lpbench.instance import load_instance, parse_instance  # noqa: E402
from lpbench.policies import applicable, make_policy  # noqa: E402
from lpbench.sim import simulate  # noqa: E402
from lpbench.traces import ImportSpec, import_trace  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("mode", choices=("save", "check"), help="save the schedules, or check them against a saved file")
parser.add_argument("path", help="the pickle of saved schedules")
args = parser.parse_args()
mode, path = args.mode, args.path
insts = [random_batch_instance(s, n=60, limits={"token_budget": 512} if s % 2 else None) for s in range(12)]
insts.append(load_instance(ROOT / "instances/infermax-7b-mix40.json"))
head, cols = import_trace(str(ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"),
                          ImportSpec.for_format("azure", memory=100_000, token_budget=16384))
az = parse_instance({**head, "requests": {key: v.tolist() for key, v in cols.items()}})
k = 1500
insts.append(replace(az, arrival=az.arrival[:k], prompt=az.prompt[:k], output=az.output[:k], ids=list(range(k))))
out = {}
for j, inst in enumerate(insts):
    for p in applicable(inst):
        try:
            s = simulate(inst, make_policy(p, inst)).schedule
        except Exception as e:  # a policy that cannot serve the instance must fail the same way
            out[(j, p)] = repr(e)
            continue
        out[(j, p)] = (s.start, s.req, s.tokens, s.evict, s.ptr, s.eptr)
if mode == "save":
    with open(path, "wb") as fh:
        pickle.dump(out, fh)
    print(f"{len(out)} schedules saved")
else:
    with open(path, "rb") as fh:
        ref = pickle.load(fh)
    differ = [key for key, v in ref.items() if key in out and not (
        v == out[key] if isinstance(v, str) else
        (not isinstance(out[key], str) and all(np.array_equal(a, b) for a, b in zip(v, out[key]))))]
    for key in differ:
        print("DIFF", key)
    print(f"{sum(key in out for key in ref)} compared, {len(differ)} differ")
    sys.exit(1 if differ else 0)
