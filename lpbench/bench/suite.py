"""Suite files (TOML): which instances, formulations x solvers, policies, limits, repetitions.

    [suite]
    name = "tiny"                                  # required: names the run directory
    instances = ["../../instances/tiny-*.json"]    # globs, relative to this file (or absolute)
    formulations = ["latency-ip"]                  # `lpbench list formulations`; may be []
    solvers = ["highs"]                            # profiles of solvers.toml; one task per formulation x solver
    # solve = ["latency-ip:highs", "latency-cp:cpsat"] -- explicit formulation:solver pairs instead of the product
    policies = ["mc-sf", "mc-benchmark"]           # `lpbench list policies`; [] = none
    time_limit = 2                                 # solver seconds per task (overrides the profile)
    repetitions = 1                                # repetition r runs randomised policies with seed + r
    seed = 0
    grace = 10                                     # a task is killed after time_limit + grace seconds
    metric = "total_latency"                       # policy objective when the suite has no formulation

    [[suite.generate]]                             # seeded generator specs, as `lpbench generate`
    kind = "jaillet-model1"                        # jaillet-model1/2, infermax-csp51 (I = [...]), infermax-uniform
    seed = 0
    count = 3

Tasks: one per (instance, formulation, solver, repetition) -- ``solve_instance`` with the suite's policies,
which yields one formulation row and one policy row per policy (its certified ratio interval) -- or, when
the suite lists no formulation, one per (instance, policy, repetition) (a verified simulation).
Everything is checked before any work starts (and before a run directory is created): an unknown key,
formulation, solver, policy or generator kind, a glob that matches nothing, an instance without requests or
listed twice (the same content under any name: its tasks would share their keys), or a formulation/policy that
does not fit an instance's model raises :class:`InputError` naming it (exit 2). Settings must lie in range:
``name`` names the run directory, so it is 1-100 letters, digits, ``.``, ``_``, ``-`` (no ``/``, no leading
``.``); ``time_limit`` in (0, 604800] and ``grace`` in [0, 604800] seconds (a week); ``repetitions`` in
[1, 1000]; ``seed`` >= 0 with ``seed + repetitions - 1`` < 2^63 (Parquet's int64, as the CLI's ``--seed``);
``metric`` one of :data:`~lpbench.bench.runner.LATENCY_METRICS`; a generator's ``count`` in [1, 1000] and
its ``seed`` in [0, 2^63).
"""
from __future__ import annotations

import glob
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import InputError
from ..generators import MAX_REQUESTS
from ..instance import Instance, load_instance, parse_instance, require_requests
from ..solvers.base import MAX_SECONDS  # time_limit and grace: a week, as solve's --time-limit
from ..tomlfile import read_toml
from .runner import LATENCY_METRICS

KEYS = {"name": str, "instances": list, "formulations": list, "solvers": list, "policies": list,
        "time_limit": (int, float), "repetitions": int, "seed": int, "grace": (int, float), "metric": str,
        "generate": list, "description": str, "solve": list}
REQUIRED = ("name", "time_limit")
GENERATE_KEYS = {"kind": str, "seed": int, "count": int, "I": list, "O": int, "B": int, "memory": int}
GENERATORS = ("jaillet-model1", "jaillet-model2", "infermax-csp51", "infermax-uniform")
STRING_LISTS = ("instances", "formulations", "solvers", "policies", "solve")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
MAX_REPETITIONS = 1000
MAX_COUNT = 1000              # draws of one [[suite.generate]] spec
SEED_END = 2**63              # seeds are stored as Parquet int64


def instance_hash(inst: Instance) -> str:
    """Content hash of an instance: sha256 of its canonical v1 JSON without the name, so that the same
    requests under another file name match (``lpbench compare`` joins rows on it)."""
    data = inst.to_dict(columnar=True)
    data.pop("name", None)
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class Task:
    """One unit of work, plain data so that it crosses process and network boundaries as JSON."""

    key: str
    instance: str
    instance_hash: str
    instance_data: dict
    formulation: str | None
    solver: str | None
    policies: list
    time_limit: float
    grace: float
    seed: int
    repetition: int
    metric: str

    @property
    def method(self) -> str:
        return self.formulation if self.formulation else self.policies[0]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Suite:
    name: str
    path: str
    time_limit: float
    pairs: list = field(default_factory=list)  # [(formulation, solver)]
    policies: list = field(default_factory=list)
    repetitions: int = 1
    seed: int = 0
    grace: float = 10.0
    metric: str = "total_latency"
    instances: list = field(default_factory=list)  # [(label, Instance)]

    def tasks(self) -> list[Task]:
        out = []
        for label, inst in self.instances:
            h = instance_hash(inst)
            data = inst.to_dict(columnar=True)
            for rep in range(self.repetitions):
                seed = self.seed + rep
                common = dict(instance=label, instance_hash=h, instance_data=data, time_limit=self.time_limit,
                              grace=self.grace, seed=seed, repetition=rep, metric=self.metric)
                if self.pairs:
                    for f, s in self.pairs:
                        out.append(Task(key=f"{h[:16]}/{f}/{s}/r{rep}", formulation=f, solver=s,
                                        policies=list(self.policies), **common))
                else:
                    for p in self.policies:
                        out.append(Task(key=f"{h[:16]}/{p}/-/r{rep}", formulation=None, solver=None,
                                        policies=[p], **common))
        return out

    def fingerprint(self, legacy: bool = False) -> str:
        """What a run computes: the settings (``grace`` too: it sets each task's deadline) and every task key.
        ``--resume`` refuses a suite whose fingerprint differs from the run's. ``legacy``: the fingerprint
        without ``grace`` that runs made before it was included carry in their manifest."""
        settings = [self.name, self.pairs, self.policies, self.time_limit, self.repetitions, self.seed, self.metric]
        if not legacy:
            settings.append(self.grace)
        blob = json.dumps({"settings": settings, "tasks": [t.key for t in self.tasks()]}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


def _type_name(t) -> str:
    return "a number" if t == (int, float) else {str: "a string", list: "a list", int: "an integer"}[t]


def _check_types(table: dict, spec: dict, path: str, problems: list) -> None:
    for key, value in table.items():
        if key not in spec:
            problems.append(f"{path}.{key}: unknown key; expected one of {', '.join(spec)}")
        elif isinstance(value, bool) or not isinstance(value, spec[key]):
            problems.append(f"{path}.{key}: must be {_type_name(spec[key])}, got {value!r}")


def _check_strings(s: dict, problems: list) -> None:
    """The list settings hold strings (globs, names, ``formulation:solver`` pairs)."""
    for key in STRING_LISTS:
        items = s.get(key)
        if isinstance(items, list) and not all(isinstance(item, str) for item in items):
            problems.append(f"suite.{key}: must be a list of strings, got {items!r}")


def _check_settings(s: dict, problems: list) -> None:
    """The ranges of the scalar settings (types already checked); see the module docstring."""
    if not NAME.fullmatch(s["name"]):
        problems.append(f"suite.name: must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or "
                        f"digit (it names the run directory), got {s['name']!r}")
    if not 0 < s["time_limit"] <= MAX_SECONDS:  # also refuses nan
        problems.append(f"suite.time_limit: must be a positive number of seconds, at most {MAX_SECONDS}, "
                        f"got {s['time_limit']!r}")
    grace = s.get("grace", 10.0)
    if not 0 <= grace <= MAX_SECONDS:
        problems.append(f"suite.grace: must be a number of seconds in [0, {MAX_SECONDS}], got {grace!r}")
    reps = s.get("repetitions", 1)
    if not 1 <= reps <= MAX_REPETITIONS:
        problems.append(f"suite.repetitions: must be an integer in [1, {MAX_REPETITIONS}], got {reps!r}")
    seed = s.get("seed", 0)
    if not 0 <= seed <= SEED_END - max(reps, 1):
        problems.append(f"suite.seed: must be an integer in [0, 2^63) (repetition r uses seed + r), got {seed!r}")
    metric = s.get("metric", "total_latency")
    if metric not in LATENCY_METRICS:
        problems.append(f"suite.metric: expected one of {', '.join(LATENCY_METRICS)}, got {metric!r}")


def _check_generate(spec: dict, where: str, problems: list) -> None:
    """The ranges of one generator spec (types already checked)."""
    if not 1 <= spec.get("count", 1) <= MAX_COUNT:
        problems.append(f"{where}.count: must be an integer in [1, {MAX_COUNT}], got {spec['count']!r}")
    if not 0 <= spec.get("seed", 0) < SEED_END:
        problems.append(f"{where}.seed: must be an integer in [0, 2^63), got {spec['seed']!r}")
    sizes = spec.get("I", [1])
    if not sizes or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in sizes):
        problems.append(f"{where}.I: must be a non-empty list of positive integers, got {sizes!r}")
    for k in ("O", "B", "memory"):
        if spec.get(k, 1) < 1:
            problems.append(f"{where}.{k}: must be a positive integer, got {spec[k]!r}")
    if spec.get("B", 1) > MAX_REQUESTS:  # checked before anything is drawn (B = 2^62 was a MemoryError)
        problems.append(f"{where}.B: must be a number of requests in [1, {MAX_REQUESTS:,}], got {spec['B']!r}")


def _generate(spec: dict, where: str) -> list[tuple[str, dict]]:
    kind, seed, count = spec["kind"], spec.get("seed", 0), spec.get("count", 1)
    if kind.startswith("jaillet"):
        from ..generators import jaillet

        return [(d["name"], d) for d in (jaillet.instance(kind, seed, k) for k in range(count))]
    from ..generators import infermax

    if kind == "infermax-csp51":
        sizes = spec.get("I", [2**k for k in range(11)])
        return [(d["name"], d) for d in (infermax.csp51(int(I)) for I in sizes)]
    for k in ("I", "O", "B"):
        if k not in spec:
            raise InputError(f"{where}.{k}: required for kind 'infermax-uniform'")
    d = infermax.uniform(int(spec["I"][0]), spec["O"], spec["B"], spec.get("memory", 100_000), log=None)
    return [(d["name"], d)]


def load_suite(path: str | Path) -> Suite:
    """Parse and check a suite file; every instance is loaded and validated here, before any work."""
    from ..formulations import FORMULATIONS
    from ..policies import POLICIES
    from ..solvers import load_profiles

    p = Path(path)
    data = read_toml(p, f"SUITE: {p} does not exist")
    problems: list[str] = []
    for key in data:
        if key != "suite":
            problems.append(f"{key}: unknown table; a suite file has one [suite] table")
    s = data.get("suite")
    if not isinstance(s, dict):
        raise InputError(problems + ["suite: missing [suite] table"], source=str(p))
    _check_types(s, KEYS, "suite", problems)
    _check_strings(s, problems)
    for key in REQUIRED:
        if key not in s:
            problems.append(f"suite.{key}: required")
    if problems:
        raise InputError(problems, source=str(p))
    forms, solvers, policies = s.get("formulations", []), s.get("solvers", []), s.get("policies", [])
    pairs = [(f, v) for f in forms for v in solvers]
    for item in s.get("solve", []):
        f, sep, v = str(item).partition(":")
        if not sep:
            problems.append(f"suite.solve: expected 'formulation:solver', got {item!r}")
        pairs.append((f, v))
        forms, solvers = forms + [f], solvers + [v]
    forms, solvers = list(dict.fromkeys(forms)), list(dict.fromkeys(solvers))
    profiles = load_profiles()
    for f in forms:
        if f not in FORMULATIONS:
            problems.append(f"suite.formulations: unknown formulation {f!r}; expected one of "
                            f"{', '.join(FORMULATIONS.names())}")
    for v in solvers:
        if v not in profiles:
            problems.append(f"suite.solvers: unknown solver profile {v!r}; expected one of {', '.join(profiles)}")
    for v in policies:
        if v not in POLICIES:
            problems.append(f"suite.policies: unknown policy {v!r}; expected one of {', '.join(POLICIES.names())}")
    if s.get("formulations") and not s.get("solvers"):
        problems.append("suite.solvers: required (non-empty) when suite.formulations is not empty")
    for f, v in pairs:
        native = getattr(FORMULATIONS.get(f), "native_backend", None) if f in FORMULATIONS else None
        if native and v in profiles and profiles[v].backend != native:
            problems.append(f"suite.solvers: formulation {f!r} is a {native} model, but profile {v!r} uses "
                            f"backend {profiles[v].backend!r}; list explicit pairs in suite.solve")
    if not forms and not policies:
        problems.append("suite.policies: a suite without formulations needs at least one policy")
    _check_settings(s, problems)
    if not s.get("instances") and not s.get("generate"):
        problems.append("suite.instances: required (a list of globs) unless suite.generate is given")
    if problems:
        raise InputError(problems, source=str(p))

    loaded: list[tuple[str, Instance]] = []
    sources: list[str] = []  # where each loaded instance comes from: its file or its generator spec
    for pattern in s.get("instances", []):
        full = pattern if Path(pattern).is_absolute() else str(p.parent / pattern)
        files = sorted(glob.glob(full))
        if not files:
            problems.append(f"suite.instances: glob {pattern!r} matches no file (looked for {full})")
        for f in files:
            try:
                inst = load_instance(f)
                require_requests(inst, "bench", f)
            except InputError as e:
                problems.extend(e.lines())
                continue
            loaded.append((Path(f).stem, inst))
            sources.append(f)
    for k, spec in enumerate(s.get("generate", [])):
        where = f"suite.generate[{k}]"
        if not isinstance(spec, dict):
            problems.append(f"{where}: must be a table, got {spec!r}")
            continue
        before = len(problems)
        _check_types(spec, GENERATE_KEYS, where, problems)
        if spec.get("kind") not in GENERATORS:
            problems.append(f"{where}.kind: expected one of {', '.join(GENERATORS)}, got {spec.get('kind')!r}")
        if len(problems) == before:
            _check_generate(spec, where, problems)
        if len(problems) == before:
            try:
                drawn = [(name, parse_instance(d)) for name, d in _generate(spec, where)]
            except InputError as e:
                problems.extend(e.lines())
                continue
            loaded += drawn
            sources += [f"{where} draw {name}" for name, _ in drawn]
    first: dict[str, str] = {}
    for (_, inst), source in zip(loaded, sources):
        h = instance_hash(inst)
        if h in first:
            problems.append(f"suite.instances: {first[h]} and {source} hold the same instance (equal content); "
                            "list each instance once")
        first.setdefault(h, source)
    for label, inst in loaded:
        for f in forms:
            if inst.model not in FORMULATIONS.get(f).models:
                problems.append(f"suite.formulations: {f!r} is defined for model "
                                f"{'/'.join(FORMULATIONS.get(f).models)}, but instance {label} uses {inst.model!r}")
        for v in policies:
            if inst.model not in POLICIES.get(v).models:
                problems.append(f"suite.policies: {v!r} serves model {'/'.join(POLICIES.get(v).models)}, "
                                f"but instance {label} uses {inst.model!r}")
    if problems:
        raise InputError(sorted(set(problems), key=problems.index)[:50], source=str(p))
    return Suite(name=s["name"], path=str(p), time_limit=float(s["time_limit"]), pairs=pairs, policies=policies, repetitions=s.get("repetitions", 1), seed=s.get("seed", 0),
                 grace=float(s.get("grace", 10.0)), metric=s.get("metric", "total_latency"), instances=loaded)
