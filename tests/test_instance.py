import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.instance import load_instance, parse_instance

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "lpbench/schema/instance-v1.schema.json").read_text())
SHIPPED = sorted((ROOT / "instances").glob("*.json"))


def problems(data):
    with pytest.raises(InputError) as e:
        parse_instance(data)
    return e.value.problems


def test_minimal_form_defaults_to_slot_model():
    inst = parse_instance({"memory": 40, "requests": [{"arrival": 0, "prompt": 3, "output": 10}]})
    assert inst.model == "slot" and inst.cost_model.form == "unit" and inst.n == 1
    assert inst.ids == [0] and inst.limits.token_budget is None


def test_cost_model_implies_batch_model():
    inst = parse_instance({"memory": 40, "cost_model": {"form": "linear", "d0": 0.4, "d1": 0.05},
                           "requests": [{"arrival": 0.5, "prompt": 3, "output": 10}]})
    assert inst.model == "batch" and inst.cost_model.d1 == 0.05


def test_columnar_form_and_stable_sort():
    inst = parse_instance({"memory": 40, "requests": {"arrival": [3, 1, 1, 0], "prompt": [1, 2, 3, 4],
                                                      "output": [5, 5, 5, 5]}})
    assert inst.arrival.tolist() == [0, 1, 1, 3]
    assert inst.prompt.tolist() == [4, 2, 3, 1]  # file order breaks the tie at arrival 1
    assert inst.ids == [3, 1, 2, 0]


def test_field_naming_messages():
    bad = {"memory": 40, "requests": [{"arrival": 0, "prompt": 3, "output": 10},
                                      {"arrival": 0, "prompt": 3, "output": -3}]}
    assert problems(bad) == ["requests[1].output: must be a positive integer, got -3"]
    assert problems({"memroy": 4, "memory": 4, "requests": [{"arrival": 0, "prompt": 1, "output": 1}]}) == [
        "memroy: unknown key; expected one of: name, memory, requests, model, cost_model, limits, eviction, types, "
        "meta"]
    assert problems({"memory": 40, "requests": [{"arrival": 0, "prompt": 3, "outptu": 2}]}) == [
        "requests[0].outptu: unknown key; expected one of: arrival, prompt, output, id, class, tbt_slo, ttft_slo",
        "requests[0].output: missing required field"]
    assert problems({"memory": 40, "requests": {"arrival": [0, 0], "prompt": [1, 2], "output": [1, 2.5]}}) == [
        "requests.output[1]: must be a positive integer, got 2.5"]


def test_request_larger_than_memory():
    assert problems({"memory": 10, "requests": [{"arrival": 0, "prompt": 4, "output": 7}]}) == [
        "requests[0].output: request can never run: peak KV footprint prompt + output = 11 exceeds memory 10"]
    # batch model peak is I + O - 1 (seed 003): fits exactly
    parse_instance({"memory": 10, "model": "batch", "requests": [{"arrival": 0, "prompt": 4, "output": 7}]})


@pytest.mark.parametrize("value, msg", [
    (True, "must be a positive integer, got true"),
    (float("inf"), "must be a positive integer, got inf"),
    (10**50, "must be at most 1099511627776"),
    ("5", 'must be a positive integer, got "5"'),
])
def test_odd_numbers(value, msg):
    (p,) = problems({"memory": value, "requests": [{"arrival": 0, "prompt": 1, "output": 1}]})
    assert p.startswith("memory: ") and msg in p


def test_slot_model_rules():
    assert "must be an integer >= 0, got 0.5" in problems(
        {"memory": 9, "requests": [{"arrival": 0.5, "prompt": 1, "output": 1}]})[0]
    assert "model 'slot' (seed 004) prices every batch at 1" in problems(
        {"memory": 9, "model": "slot", "cost_model": "li-llama3-70b-2xa100",
         "requests": [{"arrival": 0, "prompt": 1, "output": 1}]})[0]
    assert problems({"memory": 9, "limits": {"token_budget": 4}, "requests": [
        {"arrival": 0, "prompt": 1, "output": 1}]}) == [
        "limits: the slot model (seed 004) has no batch limits; use model 'batch'"]


def test_limits_and_ids():
    base = {"memory": 90, "model": "batch", "requests": [{"arrival": 0, "prompt": 1, "output": 1, "id": "a"},
                                                          {"arrival": 0, "prompt": 1, "output": 1, "id": "a"}]}
    assert problems(base) == ['requests[1].id: must be unique, got "a" (also at index 0)']
    base["requests"][1]["id"] = "b"
    base["limits"] = {"token_budget": 8, "prefill_budget": 16, "max_batch": 3}
    assert problems(base) == ["limits.max_batch: unknown key; expected one of: token_budget, prefill_budget, "
                              "max_batch_requests, engines, routing, kv_transfer_per_token",
                              "limits.prefill_budget: must be <= token_budget (8), got 16"]


def test_file_errors(tmp_path, write_json):
    with pytest.raises(InputError, match="no such instance file"):
        load_instance(tmp_path / "missing.json")
    with pytest.raises(InputError, match=r"invalid JSON at line 1 column 14: Expecting property name"):
        load_instance(write_json('{"memory": 4,,}'))
    with pytest.raises(InputError, match="memory: NaN is not a JSON number; expected a finite number"):
        load_instance(write_json('{"memory": NaN, "requests": []}'))
    # the field is named, row or column form (CLI audit, 2026-12-03: "invalid JSON: NaN is not a JSON number" named none)
    with pytest.raises(InputError, match=r"requests\[1\]\.output: Infinity is not a JSON number"):
        load_instance(write_json('{"memory": 9, "requests": [{"arrival": 0, "prompt": 1, "output": 1}, '
                                 '{"arrival": 0, "prompt": 1, "output": Infinity}]}'))
    with pytest.raises(InputError, match=r"requests\.arrival\[0\]: -Infinity is not a JSON number"):
        load_instance(write_json('{"memory": 9, "requests": {"arrival": [-Infinity], "prompt": [1], "output": [1]}}'))
    assert load_instance(write_json('{"memory": 9, "name": "NaN Infinity", "requests": '
                                    '[{"arrival": 0, "prompt": 1, "output": 1}]}')).n == 1
    with pytest.raises(InputError, match="invalid JSON"):
        load_instance(write_json('{"memory": 1' + "0" * 5000 + ', "requests": []}'))
    with pytest.raises(InputError, match="is a directory"):
        load_instance(tmp_path)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_instances_are_valid_and_match_the_schema(path):
    inst = load_instance(path)
    assert inst.n >= 1 or inst.types is not None
    jsonschema.validate(json.loads(path.read_text()), SCHEMA)


def test_schema_rejects_what_the_validator_rejects():
    for bad in ({"memory": 4, "requests": [{"arrival": 0, "prompt": 1, "output": -3}]},
                {"memory": 4, "memroy": 4, "requests": [{"arrival": 0, "prompt": 1, "output": 1}]},
                {"memory": 4, "requests": [{"arrival": 0, "prompt": 1, "outptu": 1}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)
        with pytest.raises(InputError):
            parse_instance(bad)


def test_round_trip_to_dict():
    inst = parse_instance({"memory": 40, "name": "x", "requests": [{"arrival": 2, "prompt": 3, "output": 10, "id": "q"},
                                                                   {"arrival": 0, "prompt": 1, "output": 2}]})
    for columnar in (False, True):
        again = parse_instance(inst.to_dict(columnar=columnar))
        assert again.ids == inst.ids and np.array_equal(again.output, inst.output)
