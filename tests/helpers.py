"""Random instance builders shared by the tests."""
import numpy as np

from lpbench.instance import parse_instance


def random_batch_instance(seed, n=30, memory=None, cost="infermax-llama2-7b-a100", limits=None, horizon=1.0):
    rng = np.random.default_rng(seed)
    prompt = rng.integers(1, 300, n)
    output = rng.integers(1, 60, n)
    memory = memory or int((prompt + output).max() + rng.integers(0, 400))
    reqs = {"arrival": np.round(np.sort(rng.uniform(0, horizon, n)), 4).tolist(),
            "prompt": prompt.tolist(), "output": output.tolist()}
    data = {"memory": memory, "model": "batch", "cost_model": cost, "requests": reqs}
    if limits:
        data["limits"] = limits
    return parse_instance(data)


def packed_schedules(inst):
    """Every packed variant of lpbench.heuristics.infermax_pack that applies to ``inst`` (0-2 prefill-only
    lead batches, each candidate order, chunked or whole prompts), as schedules to verify."""
    from lpbench.formulations.infermax_csp import schedule_from_batches
    from lpbench.heuristics.infermax_pack import candidate_orders, packed_batches

    out = []
    for lead in range(3):
        for order in candidate_orders(inst).values():
            for chunk in (True, False):
                batches = packed_batches(inst, lead, order, chunk)
                if batches is not None:
                    out.append(schedule_from_batches(inst, batches))
    return out


def same_verification(a, b):
    """Two verifier results agree exactly: feasibility, violations, metrics and the token times."""
    assert a.feasible == b.feasible and a.violations == b.violations
    if a.feasible:
        assert a.metrics == b.metrics
        for x, y in ((a.first_token, b.first_token), (a.completion, b.completion), *zip(a.tbt, b.tbt)):
            assert np.array_equal(x, y, equal_nan=True)
