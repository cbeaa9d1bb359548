"""Solver backends and named profiles (``solvers.toml``). Every backend returns the same
:class:`SolveResult`: status, objective (offset included), best bound, relative gap, seconds, x."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..errors import InputError
from ..registry import Registry
from ..tomlfile import read_toml

BACKENDS: Registry[type["Backend"]] = Registry("solver backend")
#: the largest threads and seed of a profile: a seed is a 32-bit signed integer in every backend (CP-SAT's
#: random_seed, HiGHS's random_seed, Gurobi's Seed); more than 1024 threads is a typo, not a machine
MAX_THREADS, MAX_SEED = 1024, 2**31 - 1
INT_FIELDS_MAX = {"threads": MAX_THREADS, "seed": MAX_SEED}
STATUSES = ("optimal", "feasible", "infeasible", "time_limit", "licence_limit", "interrupted", "refused", "error")


@dataclass
class SolverProfile:
    name: str
    backend: str
    time_limit: float = 60.0
    rel_gap: float = 1e-6
    threads: int = 1
    seed: int = 0
    options: dict = field(default_factory=dict)


@dataclass
class SolveResult:
    status: str
    objective: float | None = None
    bound: float | None = None
    solve_seconds: float = 0.0
    x: np.ndarray | None = None
    message: str = ""

    @property
    def gap(self) -> float | None:
        if self.objective is None or self.bound is None:
            return None
        return abs(self.objective - self.bound) / max(abs(self.objective), 1e-12)


class Backend:
    name: ClassVar[str]
    integer_only: ClassVar[bool] = False

    def solve(self, model, profile: SolverProfile, warm_x: np.ndarray | None = None) -> SolveResult:
        raise NotImplementedError


def solvers_toml() -> Path:
    env = os.environ.get("LPBENCH_SOLVERS")
    if env:
        return Path(env)
    here = Path.cwd() / "solvers.toml"
    return here if here.is_file() else Path(__file__).resolve().parents[2] / "solvers.toml"


def load_profiles() -> dict[str, SolverProfile]:
    path = solvers_toml()
    data = read_toml(path, f"no solvers.toml found (looked at {path}; set LPBENCH_SOLVERS)")
    profiles = {}
    if not isinstance(data.get("solver", {}), dict):
        raise InputError(f"{path}: solver: must be a table of profiles ([solver.NAME]), got {data['solver']!r}")
    for name, spec in data.get("solver", {}).items():
        where = f"{path}: solver.{name}"
        if not isinstance(spec, dict) or "backend" not in spec:
            raise InputError(f"{where}.backend: missing; expected one of {', '.join(BACKENDS.names())}")
        if spec["backend"] not in BACKENDS:
            raise InputError(f"{where}.backend: unknown backend {spec['backend']!r}; expected one of "
                             f"{', '.join(BACKENDS.names())}")
        unknown = set(spec) - {"backend", "time_limit", "rel_gap", "threads", "seed", "options"}
        if unknown:
            raise InputError(f"{where}.{sorted(unknown)[0]}: unknown key; expected backend, time_limit, rel_gap, "
                             "threads, seed, options")
        for key in ("time_limit", "rel_gap"):
            v = spec.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0):
                raise InputError(f"{where}.{key}: must be a non-negative number, got {v!r}")
        if spec.get("time_limit") is not None and not spec["time_limit"] > 0:  # 0 s: the solve gets no time at all
            raise InputError(f"{where}.time_limit: must be a positive number of seconds, got {spec['time_limit']!r}")
        if spec.get("rel_gap") is not None and spec["rel_gap"] > 1:
            raise InputError(f"{where}.rel_gap: must be a relative gap in [0, 1], got {spec['rel_gap']!r}")
        for key, least in (("threads", 1), ("seed", 0)):
            v = spec.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < least):
                raise InputError(f"{where}.{key}: must be an integer >= {least}, got {v!r}")
            if v is not None and v > INT_FIELDS_MAX[key]:  # backends take 32-bit values; more threads is a typo
                raise InputError(f"{where}.{key}: must be an integer in [{least}, {INT_FIELDS_MAX[key]}], got {v!r}")
        if not isinstance(spec.get("options", {}), dict):
            raise InputError(f"{where}.options: must be a table of backend options, got {spec['options']!r}")
        profiles[name] = SolverProfile(name=name, **{k: v for k, v in spec.items()})
    return profiles


def get_profile(name: str, time_limit: float | None = None) -> SolverProfile:
    profiles = load_profiles()
    if name not in profiles:
        raise InputError(f"--solver: unknown solver profile {name!r}; expected one of: {', '.join(profiles)}")
    prof = profiles[name]
    if time_limit is not None:
        if not math.isfinite(time_limit) or time_limit <= 0:
            raise InputError(f"--time-limit: must be a positive number of seconds, got {time_limit}")
        prof.time_limit = time_limit
    return prof
