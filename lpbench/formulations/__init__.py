from . import capacity  # noqa: F401  (seed 002/000 throughput bounds)
from . import fluid, wait_thresholds  # noqa: F401  (seed 001)
from . import batch_bound, chain, completion, infermax_csp, lagrange, infermax_milp, latency_astar, latency_cp, latency_event, latency_ip, subset_bound, volume, volume_chain  # noqa: F401  (register the formulations)
from .base import FORMULATIONS, Formulation, LinearModel

__all__ = ["FORMULATIONS", "Formulation", "LinearModel"]
