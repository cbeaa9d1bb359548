"""Property-based tests of the command line (issue 14, Hypothesis): over mutated instance files,
random schedule files, random arguments and output paths, the CLI never raises, never prints a
traceback, exits with a documented code that is not "internal error", and never leaves a
half-written or temporary file. A few hundred examples here; ``benchmarks/fuzz_cli.py`` runs the
same properties with >= 10,000 examples (profile ``fuzz``)."""
import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lpbench.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "instances/tiny-slot.json"
BATCH = ROOT / "instances/infermax-7b-mix40.json"
DOCUMENTED = {0, 1, 2, 3, 130}

settings.register_profile("ci", max_examples=75, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=2500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("LPBENCH_HYPOTHESIS_PROFILE", "ci"))

EXAMPLES = {"count": 0}


def cli(*argv):
    """Run main() in-process; returns (code, stdout, stderr)."""
    EXAMPLES["count"] += 1
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def check(code, err):
    assert code in DOCUMENTED, (code, err)
    assert code != 3 and "Traceback" not in err, err  # an internal error is a bug to fix
    if code == 2:
        assert err.strip(), "exit 2 must say why"


def no_temp_files(directory):
    left = [p.name for p in Path(directory).rglob(".*.tmp")]
    assert not left, left


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                         st.floats(allow_nan=False), st.text(max_size=5))
json_values = st.recursive(
    json_scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=4), kids, max_size=3)),
    max_leaves=6)


@st.composite
def mutated_instance(draw):
    data = json.loads(TINY.read_text())
    where = draw(st.sampled_from(["top", "request", "cost_model", "limits", "drop"]))
    if where == "top":
        data[draw(st.sampled_from(["name", "memory", "model", "requests", "extra"]))] = draw(json_values)
    elif where == "request":
        i = draw(st.integers(0, len(data["requests"]) - 1))
        key = draw(st.sampled_from(["arrival", "prompt", "output", "id", "class", "tbt_slo", "colour"]))
        data["requests"][i][key] = draw(json_values)
    elif where == "cost_model":
        data["model"] = "batch"
        form = draw(st.sampled_from(["linear", "piecewise", "staircase", "unit", "tiled", "nope"]))
        coeffs = draw(st.dictionaries(st.sampled_from(["d0", "d1", "c", "a", "b0", "x"]),
                                      st.one_of(st.floats(), st.integers(-10, 10**6)), max_size=4))
        data["cost_model"] = {"form": form, **coeffs}
    elif where == "limits":
        data["model"] = "batch"
        data["cost_model"] = {"form": "linear", "d0": 0.01, "d1": 0.001}
        data["limits"] = draw(st.dictionaries(st.sampled_from(["token_budget", "prefill_budget", "x"]),
                                              json_scalars, max_size=2))
    else:
        data.pop(draw(st.sampled_from(["memory", "requests", "name"])))
    return data


@given(data=mutated_instance(), command=st.sampled_from(["validate", "simulate"]))
def test_instance_files(data, command):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "inst.json"
        path.write_text(json.dumps(data))
        policy = "mc-sf" if data.get("model", "slot") == "slot" else "vllm"
        argv = [command, path] + (["--policy", policy] if command == "simulate" else [])
        check(*cli(*argv)[::2])


batch = st.fixed_dictionaries({"start": st.one_of(st.integers(-5, 30), json_scalars)},
                              optional={"requests": st.one_of(st.lists(st.integers(-1, 6), max_size=4), json_values),
                                        "tokens": st.one_of(st.lists(st.integers(-2**70, 2**70), max_size=4),
                                                            st.lists(st.integers(0, 3), max_size=4), json_values),
                                        "evict": st.one_of(st.lists(st.integers(0, 5), max_size=2), json_values),
                                        "instance_sha256": st.text(max_size=8)})


@given(schedule=st.one_of(st.fixed_dictionaries({"batches": st.lists(batch, max_size=6)}), json_values))
def test_schedule_files(schedule):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.json"
        path.write_text(json.dumps(schedule))
        code, out, err = cli("verify", TINY, path)
        check(code, err)


tokens = st.one_of(st.sampled_from(["-1", "0", "1", "2", "1e309", "nan", "-inf", "2**64", "18446744073709551616",
                                    "x", "", "--force", "--json", "--seed", "--count", "--policy", "mc-sf",
                                    "--param", "alpha=2", "alpha=x", "=", "--time-limit", "--I", "--O", "--B"]),
                   st.text(max_size=6))


@given(command=st.sampled_from(["simulate", "verify", "generate", "export", "validate", "list"]),
       extra=st.lists(tokens, max_size=5))
def test_cli_arguments(command, extra):
    with tempfile.TemporaryDirectory() as d:
        base = {"simulate": [TINY, "--policy", "mc-sf"], "verify": [TINY, TINY],
                "generate": ["jaillet-model1", "--out", Path(d) / "g"],
                "export": [TINY, "--out", Path(d) / "m.lp"], "validate": [TINY], "list": ["models"]}[command]
        code, _, err = cli(command, *base, *extra)
        check(code, err)
        no_temp_files(d)


@given(kind=st.sampled_from(["new", "existing", "dir", "under_file", "missing_dir", "dev_null", "dev_full",
                             "dot", "trailing_slash", "proc", "random"]),
       force=st.booleans(), command=st.sampled_from(["simulate", "export-lp", "export-mps"]),
       name=st.text(min_size=1, max_size=8))
def test_output_paths(kind, force, command, name):
    with tempfile.TemporaryDirectory() as d:
        existing = Path(d) / ("old.json" if command == "simulate" else "old." + command[-3:])
        existing.write_text("previous content")
        Path(d, "sub").mkdir()
        suffix = ".json" if command == "simulate" else "." + command[-3:]
        target = {"new": f"{d}/new{suffix}", "existing": str(existing), "dir": f"{d}/sub",
                  "under_file": f"{existing}/x{suffix}", "missing_dir": f"{d}/nope/x{suffix}",
                  "dev_null": "/dev/null", "dev_full": "/dev/full", "dot": f"{d}/.",
                  "trailing_slash": f"{d}/sub/", "proc": f"/proc/x{suffix}", "random": f"{d}/{name}"}[kind]
        argv = (["simulate", TINY, "--policy", "mc-sf"] if command == "simulate"
                else ["export", TINY, "--format", command[-3:]]) + ["--out", target] + (["--force"] if force else [])
        code, _, err = cli(*argv)
        check(code, err)
        assert code in (0, 2)
        if code == 0:
            assert kind in ("new", "existing", "random") and (kind != "existing" or force)
            text = Path(target).read_text()
            assert text.strip() and (command != "simulate" or json.loads(text)["batches"])
        elif kind != "existing" or not force:
            assert existing.read_text() == "previous content"  # a refusal touches nothing
        assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
        no_temp_files(d)
