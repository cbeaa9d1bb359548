"""Instance file format v1 (JSON): loading, validation with field-naming messages, and the
plain-data :class:`Instance` the core works on. The JSON Schema is ``lpbench/schema/instance-v1.schema.json``.

Validation lives here, at the edge: the core never sees a bad instance. Every problem is reported
as ``<field path>: <what was expected>, got <value>``; unknown keys are errors (typo protection).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import costmodels
from .costmodels import CostModel
from .errors import InputError
from .semantics import BATCH, MODELS, SLOT, peak_footprint

#: integers above this are rejected (they cannot be token counts or times of a real instance)
MAX_INT = 2**40
#: the latest arrival (seconds, or rounds of the slot model), about 3 years: beyond it the float clock's resolution
#: approaches the batch times (lpbench.verify's [clock] rule)
MAX_ARRIVAL = 1e8
TOP_KEYS = ("name", "memory", "requests", "model", "cost_model", "limits", "eviction", "types", "meta")
#: what an eviction does (:mod:`lpbench.semantics`): the batch model recomputes by default; "restart" loses all
#: progress (seed 001 §1.4), as every eviction of the slot model does
EVICTIONS = ("recompute", "restart")
TYPE_KEYS = ("prompt", "output", "rate")
REQUIRED_REQUEST_KEYS = ("arrival", "prompt", "output")
OPTIONAL_REQUEST_KEYS = ("id", "class", "tbt_slo", "ttft_slo")
LIMIT_KEYS = ("token_budget", "prefill_budget", "max_batch_requests")
#: several engines (:mod:`lpbench.sim.multi`): K, the routing rule, the KV transfer time between engines
ENGINE_KEYS = ("engines", "routing", "kv_transfer_per_token")
MAX_PROBLEMS = 50


@dataclass(frozen=True)
class Limits:
    """Batch limits (batch model only): C = token_budget, P = prefill_budget (seed 003 Alg. 1), each per
    batch of each engine; M (the instance's ``memory``) is per engine.

    Several engines (:mod:`lpbench.sim.multi`): ``engines`` = K identical engines (None: one), ``routing``
    the rule that sends each arrival to an engine (None: round-robin), ``kv_transfer_per_token`` the
    seconds to move one KV entry from one engine to another (None: requests never move). Unset fields
    stay out of :meth:`to_dict`, so instances without them keep their content hash."""

    token_budget: int | None = None
    prefill_budget: int | None = None
    max_batch_requests: int | None = None
    engines: int | None = None
    routing: str | None = None
    kv_transfer_per_token: float | None = None

    @property
    def K(self) -> int:
        return self.engines or 1

    @property
    def routing_rule(self) -> str:
        return self.routing or "round-robin"

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class PromptTypes:
    """Seed 001's m prompt types (notes seed-001 §1.1), arrays over j: prompt l_j, output l'_j (the
    decode tokens after the prefill iteration), Poisson rate λ_j per time unit of the cost model.

    Stage mapping (one semantics, see :mod:`lpbench.fluid`): a type-j request is an lpbench request
    with prompt I = l_j and output O = l'_j + 1, because lpbench's prefill batch generates the first
    token; seed stage s (s = 0 prefill) is the request's (s+1)-th batch, charged l_j + s by the linear
    cost model and holding l_j + s KV entries after it."""

    prompt: np.ndarray
    output: np.ndarray
    rate: np.ndarray

    @property
    def m(self) -> int:
        return len(self.rate)

    def to_list(self) -> list:
        return [{"prompt": int(l), "output": int(o), "rate": float(r)}
                for l, o, r in zip(self.prompt, self.output, self.rate)]


@dataclass
class Instance:
    """Requests sorted by arrival (stable: file order breaks ties). Index i is the sorted position;
    ``ids[i]`` is the request's id (its ``id`` field, else its position in the file)."""

    memory: int
    arrival: np.ndarray
    prompt: np.ndarray
    output: np.ndarray
    ids: list
    model: str = SLOT
    cost_model: CostModel = field(default_factory=lambda: costmodels.FORMS.get("unit")())
    cost_model_spec: Any = None
    limits: Limits = field(default_factory=Limits)
    name: str = "instance"
    request_class: list | None = None
    tbt_slo: np.ndarray | None = None
    ttft_slo: np.ndarray | None = None
    types: PromptTypes | None = None
    #: free-form provenance (source file, licence, import rules and counts); never read by the core
    meta: dict | None = None
    #: "restart" or "recompute" as the file says; None: the model's own (batch: recompute, slot: restart)
    eviction: str | None = None

    @property
    def restarts(self) -> bool:
        """Whether an eviction loses all progress (:mod:`lpbench.semantics`): always in the slot model, in the
        batch model where the instance says ``"eviction": "restart"``."""
        return self.model == SLOT or self.eviction == "restart"

    @property
    def n(self) -> int:
        return len(self.arrival)

    def index_of(self) -> dict:
        return {rid: i for i, rid in enumerate(self.ids)}

    def peak(self) -> np.ndarray:
        return peak_footprint(self.model, self.prompt, self.output)

    def content_hash(self) -> str:
        """sha256 of the canonical instance JSON: columnar, sorted keys, no whitespace, without
        ``name`` (renaming a file does not change the problem). Schedule files carry it so that
        ``verify`` refuses a schedule made for another instance."""
        data = self.to_dict(columnar=True)
        data.pop("name", None)
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    def to_dict(self, columnar: bool | None = None) -> dict:
        """The instance as v1 JSON data (columnar above 1000 requests unless told)."""
        columnar = self.n > 1000 if columnar is None else columnar
        arrival = [int(a) if self.model == SLOT else float(a) for a in self.arrival]
        cols = {"arrival": arrival, "prompt": self.prompt.tolist(), "output": self.output.tolist()}
        if self.ids != list(range(self.n)):
            cols["id"] = list(self.ids)
        if self.request_class is not None:
            cols["class"] = list(self.request_class)
        for key in ("tbt_slo", "ttft_slo"):
            arr = getattr(self, key)
            if arr is not None:
                cols[key] = [None if math.isnan(x) else float(x) for x in arr]
        if columnar:
            requests: Any = cols
        else:
            requests = [{k: v[i] for k, v in cols.items() if v[i] is not None} for i in range(self.n)]
        out: dict = {"name": self.name, "memory": int(self.memory), "model": self.model}
        if self.cost_model_spec is not None:
            out["cost_model"] = self.cost_model_spec
        if self.limits.to_dict():
            out["limits"] = self.limits.to_dict()
        if self.eviction is not None:
            out["eviction"] = self.eviction
        if self.types is not None:
            out["types"] = self.types.to_list()
        if self.meta is not None:
            out["meta"] = self.meta
        if self.n:
            out["requests"] = requests
        return out


# ---------------------------------------------------------------------------------------------
# value checks: each returns None when fine, else the message fragment "must be ..., got ..."

def _show(v) -> str:
    s = json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _int_problem(v, minimum: int) -> str | None:
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"must be {what}, got {_show(v)}"
    if isinstance(v, float) and (not math.isfinite(v) or not v.is_integer()):
        return f"must be {what}, got {_show(v)}"
    if v < minimum:
        return f"must be {what}, got {_show(v)}"
    if v > MAX_INT:
        return f"must be at most {MAX_INT}, got {_show(v)}"
    return None


def _number_problem(v, minimum: float = 0.0, integer: bool = False, positive: bool = False) -> str | None:
    if integer:
        return _int_problem(v, int(minimum))
    what = "a positive number" if positive else f"a number >= {minimum:g}"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"must be {what}, got {_show(v)}"
    if not math.isfinite(v):
        return f"must be a finite number, got {_show(v)}"
    if v < minimum or (positive and v <= 0):
        return f"must be {what}, got {_show(v)}"
    if v > MAX_INT:
        return f"must be at most {MAX_INT}, got {_show(v)}"
    return None


def _arrival_too_late(a) -> str | None:
    if a > MAX_ARRIVAL:
        return (f"must be at most {MAX_ARRIVAL:g} (about 3 years in seconds; later, the float clock cannot resolve "
                f"batch times: shift the arrivals towards 0), got {_show(a)}")
    return None


class _Collector:
    def __init__(self):
        self.problems: list[str] = []

    def add(self, path: str, msg: str | None) -> bool:
        if msg is not None and len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{path}: {msg}")
        return msg is None


def _unknown_keys(col: _Collector, obj: dict, allowed, path: str) -> None:
    for key in obj:
        if key not in allowed:
            where = f"{path}.{key}" if path else str(key)
            col.add(where, f"unknown key; expected one of: {', '.join(allowed)}")


def _object_entry(col: _Collector, obj, allowed, required, path: str, what: str) -> bool:
    """Check one entry of a list of objects (a request, a prompt type): an object (else False, reported),
    with no unknown keys and every required field (reported, True)."""
    if not isinstance(obj, dict):
        col.add(path, f"must be an object with {what}, got {_show(obj)}")
        return False
    _unknown_keys(col, obj, allowed, path)
    for k in required:
        if k not in obj:
            col.add(f"{path}.{k}", "missing required field")
    return True


def _request_columns(col: _Collector, reqs) -> dict[str, list] | None:
    """Normalise row or columnar ``requests`` to columns, reporting shape problems."""
    keys = REQUIRED_REQUEST_KEYS + OPTIONAL_REQUEST_KEYS
    if isinstance(reqs, list):
        if not reqs:
            col.add("requests", "must contain at least one request, got []")
            return None
        cols: dict[str, list] = {k: [] for k in keys}
        for i, r in enumerate(reqs):
            if not _object_entry(col, r, keys, REQUIRED_REQUEST_KEYS, f"requests[{i}]", "arrival, prompt, output"):
                continue
            for k in keys:
                cols[k].append(r.get(k))
        cols = {k: v for k, v in cols.items() if k in REQUIRED_REQUEST_KEYS or any(x is not None for x in v)}
        return cols if not col.problems else None
    if isinstance(reqs, dict):
        _unknown_keys(col, reqs, keys, "requests")
        n = None
        for k in REQUIRED_REQUEST_KEYS:
            if k not in reqs:
                col.add(f"requests.{k}", "missing required column")
        for k, v in reqs.items():
            if k not in keys:
                continue
            if not isinstance(v, list):
                col.add(f"requests.{k}", f"must be an array, got {_show(v)}")
                continue
            if n is None:
                n = len(v)
            elif len(v) != n:
                col.add(f"requests.{k}", f"must have the same length as the other columns ({n}), got {len(v)}")
        if n == 0:
            col.add("requests.arrival", "must contain at least one request, got []")
        return None if col.problems else {k: v for k, v in reqs.items() if k in keys}
    col.add("requests", f"must be an array of request objects or an object of columns, got {_show(reqs)}")
    return None


def parse_instance(data: Any, name: str | None = None) -> Instance:
    """Validate v1 instance data and build an :class:`Instance`; raise InputError listing every problem."""
    col = _Collector()
    if not isinstance(data, dict):
        raise InputError(f"(top level): must be an object with memory and requests, got {_show(data)}")
    _unknown_keys(col, data, TOP_KEYS, "")
    if "memory" not in data:
        col.add("memory", "missing required field")
    if "requests" not in data and "types" not in data:
        col.add("requests", "missing required field (an instance has requests, a types block, or both)")
    if col.problems:
        raise InputError(col.problems)

    col.add("memory", _int_problem(data["memory"], 1))
    if "name" in data and not isinstance(data["name"], str):
        col.add("name", f"must be a string, got {_show(data['name'])}")
    if "meta" in data and not isinstance(data["meta"], dict):
        col.add("meta", f"must be an object (provenance: source, licence, import rules), got {_show(data['meta'])}")

    spec = data.get("cost_model")
    model = data.get("model", SLOT if spec is None else BATCH)
    if model not in MODELS:
        col.add("model", f"must be one of 'slot', 'batch', got {_show(model)}")
    cost_model = None
    if spec is not None:
        try:
            cost_model = costmodels.build(spec)
        except InputError as e:
            col.problems.extend(e.problems)
    if model == SLOT and cost_model is not None and cost_model.form != "unit":
        col.add("cost_model", f"model 'slot' (seed 004) prices every batch at 1; got form {cost_model.form!r} "
                "(use model 'batch' for a cost model)")

    limits = Limits()
    if "limits" in data:
        lim = data["limits"]
        if not isinstance(lim, dict):
            col.add("limits", f"must be an object, got {_show(lim)}")
        elif model == SLOT and lim:
            col.add("limits", "the slot model (seed 004) has no batch limits; use model 'batch'")
        else:
            _unknown_keys(col, lim, LIMIT_KEYS + ENGINE_KEYS, "limits")
            ok = all(col.add(f"limits.{k}", _int_problem(lim[k], 1)) for k in LIMIT_KEYS + ("engines",) if k in lim)
            if "kv_transfer_per_token" in lim:
                ok &= col.add("limits.kv_transfer_per_token", _number_problem(lim["kv_transfer_per_token"]))
            if "routing" in lim:
                from .sim.multi import ROUTERS

                if not isinstance(lim["routing"], str) or lim["routing"] not in ROUTERS:
                    ok = col.add("limits.routing", f"must be one of {', '.join(ROUTERS.names())}, "
                                 f"got {_show(lim['routing'])}")
            if ok:
                limits = Limits(**{k: int(lim[k]) for k in LIMIT_KEYS + ("engines",) if k in lim},
                                routing=lim.get("routing"),
                                kv_transfer_per_token=(None if "kv_transfer_per_token" not in lim
                                                       else float(lim["kv_transfer_per_token"])))
                if limits.prefill_budget and limits.token_budget and limits.prefill_budget > limits.token_budget:
                    col.add("limits.prefill_budget", f"must be <= token_budget ({limits.token_budget}), "
                            f"got {limits.prefill_budget}")

    eviction = data.get("eviction")
    if eviction is not None and eviction not in EVICTIONS:
        col.add("eviction", f"must be one of 'recompute', 'restart', got {_show(eviction)}")
    elif eviction == "recompute" and model == SLOT:
        col.add("eviction", "the slot model (seed 004) evicts by restart only; use model 'batch' for recompute")

    types = _parse_types(col, data["types"], model, cost_model, data["memory"]) if "types" in data else None
    if "requests" not in data:
        if col.problems:
            raise InputError(col.problems)
        empty = np.zeros(0, dtype=np.int64)
        return Instance(memory=int(data["memory"]), arrival=np.zeros(0), prompt=empty, output=empty.copy(), ids=[],
                        model=model, cost_model=cost_model, cost_model_spec=spec, limits=limits,
                        name=data.get("name") or name or "instance", types=types, eviction=eviction)
    cols = _request_columns(col, data["requests"])
    if cols is None or col.problems:
        raise InputError(col.problems)

    columnar = isinstance(data["requests"], dict)

    def path(i: int, k: str) -> str:
        return f"requests.{k}[{i}]" if columnar else f"requests[{i}].{k}"

    n = len(cols["arrival"])
    for i in range(n):
        col.add(path(i, "arrival"), _number_problem(cols["arrival"][i], 0, integer=(model == SLOT))
                or _arrival_too_late(cols["arrival"][i]))
        col.add(path(i, "prompt"), _int_problem(cols["prompt"][i], 1))
        col.add(path(i, "output"), _int_problem(cols["output"][i], 1))
        for k in ("tbt_slo", "ttft_slo"):
            if k in cols and cols[k][i] is not None:
                col.add(path(i, k), _number_problem(cols[k][i], positive=True))
        if "class" in cols and cols["class"][i] is not None and not isinstance(cols["class"][i], str):
            col.add(path(i, "class"), f"must be a string, got {_show(cols['class'][i])}")
    ids = cols.get("id")
    if ids is not None:
        ids = [i if rid is None else rid for i, rid in enumerate(ids)]  # a missing id defaults to the file index
        seen: dict = {}
        for i, rid in enumerate(ids):
            if isinstance(rid, bool) or not isinstance(rid, (str, int)):
                col.add(path(i, "id"), f"must be a string or an integer, got {_show(rid)}")
            elif rid in seen:
                col.add(path(i, "id"), f"must be unique, got {_show(rid)} (also at index {seen[rid]})")
            else:
                seen[rid] = i
    if col.problems:
        raise InputError(col.problems)

    memory = int(data["memory"])
    arrival = np.asarray(cols["arrival"], dtype=np.float64)
    prompt = np.asarray(cols["prompt"], dtype=np.int64)
    output = np.asarray(cols["output"], dtype=np.int64)
    peak = peak_footprint(model, prompt, output)
    what = "prompt + output" if model == SLOT else "prompt + output - 1"
    for i in np.flatnonzero(peak > memory)[:MAX_PROBLEMS]:
        col.add(path(int(i), "output"), f"request can never run: peak KV footprint {what} = {int(peak[i])} "
                f"exceeds memory {memory}")
    if col.problems:
        raise InputError(col.problems)

    order = np.argsort(arrival, kind="stable")
    ids = list(range(n)) if ids is None else ids

    def opt_float(k):
        if k not in cols:
            return None
        return np.array([math.nan if v is None else float(v) for v in cols[k]])[order]

    return Instance(
        memory=memory,
        arrival=arrival[order],
        prompt=prompt[order],
        output=output[order],
        ids=[ids[j] for j in order],
        model=model,
        cost_model=cost_model if cost_model is not None else costmodels.FORMS.get("unit")(),
        cost_model_spec=spec,
        limits=limits,
        name=data.get("name") or name or "instance",
        request_class=[cols["class"][j] for j in order] if "class" in cols else None,
        tbt_slo=opt_float("tbt_slo"),
        ttft_slo=opt_float("ttft_slo"),
        types=types,
        meta=data.get("meta"),
        eviction=eviction,
    )


def _parse_types(col: _Collector, spec, model: str, cost_model, memory) -> PromptTypes | None:
    """The optional seed-001 ``types`` block: [{"prompt": l_j, "output": l'_j, "rate": λ_j}, ...].

    Valid only with model 'batch' and a linear cost model (seed 001 eq. (1)); stability of the fluid
    equilibrium is a property of the model, not of the file, and is checked where (8) is used."""
    if not isinstance(spec, list) or not spec:
        col.add("types", f"must be a non-empty array of {{prompt, output, rate}} objects, got {_show(spec)}")
        return None
    if model != BATCH:
        col.add("types", f"prompt types (seed 001) need model 'batch', got {_show(model)}")
    if cost_model is None or cost_model.form != "linear":
        got = "none" if cost_model is None else repr(cost_model.form)
        col.add("cost_model", f"a types block needs a linear cost model {{\"form\": \"linear\", \"d0\": ..., "
                f"\"d1\": ...}} (seed 001 eq. (1)), got {got}")
    before = len(col.problems)
    for j, t in enumerate(spec):
        path = f"types[{j}]"
        if not _object_entry(col, t, TYPE_KEYS, TYPE_KEYS, path, "prompt, output, rate"):
            continue
        if "prompt" in t:
            col.add(f"{path}.prompt", _int_problem(t["prompt"], 1))
        if "output" in t:
            col.add(f"{path}.output", _int_problem(t["output"], 1))
        if "rate" in t:
            col.add(f"{path}.rate", _number_problem(t["rate"], positive=True))
        if (len(col.problems) == before and isinstance(memory, int) and not isinstance(memory, bool)
                and t["prompt"] + t["output"] > memory):
            col.add(f"{path}.output", f"type can never run: peak KV footprint prompt + output = "
                    f"{t['prompt'] + t['output']} exceeds memory {memory}")
    if len(col.problems) > before:
        return None
    return PromptTypes(np.array([int(t["prompt"]) for t in spec], dtype=np.int64),
                       np.array([int(t["output"]) for t in spec], dtype=np.int64),
                       np.array([float(t["rate"]) for t in spec]))


class _NonFinite(str):
    """A NaN, Infinity or -Infinity token, kept while parsing so that the error can name where it stands."""


def _unique_keys(pairs: list) -> dict:
    """An object's members, refusing a repeated name (JSON parsers differ on which one wins)."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {k!r} appears twice in one object")
        out[k] = v
    return out


_NON_FINITE = re.compile(r"NaN|Infinity")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _first_where(v, bad, path: str = "") -> tuple[str, Any] | None:
    """(path, value) of the first value or key of parsed JSON for which ``bad`` holds (``requests[0].output``),
    depth first; None if there is none."""
    if bad(v):
        return path or "(top level)", v
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        if isinstance(k, str):  # printable even where the key itself is the culprit
            name = k.encode("utf-8", "backslashreplace").decode("utf-8")
            where = f"{path}.{name}" if path else name
        else:
            where = f"{path}[{k}]"
        found = (_first_where(k, bad, where) if isinstance(k, str) else None) or _first_where(x, bad, where)
        if found:
            return found
    return None


def _lone_surrogate(v) -> bool:
    """A string holding a lone UTF-16 surrogate (from an escape such as \\ud800), which no output can encode."""
    if not isinstance(v, str):
        return False
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_json(path: str | Path, what: str = "file") -> Any:
    """Read a JSON file; every failure becomes an InputError naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no such {what}", source=str(path)) from None
    except IsADirectoryError:
        raise InputError(f"is a directory, expected a JSON {what}", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {what}: {e}", source=str(path)) from None
    except ValueError as e:  # e.g. an embedded NUL byte in the path
        raise InputError(f"not a usable path: {e}", source=repr(str(path))) from None
    try:
        data = json.loads(text, parse_constant=_NonFinite, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", source=str(path)) from None
    except (ValueError, RecursionError) as e:
        raise InputError(f"invalid JSON: {e}", source=str(path)) from None
    try:
        found = _first_where(data, lambda v: isinstance(v, _NonFinite)) if _NON_FINITE.search(text) else None
    except RecursionError:
        raise InputError("invalid JSON: NaN and Infinity are not JSON numbers", source=str(path)) from None
    if found is not None:
        raise InputError(f"{found[0]}: {found[1]} is not a JSON number; expected a finite number", source=str(path))
    if _SURROGATE_ESCAPE.search(text):  # a \\uD800-\\uDFFF escape: a pair is fine, a lone one is not text
        found = _first_where(data, _lone_surrogate)
        if found is not None:
            raise InputError(f"{found[0]}: must be valid Unicode text, got a lone surrogate escape (\\ud800-\\udfff "
                             "not in a pair)", source=str(path))
    return data


def require_requests(inst: Instance, what: str, source: str | None = None, instead: str = "") -> None:
    """Exit 2 where ``what`` needs requests and the instance has none: a seed-001 instance of a ``types`` block
    alone (README, instance format) describes a workload, not a trace to schedule. ``instead``: what else to do."""
    if inst.n == 0:
        raise InputError(f"requests: the instance has no requests (only a seed-001 types block); {what} needs "
                         f"requests: draw some with `lpbench generate fluid --types {source or 'FILE'} --horizon H`"
                         f"{instead}", source=source)


def load_instance(path: str | Path) -> Instance:
    data = read_json(path, "instance file")
    try:
        return parse_instance(data, name=Path(path).stem)
    except InputError as e:
        raise InputError(e.problems, source=str(path)) from None
