"""Audit of real use (2026-11-30): the verifier's [order] slack no longer grows with the clock (batches could
overlap by 1 ms at t = 10⁶ s and collapse onto one instant at 10¹² s and still verify), times the float clock
cannot resolve are refused, and JSON inputs with a lone surrogate, a repeated key or another schedule format are
refused with exit 2 instead of crashing later or being read one way of several."""
import json

import numpy as np
import pytest

from conftest import BATCH, ROOT, run
from lpbench.instance import load_instance, parse_instance
from lpbench.policies import make_policy
from lpbench.schedule import Schedule
from lpbench.sim import simulate
from lpbench.verify import verify


def _shifted(offset: float):
    data = json.loads(open(BATCH).read())
    data["requests"] = {k: [r[k] + offset if k == "arrival" else r[k] for r in data["requests"]]
                        for k in ("arrival", "prompt", "output")} if isinstance(data["requests"], list) else \
        {**data["requests"], "arrival": [a + offset for a in data["requests"]["arrival"]]}
    return parse_instance(data, name="late")


def test_batches_may_not_overlap_by_a_share_of_the_clock():
    """Arrivals at 10⁶ s: a schedule whose every batch starts 0.9 ms before the previous one ends verified
    (slack 1e-9·|t| = 1 ms) and reported a latency better than any possible schedule."""
    inst = _shifted(1e6)
    honest = simulate(inst, make_policy("vllm", inst)).schedule
    assert verify(inst, honest).feasible
    d = honest.to_dict(inst)
    dur = np.diff([b["start"] for b in d["batches"]])
    squeezed = [dict(b, start=b["start"] - 0.0009 * k) for k, b in enumerate(d["batches"])]
    assert dur.min() > 0.0009 * 2
    res = verify(inst, Schedule.from_dict({**d, "batches": squeezed}, inst))
    assert not res.feasible and "[order]" in res.violations[0]


def test_times_the_clock_cannot_resolve_are_refused():
    # an instance: exit 2, naming the field
    data = json.loads(open(ROOT / "instances/tiny-slot.json").read())
    data["requests"][0]["arrival"] = 10**12
    with pytest.raises(Exception, match=r"requests\[0\]\.arrival: must be at most 1e\+08"):
        parse_instance(data)
    # a schedule at 1e300 (every batch collapses onto one instant): [clock], not feasible
    inst = load_instance(ROOT / "instances/tiny-slot.json")
    d = simulate(inst, make_policy("mc-sf", inst)).schedule.to_dict(inst)
    far = [dict(b, start=b["start"] + 1e300) for b in d["batches"]]
    res = verify(inst, Schedule.from_dict({**d, "batches": far}, inst))
    assert not res.feasible and "[clock]" in res.violations[0]
    bat = _shifted(0.0)
    d = simulate(bat, make_policy("vllm", bat)).schedule.to_dict(bat)
    far = [dict(b, start=b["start"] + 1e12) for b in d["batches"]]
    res = verify(bat, Schedule.from_dict({**d, "batches": far}, bat))
    assert not res.feasible and "[clock]" in res.violations[0]


def test_a_lone_surrogate_is_refused_before_anything_is_written(capsys, tmp_path):
    text = open(ROOT / "instances/tiny-slot.json").read()
    data = json.loads(text)
    data["name"] = "PLACEHOLDER"
    bad = tmp_path / "ls.json"
    bad.write_text(json.dumps(data).replace("PLACEHOLDER", "\\ud800"))
    for argv in (["validate", str(bad)], ["simulate", str(bad), "--policy", "mc-sf", "--out", str(tmp_path / "o.json")],
                 ["export", str(bad), "--out", str(tmp_path / "o.lp")]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and "name: must be valid Unicode text" in err, argv
    assert not (tmp_path / "o.json").exists() and not (tmp_path / "o.lp").exists()
    pair = tmp_path / "pair.json"   # a surrogate pair is a character: accepted
    data["name"] = "PLACEHOLDER"
    pair.write_text(json.dumps(data).replace("PLACEHOLDER", "\\ud83d\\ude00"))
    assert run(capsys, "validate", str(pair))[0] == 0


def test_a_repeated_key_and_another_schedule_format_are_refused(capsys, tmp_path):
    dup = tmp_path / "dup.json"
    dup.write_text('{"memory": 10, "memory": 1000000, "requests": [{"arrival": 0, "prompt": 1, "output": 1}]}')
    code, _, err = run(capsys, "validate", str(dup))
    assert code == 2 and "the key 'memory' appears twice" in err
    inst = load_instance(ROOT / "instances/tiny-slot.json")
    d = simulate(inst, make_policy("mc-sf", inst)).schedule.to_dict(inst)
    for change, message in (({"format": "v2"}, "format: expected 'lpbench-schedule-v1'"),
                            ({"instance_sha256": 5}, "instance_sha256: must be a string")):
        p = tmp_path / "s.json"
        p.write_text(json.dumps({**d, **change}))
        code, _, err = run(capsys, "verify", str(ROOT / "instances/tiny-slot.json"), str(p))
        assert code == 2 and message in err, change


def test_an_empty_out_is_refused_and_a_generate_run_is_held_to_one_instances_size(capsys, tmp_path):
    code, _, err = run(capsys, "simulate", str(ROOT / "instances/tiny-slot.json"), "--policy", "mc-sf", "--out", "")
    assert code == 2 and "--out: must be a file name" in err
    lengths = tmp_path / "lengths.csv"
    lengths.write_text("ContextTokens,GeneratedTokens\n5,3\n")
    code, _, err = run(capsys, "generate", "poisson", "--out", str(tmp_path / "g"), "--rate", "5", "--requests",
                       "6000000", "--count", "2", "--memory", "1000", "--lengths", str(lengths))
    assert code == 2 and "--count x --requests: at most 10,000,000 requests in one run" in err
    code, _, err = run(capsys, "generate", "infermax-mix", "--out", str(tmp_path / "g"), "--B", "2000000")
    assert code == 2 and "mixes x --B: at most 10,000,000" in err
    assert not (tmp_path / "g").exists()


def test_list_policies_shows_each_parameter_with_its_range_and_default(capsys):
    code, out, _ = run(capsys, "list", "policies")
    assert code == 0
    assert "--param depth: a positive integer up to 2^40, default 16;" in out
    assert "--param alpha: a number in [0, 1), default 0.25;" in out


def test_an_output_never_replaces_a_file_that_appeared_while_it_was_written(tmp_path):
    """write_atomic checks the target, writes a temporary file, then links it into place: a file another process
    created in between is kept (refused with the same message), and nothing is left behind; --force replaces."""
    from lpbench.errors import InputError
    from lpbench.outputs import write_atomic

    target = tmp_path / "out.json"

    def racing(tmp):
        open(tmp, "w").write("mine")
        target.write_text("theirs")  # created after the check, before ours is in place

    with pytest.raises(InputError, match="already exists; choose another path or pass --force"):
        write_atomic(target, racing)
    assert target.read_text() == "theirs" and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    write_atomic(target, lambda tmp: open(tmp, "w").write("forced"), force=True)
    assert target.read_text() == "forced"
