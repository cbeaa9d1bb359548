"""α-protection / β-clearing: restarts verify, are seeded, never beat the IP, and livelock is reported."""
import numpy as np
import pytest

from lpbench.formulations import FORMULATIONS
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.errors import PolicyDiverged
from lpbench.sim import simulate
from lpbench.solve import solve_instance
from lpbench.verify import verify


def instance(seed, n=30, M=60):
    rng = np.random.default_rng(seed)
    return parse_instance({"memory": M, "requests": {"arrival": np.sort(rng.integers(0, 20, n)).tolist(),
                                                     "prompt": rng.integers(1, 6, n).tolist(),
                                                     "output": rng.integers(1, 9, n).tolist()}})


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("policy, params", [("alpha-protection", {"alpha": 0.3}),
                                            ("alpha-beta-clearing", {"alpha": 0.1, "beta": 0.2}),
                                            ("alpha-beta-clearing", {})])
def test_schedules_with_restarts_verify_and_fit_the_ip(seed, policy, params):
    inst = instance(seed)
    res = simulate(inst, make_policy(policy, inst, seed=seed, **params))
    ver = verify(inst, res.schedule)
    assert ver.feasible, ver.violations
    # the last runs form a feasible IP point with the same total latency (semantics: restart)
    form = FORMULATIONS.get("latency-ip")(inst)
    lp = form.build()
    x = form.warm_start(res.schedule)
    assert lp.max_violation(x) == 0 and lp.objective_value(x) == ver.metrics["total_latency"]


def test_clearing_happens_and_is_seeded():
    inst = instance(1, n=40, M=40)
    a = verify(inst, simulate(inst, make_policy("alpha-beta-clearing", inst, seed=4, alpha=0.0)).schedule)
    b = verify(inst, simulate(inst, make_policy("alpha-beta-clearing", inst, seed=4, alpha=0.0)).schedule)
    assert a.metrics["evictions"] > 0 and a.metrics == b.metrics


def test_restart_loses_progress():
    # M = 6: A (s1,o4) and B (s1,o4) both admitted under alpha=0 (2+2 <= 6); after round 2 they need 4+4 > 6.
    # Full clearing would loop forever (both restart together); beta-clearing separates them.
    inst = parse_instance({"memory": 6, "requests": [{"arrival": 0, "prompt": 1, "output": 4},
                                                     {"arrival": 0, "prompt": 1, "output": 4}]})
    with pytest.raises(PolicyDiverged):
        simulate(inst, make_policy("alpha-protection", inst, alpha=0.0))
    res = simulate(inst, make_policy("alpha-beta-clearing", inst, alpha=0.0, beta=0.5))
    ver = verify(inst, res.schedule)
    assert ver.feasible and ver.metrics["evictions"] >= 2
    # a restart re-processes the prompt: more prompt tokens processed than the prompts themselves
    assert res.schedule.tokens.sum() > (inst.prompt + inst.output - 1).sum()


def test_livelock_is_reported_not_looped():
    # two requests that each need the whole memory at the end, admitted together under (1-alpha)M
    inst = parse_instance({"memory": 10, "requests": [{"arrival": 0, "prompt": 1, "output": 8},
                                                      {"arrival": 0, "prompt": 1, "output": 8}]})
    with pytest.raises(PolicyDiverged):
        simulate(inst, make_policy("alpha-protection", inst))
    rep = solve_instance(inst, "volume-bound", "highs")
    assert "alpha-protection" in rep["skipped_policies"]


@pytest.mark.parametrize("policy", ["alpha-beta-clearing", "alpha-protection"])
def test_repeated_rounds_build_the_round_by_round_schedule(policy):
    """The policies' runs of repeated rounds (steady_batches; 5x faster at 10,000 requests) give, batch for batch,
    the plain loop's schedule, with clearings and random draws between the runs, arrivals during them (an empty
    queue: run_survives_arrival both ways) and divergence reported alike; some runs are promised."""
    from lpbench.generators import jaillet
    from test_sim import assert_runs_change_nothing

    promised, verdicts = [], set()
    for model in ("jaillet-model1", "jaillet-model2"):
        for k in range(4):
            inst = parse_instance(jaillet.instance(model, 0, k))
            for case in (inst, instance(k, n=60, M=120)):
                try:
                    assert_runs_change_nothing(case, policy)
                except PolicyDiverged as e:  # the plain loop must diverge with the same words
                    plain = make_policy(policy, case)
                    plain.steady_batches = lambda req, tokens, decode: (0, True)
                    with pytest.raises(PolicyDiverged) as plain_error:
                        simulate(case, plain)
                    assert str(plain_error.value) == str(e)
                p = make_policy(policy, case)
                steady, survives = p.steady_batches, p.run_survives_arrival

                def spy_steady(*args, steady=steady):
                    promise = steady(*args)
                    promised.append(promise[0])
                    return promise

                def spy_survives(i, survives=survives):
                    verdict = survives(i)
                    verdicts.add(verdict)
                    return verdict

                p.steady_batches, p.run_survives_arrival = spy_steady, spy_survives
                try:
                    simulate(case, p)
                except PolicyDiverged:
                    pass
    assert sum(promised) > 100 and verdicts == {True, False}, (sum(promised), verdicts)


@pytest.mark.parametrize("policy", ["alpha-protection", "alpha-beta-clearing"])
def test_a_request_above_the_admission_limit_is_refused_and_solve_skips_the_policy(policy):
    """s + 1 = 4 > (1 − α)·4 (α = 0.25, 0.2): never admitted, so the run stalled and solve died (PolicyError, exit 3);
    now the policy refuses the instance and solve reports it skipped, with the optimum (6) proven."""
    from lpbench.errors import InputError

    inst = parse_instance({"memory": 4, "requests": {"arrival": [1, 0], "prompt": [3, 1], "output": [1, 3]}})
    with pytest.raises(InputError, match="never admits request 0"):
        simulate(inst, make_policy(policy, inst))
    rep = solve_instance(inst, "latency-ip", "highs", 20, None, 0)
    assert rep["status"] == "optimal" and rep["objective"] == 6
    assert rep["skipped_policies"][policy].startswith(f"policy '{policy}' (alpha=")
    assert "never admits request 0: its initial memory s + 1 = 4" in rep["skipped_policies"][policy]
