"""The audit of the seed-003 schedulers against Algorithm 1 (docs/audits.md): a Rank scheduler under restart
eviction reads a re-queued request's need after the restart, and an eviction-free variant without chunked prefill
is not refused for a refill it can never make. Each case is the reviewer's counterexample."""
import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.verify import verify


def _batches(inst, policy):
    s = simulate(inst, make_policy(policy, inst)).schedule
    assert verify(inst, s).feasible
    out = []
    for j in range(s.n_batches):
        req, tok, ev = s.batch(j)
        out.append((dict(zip(req.tolist(), tok.tolist())), sorted(ev.tolist())))
    return out


def test_rank_scheduler_admits_a_restarted_request_that_fits():
    """M = 5, C = 4, restart. r2 (I = 1) is evicted at t = 2 after generating a token; at t = 3 it needs I = 1
    slot again and 1 is free, so Alg. 1 ③ admits it beside r0. The Rank merge skipped it: it kept its need from
    before the restart (S = 2)."""
    inst = parse_instance({"memory": 5, "model": "batch", "cost_model": "unit", "eviction": "restart",
                           "limits": {"token_budget": 4},
                           "requests": [{"arrival": 0, "prompt": 1, "output": 5},
                                        {"arrival": 0, "prompt": 4, "output": 1},
                                        {"arrival": 0, "prompt": 1, "output": 2}]})
    b = _batches(inst, "rank-org")
    assert b[2] == ({0: 1}, [2])                # r2 evicted (restart: back to its prompt)
    assert b[3] == ({0: 1, 2: 1}, [])           # ... and admitted again in the next batch, where it fits


@pytest.mark.parametrize("policy", ["vllm-ef", "sarathi-nocp-ef", "sarathi-nohy-ef", "vllm-hy-ef"])
def test_eviction_free_variants_without_chunking_need_only_the_prompt_to_fit(policy):
    """I + O − 1 = 9 > C = 8, but an eviction-free scheduler reserves the peak at admission and never evicts,
    so it never refills: the prompt (4) fits, and the run verifies with no eviction. The evicting twin must
    still be refused (a refill could need 9 tokens in one batch)."""
    data = {"memory": 12, "cost_model": "unit", "model": "batch", "limits": {"token_budget": 8},
            "requests": [{"arrival": 0, "prompt": 4, "output": 6}, {"arrival": 0, "prompt": 4, "output": 6}]}
    inst = parse_instance(data)
    s = simulate(inst, make_policy(policy, inst)).schedule
    ver = verify(inst, s)
    assert ver.feasible and ver.metrics["evictions"] == 0
    with pytest.raises(InputError, match="refill after an eviction"):
        simulate(inst, make_policy(policy.removesuffix("-ef"), inst))


def test_eviction_free_variants_never_evict_on_random_contended_instances():
    """The premise of the refusal's exemption, on instances where memory is short (the twins do evict)."""
    rng = np.random.default_rng(3)
    twins_evicted = 0
    for _ in range(40):
        n = int(rng.integers(3, 9))
        prompt, output = rng.integers(1, 6, n), rng.integers(1, 8, n)
        data = {"memory": int((prompt + output - 1).max() + rng.integers(0, 6)), "model": "batch",
                "cost_model": "unit", "limits": {"token_budget": int((prompt + output - 1).max())},
                "requests": {"arrival": rng.integers(0, 4, n).tolist(), "prompt": prompt.tolist(),
                             "output": output.tolist()}}
        inst = parse_instance(data)
        for policy in ("vllm", "sarathi-nocp", "sarathi-nohy"):
            ef = verify(inst, simulate(inst, make_policy(policy + "-ef", inst)).schedule)
            assert ef.feasible and ef.metrics["evictions"] == 0
            twins_evicted += verify(inst, simulate(inst, make_policy(policy, inst)).schedule).metrics["evictions"]
    assert twins_evicted > 0
