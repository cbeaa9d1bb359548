"""Policy parameters (``--param KEY=VALUE``, the real-use audit, docs/audits.md): every value is checked against
the policy's declaration (:attr:`lpbench.policies.base.Policy.params`) before the policy is built, and bad input is
exit 2 with one line naming the parameter, the value and what was expected -- never exit 3."""
from __future__ import annotations

import inspect
import json

import pytest
from conftest import BATCH, ROOT, run

from lpbench.errors import InputError
from lpbench.policies import POLICIES, make_policy

SLOT12 = str(ROOT / "instances/slot-12.json")


def _exit_2(capsys, *argv, expect: tuple[str, ...]):
    code, out, err = run(capsys, *argv)
    assert code == 2, (code, err)
    assert len(err.strip().splitlines()) == 1, err
    for part in expect:
        assert part in err, (part, err)
    return err


# the audit's reproductions: (instance, policy, params, what the one line must say)
NON_FINITE = [(BATCH, "rad", "M", v) for v in ("nan", "inf")] + [
    (BATCH, "rad", "T_col", "nan"), (BATCH, "rad", "T_col", "inf"), (BATCH, "rad", "T_lcm", "nan"),
    (BATCH, "rad", "T_lcm", "inf"), (BATCH, "rad-alg2", "M", "nan"), (BATCH, "rad-alg2", "T_lcm", "-inf"),
    (BATCH, "slai", "cap", "nan"), (BATCH, "slai", "cap", "inf"), (BATCH, "slai", "decode_limit", "inf"),
    (BATCH, "slai", "theta", "nan"), (BATCH, "slai", "used", "nan"), (BATCH, "rank-o", "P", "nan"),
    (SLOT12, "mc-sf-backfill", "depth", "nan"), (SLOT12, "mc-sf-backfill", "depth", "inf"),
    (BATCH, "sarathi", "P", "1e309")]


@pytest.mark.parametrize("path, policy, key, value", NON_FINITE)
def test_non_finite_values_are_refused(capsys, path, policy, key, value):
    _exit_2(capsys, "simulate", path, "--policy", policy, "--param", f"{key}={value}",
            expect=(f"--param {key}: must be a finite number, got {value!r}",))


OUT_OF_RANGE = [
    (BATCH, "sarathi", "P", "0.5", "a positive integer"), (BATCH, "orca", "P", "0.5", "a positive integer"),
    (BATCH, "sarathi-ef", "P", "0.001", "a positive integer"), (BATCH, "sarathi", "P", "100.5", "a positive integer"),
    (BATCH, "rank-o", "P", "-5", "a positive integer"), (BATCH, "vllm", "P", "0", "a positive integer"),
    (BATCH, "rad", "M", "0", "a positive integer"), (BATCH, "rad", "M", "3.5", "a positive integer"),
    (BATCH, "rad", "T_col", "0.5", "a positive integer"), (BATCH, "rad-alg2", "T_lcm", "1e300", "a positive integer"),
    (BATCH, "slai", "spf", "0.5", "0 (FCFS) or 1"), (BATCH, "slai", "dynamic", "2", "0 (the fixed theta) or 1"),
    (BATCH, "slai", "used", "-1", "0 (reserved / M) or 1"), (BATCH, "slai", "theta", "-1", "a number >= 0"),
    (BATCH, "slai", "cap", "0", "a positive integer"), (BATCH, "slai", "decode_limit", "2.5", "a positive integer"),
    (BATCH, "mc-group", "period", "0", "a positive integer"), (BATCH, "mc-work", "period", "1", None),
    (BATCH, "distserve", "prefill_engines", "0.5", "a positive integer"), (BATCH, "distserve", "pack", "0.5", "0 ("),
    (BATCH, "fcfs", "back", "3", "0 (evicted prompts re-queue at the front"), (BATCH, "wait", "slack", "-1", ">= 0"),
    (BATCH, "wait", "B", "0.5", "a number in [1, "), (BATCH, "nested-wait", "n1", "0", "a positive integer"),
    (BATCH, "nested-wait", "n3", "2.5", "a positive integer"),
    (SLOT12, "mc-sf-backfill", "depth", "0", "a positive integer"),
    (SLOT12, "mc-sf-backfill", "depth", "2.5", "a positive integer"),
    (SLOT12, "alpha-protection", "alpha", "1", "a number in [0, 1)"),
    (SLOT12, "alpha-beta-clearing", "beta", "0", "a number in (0, 1]")]


@pytest.mark.parametrize("path, policy, key, value, expect", OUT_OF_RANGE)
def test_values_outside_the_declaration_are_refused(capsys, path, policy, key, value, expect):
    if expect is None:  # a parameter of another policy: unknown here
        _exit_2(capsys, "simulate", path, "--policy", policy, "--param", f"{key}={value}",
                expect=(f"--param {key}: unknown parameter for policy {policy!r}",))
        return
    err = _exit_2(capsys, "simulate", path, "--policy", policy, "--param", f"{key}={value}",
                  expect=(f"--param {key}: must be ", expect, f"got {float(value):g}", f"policy {policy!r}"))
    assert "Traceback" not in err


@pytest.mark.parametrize("key", ["seed", "name", "inst"])
@pytest.mark.parametrize("policy", ["vllm", "wait"])
def test_reserved_names_are_unknown_parameters(capsys, key, policy):
    _exit_2(capsys, "simulate", BATCH, "--policy", policy, "--param", f"{key}=3",
            expect=(f"--param {key}: unknown parameter",))


def test_unknown_parameters_name_the_expected_ones(capsys):
    _exit_2(capsys, "simulate", BATCH, "--policy", "slai", "--param", "P=512",
            expect=("--param P: unknown parameter for policy 'slai'; expected spf, dynamic, theta, cap",))
    _exit_2(capsys, "simulate", BATCH, "--policy", "mc-work", "--param", "k=1",
            expect=("--param k: unknown parameter for policy 'mc-work'; expected none",))


def test_a_repeated_key_is_refused(capsys):
    _exit_2(capsys, "simulate", BATCH, "--policy", "sarathi", "--param", "P=1", "--param", "P=2",
            expect=("--param P: given twice ('1', then '2')",))
    _exit_2(capsys, "simulate", SLOT12, "--policy", "alpha-beta-clearing", "--param", "beta=0.5", "--param",
            "beta=0.1", expect=("--param beta: given twice",))


@pytest.fixture(scope="module")
def fluid_requests(tmp_path_factory):
    from lpbench.generators import fluid
    from lpbench.instance import load_instance

    base = load_instance(str(ROOT / "instances/seed001-example2.json"))
    path = tmp_path_factory.mktemp("ex2") / "ex2.json"
    path.write_text(json.dumps(fluid.instance(base, base.types, 50, 1)))
    return str(path)


@pytest.mark.parametrize("policy, param, expect", [
    ("wait", "seed=1", "--param seed: unknown parameter"),
    ("sarathi", "P=0.5", "--param P: must be a positive integer"),
    ("fcfs", "back=nan", "--param back: must be a finite number"),
    ("nested-wait", "n2=0", "--param n2: must be a positive integer")])
def test_throughput_checks_parameters(capsys, fluid_requests, policy, param, expect):
    _exit_2(capsys, "throughput", fluid_requests, "--policy", policy, "--param", param, expect=(expect,))


@pytest.mark.parametrize("policy, param, expect", [
    ("rad", "M=nan", "--param M: must be a finite number"),
    ("sarathi", "P=0.5", "--param P: must be a positive integer"),
    ("vllm", "inst=1", "--param inst: unknown parameter"),
    ("slai", "spf=0.5", "--param spf: must be 0 (FCFS) or 1")])
def test_capacity_checks_parameters(capsys, policy, param, expect):
    _exit_2(capsys, "capacity", BATCH, "-q", "--policy", policy, "--requests", "200", "--seeds", "1", "--iters", "2",
            "--param", param, expect=(expect,))


@pytest.mark.parametrize("path, policy, params", [
    (BATCH, "sarathi", ["P=1"]), (BATCH, "sarathi-ef", ["P=64"]), (BATCH, "rank-o", ["P=256"]),
    (BATCH, "rad", ["M=3", "T_col=8"]), (BATCH, "rad-alg2", ["M=4", "T_lcm=128"]),
    (BATCH, "slai", ["spf=0", "dynamic=0", "theta=2", "cap=64", "decode_limit=32", "used=1"]),
    (BATCH, "mc-group", ["period=4"]), (SLOT12, "mc-sf-backfill", ["depth=1"]),
    (SLOT12, "alpha-beta-clearing", ["alpha=0.3", "beta=0.5"]), (SLOT12, "alpha-protection", ["alpha=0.5"])])
def test_valid_values_still_run(capsys, path, policy, params):
    argv = ["simulate", path, "--policy", policy, "--json"]
    for p in params:
        argv += ["--param", p]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert json.loads(out)["verified"]


@pytest.mark.parametrize("policy, key, value", [("sarathi", "P", 512), ("rank-i", "P", 512), ("rad", "M", 1024),
                                                ("slai", "cap", 128), ("slai", "theta", 10)])
def test_giving_the_default_changes_nothing(capsys, policy, key, value):
    _, plain, _ = run(capsys, "simulate", BATCH, "--policy", policy, "--json")
    _, given, _ = run(capsys, "simulate", BATCH, "--policy", policy, "--json", "--param", f"{key}={value}")
    assert json.loads(plain)["metrics"] == json.loads(given)["metrics"]


def _init_keywords(cls) -> set[str]:
    """The named keyword parameters of every __init__ on the class's MRO (its --param names)."""
    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in ("self", "seed"):
                names.add(p.name)
    return names


@pytest.mark.parametrize("name", POLICIES.names())
def test_every_policy_declares_its_parameters_and_their_defaults_pass(name):
    cls = POLICIES.get(name)
    policy_init = {k for k in _init_keywords(cls) if cls.param(k) is None}
    assert not policy_init, f"{name}: __init__ takes {policy_init} without declaring them in params"
    defaults = cls.param_defaults()
    assert set(defaults) == set(cls.params)
    for key, spec in cls.params.items():
        assert spec.what and spec.kind in ("int", "float", "flag")
        if defaults[key] is not None:  # None: derived from the instance at run time
            assert spec.accepts(defaults[key]), (name, key, defaults[key], spec.expect())
            make_policy(name, None, **{key: defaults[key]})
    make_policy(name)


def test_the_python_api_is_checked_too():
    with pytest.raises(InputError, match=r"--param period: must be a positive integer up to 2\^40, got 'x'"):
        make_policy("mc-group", None, period="x")
    with pytest.raises(InputError, match=r"--param period: must be a positive integer up to 2\^40, got inf"):
        make_policy("mc-group", None, period=float("inf"))
    with pytest.raises(InputError, match=r"--param depth: .* got 2\.5 \(for policy 'mc-sf-backfill'"):
        make_policy("mc-sf-backfill", None, depth=2.5)
    with pytest.raises(InputError, match="--param n4: must be a positive integer"):
        make_policy("nested-wait", None, n1=16, n2=15, n3=13, n4=0.5)
    with pytest.raises(InputError, match="--param seed: unknown parameter for policy 'vllm'"):
        POLICIES.get("vllm").check_params({"seed": 3})
    assert make_policy("slai", None, spf=True, used=False).spf is True
    assert make_policy("mc-sf-backfill", None, depth=3.0).depth == 3
