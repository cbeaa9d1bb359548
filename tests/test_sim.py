"""Every simulated schedule verifies; the simulator is deterministic and exercises evictions."""
from dataclasses import replace

import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.policies import make_policy
from lpbench.sim import simulate
from lpbench.verify import verify

from helpers import random_batch_instance

CASES = [
    dict(),
    dict(limits={"token_budget": 400}),
    dict(limits={"token_budget": 512, "prefill_budget": 400, "max_batch_requests": 8}),
    dict(limits={"token_budget": 1024, "max_batch_requests": 3}),
    dict(cost={"form": "linear", "d0": 0.01, "d1": 1e-5}),
    dict(cost="li-llama3-70b-2xa100", horizon=0.0),
]


@pytest.mark.parametrize("policy", ["vllm", "sarathi"])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", range(4))
def test_simulated_schedules_verify(policy, case, seed):
    inst = random_batch_instance(seed, **CASES[case])
    res = simulate(inst, make_policy(policy, inst))
    ver = verify(inst, res.schedule)
    assert ver.feasible, ver.violations
    assert ver.metrics["peak_memory"] <= inst.memory
    # every output token is generated exactly once, and each prompt is processed at least once
    assert res.schedule.tokens.sum() >= (inst.prompt + inst.output - 1).sum()


def test_tight_memory_forces_evictions_and_they_verify():
    evictions = 0
    for seed in range(6):
        inst = random_batch_instance(seed, n=40, memory=None, horizon=0.0)
        for policy in ("vllm", "sarathi"):
            res = simulate(inst, make_policy(policy, inst))
            ver = verify(inst, res.schedule)
            assert ver.feasible, ver.violations
            evictions += ver.metrics["evictions"]
    assert evictions > 0


def test_deterministic():
    inst = random_batch_instance(7)
    a = simulate(inst, make_policy("sarathi", inst)).schedule
    b = simulate(inst, make_policy("sarathi", inst)).schedule
    assert np.array_equal(a.start, b.start) and np.array_equal(a.req, b.req) and np.array_equal(a.tokens, b.tokens)


def test_vllm_is_prefill_first_and_sarathi_chunks():
    inst = random_batch_instance(1, n=10, horizon=0.0, limits={"token_budget": 4096})
    s = simulate(inst, make_policy("vllm", inst)).schedule
    r, c, _ = s.batch(0)
    assert (c == inst.prompt[r]).all()  # the first batch holds whole prompts only
    s = simulate(inst, make_policy("sarathi", inst)).schedule
    r, c, _ = s.batch(0)
    assert c.sum() <= 512  # Sarathi's chunk budget P = 512


def test_vllm_refuses_prompts_above_its_budget():
    from lpbench.errors import InputError

    inst = random_batch_instance(0, limits={"token_budget": 128})
    with pytest.raises(InputError, match="policy 'vllm' has no chunked prefill"):
        simulate(inst, make_policy("vllm", inst))
    assert verify(inst, simulate(inst, make_policy("sarathi", inst)).schedule).feasible


@pytest.mark.parametrize("name", ["vllm", "vllm-vanilla", "vllm-hy", "fastertransformer", "fcfs"])  # -ef: never evicts
def test_a_refill_over_budget_is_refused_only_where_an_eviction_can_happen(name):
    """With every peak in memory at once nothing is evicted, so only the prompt must fit the budget: such a run
    verifies without evictions; with less memory the same requests are refused (a refill could not fit)."""
    from lpbench.errors import InputError

    base = random_batch_instance(4, n=12, limits={"token_budget": 320})
    peaks = int((base.prompt + base.output - 1).sum())
    assert (base.prompt <= 320).all() and (base.prompt + base.output - 1).max() > 320
    roomy = random_batch_instance(4, n=12, memory=peaks, limits={"token_budget": 320})
    ver = verify(roomy, simulate(roomy, make_policy(name, roomy)).schedule)
    assert ver.feasible and ver.metrics["evictions"] == 0
    tight = random_batch_instance(4, n=12, memory=peaks - 1, limits={"token_budget": 320})
    with pytest.raises(InputError, match="a refill after an eviction"):
        simulate(tight, make_policy(name, tight))


STEADY = ["vllm", "sarathi", "sarathi-ef", "rank-i", "rank-o", "rank-org", "orca", "fastertransformer",
          "sarathi-serve", "infermax-sort-hist", "vllm-hy-ef", "rad", "rad-alg2", "slai", "mc-sf", "mc-benchmark",
          "mc-work", "mc-group"]


def assert_runs_change_nothing(inst, name):
    """The schedule with the policy's runs equals, batch for batch, the plain loop's (promise switched off)."""
    fast = simulate(inst, make_policy(name, inst)).schedule
    plain_policy = make_policy(name, inst)
    plain_policy.steady_batches = lambda req, tokens, decode: (0, True)
    plain = simulate(inst, plain_policy).schedule
    assert fast.n_batches == plain.n_batches, name
    for a, b in zip((fast.start, fast.ptr, fast.req, fast.tokens, fast.eptr, fast.evict),
                    (plain.start, plain.ptr, plain.req, plain.tokens, plain.eptr, plain.evict)):
        assert np.array_equal(a, b), name


@pytest.mark.parametrize("seed", range(6))
def test_repeated_batch_runs_build_the_batch_by_batch_schedule(seed):
    """The engine's one-step runs of repeated batches (decodes, a prefill chunk) give, batch for batch, the schedule of the
    plain loop (the policy's promise switched off), with and without memory pressure and budgets."""
    case = [dict(limits={"token_budget": 4096}), dict(memory=None, horizon=0.0, limits={"token_budget": 4096}),
            dict(limits={"token_budget": 512, "max_batch_requests": 6}), dict(horizon=3.0),
            dict(limits={"token_budget": 100}), dict(memory=None, horizon=0.3, limits={"token_budget": 60})][seed]
    inst = random_batch_instance(seed, n=40, **case)  # the last two chunk most prompts over several batches
    for name in STEADY:
        try:
            assert_runs_change_nothing(inst, name)
        except InputError:  # an unchunked policy and prompts above the budget
            continue


@pytest.mark.parametrize("seed", range(3))
def test_slai_runs_only_while_no_decode_has_a_deadline(seed):
    """SLAI with a TBT deadline on every other request (the rest have none): runs happen only while every
    decoding request is deadline-free, and the schedule is the plain loop's; one timing field of the policy
    (τ_batch's running sum) is carried across the runs exactly."""
    inst = random_batch_instance(seed, n=40, horizon=0.5, limits={"token_budget": 100})
    inst = replace(inst, tbt_slo=np.where(np.arange(inst.n) % 2, 0.05, np.nan))
    assert_runs_change_nothing(inst, "slai")
    promised = []
    policy = make_policy("slai", inst)
    steady = policy.steady_batches

    def spy(*args):
        promise = steady(*args)
        promised.append(promise[0])
        return promise

    policy.steady_batches = spy
    simulate(inst, policy)
    assert max(promised) > 0  # some runs were promised, so the equality above tested them


def test_mcsf_run_check_matches_the_per_round_check():
    """``first_admitting_round`` (MC-SF's memory test (5) for every round of a run at once) against the test
    itself, ``peak_memory_at_completions``, round by round; random running sets with tied last rounds."""
    from lpbench.policies.mcsf import first_admitting_round, peak_memory_at_completions

    rng = np.random.default_rng(0)
    for _ in range(300):
        k, r0, rounds = int(rng.integers(1, 8)), int(rng.integers(0, 20)), int(rng.integers(1, 12))
        started = r0 - rng.integers(0, 10, k)
        last = r0 + rounds - 1 + rng.integers(0, 8, k)                  # all run through the run's rounds
        weight = rng.integers(1, 30, k) - started                       # s_j - delta + 1 - p_j
        size, o = int(rng.integers(1, 30)), int(rng.integers(1, 15))
        memory = int(rng.integers(20, 400))
        expected = next((q for q in range(rounds)
                         if peak_memory_at_completions(np.append(last, r0 + q + o - 1),
                                                       np.append(weight, size - r0 - q)) <= memory), rounds)
        assert first_admitting_round(last, weight, size, o, r0, rounds, memory) == expected


def simulate_checking_every_batch(inst, policy, before, after=None):
    """Simulate ``policy`` calling ``before()`` ahead of each next_batch (and ``after()`` behind it, if
    given); the schedule must verify. Returns (next_batch calls, batches that evicted)."""
    plain_next_batch = policy.next_batch
    calls = evicted = 0

    def spy(t):
        nonlocal calls, evicted
        before()
        batch = plain_next_batch(t)
        if after is not None:
            after()
        calls += 1
        evicted += batch.evict is not None
        return batch

    policy.next_batch = spy
    assert verify(inst, simulate(inst, policy).schedule).feasible
    return calls, evicted


@pytest.mark.parametrize("name", ["rank-i", "rank-o", "rank-org"])
def test_rank_schedulers_keep_running_and_waiting_lists_in_rank_order(name):
    """The Rank schedulers' running list is kept in rank order with its ranks beside it (bisect on admission,
    eviction and completion), and R_w's lists are changed after a batch's merge, which reads them: around
    every batch both equal what a fresh sort gives, under memory pressure (evictions) and chunked prefill."""
    checked = evicted = 0
    for seed in range(4):
        inst = random_batch_instance(seed, n=50, memory=None, horizon=0.5, limits={"token_budget": 256})
        policy = make_policy(name, inst)

        def check():
            holding = np.flatnonzero(policy.reserved > 0)
            assert policy.running == holding[np.argsort(policy.rank[holding])].tolist()
            assert policy.run_rank == policy.rank[policy.running].tolist()
            assert policy.wait_rank == sorted(policy.wait_rank)
            assert policy.wait_rank == policy.rank[policy.wait_ids].tolist()
            assert not policy._wait_shared and not policy._wait_edits

        batches, evictions = simulate_checking_every_batch(inst, policy, check, after=check)
        checked, evicted = checked + batches, evicted + evictions
    assert checked > 100 and evicted > 0


@pytest.mark.parametrize("name", ["vllm", "sarathi", "sarathi-nohy", "orca", "infermax-sort-hist", "rank-i", "rank-o",
                                  "rank-org"])
def test_unified_scheduler_reservation_invariant(name):
    """``UnifiedScheduler.reserve_needed``'s invariant, on which its decode paths rely (one slot per decode and
    step, without reading the reservation): around every batch a running request has reserved = L in prefill,
    reserved = m in decode, and every other request reserved = 0; under evictions, chunked prefill and runs."""
    checked = evicted = 0
    for seed in range(4):
        budget = 512 if name in ("vllm", "sarathi-nohy") else 256  # unchunked: every prompt + output - 1 fits
        inst = random_batch_instance(seed, n=50, memory=None, horizon=0.5, limits={"token_budget": budget})
        policy = make_policy(name, inst)

        def check():
            st, running = policy.st, np.array(policy.running, dtype=np.int64)
            expected = np.zeros(inst.n, dtype=np.int64)
            expected[running] = np.maximum(st.m[running], st.L[running])
            assert np.array_equal(policy.reserved, expected)
            assert policy.reserved_total == expected.sum()

        batches, evictions = simulate_checking_every_batch(inst, policy, check)  # next_batch reserves ahead
        checked, evicted = checked + batches, evicted + evictions
    assert checked > 100 and evicted > 0


def test_infermax_repeat_times_short_and_long_runs_are_batch_time():
    """The InferMax cost model prices a run of repeated batches batch by batch in Python floats up to
    SHORT_RUN batches and over numpy arrays beyond: both give exactly (==) batch_time's floats, with and
    without prefill chunks, for Llama-2-7B (phi = 0) and a GQA model (phi > 0)."""
    from lpbench import costmodels

    rng = np.random.default_rng(1)
    for inst_cost in (random_batch_instance(0).cost_model,
                      costmodels.build({"form": "infermax", "a_o": 0.002, "b_o": 0.06, "a_d": 8e-6, "b_d": 0.02,
                                        "s_d": 7e-4, "a_p": 1.7e-7, "b_p": 0.09, "s_p": 0.0015, "m_p": 3e-6,
                                        "layers": 80, "phi": 0.1})):
        for n_pre, n_dec in ((0, 1), (0, 40), (1, 0), (1, 40), (2, 5)):
            c = np.r_[rng.integers(1, 3000, n_pre), np.ones(n_dec, dtype=np.int64)]
            m0 = rng.integers(0, 100_000, n_pre + n_dec)
            decode = np.r_[np.zeros(n_pre, dtype=bool), np.ones(n_dec, dtype=bool)]
            for steps in (1, 2, inst_cost.SHORT_RUN, inst_cost.SHORT_RUN + 1, 40):
                expected = [inst_cost.batch_time(c, m0 + s * c, decode) for s in range(steps)]
                assert inst_cost.repeat_times(c, m0, decode, steps).tolist() == expected


def test_progress_is_reported_about_every_thousand_batches():
    """``simulate(progress=...)`` reports (done, n, t) once per thousand batches passed (a run may pass several
    at once: one report), with done and t never falling; the loop checks the Watch only when it is due."""
    inst = random_batch_instance(0, n=200, horizon=5.0, limits={"token_budget": 64})
    calls = []
    res = simulate(inst, make_policy("sarathi", inst), progress=lambda done, n, t: calls.append((done, n, t)))
    assert res.schedule.n_batches >= 2000
    assert 1 <= len(calls) <= res.schedule.n_batches // 1000
    assert all(n == inst.n for _, n, _ in calls)
    assert [c[0] for c in calls] == sorted(c[0] for c in calls) and [c[2] for c in calls] == sorted(c[2] for c in calls)
