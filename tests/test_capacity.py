"""Seed 002 / 000 capacity bounds and the seed-002 policies (lpbench.formulations.capacity,
lpbench.policies.seed002)."""
import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.formulations.capacity import TiledCapacity, WorkConservingCapacity
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.solvers import BACKENDS, get_profile
from lpbench.verify import verify

SEED002 = ("fastertransformer", "vllm-vanilla", "orca", "sarathi-serve", "vllm-chunked")
TILED = {"form": "tiled", "nu_lin": 2000.0, "T_col": 64, "nu_nlin": 2e6, "N": 32, "nu_gemv": 3e5, "d": 128,
         "T_row_v": 32, "T_col_v": 32, "S": 100, "nu_gemm": 1e5, "T_row": 64, "T_red": 32, "t0": 0.002}


def inst_of(seed, cost, budget, n=40, k_max=None, horizon=2.0, max_prompt=None, memory=10**7):
    rng = np.random.default_rng(seed)
    max_prompt = max_prompt or budget
    prompt = rng.integers(1, max_prompt + 1, n)
    output = rng.integers(1, budget - prompt + 2)  # prompt + output - 1 <= budget: whole-prompt policies apply
    limits = {"token_budget": budget}
    if k_max:
        limits["max_batch_requests"] = k_max
    return parse_instance({"memory": memory, "model": "batch", "cost_model": cost, "limits": limits,
                           "requests": {"arrival": np.sort(rng.uniform(0, horizon, n)).round(4).tolist(),
                                        "prompt": prompt.tolist(), "output": output.tolist()}})


def lp_value(form):
    res = BACKENDS.get("highs")().solve(form.build(), get_profile("highs"))
    assert res.status == "optimal"
    return -res.objective


@pytest.mark.parametrize("cost", [{"form": "piecewise", "c": 0.03, "a": 0.0004, "b0": 0},   # linear t = c + a b
                                  "li-llama3-70b-2xa100", "li-codellama34b-a100-staircase",
                                  {"form": "unit"}])
@pytest.mark.parametrize("budget", [128, 512])
def test_lp_equals_closed_form(cost, budget):
    """Without a batch-size limit the composition LP's optimum is the closed form (2.7) λ*."""
    form = WorkConservingCapacity(inst_of(1, cost, budget))
    cf = form.load_condition()
    assert cf["monotone"]
    assert lp_value(form) == pytest.approx(cf["lambda_star"], rel=1e-7)
    # by hand for the linear model: λ* = (b / (c + a b)) / (m_p + m_d)
    if isinstance(cost, dict) and cost["form"] == "piecewise":
        m = form.m_p + form.m_d
        assert cf["lambda_star"] == pytest.approx(budget / (0.03 + 0.0004 * budget) / m)


def test_lp_batch_size_limit_vertex_c():
    """v3 §6.2 'vertex C' (notes §2.6): b = 128, k_max = 100, every request (290, 990) tokens on the
    CodeLlama-34B staircase: the full composition 29 prefill + 99 decode tokens per 46.75 ms has exactly
    the workload's ratio, so λ = (29/290) / 0.04675 s = 1 / 0.4675 s, on the boundary of (2.7).
    With k_max = 50 decodes bind: the best mix is decode-only batches of 50 and (79 prefill, 49 decode)
    batches, every batch 46.75 ms: 50 x + 49 y = 990 λ, 79 y = 290 λ, x + y = 1/0.04675 s, so
    λ = (50 / 0.04675) / (990 + 290/79)."""
    def inst(k_max):
        return parse_instance({"memory": 10**6, "model": "batch", "cost_model": "li-codellama34b-a100-staircase",
                               "limits": {"token_budget": 128, "max_batch_requests": k_max},
                               "requests": [{"arrival": 0, "prompt": 290, "output": 991}] * 3})
    form = WorkConservingCapacity(inst(100))
    assert lp_value(form) == pytest.approx(1 / 0.4675, rel=1e-6)
    assert form.load_condition()["lambda_star"] == pytest.approx(1 / 0.4675, rel=1e-6)
    form = WorkConservingCapacity(inst(50))
    assert lp_value(form) == pytest.approx(50 / 0.04675 / (990 + 290 / 79), rel=1e-6)
    assert not form.load_condition()["applies"]


def test_wc_capacity_rejects_kv_dependent_cost_and_missing_budget():
    with pytest.raises(InputError, match="cost_model.form"):
        WorkConservingCapacity(inst_of(0, "infermax-llama2-7b-a100", 512))
    inst = parse_instance({"memory": 1000, "model": "batch", "cost_model": "li-llama3-70b-2xa100",
                           "requests": [{"arrival": 0, "prompt": 5, "output": 5}]})
    with pytest.raises(InputError, match="limits.token_budget"):
        WorkConservingCapacity(inst)


def test_seed002_mapping_reuses_seed003_schedulers():
    """The documented mapping: identical schedules, batch for batch."""
    inst = inst_of(5, "li-llama3-70b-2xa100", 256, n=60, max_prompt=200, memory=6000)
    for ours, theirs in (("sarathi-serve", "sarathi-pc"), ("vllm-chunked", "sarathi-pc"),
                         ("vllm-vanilla", "vllm"), ("fastertransformer", "sarathi-nohy")):
        a = simulate(inst, make_policy(ours, inst)).schedule
        b = simulate(inst, make_policy(theirs, inst)).schedule
        assert np.array_equal(a.start, b.start) and np.array_equal(a.req, b.req) and np.array_equal(a.tokens, b.tokens)


def test_no_policy_beats_its_bound_on_random_instances():
    """Every seed-002 policy, 24 random instances (piecewise, staircase, linear; some with k_max; some
    memory-tight so they evict): every schedule verifies; its makespan is at least the drain bound; its
    token rate over busy time is at most max_b' b'/t_b' (the rate behind λ*)."""
    costs = [{"form": "piecewise", "c": 0.02, "a": 0.0003, "b0": 32}, "li-llama3-70b-2xa100",
             "li-codellama34b-a100-staircase", {"form": "piecewise", "c": 0.01, "a": 0.001, "b0": 0}]
    for seed in range(24):
        rng = np.random.default_rng(seed)
        budget = int(rng.choice([32, 64, 128, 256]))
        k_max = int(rng.integers(2, 12)) if seed % 3 == 0 else None
        memory = int(rng.integers(400, 2000)) if seed % 4 == 1 else 10**7
        inst = inst_of(seed, costs[seed % 4], budget, n=int(rng.integers(5, 30)), k_max=k_max,
                       horizon=float(rng.choice([0.1, 2.0])), max_prompt=min(budget, 200), memory=memory)
        form = WorkConservingCapacity(inst)
        rate = float((np.arange(1, budget + 1) / form.t).max())
        assert lp_value(form) <= form.load_condition()["lambda_max_over_loads"] * (1 + 1e-9)
        drain = form.drain()
        for name in SEED002:
            res = simulate(inst, make_policy(name, inst))
            ver = verify(inst, res.schedule)
            assert ver.feasible, (seed, name, ver.violations[:1])
            assert ver.metrics["makespan"] >= drain - 1e-9, (seed, name)
            assert res.schedule.tokens.sum() / ver.metrics["busy_time"] <= rate * (1 + 1e-9), (seed, name)


def test_tiled_t_star_is_a_lower_bound_on_engine_time():
    """Σ_q t*_q (rigorous (13)) <= the busy time of every verified schedule, and the drain bound <= makespan;
    the paper's l^p (l^p + T_lcm) term would be larger than the rigorous one."""
    for seed in range(6):
        inst = inst_of(seed, TILED, 256, n=25, max_prompt=256)
        form = TiledCapacity(inst)
        total = form.t_star().sum()
        for name in ("sarathi-serve", "orca", "vllm-vanilla", "fastertransformer"):
            res = simulate(inst, make_policy(name, inst))
            ver = verify(inst, res.schedule)
            assert ver.feasible
            assert total <= ver.metrics["busy_time"] * (1 + 1e-9), (seed, name)
            assert form.drain() <= ver.metrics["makespan"] + 1e-9
    with pytest.raises(InputError, match="tiled"):
        TiledCapacity(inst_of(0, "li-llama3-70b-2xa100", 64))


def test_orca_prefills_fcfs_chunked_then_decodes():
    """Orca (A5): prefill tokens first, oldest first, the last one chunked to fill b; decodes after. Prompts
    600 and 100 at t = 0, b = 512: [r0: 512], then [r0: 88, r1: 100] (the partial prefill before the new
    one; r0's first decode cannot share the batch that finishes its prefill), then [r0: 1, r1: 1] ..."""
    inst = parse_instance({"memory": 10**6, "model": "batch", "cost_model": "li-llama3-70b-2xa100",
                           "limits": {"token_budget": 512},
                           "requests": [{"arrival": 0, "prompt": 600, "output": 3}, {"arrival": 0, "prompt": 100, "output": 3}]})
    s = simulate(inst, make_policy("orca", inst)).schedule
    batches = [dict(zip(s.batch(j)[0].tolist(), s.batch(j)[1].tolist())) for j in range(s.n_batches)]
    assert batches == [{0: 512}, {0: 88, 1: 100}, {0: 1, 1: 1}, {0: 1, 1: 1}]
    assert verify(inst, s).feasible


def test_k_engines_scale_the_bounds():
    """K identical engines (seed 002 §4.1 (4.1), seed 000 Theorem 1): K times the rate, a drain bound no larger."""
    inst = inst_of(3, "li-llama3-70b-2xa100", 256)
    one, two = WorkConservingCapacity(inst), WorkConservingCapacity(inst, engines=2)
    res = BACKENDS.get("highs")().solve(two.build(), get_profile("highs"))
    assert two.report(res)["bound_requests_per_s"] == pytest.approx(2 * lp_value(one))
    assert two.drain() <= one.drain()
    tiled = inst_of(3, TILED, 256)
    assert (-TiledCapacity(tiled, engines=3).solve().objective
            == pytest.approx(-3 * TiledCapacity(tiled).solve().objective))
    with pytest.raises(InputError, match="engines"):
        WorkConservingCapacity(inst, engines=0)
