from ..errors import InputError
from .engine import Batch, SimResult
from .engine import simulate as simulate_one_engine
from .multi import EngineGroup, simulate_multi


#: the most batches a schedule may need: every request's O tokens come from O distinct batches, so an output above
#: this makes a schedule of more batches than memory holds (about 16 bytes each and more), refused up front
MAX_BATCHES = 10**8


def simulate(inst, policy, progress=None) -> SimResult:
    """Run ``policy`` on ``inst`` until every request completes: on one engine
    (:func:`lpbench.sim.engine.simulate`), or on ``limits.engines`` engines when the instance has several
    or the policy drives several (:mod:`lpbench.sim.multi`). InputError where an output alone needs more than
    ``MAX_BATCHES`` batches."""
    if inst.n and int(inst.output.max()) > MAX_BATCHES:
        i = int(inst.output.argmax())
        raise InputError(f"requests[{i}].output: {int(inst.output[i]):,} tokens need as many batches, above the "
                         f"{MAX_BATCHES:,} a simulated schedule can hold; express the tokens in larger units")
    if inst.limits.K > 1 or isinstance(policy, EngineGroup):
        return simulate_multi(inst, policy, progress)
    return simulate_one_engine(inst, policy, progress)


__all__ = ["Batch", "SimResult", "simulate", "simulate_multi", "simulate_one_engine"]
