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
