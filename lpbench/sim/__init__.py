from .engine import Batch, SimResult
from .engine import simulate as simulate_one_engine
from .multi import EngineGroup, simulate_multi


def simulate(inst, policy, progress=None) -> SimResult:
    """Run ``policy`` on ``inst`` until every request completes: on one engine
    (:func:`lpbench.sim.engine.simulate`), or on ``limits.engines`` engines when the instance has several
    or the policy drives several (:mod:`lpbench.sim.multi`)."""
    if inst.limits.K > 1 or isinstance(policy, EngineGroup):
        return simulate_multi(inst, policy, progress)
    return simulate_one_engine(inst, policy, progress)


__all__ = ["Batch", "SimResult", "simulate", "simulate_multi", "simulate_one_engine"]
