"""batch-bound (certified closed-form bound for the batch model) and the solve robustness of issue 13."""
import numpy as np
import pytest

from helpers import random_batch_instance
from lpbench.errors import InputError, PolicyDiverged
from lpbench.formulations.batch_bound import BatchBound, srpt_completions
from lpbench.formulations.infermax_csp import InferMaxCSP
from lpbench.generators import infermax
from lpbench.instance import parse_instance
from lpbench.policies import applicable, make_policy
from lpbench.sim import simulate
from lpbench.solve import solve_instance
from lpbench.verify import verify


def _policy_metrics(inst):
    out = {}
    for name in applicable(inst):
        try:
            res = simulate(inst, make_policy(name, inst))
        except (InputError, PolicyDiverged):  # cannot serve this instance (e.g. prompt > C unchunked)
            continue
        ver = verify(inst, res.schedule)
        assert ver.feasible, name
        out[name] = ver.metrics
    return out


@pytest.mark.parametrize("seed,memory,limits", [
    (0, None, None), (1, 700, None), (2, None, {"token_budget": 64}), (3, 500, {"token_budget": 128}),
    (4, None, {"max_batch_requests": 3}), (5, 400, {"prefill_budget": 32, "token_budget": 96}),
])
def test_no_policy_schedule_is_below_the_bound(seed, memory, limits):
    inst = random_batch_instance(seed, n=16, memory=memory, limits=limits, horizon=0.3)
    b = BatchBound(inst).bounds()
    assert b["total_latency"] >= max(b["isolated_total_latency"], b["srpt_total_latency"]) - 1e-12
    metrics = _policy_metrics(inst)
    assert len(metrics) >= 5
    for name, m in metrics.items():
        assert m["total_latency"] >= b["total_latency"] * (1 - 1e-12), name
        assert m["makespan"] >= b["makespan"] * (1 - 1e-12), name


def test_isolated_time_is_exact_for_a_lone_request():
    """One request, no limits: prefill in one batch then decodes, which the cost model prices cheaper
    than a one-token refill here, so the bound is attained by every policy."""
    inst = parse_instance({"memory": 10_000, "model": "batch", "cost_model": "infermax-llama2-7b-a100",
                           "requests": {"arrival": [0.25], "prompt": [300], "output": [40]}})
    b = BatchBound(inst).bounds()
    lat = verify(inst, simulate(inst, make_policy("vllm", inst)).schedule).metrics["total_latency"]
    assert b["isolated_total_latency"] == pytest.approx(lat, rel=1e-12)
    assert b["total_latency"] == pytest.approx(lat, rel=1e-12)


def test_srpt_completions_match_a_hand_schedule():
    # A (r=0, p=10), B (r=1, p=1), C (r=1.5, p=3): SRPT runs A 0-1, B 1-2, C 2-5, A 5-14
    c = srpt_completions(np.array([0.0, 1.0, 1.5]), np.array([10.0, 1.0, 3.0]))
    assert c.tolist() == pytest.approx([14.0, 2.0, 5.0])


def test_bound_is_below_the_proven_csp_optimum():
    inst = parse_instance(infermax.uniform(16, 8, 4))
    rep = solve_instance(inst, "infermax-csp", "cpsat", time_limit=120)
    assert rep["status"] == "optimal"
    assert BatchBound(inst).bounds()["makespan"] <= rep["objective"] * (1 + 1e-12)
    lat = verify(inst, rep["_schedule"]).metrics["total_latency"]
    assert BatchBound(inst).value() <= lat * (1 + 1e-12)


def test_bound_refuses_unsupported_cost_models():
    data = {"memory": 1000, "model": "batch", "requests": {"arrival": [0], "prompt": [4], "output": [2]},
            "cost_model": {"form": "linear", "d0": 1.0, "d1": -0.1}}
    with pytest.raises(InputError, match="non-?negative"):
        BatchBound(parse_instance(data))


def test_default_formulation_follows_the_model():
    inst = random_batch_instance(0, n=6)
    rep = solve_instance(inst, None)
    assert rep["formulation"] == "batch-bound" and rep["bound"] > 0
    with pytest.raises(InputError, match="formulations for 'batch': batch-bound"):
        solve_instance(inst, "latency-ip")


def test_csp_too_large_is_refused_not_an_error(monkeypatch):
    monkeypatch.setattr(InferMaxCSP, "max_variables", 10)
    # memory binds (M = 330): the best policy is not proven at the root without building the model
    # (8.5 % above (V12)-(V15); with M = 320 it is, at every B <= 64, docs/infermax-csp-scaling.md)
    inst = parse_instance(infermax.uniform(64, 16, 32, memory=330))
    rep = solve_instance(inst, "infermax-csp", "cpsat", time_limit=5)
    assert rep["status"] == "refused" and "batch-bound" in rep["message"]
    # the refused model still certifies its closed-form (V12) bound, never below batch-bound's makespan bound
    assert rep["bound_source"] in ("batch-bound", "infermax-csp (V12)") and rep["bound"] <= rep["best_known"]
    assert rep["bound"] >= BatchBound(inst).bounds()["makespan"] - 1e-9


def test_csp_far_arrivals_no_longer_overflow():
    """Arrivals near 3000 s were 3e17 units of 1e-14 s: CP-SAT answered MODEL_INVALID."""
    d = infermax.uniform(16, 8, 2)
    d["requests"]["arrival"] = [3000.0, 3000.0]
    rep = solve_instance(parse_instance(d), "infermax-csp", "cpsat", time_limit=60)
    assert rep["status"] == "optimal" and rep["verified"]


def test_csp_rounds_a_scale_that_overflows_and_states_it():
    """15-decimal coefficients (unit 1e-18 s) overflow the 64-bit sums; the scale is coarsened, the bound
    divided by 1 + rounding, and the verified makespan stays within the stated tolerance."""
    d = infermax.uniform(4, 2, 2)
    prof = {"form": "infermax", "a_p": 1.677312345678901e-07, "b_p": 0.0926, "m_p": 9.224e-06,
            "s_p": 0.001534, "a_d": 8.513e-06, "b_d": 0.01921, "s_d": 0.00074, "a_o": 0.00191,
            "b_o": 0.06486, "layers": 32}
    d["cost_model"] = prof
    d["requests"]["arrival"] = [0.0, 0.05]   # 5e16 units of 1e-18 s
    inst = parse_instance(d)
    rep = solve_instance(inst, "infermax-csp", "cpsat", time_limit=60)
    assert rep["status"] in ("optimal", "time_limit", "feasible") and rep["verified"]
    assert "rounded" in rep["message"]
    assert rep["bound"] <= rep["objective"] * (1 + 1e-9)


def test_mc_work_admits_the_smallest_work_first():
    """Memory holds one request at a time: MC-SF takes the shorter output (a long prompt), MC-Work the
    request whose prompt + decodes cost less, and both schedules verify."""
    inst = parse_instance({"memory": 420, "model": "batch", "cost_model": "infermax-llama2-7b-a100",
                           "requests": {"arrival": [0, 0], "prompt": [400, 10], "output": [10, 20]}})
    work = BatchBound(inst).works()[0]
    assert work[1] < work[0]
    first = {}
    for name in ("mc-sf", "mc-work"):
        sched = simulate(inst, make_policy(name, inst)).schedule
        assert verify(inst, sched).feasible
        first[name] = sched.batch(0)[0].tolist()
    assert first == {"mc-sf": [0], "mc-work": [1]}


def test_mc_work_refuses_a_cost_model_without_batch_constants():
    tiled = {"form": "tiled", "nu_lin": 2000.0, "T_col": 64, "nu_nlin": 2e6, "N": 32, "nu_gemv": 3e5, "d": 128,
             "T_row_v": 32, "T_col_v": 32, "S": 100, "nu_gemm": 1e5, "T_row": 64, "T_red": 32, "t0": 0.002}
    inst = parse_instance({"memory": 1000, "model": "batch", "cost_model": tiled,
                           "requests": {"arrival": [0, 0.1], "prompt": [20, 30], "output": [5, 4]}})
    with pytest.raises(InputError, match="policy 'mc-work' .*'tiled' form"):
        simulate(inst, make_policy("mc-work", inst))


REFILL_CHEAPER = {"form": "infermax", "a_o": 1e-3, "b_o": 0.01, "a_d": 1.2e-3, "b_d": 0.01, "s_d": 0.001,
                  "a_p": 1e-7, "b_p": 0.01, "s_p": 0.001, "m_p": 0.0, "layers": 1}


def test_refill_path_prices_a_whole_refill_run():
    """Token g (X = I + g − 1 tokens before its batch) costs, alone, the cheaper of a decode batch
    (c = 1, m = X − 1) and a one-chunk refill run (c = X, m = 0); here the refill is the cheaper one."""
    inst = parse_instance({"memory": 1000, "model": "batch", "cost_model": REFILL_CHEAPER,
                           "requests": {"arrival": [0.0], "prompt": [50], "output": [6]}})
    bb = BatchBound(inst)
    _, X, dec, ref = bb._token_paths(with_constants=True)
    cm = inst.cost_model
    want_dec = [cm.batch_time([1], [x - 1], [True]) for x in X]
    want_ref = [cm.batch_time([x], [0], [False]) for x in X]
    assert (dec * bb.to_s).tolist() == pytest.approx(want_dec, rel=1e-12)
    assert (ref * bb.to_s).tolist() == pytest.approx(want_ref, rel=1e-12)
    assert all(r < d for r, d in zip(want_ref, want_dec))
    prefill = cm.batch_time([50], [0], [False])
    assert bb.isolated()[0] == pytest.approx(prefill + sum(want_ref), rel=1e-12)


@pytest.mark.parametrize("seed,memory,limits", [(7, 500, None), (8, 400, {"token_budget": 64})])
def test_no_policy_is_below_the_bound_when_refills_are_cheaper(seed, memory, limits):
    inst = random_batch_instance(seed, n=16, memory=memory, cost=REFILL_CHEAPER, limits=limits, horizon=0.05)
    b = BatchBound(inst).bounds()
    metrics = _policy_metrics(inst)
    assert sum(m["evictions"] for m in metrics.values()) > 0
    for name, m in metrics.items():
        assert m["total_latency"] >= b["total_latency"] * (1 - 1e-12), name
        assert m["makespan"] >= b["makespan"] * (1 - 1e-12), name


def _plain_schedule(inst, policy):
    policy.steady_batches = lambda req, tokens, decode: (0, True)
    return simulate(inst, policy).schedule


@pytest.mark.parametrize("seed", range(6))
def test_mc_group_runs_build_the_batch_by_batch_schedule(seed):
    """mc-group's runs of repeated decode rounds (which stop before the first round its period lets the head in)
    give, batch for batch, the plain loop's schedule; the cases of tests/test_sim.py's run test."""
    case = [dict(limits={"token_budget": 4096}), dict(memory=None, horizon=0.0, limits={"token_budget": 4096}),
            dict(limits={"token_budget": 512, "max_batch_requests": 6}), dict(horizon=3.0),
            dict(limits={"token_budget": 400}), dict(memory=None, horizon=0.3, limits={"token_budget": 300})][seed]
    inst = random_batch_instance(seed, n=40, **case)
    for period in (3, 16):
        fast = simulate(inst, make_policy("mc-group", inst, period=period)).schedule
        plain = _plain_schedule(inst, make_policy("mc-group", inst, period=period))
        assert verify(inst, fast).feasible
        for field in ("start", "ptr", "req", "tokens"):
            assert np.array_equal(getattr(fast, field), getattr(plain, field)), (period, field)


def _admission_gaps(inst, sched):
    """Rounds between consecutive batches that carry a new prompt, for those that found requests running."""
    started = np.zeros(inst.n, dtype=bool)
    admitting, running = [], []
    for j in range(sched.n_batches):
        req, _, _ = sched.batch(j)
        new = ~started[req]
        if new.any():
            admitting.append(j)
            running.append(bool((~new).any()))
        started[req] = True
    return np.diff(admitting)[np.array(running[1:], dtype=bool)]


def test_mc_group_admits_at_most_every_period_rounds():
    """While requests run, batches that carry a prompt are at least `period` rounds apart (mc-work's are not, on
    the same instance); period 1 is mc-work, batch for batch."""
    inst = random_batch_instance(3, n=40, memory=500, horizon=0.2)
    period = 5
    sched = simulate(inst, make_policy("mc-group", inst, period=period)).schedule
    assert verify(inst, sched).feasible
    gaps = _admission_gaps(inst, sched)
    assert len(gaps) > 3 and (gaps >= period).all()
    work = simulate(inst, make_policy("mc-work", inst)).schedule
    assert (_admission_gaps(inst, work) < period).any()
    one = simulate(inst, make_policy("mc-group", inst, period=1)).schedule
    assert np.array_equal(work.req, one.req) and np.array_equal(work.start, one.start)


@pytest.mark.parametrize("period, shown", [(0.0, "got 0 "), (2.5, "got 2.5 "), (-3, "got -3 "),
                                           (float("inf"), "got inf "), ("x", "got 'x' ")])
def test_mc_group_refuses_a_bad_period(period, shown):
    with pytest.raises(InputError, match="--param period: must be a positive integer up to 2\\^40, " + shown):
        make_policy("mc-group", None, period=period)
