"""Solver-neutral models and the formulation registry.

A formulation builds a :class:`LinearModel` -- plain arrays: variable blocks with bounds, costs and
integrality, constraint blocks in COO form with row bounds, and a constant objective offset -- from an
:class:`~lpbench.instance.Instance`. Every solver backend (HiGHS, CP-SAT, Gurobi, Pyomo) and the
LP/MPS exporter consume the same object, so one source of truth feeds several emitters.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from ..errors import InputError
from ..registry import Registry

INF = float("inf")
#: models with more constraint-matrix entries than this are refused before they are built (about
#: 100 bytes per entry while building and passing the model: 20 M entries ~ 2 GB); override with the
#: environment variable LPBENCH_MAX_NONZEROS
MAX_NONZEROS = 20_000_000
FORMULATIONS: Registry[type["Formulation"]] = Registry("formulation")


def max_nonzeros() -> int:
    """The size limit in force: ``LPBENCH_MAX_NONZEROS`` if set, else ``MAX_NONZEROS``."""
    return int(os.environ.get("LPBENCH_MAX_NONZEROS", MAX_NONZEROS))


@dataclass
class LinearModel:
    name: str
    offset: float = 0.0  # constant added to the objective (e.g. Σ (o_i - a_i) in seed 004 (1))
    unit: float = 1.0    # one objective unit in reported units (1e-3: the model is in ms, reports s)
    cost: list = field(default_factory=list)
    lower: list = field(default_factory=list)
    upper: list = field(default_factory=list)
    integer: list = field(default_factory=list)
    var_blocks: dict = field(default_factory=dict)  # name -> (first index, size)
    row_blocks: dict = field(default_factory=dict)  # name -> (first row, size)
    _coo: list = field(default_factory=list)
    row_lower: list = field(default_factory=list)
    row_upper: list = field(default_factory=list)
    n_rows: int = 0
    var_names: list = field(default_factory=list)  # per block: list of names, or None
    row_names: list = field(default_factory=list)

    @property
    def n_vars(self) -> int:
        return sum(len(c) for c in self.cost)

    def add_vars(self, name: str, size: int, lower=0.0, upper=INF, integer=False, cost=0.0,
                 names: list[str] | None = None) -> np.ndarray:
        first = self.n_vars
        self.var_names.append(names)
        self.cost.append(np.broadcast_to(np.asarray(cost, dtype=np.float64), (size,)).copy())
        self.lower.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (size,)).copy())
        self.upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (size,)).copy())
        self.integer.append(np.broadcast_to(np.asarray(integer, dtype=bool), (size,)).copy())
        self.var_blocks[name] = (first, size)
        return np.arange(first, first + size)

    def add_rows(self, name: str, n: int, rows, cols, vals, lower=-INF, upper=INF,
                 names: list[str] | None = None) -> None:
        """Constraint block ``name``: rows 0..n-1 (local), entries (rows, cols, vals), lower <= A x <= upper."""
        first = self.n_rows
        self.row_names.append(names)
        self._coo.append((np.asarray(rows, dtype=np.int64) + first, np.asarray(cols, dtype=np.int64),
                          np.asarray(vals, dtype=np.float64)))
        self.row_lower.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (n,)).copy())
        self.row_upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (n,)).copy())
        self.row_blocks[name] = (first, n)
        self.n_rows += n

    # -- flat views for the emitters -------------------------------------------------------------
    def arrays(self):
        """(cost, lower, upper, integer, row_lower, row_upper) as flat numpy arrays."""
        cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt)  # noqa: E731
        return (cat(self.cost, np.float64), cat(self.lower, np.float64), cat(self.upper, np.float64),
                cat(self.integer, bool), cat(self.row_lower, np.float64), cat(self.row_upper, np.float64))

    def names(self):
        """(variable names, row names) for export. A block without names of its own gets its block name made
        an identifier, with the index within the block ("window volume <= M (t - tau)" row 3:
        ``window_volume_M_t_tau_3``; a name that would start with a digit is prefixed ``v_``/``r_``)."""
        used: set[str] = set()

        def flat(blocks, parts, prefix):
            out = []
            for (bname, (first, size)), names in zip(blocks.items(), parts):
                if names is None:
                    base = re.sub(r"[^0-9A-Za-z]+", "_", bname).strip("_") or prefix
                    if base[0].isdigit():
                        base = f"{prefix}_{base}"
                    if base in used:  # two block names that read alike
                        base = f"{base}_{len(used)}"
                    used.add(base)
                    names = [f"{base}_{k}" for k in range(size)]
                out.extend(names)
            return out

        return flat(self.var_blocks, self.var_names, "v"), flat(self.row_blocks, self.row_names, "r")

    def coo(self):
        if not self._coo:
            z = np.zeros(0, dtype=np.int64)
            return z, z, np.zeros(0)
        return tuple(np.concatenate([p[k] for p in self._coo]) for k in range(3))

    def csr(self):
        """(start, index, value) by row."""
        r, c, v = self.coo()
        return _compress(r, c, v, self.n_rows)

    def csc(self):
        """(start, index, value) by column."""
        r, c, v = self.coo()
        return _compress(c, r, v, self.n_vars)

    def is_mip(self) -> bool:
        return any(b.any() for b in self.integer)

    def objective_value(self, x: np.ndarray) -> float:
        """The objective of x in reported units."""
        return (float(np.concatenate(self.cost) @ x) + self.offset) * self.unit

    def reported(self, res):
        """A backend's SolveResult (model units) in reported units."""
        if self.unit == 1.0:
            return res
        scale = lambda v: None if v is None else v * self.unit  # noqa: E731
        return replace(res, objective=scale(res.objective), bound=scale(res.bound))

    def max_violation(self, x: np.ndarray) -> float:
        """Largest bound or row violation of x (for checking warm starts and solutions)."""
        cost, lo, up, integer, rlo, rup = self.arrays()
        r, c, v = self.coo()
        ax = np.zeros(self.n_rows)
        np.add.at(ax, r, v * x[c])
        viol = [np.maximum(lo - x, 0), np.maximum(x - up, 0), np.maximum(rlo - ax, 0), np.maximum(ax - rup, 0)]
        return float(max((a.max() if len(a) else 0.0) for a in viol))


def _compress(major, minor, value, n_major):
    """Compressed sparse (start, index, value) along ``major`` (rows for CSR, columns for CSC)."""
    n_minor = int(minor.max()) + 1 if len(minor) else 1
    order = np.argsort(major * n_minor + minor, kind="stable")     # by major, then minor
    start = np.zeros(n_major + 1, dtype=np.int64)
    np.cumsum(np.bincount(major, minlength=n_major), out=start[1:])
    return start, minor[order], value[order]


class BuildTimeLimit(Exception):
    """A model's build passed ``Formulation.build_deadline``: it cannot be built within the time limit;
    ``done`` says how far it got."""

    def __init__(self, message: str, done: str):
        super().__init__(message)
        self.done = done


class Formulation:
    """Builds a LinearModel from an instance and maps solutions back to schedules.

    ``exact``: the optimum is the hindsight optimum (a schedule can be extracted); otherwise the
    optimum is a certified lower bound only (a relaxation).
    """

    name: ClassVar[str]
    models: ClassVar[tuple[str, ...]]
    exact: ClassVar[bool]
    integral_objective: ClassVar[bool] = False  # objective of every integer solution is an integer
    objective_metric: ClassVar[str] = "total_latency"  # the verifier metric the objective equals
    summary: ClassVar[str] = ""
    #: whether the model is built from the instance's requests (all but seed 001's, which read its ``types``)
    needs_requests: ClassVar[bool] = True

    #: ``time.perf_counter()`` time by which a build must be done (set by ``solve`` to the end of the time limit;
    #: None: no limit). Builds whose time grows as n² check it between blocks (:meth:`check_build_deadline`)
    build_deadline: float | None = None

    def __init__(self, inst, incumbent_objective: float | None = None):
        self.inst = inst
        self.incumbent_objective = incumbent_objective

    def check_build_deadline(self, done: str) -> None:
        """Raise :class:`BuildTimeLimit` once ``build_deadline`` has passed; ``done`` says how far the build got."""
        if self.build_deadline is not None and time.perf_counter() > self.build_deadline:
            raise BuildTimeLimit(f"{self.name} could not be built within the time limit ({done}); a longer "
                                 "--time-limit, or a bound that scales (volume-bound, lagrange-bound)", done)

    def build(self) -> LinearModel:
        raise NotImplementedError

    def estimate_nonzeros(self) -> int | None:
        """Constraint-matrix entries (or CP-SAT terms) ``build`` would create, computed without building;
        None where the model's size is bounded by construction."""
        return None

    #: what to use instead when the model is too large (named in the refusal)
    scalable_alternative: ClassVar[str] = ""
    #: said by ``lpbench export`` beside the file (e.g. how a maximisation is written, since files minimise)
    export_note: ClassVar[str] = ""

    def check_size(self) -> None:
        """Refuse, before building, a model too large to build in memory (exit 2 with a suggestion)."""
        nnz = self.estimate_nonzeros()
        limit = max_nonzeros()
        if nnz is not None and nnz > limit:
            hint = f"; {self.scalable_alternative}" if self.scalable_alternative else ""
            raise InputError(f"--formulation: {self.name!r} on {self.inst.name} would have about {nnz:,} matrix "
                             f"entries (limit {limit:,}, about {nnz * 100 / 2**30:.1f} GiB to build){hint}")

    def extract(self, x: np.ndarray):
        """A Schedule from a solution vector (exact formulations only)."""
        raise NotImplementedError

    def warm_start(self, schedule) -> np.ndarray | None:
        """A solution vector from a schedule, or None if it lies outside the model's domain."""
        return None


class ClosedForm(Formulation):
    """A formulation that lpbench's own code computes in ``solve`` (a closed form, a subgradient search, an
    exact search): nothing is built for a solver, so ``build`` records an empty model."""

    closed_form: ClassVar[bool] = True

    def build(self):
        self.n_vars = self.n_rows = 0
        return self
