from . import cpsat, gurobi, highs, pyomo_backend  # noqa: F401  (register the backends)
from .base import BACKENDS, SolveResult, SolverProfile, get_profile, load_profiles

__all__ = ["BACKENDS", "SolveResult", "SolverProfile", "get_profile", "load_profiles"]
