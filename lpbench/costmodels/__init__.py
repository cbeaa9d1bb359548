"""GPU cost models: one small interface (:class:`CostModel`), one module per form, and named
profiles in ``models/*.toml`` files (each naming its source): ``$LPBENCH_MODELS`` and ``./models`` are searched
first, then the shipped ``models/`` (:func:`models_dirs`; the repository's, or the wheel's copy of it)."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..tomlfile import is_shipped, note_shadowing, read_toml, search_order, shipped
from . import infermax, linear, piecewise, tiled, unit  # noqa: F401  (register the forms)
from .base import FORMS, CostModel

__all__ = ["FORMS", "CostModel", "build", "models_dirs", "profile_names", "profile_path", "load_profile", "read_profile"]


SHIPPED = shipped("models")


def models_dirs() -> list[Path]:
    """Where profiles are looked up, first match wins: ``$LPBENCH_MODELS`` (when set), ``./models`` (when the
    working directory has one), then the shipped ``models/``. A profile of an earlier folder shadows a shipped
    one of the same name (:func:`read_profile` notes it once); the shipped profiles stay available."""
    env = os.environ.get("LPBENCH_MODELS")
    here = Path.cwd() / "models"
    return search_order([*([Path(env)] if env else []), *([here] if here.is_dir() else []), SHIPPED])


def profile_names() -> list[str]:
    """Every profile name of :func:`models_dirs` (a shadowed name once)."""
    return sorted({p.stem for d in models_dirs() if d.is_dir() for p in d.glob("*.toml")})


def profile_path(name: str) -> Path | None:
    """The file that defines profile ``name`` (the first of :func:`models_dirs` that has it), or None."""
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        return None
    for d in models_dirs():
        path = d / f"{name}.toml"
        try:
            if path.is_file():
                return path
        except OSError:              # a name the system refuses (too long): no such profile
            continue
    return None


def read_profile(name: str) -> dict:
    path = profile_path(name)
    if path is None:
        raise InputError(f"cost_model: unknown profile {name!r}; expected one of: {', '.join(profile_names())} "
                         f"(looked in {', '.join(str(d) for d in models_dirs())})")
    shipped = SHIPPED / f"{name}.toml"
    if not is_shipped(path.parent, SHIPPED) and shipped.is_file():
        note_shadowing(f"cost_model: profile {name!r}", path, shipped)
    return read_toml(path, f"cost_model: unknown profile {name!r}")


def load_profile(name: str) -> CostModel:
    prof = read_profile(name)
    where = f"models/{name}.toml"
    if not isinstance(prof.get("coefficients", {}), dict):
        raise InputError(f"{where}: coefficients must be a table, got {prof['coefficients']!r}")
    return build({"form": prof.get("form"), **prof.get("coefficients", {})}, path=where)


def build(spec, path: str = "cost_model") -> CostModel:
    """A cost model from a profile name or an inline ``{"form": NAME, coefficient: value, ...}``."""
    if isinstance(spec, str):
        return load_profile(spec)
    if not isinstance(spec, dict):
        raise InputError(f"{path}: must be a profile name or an object with 'form', got {spec!r}")
    form = spec.get("form")
    if form not in FORMS:
        got = "missing" if form is None else f"unknown cost-model form {form!r}"
        raise InputError(f"{path}.form: {got}; expected one of: {', '.join(FORMS.names())}")
    cls = FORMS.get(form)
    problems = []
    for key, value in spec.items():
        if key == "form":
            continue
        if key not in cls.params:
            expected = ", ".join(cls.params) or "no coefficients"
            problems.append(f"{path}.{key}: unknown coefficient for form {form!r}; expected {expected}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            problems.append(f"{path}.{key}: must be a finite number, got {value!r}")
        elif key in cls.positive and not value > 0:
            problems.append(f"{path}.{key}: must be positive for form {form!r}, got {value!r}")
        elif value < 0:
            problems.append(f"{path}.{key}: must be non-negative (a time or rate), got {value!r}")
        elif value > MAX_COEFFICIENT:
            problems.append(f"{path}.{key}: must be at most {MAX_COEFFICIENT:g}, got {value!r}")
    for key, default in cls.params.items():
        if default is None and key not in spec:
            problems.append(f"{path}.{key}: missing coefficient required by form {form!r}")
    if problems:
        raise InputError(problems)
    model = cls(**{k: v for k, v in spec.items() if k != "form"})
    _check_batch_time(model, path)
    return model


#: coefficients above this overflow batch times to inf on real instances (1e300 did, issue 14)
MAX_COEFFICIENT = 1e12


#: the least time of a one-token batch: the float clock resolves about 1.5e-8 at the latest arrival an instance
#: may have (1e8, ``instance.MAX_ARRIVAL``), so shorter batches would vanish into rounding there (no GPU batch
#: takes under a microsecond)
MIN_BATCH_TIME = 1e-6


def _check_batch_time(model: CostModel, path: str) -> None:
    """A batch that does work must take a finite time of at least :data:`MIN_BATCH_TIME` (else latencies are 0,
    inf, or lost to the clock's rounding)."""
    one = np.ones(1, dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    for phase, decode in (("prefill", False), ("decode", True)):
        t = model.batch_time(one, zero if not decode else one, np.array([decode]))
        if not (math.isfinite(t) and t >= MIN_BATCH_TIME):
            raise InputError(f"{path}: the time of a one-token {phase} batch must be finite and at least "
                             f"{MIN_BATCH_TIME:g} (in the instance's time unit; shorter batches are lost to the "
                             f"clock's rounding at late arrivals), got {t!r} (check the coefficients of form "
                             f"{model.form!r})")
