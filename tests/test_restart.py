"""Evictions that restart (``"eviction": "restart"``, seed 001 §1.4) in the batch model: the instance field, the
verifier's two replays against hand-computed metrics and against each other, the policies, the exact CSP and MILP
(the eviction-free optimum) and the bounds."""
import numpy as np
import pytest
from helpers import same_verification

from lpbench.errors import InputError
from lpbench.instance import parse_instance
from lpbench.policies import applicable, make_policy
from lpbench.schedule import Schedule
from lpbench.sim import simulate
from lpbench.solve import solve_instance
from lpbench.verify import _verify_flat, _verify_replay, verify

# A (I = 2, O = 3) and B (I = 1, O = 2), one batch = one time unit
BATCH = {"memory": 10, "model": "batch", "cost_model": {"form": "linear", "d0": 1, "d1": 0},
         "requests": [{"arrival": 0, "prompt": 2, "output": 3, "id": "A"},
                      {"arrival": 0, "prompt": 1, "output": 2, "id": "B"}]}
RESTART = {**BATCH, "eviction": "restart"}


def check(data, batches):
    inst = parse_instance(data)
    return verify(inst, Schedule.from_dict({"batches": batches}, inst))


def test_a_restart_by_hand():
    """A is evicted after its first token, prefills its prompt again and regenerates all three tokens."""
    sched = [
        {"start": 0, "requests": ["A", "B"], "tokens": [2, 1]},         # prefills: A token 1 (m 2), B token 1 (m 1)
        {"start": 1, "requests": ["B"], "tokens": [1], "evict": ["A"]},  # A restarts (m 0, S = I = 2); B token 2, done
        {"start": 2, "requests": ["A"], "tokens": [2]},                 # A's prompt again -> token 1 (m 2)
        {"start": 3, "requests": ["A"], "tokens": [1]},                 # token 2 (m 3)
        {"start": 4, "requests": ["A"], "tokens": [1]},                 # token 3 (m 4), done
    ]
    res = check(RESTART, sched)
    assert res.feasible, res.violations
    m = res.metrics
    assert m["evictions"] == 1 and m["makespan"] == 5 and m["total_latency"] == 5 + 2
    assert m["peak_memory"] == 4                            # after the last batch: I + O - 1
    # A's tokens appear at 1 (abandoned run), 3, 4, 5; B's at 1, 2: TTFT 1 each; gaps 2, 1, 1 and 1
    assert m["ttft_p50"] == 1 and m["tbt_p50"] == 1 and m["tbt_p99"] == pytest.approx(1.97)
    assert sorted(res.tbt[1]) == [1, 1, 1, 2]
    # under recompute the same batches are a chunked refill of S = 3 (no token at 3), its last chunk (token 2 at 4)
    # and a decode (token 3 at 5): the same completions, other token times
    res = check(BATCH, sched)
    assert res.feasible and res.metrics["total_latency"] == 7 and sorted(res.tbt[1]) == [1, 1, 3]


def test_a_recompute_refill_is_refused_under_restart():
    sched = [
        {"start": 0, "requests": ["A", "B"], "tokens": [2, 1]},
        {"start": 1, "requests": ["B"], "tokens": [1], "evict": ["A"]},
        {"start": 2, "requests": ["A"], "tokens": [3]},                 # recompute: prompt + token 1, -> token 2
        {"start": 3, "requests": ["A"], "tokens": [1]},                 # token 3, done
    ]
    good = check(BATCH, sched)
    assert good.feasible and good.metrics["makespan"] == 4
    res = check(RESTART, sched)
    assert res.violations == ["batch 2 (start 2): [tokens] request A: processes 3 tokens, pending 2 (must be 1..2)"]


def test_the_field():
    def problems(data):
        with pytest.raises(InputError) as e:
            parse_instance(data)
        return e.value.problems
    assert problems({**BATCH, "eviction": "restrat"}) == ["eviction: must be one of 'recompute', 'restart', got "
                                                          '"restrat"']
    slot = {"memory": 10, "requests": [{"arrival": 0, "prompt": 2, "output": 3}]}
    assert problems({**slot, "eviction": "recompute"}) == [
        "eviction: the slot model (seed 004) evicts by restart only; use model 'batch' for recompute"]
    assert parse_instance({**slot, "eviction": "restart"}).restarts and parse_instance(slot).restarts
    inst = parse_instance(RESTART)
    assert inst.restarts and not parse_instance(BATCH).restarts
    assert parse_instance(inst.to_dict()).eviction == "restart"
    # a file without the field keeps its content hash; one with it is another problem
    assert parse_instance(BATCH).content_hash() == parse_instance({**BATCH, "name": "x"}).content_hash()
    assert inst.content_hash() != parse_instance(BATCH).content_hash()


def _tight(seed, n=24, **extra):
    """A batch instance whose memory barely holds the largest request, so that the evicting policies evict."""
    rng = np.random.default_rng(seed)
    prompt, output = rng.integers(1, 120, n), rng.integers(1, 40, n)
    data = {"memory": int((prompt + output).max() + 60), "model": "batch",
            "cost_model": ["infermax-llama2-7b-a100", {"form": "linear", "d0": 0.01, "d1": 1e-5}][seed % 2],
            "eviction": "restart",
            "requests": {"arrival": np.round(np.sort(rng.uniform(0, 0.05, n)), 4).tolist(),
                         "prompt": prompt.tolist(), "output": output.tolist()}, **extra}
    return parse_instance(data)


@pytest.mark.parametrize("seed", range(4))
def test_every_policy_restarts_and_both_replays_agree(seed):
    """Every batch policy, fcfs included, on a restart instance: its schedule verifies and the flat check returns
    the replay's result exactly, or the policy livelocks (an evicted request can lose its progress forever: orca,
    vllm-hy and fcfs do on seed 0), which the simulator reports. batch-bound stays below every verified total
    latency, and read with recompute evictions some of the same schedules fail or change (the rule matters)."""
    from lpbench.errors import PolicyDiverged
    from lpbench.formulations.batch_bound import BatchBound

    inst = _tight(seed)
    recompute = parse_instance({**inst.to_dict(), "eviction": "recompute"})
    bound = BatchBound(inst).bounds()["total_latency"]
    evicting = differs = 0
    for p in applicable(inst) + ["fcfs"]:
        try:
            sched = simulate(inst, make_policy(p, inst)).schedule
        except (InputError, PolicyDiverged):  # a policy that cannot serve the instance, or livelocks
            continue
        ref = _verify_replay(inst, sched)
        assert ref.feasible, (p, ref.violations)
        same_verification(_verify_flat(inst, sched), ref)
        assert ref.metrics["total_latency"] >= bound * (1 - 1e-12), p
        if ref.metrics["evictions"]:
            evicting += 1
            other = verify(recompute, sched)
            differs += not other.feasible or other.metrics != ref.metrics
    assert evicting >= 10 and differs >= 5


def test_fcfs_on_example2_loses_more_with_restarts():
    """Seed 001 Example 2 (C = 12, λ = 4, l = l' = 1): WAIT never evicts, so the rule does not change it; FCFS
    restarting its evicted prompts completes fewer than FCFS recomputing them, re-queued at the front or the back."""
    from lpbench.generators import fluid as gen
    from lpbench.throughput import measure

    base = parse_instance({"memory": 12, "cost_model": {"form": "linear", "d0": 0.25, "d1": 0.0625},
                           "types": [{"prompt": 1, "output": 1, "rate": 4}]})
    data = gen.instance(base, base.types, 2_000, seed=1)
    out = {}
    for rule in ("recompute", "restart"):
        inst = parse_instance({**data, "eviction": rule})
        for policy, params in (("wait", {}), ("fcfs", {}), ("fcfs", {"back": 1})):
            ver = verify(inst, simulate(inst, make_policy(policy, inst, **params)).schedule)
            assert ver.feasible, ver.violations
            out[rule, policy, params.get("back", 0)] = measure(inst, ver)["throughput"]
    assert out["restart", "wait", 0] == out["recompute", "wait", 0]
    for back in (0, 1):
        assert out["restart", "fcfs", back] < out["recompute", "fcfs", back] < out["recompute", "wait", 0]
    with pytest.raises(InputError, match="--param back: must be 0"):
        make_policy("fcfs", back=2)
    restarting = parse_instance({**data, "eviction": "restart"})   # Nested WAIT's safety net keeps the stage
    with pytest.raises(InputError, match="nested-wait.*refuses 'restart'"):
        simulate(restarting, make_policy("nested-wait", restarting))


def _tiny(memory, prompt, output):
    return {"name": "tiny", "memory": memory, "model": "batch", "cost_model": "infermax-llama2-7b-a100",
            "limits": {"token_budget": 8},
            "requests": {"arrival": [0] * len(prompt), "prompt": prompt, "output": output}}


@pytest.mark.parametrize("case", ["csp51-I2-B2", "mixed-b"])
def test_the_csp_and_milp_restart_optimum_is_eviction_free(case):
    """On instances where evicting pays under recompute, the restart optimum (evictions fixed to 0, the eviction-free
    optimum) is higher; the CSP and the MILP agree on it, and their schedules verify under restart."""
    from lpbench.generators import infermax

    data = infermax.csp51(2, B=2) if case == "csp51-I2-B2" else _tiny(7, [4, 3, 3], [3, 3, 2])
    inst = parse_instance({**data, "eviction": "restart"})
    recompute = solve_instance(parse_instance(data), "infermax-csp", "cpsat", time_limit=120)
    reps = [solve_instance(inst, f, s, time_limit=120) for f, s in (("infermax-csp", "cpsat"),
                                                                    ("infermax-milp", "highs"))]
    for rep in reps + [recompute]:
        assert rep["status"] == "optimal" and rep["verified"]
    assert reps[0]["objective"] == pytest.approx(reps[1]["objective"], rel=1e-9)
    assert reps[0]["objective"] > recompute["objective"] * (1 + 1e-6)
