from . import infermax_csp, latency_cp, latency_ip, volume  # noqa: F401  (register the formulations)
from .base import FORMULATIONS, Formulation, LinearModel

__all__ = ["FORMULATIONS", "Formulation", "LinearModel"]
