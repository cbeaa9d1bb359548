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
from ..tomlfile import is_shipped, note_shadowing, read_toml, search_order, shipped

BACKENDS: Registry[type["Backend"]] = Registry("solver backend")
#: the largest threads and seed of a profile: a seed is a 32-bit signed integer in every backend (CP-SAT's
#: random_seed, HiGHS's random_seed, Gurobi's Seed); more than 1024 threads is a typo, not a machine
MAX_THREADS, MAX_SEED = 1024, 2**31 - 1
INT_FIELDS_MAX = {"threads": MAX_THREADS, "seed": MAX_SEED}
#: the longest time limit, a week, for a profile, `solve --time-limit` and a bench suite alike (1e30 s is a typo)
MAX_SECONDS = 7 * 24 * 3600
#: the message of an unbounded or infeasible-or-unbounded outcome, status "error", in every backend: no shipped
#: formulation is unbounded, so one that is has a bug
UNBOUNDED = "unbounded (or infeasible): a formulation bug"
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

    @staticmethod
    def check_options(where: str, options: dict) -> None:
        """Refuse (InputError, naming ``where``.options.KEY) backend options that cannot work, when the profile
        is read. The default checks nothing (Gurobi checks its options when it runs: gurobipy may be absent)."""


#: the profiles shipped with lpbench (the repository's solvers.toml, or the wheel's copy of it)
SHIPPED = shipped("solvers.toml")


def solvers_tomls() -> list[Path]:
    """The files profiles are read from, in order, the first definition of a name winning: ``$LPBENCH_SOLVERS``
    (when set; it must exist), ``./solvers.toml`` (when the working directory has one), then the shipped
    :data:`SHIPPED`. A user file adds profiles and may shadow a shipped one (warned once); the other shipped
    profiles stay available. Before, the first file found replaced all the others."""
    env = os.environ.get("LPBENCH_SOLVERS")
    here = Path.cwd() / "solvers.toml"
    return search_order([*([Path(env)] if env else []), *(p for p in (here, SHIPPED) if p.is_file())])


def _read_file(path: Path) -> dict[str, SolverProfile]:
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
        if spec.get("time_limit") is not None and not 0 < spec["time_limit"] <= MAX_SECONDS:  # 0 s: no time at all
            raise InputError(f"{where}.time_limit: must be a positive number of seconds, at most {MAX_SECONDS} (a "
                             f"week), got {spec['time_limit']!r}")
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
        BACKENDS.get(spec["backend"]).check_options(where, spec.get("options", {}))
        profiles[name] = SolverProfile(name=name, **{k: v for k, v in spec.items()})
    return profiles


def load_profiles() -> dict[str, SolverProfile]:
    """Every profile of :func:`solvers_tomls`, the first definition of a name winning; a user profile that
    shadows a shipped one is noted once (an LpbenchWarning, printed by the CLI as ``lpbench: warning: ...``)."""
    files = solvers_tomls()
    if not files:
        raise InputError(f"no solvers.toml found (looked at {Path.cwd() / 'solvers.toml'} and {SHIPPED}; "
                         "set LPBENCH_SOLVERS)")
    profiles: dict[str, SolverProfile] = {}
    origin: dict[str, Path] = {}
    for path in files:
        shipped = is_shipped(path, SHIPPED)
        for name, prof in _read_file(path).items():
            if name not in profiles:
                profiles[name], origin[name] = prof, path
            elif shipped:
                note_shadowing(f"solver profile {name!r}", origin[name], path)
    return profiles


def get_profile(name: str, time_limit: float | None = None) -> SolverProfile:
    profiles = load_profiles()
    if name not in profiles:
        raise InputError(f"--solver: unknown solver profile {name!r}; expected one of: {', '.join(profiles)}")
    prof = profiles[name]
    if time_limit is not None:
        if not math.isfinite(time_limit) or time_limit <= 0 or time_limit > MAX_SECONDS:
            raise InputError(f"--time-limit: must be a positive number of seconds, at most {MAX_SECONDS} (a week), got "
                             f"{time_limit}")
        prof.time_limit = time_limit
    return prof
