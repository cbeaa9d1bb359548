"""GPU cost models: one small interface (:class:`CostModel`), one module per form, and named
profiles in the repository's ``models/*.toml`` (each naming its source)."""
from __future__ import annotations

import math
import os
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ..errors import InputError
from . import infermax, linear, piecewise, tiled, unit  # noqa: F401  (register the forms)
from .base import FORMS, CostModel

__all__ = ["FORMS", "CostModel", "build", "models_dir", "profile_names", "load_profile", "read_profile"]


def models_dir() -> Path:
    """``$LPBENCH_MODELS``, else ``./models``, else the repository's ``models/``."""
    env = os.environ.get("LPBENCH_MODELS")
    if env:
        return Path(env)
    here = Path.cwd() / "models"
    if here.is_dir() and any(here.glob("*.toml")):
        return here
    return Path(__file__).resolve().parents[2] / "models"


def profile_names() -> list[str]:
    return sorted(p.stem for p in models_dir().glob("*.toml"))


def read_profile(name: str) -> dict:
    path = models_dir() / f"{name}.toml"
    if not path.is_file():
        raise InputError(f"cost_model: unknown profile {name!r}; expected one of: {', '.join(profile_names())}")
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def load_profile(name: str) -> CostModel:
    prof = read_profile(name)
    return build({"form": prof["form"], **prof.get("coefficients", {})}, path=f"models/{name}.toml")


def build(spec, path: str = "cost_model") -> CostModel:
    """A cost model from a profile name or an inline ``{"form": NAME, coefficient: value, ...}``."""
    if isinstance(spec, str):
        return load_profile(spec)
    if not isinstance(spec, dict):
        raise InputError(f"{path}: must be a profile name or an object with 'form', got {spec!r}")
    form = spec.get("form")
    if form not in FORMS:
        raise InputError(f"{path}.form: unknown cost-model form {form!r}; expected one of: {', '.join(FORMS.names())}")
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
    for key, default in cls.params.items():
        if default is None and key not in spec:
            problems.append(f"{path}.{key}: missing coefficient required by form {form!r}")
    if problems:
        raise InputError(problems)
    return cls(**{k: v for k, v in spec.items() if k != "form"})
