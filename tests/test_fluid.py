"""Seed 001: the types block, the fluid closed forms (8)-(10) and the capacity-aware bound."""
import json
import subprocess
import sys

import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.fluid import capacity_bound, equilibrium, memory_work
from lpbench.instance import parse_instance

LINEAR = {"form": "linear", "d0": 0.25, "d1": 0.0625}   # d0 + 12 d1 = 1: Example 2's ΔT* = 1


def example2(memory=12, **extra):
    return {"memory": memory, "cost_model": LINEAR, "types": [{"prompt": 1, "output": 1, "rate": 4}], **extra}


def problems(data):
    with pytest.raises(InputError) as e:
        parse_instance(data)
    return e.value.problems


def test_types_block_validation_names_the_field():
    assert problems({**example2(), "types": [{"prompt": 1, "output": 1, "rate": -4}]}) == [
        "types[0].rate: must be a positive number, got -4"]
    assert problems({**example2(), "types": [{"prompt": 1, "output": 1, "rate": 4, "lambda": 2}]}) == [
        "types[0].lambda: unknown key; expected one of: prompt, output, rate"]
    assert problems({**example2(), "types": [{"prompt": 1, "rate": 4}]}) == ["types[0].output: missing required field"]
    assert problems({**example2(), "cost_model": "infermax-llama2-7b-a100"})[0].startswith(
        "cost_model: a types block needs a linear cost model")
    assert problems({**example2(), "types": [{"prompt": 8, "output": 5, "rate": 1}]}) == [
        "types[0].output: type can never run: peak KV footprint prompt + output = 13 exceeds memory 12"]
    assert problems({"memory": 12}) == [
        "requests: missing required field (an instance has requests, a types block, or both)"]


def test_types_round_trip_with_and_without_requests():
    inst = parse_instance(example2())
    assert inst.n == 0 and inst.types.m == 1
    again = parse_instance(inst.to_dict())
    assert again.types.to_list() == [{"prompt": 1, "output": 1, "rate": 4.0}]
    both = parse_instance({**example2(), "requests": [{"arrival": 0, "prompt": 1, "output": 2}]})
    assert both.n == 1 and parse_instance(both.to_dict()).types.to_list() == both.types.to_list()


def test_example2_equilibrium_and_capacity_bound():
    inst = parse_instance(example2())
    eq = equilibrium(inst.types, 0.25, 0.0625, 12)
    assert (eq.M_star, eq.dT_star, eq.n_star, eq.throughput_star) == (12.0, 1.0, [4.0], 4.0)
    assert eq.throughput_bound == 4.0 and not eq.capacity_binding
    tight = equilibrium(inst.types, 0.25, 0.0625, 10)
    # Θ_UB(10) = l' · (C / (d0 + d1 C)) / a = 1 · (10 / 0.875) / 3
    assert tight.capacity_binding and tight.throughput_bound == pytest.approx(10 / 0.875 / 3) and tight.throughput_bound < 4


def test_capacity_bound_equals_theta_star_iff_memory_reaches_m_star():
    rng = np.random.default_rng(1)
    for _ in range(50):
        m = int(rng.integers(1, 5))
        inst = parse_instance({"memory": 10_000, "cost_model": {"form": "linear", "d0": 1.0, "d1": 0.001},
                               "types": [{"prompt": int(rng.integers(1, 20)), "output": int(rng.integers(1, 30)),
                                          "rate": float(rng.uniform(0.01, 0.5))} for _ in range(m)]})
        t = inst.types
        if 0.001 * (t.rate * memory_work(t.prompt, t.output)).sum() >= 1:
            continue
        eq = equilibrium(t, 1.0, 0.001, 10_000)
        theta_star = float((t.rate * t.output).sum())
        above, _ = capacity_bound(t, 1.0, 0.001, eq.M_star * 1.0001)
        below, y = capacity_bound(t, 1.0, 0.001, eq.M_star * 0.9)
        assert above == pytest.approx(theta_star)
        assert below < theta_star and np.all(y <= t.rate + 1e-12)


@pytest.mark.parametrize("value", ["decode tokens", "completions"])
def test_capacity_bound_greedy_is_the_knapsack_lp_optimum(value):
    """Both objectives of the knapsack LP (notes §2.5) against scipy's LP, memory binding or not: the greedy
    order depends on the objective (v_j / a_j), so the most completions is not the Σ y_j of Θ_UB's solution."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(7)
    for _ in range(60):
        m = int(rng.integers(1, 6))
        inst = parse_instance({"memory": 10_000, "cost_model": {"form": "linear", "d0": 1.0, "d1": 0.001},
                               "types": [{"prompt": int(rng.integers(1, 200)), "output": int(rng.integers(1, 200)),
                                          "rate": float(rng.uniform(0.01, 0.5))} for _ in range(m)]})
        t = inst.types
        v = t.output.astype(float) if value == "decode tokens" else np.ones(m)
        C = float(rng.uniform(10, 3000))
        got, y = capacity_bound(t, 1.0, 0.001, C, v)
        a = memory_work(t.prompt, t.output)
        lp = linprog(-v, A_ub=[a], b_ub=[C / (1.0 + 0.001 * C)], bounds=list(zip([0.0] * m, t.rate)), method="highs")
        assert got == pytest.approx(-lp.fun, rel=1e-9, abs=1e-12) and np.all(y <= t.rate + 1e-12)
        assert a @ y <= C / (1.0 + 0.001 * C) * (1 + 1e-12)


def test_completions_ratio_is_against_the_most_completions_the_lp_allows(tmp_path):
    """A short type and a long one of equal prompt, memory binding: Θ_UB's solution fills the long type first,
    and its Σ y_j (the old completions bound) was below what FCFS completes (completions_ratio 1.64)."""
    types = tmp_path / "types.json"
    types.write_text(json.dumps({"memory": 300, "cost_model": {"form": "linear", "d0": 1.0, "d1": 0.0001},
                                 "types": [{"prompt": 100, "output": 1, "rate": 0.05},
                                           {"prompt": 100, "output": 100, "rate": 0.05}]}))
    out = tmp_path / "drawn"
    assert cli("generate", "fluid", "--types", str(types), "--horizon", "4000", "--out", str(out)).returncode == 0
    (drawn,) = out.iterdir()
    done = cli("throughput", str(drawn), "--policy", "fcfs", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # by hand: a = (l' + 1)(l + l'/2) = 201 and 15,150; budget C / (d0 + d1 C) = 300 / 1.03; the short type first
    assert report["completions_bound"] == pytest.approx(0.05 + (300 / 1.03 - 0.05 * 201) / 15_150, rel=1e-12)
    assert 0 < report["completions_ratio"] <= 1 and 0 < report["ratio"] <= 1


def cli(*args):
    return subprocess.run([sys.executable, "-m", "lpbench.cli", *args], capture_output=True, text=True)


def test_cli_fluid_acceptance(tmp_path):
    p = tmp_path / "ex2.json"
    p.write_text(json.dumps(example2()))
    r = cli("solve", str(p), "--formulation", "fluid", "--json", "-q")
    f = json.loads(r.stdout)["fluid"]
    assert (f["M_star"], f["throughput_star"], f["n_star"], f["stable"]) == (12, 4, [4], True)
    p.write_text(json.dumps(example2(memory=10)))
    f = json.loads(cli("solve", str(p), "--formulation", "fluid", "--json", "-q").stdout)["fluid"]
    assert f["throughput_bound"] < 4 and f["capacity_binding"] is True
    p.write_text(json.dumps({**example2(), "cost_model": {"form": "linear", "d0": 0.5, "d1": 0.1}}))
    r = cli("solve", str(p), "--formulation", "fluid", "--json", "-q")
    assert r.returncode == 2 and "load d1*sum(rate*a) = 1.2 >= 1" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_an_instance_of_types_alone_defaults_to_fluid_and_lists_only_what_reads_types():
    """A types block without requests is a workload, not a trace: ``solve`` without --formulation runs ``fluid``
    (it ran ``batch-bound``, whose policies crashed on zero requests: exit 3), and the formulations offered are
    those that read the types; every one of those builds on it, and every other is refused with exit 2."""
    from lpbench.formulations import FORMULATIONS
    from lpbench.solve import applicable_formulations, solve_instance

    inst = parse_instance(example2())
    assert solve_instance(inst)["formulation"] == "fluid"
    offered = applicable_formulations(inst)
    assert offered == ["fluid", "wait-thresholds"]
    for name, cls in FORMULATIONS.items():
        if "batch" not in cls.models:
            continue
        if name in offered:
            assert solve_instance(inst, name, time_limit=5)["status"] == "optimal", name
        else:
            with pytest.raises(InputError) as e:
                solve_instance(inst, name, time_limit=5)
            assert "has no requests" in str(e.value) and "fluid, wait-thresholds" in str(e.value), name


@pytest.mark.parametrize("args", [
    ["solve", "{f}", "--formulation", "batch-bound"], ["simulate", "{f}", "--policy", "wait"],
    ["simulate", "{f}", "--policy", "vllm"], ["verify", "{f}", "{s}"], ["capacity", "{f}", "--policy", "wait"],
    ["throughput", "{f}", "--policy", "wait"], ["plot", "memory", "--instance", "{f}", "--policy", "wait",
                                                 "--out", "{o}"],
    ["export", "{f}", "--formulation", "infermax-milp", "--out", "{o}.lp"]])
def test_commands_that_need_requests_refuse_an_instance_of_types_alone(tmp_path, args):
    """Each of these ended in an internal error (exit 3) on instances/seed001-example2.json; now exit 2, one line
    that names the field and how to draw requests from the types."""
    f, s = tmp_path / "ex2.json", tmp_path / "s.json"
    f.write_text(json.dumps(example2()))
    s.write_text(json.dumps({"batches": []}))
    r = cli(*[a.format(f=f, s=s, o=tmp_path / "out") for a in args])
    assert r.returncode == 2 and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert "requests: the instance has no requests" in r.stderr and "lpbench generate fluid --types" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
