"""Seed 003 workloads (§4.1-4.6, §5.1), offline (every request arrives at 0), batch model.

* ``uniform``: B requests with the same I and O.
* ``mix``: the §4.6 heterogeneous workloads. Groups S = {8, 16} and L = {512, 1024}: SISO (I∈S, O∈S),
  SILO, LISO, LILO; a workload pairs two groups (six pairs). Decisions (unstated in the paper): each
  group gets half of the B requests (the first group the extra one when B is odd), I and O are drawn
  uniformly from the group's sets, and the order is shuffled, all with rng([seed, B]).
* ``csp51``: the §5.1 family: O = B = 4, M = max(2I, I + O − 1).

Defaults follow §4.1: InferMax Llama-2-7B/A100 cost model, C = 4096, M = 100,000. B is at most
:data:`lpbench.generators.MAX_REQUESTS` (``--B``; refused above it, exit 2).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from . import announce, check_requests

GROUPS = {"SISO": ("S", "S"), "SILO": ("S", "L"), "LISO": ("L", "S"), "LILO": ("L", "L")}
SETS = {"S": (8, 16), "L": (512, 1024)}
PAIRS = ["SISO+SILO", "SISO+LISO", "SISO+LILO", "SILO+LISO", "SILO+LILO", "LISO+LILO"]
COST = "infermax-llama2-7b-a100"


def _instance(name, prompt, output, memory, cost_model=COST, token_budget=4096) -> dict:
    n = len(prompt)
    return {"name": name, "memory": int(memory), "model": "batch", "cost_model": cost_model,
            "limits": {"token_budget": int(token_budget)},
            "requests": {"arrival": [0] * n, "prompt": np.asarray(prompt, dtype=np.int64).tolist(),
                         "output": np.asarray(output, dtype=np.int64).tolist()}}


def uniform(I: int, O: int, B: int, memory: int = 100_000, log=announce, **kw) -> dict:
    """``log(name, B)`` announces a large instance (:func:`lpbench.generators.announce`; None: silent)."""
    check_requests(B, "--B")
    name = f"uniform-I{I}-O{O}-B{B}-M{memory}"
    if log:
        log(name, B)
    return _instance(name, np.full(B, I, dtype=np.int64), np.full(B, O, dtype=np.int64), memory, **kw)


def mix(pair: str, B: int, seed: int = 0, memory: int = 100_000, log=announce, **kw) -> dict:
    parts = pair.upper().split("+")
    if len(parts) != 2 or any(p not in GROUPS for p in parts):
        raise InputError(f"--mix: expected two of {', '.join(GROUPS)} joined by '+', got {pair!r}")
    check_requests(B, "--B")
    name = f"mix-{parts[0]}+{parts[1]}-B{B}-s{seed}"
    if log:
        log(name, B)
    rng = np.random.default_rng([seed, B])
    sizes = [B - B // 2, B // 2]
    prompt, output = [], []
    for group, k in zip(parts, sizes):
        si, so = GROUPS[group]
        prompt.append(rng.choice(SETS[si], k))
        output.append(rng.choice(SETS[so], k))
    order = rng.permutation(B)
    return _instance(name, np.concatenate(prompt)[order], np.concatenate(output)[order], memory, **kw)


def csp51(I: int, O: int = 4, B: int = 4, **kw) -> dict:
    memory = max(2 * I, I + O - 1)
    return _instance(f"csp51-I{I}", [I] * B, [O] * B, memory, **kw)
