from . import batch_bound, infermax_csp, infermax_milp, latency_cp, latency_ip, volume  # noqa: F401  (register the formulations)
from .base import FORMULATIONS, Formulation, LinearModel

__all__ = ["FORMULATIONS", "Formulation", "LinearModel"]
