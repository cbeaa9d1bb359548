"""Online policies. Each module registers its policies with ``@POLICIES.register(name)``."""
from . import alpha, infermax, mcgroup, mcsf, mcsf_backfill, mcwork  # noqa: F401
from . import distserve, seed000, seed002, slai  # noqa: F401
from . import nested, wait  # noqa: F401  (seed 001)
from .base import POLICIES, Policy, applicable, make_policy

__all__ = ["POLICIES", "Policy", "applicable", "make_policy"]
