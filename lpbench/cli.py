"""The ``lpbench`` command line: a thin layer over the library.

Exit codes (distinct, so that scripts can tell a crash from a result):

* 0   a result (a verified schedule, a solve that found a solution, an exported model);
* 1   a verdict: infeasible, a schedule that fails verification, a solve that found nothing,
      a policy that does not finish the instance;
* 2   bad input: one line per problem (field, value, what was expected), never a traceback;
      this includes an output path that cannot or must not be written (see :mod:`lpbench.outputs`);
* 3   internal error (a bug): one line, and ``--debug`` prints the traceback;
* 130 interrupted (SIGINT / Ctrl-C): the solver is stopped, the best schedule found so far is
      verified and written to ``--out``, and the status is ``interrupted``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

from . import __version__, cli_capacity
from .cli_options import refuse_unread, remember_parser
from .errors import InputError, LpbenchWarning, PolicyError
from .errors import PolicyDiverged
from .solve import SolveBugError

EXIT_OK, EXIT_VERDICT, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: the optional dependencies (pyproject's extras) by top-level module: a command that needs one on an install without
#: it exits 2 naming the extra, not 3 (internal error)
OPTIONAL_EXTRAS = {"pyarrow": "bench", "matplotlib": "bench", "tqdm": "bench", "tabulate": "bench",
                   "dask": "bench", "distributed": "bench", "torch": "profile", "gurobipy": "gurobi"}
EXIT_CODES_HELP = """exit codes:
  0    a result (verified schedule, solution found, model exported)
  1    a verdict: infeasible, schedule fails verification, nothing found, policy does not finish
  2    bad input (one line per problem: field, value, what was expected)
  3    internal error (a bug): one line; rerun with --debug for the traceback
  130  interrupted (Ctrl-C): the best schedule so far is verified and written to --out"""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2), the same shape as every other input error."""

    def error(self, message):
        print(f"{self.prog}: {message} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(EXIT_INPUT)


def _int_type(minimum: int, maximum: int = 2**63 - 1, what: str = "an integer"):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not minimum <= v <= maximum:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return v
    parse.__name__ = what
    return parse


def _float_type(what: str = "a positive number", zero: bool = False):
    """A finite float > 0 (>= 0 with ``zero``)."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not ((v >= 0 if zero else v > 0) and v < float("inf")):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return v
    parse.__name__ = what
    return parse


def _file_name(text: str) -> str:
    """An optional output path: given, it must name something (``if args.out:`` would skip an empty one)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must be a file name, got {text!r}")
    return text


_file_name.__name__ = "a file name"
OUT_FILE = _file_name
SEED = _int_type(0, 2**63 - 1, "an integer in [0, 2^63)")
POSITIVE_INT = _int_type(1, 2**40, "a positive integer")
POSITIVE_FLOAT = _float_type()
NON_NEGATIVE_FLOAT = _float_type("a finite number >= 0", zero=True)


def _print_metrics(metrics: dict, out=None) -> None:
    out = out or sys.stdout  # looked up at call time (a default bound at import outlives a redirect)
    for k, v in metrics.items():
        if isinstance(v, float):
            v = f"{v:.6g}"
        print(f"  {k:<20} {v}", file=out)


def _progress(done: int, n: int, t: float) -> None:
    if sys.stderr.isatty():
        print(f"\r  {done}/{n} requests done, t={t:.6g}", end="", file=sys.stderr, flush=True)


# -- commands ------------------------------------------------------------------------------------

def cmd_validate(args) -> int:
    from .instance import load_instance

    bad = 0
    for path in args.files:
        try:
            inst = load_instance(path)
        except InputError as e:
            bad += 1
            for line in e.lines():
                print(line, file=sys.stderr)
        else:
            if not args.quiet:
                print(f"{path}: ok ({inst.n} requests, model {inst.model}, memory {inst.memory})")
    return 2 if bad else 0


def parse_params(items: list[str] | None) -> dict:
    """``--param KEY=VALUE`` options as {KEY: float}: each key once, each value a finite number. Whether the policy
    has the parameter and the value is in its range is the policy's declaration (``make_policy`` checks it)."""
    import math

    params, given = {}, {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--param: expected KEY=VALUE, got {item!r}")
        if key in params:
            raise InputError(f"--param {key}: given twice ({given[key]!r}, then {value!r}); give each parameter once")
        if key in ("seed", "name", "inst"):  # make_policy's own arguments, never a policy parameter
            hint = "; the seed is --seed" if key == "seed" else ""
            raise InputError(f"--param {key}: unknown parameter ({key!r} is reserved{hint})")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"--param {key}: must be a number, got {value!r}") from None
        if not math.isfinite(number):
            raise InputError(f"--param {key}: must be a finite number, got {value!r}")
        params[key], given[key] = number, value
    return params


def run_policy(inst, name: str, seed: int = 0, progress=None, params: dict | None = None):
    """Simulate one policy and verify its schedule. Returns (SimResult, VerifyResult)."""
    from .policies import make_policy
    from .sim import simulate
    from .verify import verify

    policy = make_policy(name, inst, seed=seed, **(params or {}))
    res = simulate(inst, policy, progress=progress)
    return res, verify(inst, res.schedule)


def cmd_simulate(args) -> int:
    from .instance import load_instance, require_requests
    from .outputs import check_target, write_json

    inst = load_instance(args.instance)
    require_requests(inst, "simulate", args.instance)
    if args.out:
        check_target(args.out, args.force, make_parents=False)  # refuse a bad --out before any work
    res, ver = run_policy(inst, args.policy, args.seed, progress=None if args.json else _progress,
                          params=parse_params(args.param))
    if not args.json and sys.stderr.isatty():
        print(file=sys.stderr)
    report = {"policy": args.policy, "instance": inst.name, "verified": ver.feasible,
              "violations": ver.violations, "simulate_seconds": res.seconds, "metrics": ver.metrics}
    if args.out:
        write_json(args.out, {**res.schedule.to_dict(inst), "policy": args.policy, "seed": args.seed,
                              "verified": ver.feasible, "metrics": ver.metrics}, force=args.force, make_parents=False)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{inst.name}: policy {args.policy}, {inst.n} requests, model {inst.model}, "
              f"simulated in {res.seconds:.3f}s")
        if ver.feasible:
            print("  verified: yes")
            _print_metrics(ver.metrics)
        else:
            print("  verified: NO -- the policy produced an infeasible schedule (a bug):")
            for v in ver.violations:
                print(f"  {v}")
        if args.out:
            print(f"  schedule written to {args.out}")
    return 0 if ver.feasible else 1


def _refuse_swapped(instance_path: str, schedule_path: str) -> None:
    """One clear line for ``verify SCHEDULE INSTANCE`` instead of a wall of unknown-key lines."""
    from .instance import read_json

    data = read_json(instance_path, "instance file")
    if isinstance(data, dict) and "batches" in data and "requests" not in data:
        raise InputError(f"{instance_path} is a schedule file, not an instance; usage: lpbench verify INSTANCE "
                         "SCHEDULE (arguments swapped?)")


def cmd_verify(args) -> int:
    from .instance import load_instance, read_json, require_requests
    from .schedule import Schedule
    from .verify import verify

    _refuse_swapped(args.instance, args.schedule)
    inst = load_instance(args.instance)
    require_requests(inst, "verify", args.instance)
    data = read_json(args.schedule, "schedule file")
    try:
        sched = Schedule.from_dict(data, inst)
    except InputError as e:
        raise InputError(e.problems, source=args.schedule) from None
    res = verify(inst, sched)
    if args.json:
        print(json.dumps(res.to_dict()))
    elif res.feasible:
        print(f"{args.schedule}: feasible for {inst.name}")
        _print_metrics(res.metrics)
    else:
        for v in res.violations:
            print(f"{args.schedule}: {v}", file=sys.stderr)
    return 0 if res.feasible else 1


def _log(msg: str) -> None:
    print(f"lpbench: {msg}", file=sys.stderr, flush=True)


def _fmt(v) -> str:
    return "-" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))


def _objective_unit(inst) -> str:
    """Slot model: times are integer rounds; batch model: the cost model's seconds."""
    return "rounds" if inst.model == "slot" else "s"


def cmd_solve(args) -> int:
    from .instance import load_instance
    from .outputs import check_target, write_json
    from .solve import solve_instance

    inst = load_instance(args.instance)
    if args.out:
        check_target(args.out, args.force, make_parents=False)  # refuse a bad --out before any work
    policies = None if args.policies is None else [p for p in args.policies.split(",") if p]
    rep = solve_instance(inst, args.formulation, args.solver, args.time_limit, policies, args.seed,
                         log=None if args.quiet else _log)
    schedule = rep.pop("_schedule")
    rep.pop("_policy_metrics")
    if args.out:
        out = dict(rep)
        if schedule is not None:
            out.update(schedule.to_dict(inst))
        write_json(args.out, out, force=args.force, make_parents=False)
    if args.json:
        print(json.dumps(rep))
    else:
        kind = "exact model" if rep["exact"] else "relaxation (certified lower bound)"
        if "capacity" in rep:
            kind = "throughput capacity bound, requests/s"
        elif "fluid" in rep:
            kind = "throughput upper bound"
        how = ("closed form, no solver" if rep["backend"] == "closed-form"
               else f"by lpbench's own {rep['backend']} search, no solver" if rep["solver"] is None
               else f"with {rep['solver']} ({rep['backend']})")
        print(f"{inst.name}: {rep['formulation']} ({kind}) {how}: {rep['status']}")
        source = rep.get("objective_source")
        relaxation = not rep["exact"] and "capacity" not in rep and "fluid" not in rep
        label = "value" if relaxation else "objective"  # a relaxation's optimum is a bound, not a schedule's value
        print(f"  {label} ({rep['objective_metric']}) {_fmt(rep['objective'])}"
              + (f" ({source})" if source and source != "solver" else "")
              + ("  (the relaxation's optimum: a lower bound on the optimum)" if relaxation else ""))
        print(f"  bound                  {_fmt(rep['bound'])}"
              + (f" ({rep['bound_source']})" if rep["bound_source"] not in (None, rep["backend"]) else ""))
        print(f"  gap                    {_fmt(rep['gap'])}" + ("  (best known - bound) / best known" if relaxation
                                                                       and rep["gap"] is not None else ""))
        best, lower = rep.get("best_known"), rep["bound"]
        if relaxation and best is not None and lower is not None:
            print(f"  best known             {_fmt(best)}  (the best verified schedule); the optimum is in "
                  f"[{_fmt(lower)}, {_fmt(best)}]")
        if rep["variables"] is None:                    # proven before the model was built
            print("  the exact model was not built")
        else:
            print(f"  build {rep['build_seconds']:.3f}s, solve {rep['solve_seconds']:.3f}s; {rep['variables']} "
                  f"variables, {rep['rows']} rows" + (f"; warm start from {rep['warm_start']}" if rep["warm_start"] else ""))
        if rep["message"]:
            print(f"  note: {rep['message']}")
        if "capacity" in rep:
            cap = rep["capacity"]
            print(f"  capacity bound {_fmt(cap['bound_requests_per_s'])} requests/s, "
                  f"{_fmt(cap['bound_tokens_per_s'])} tokens/s ({cap['method']}); drain bound {_fmt(cap['drain_bound_s'])} s")
            for name, r in cap["policies"].items():
                print(f"    {name:<22} makespan {_fmt(r['makespan']):>10}   drain time / drain bound {_fmt(r['ratio'])}")
        if rep["verified"] is not None:
            print(f"  schedule verified: {'yes' if rep['verified'] else 'no schedule'}")
        if rep["ratios"] or rep["skipped_policies"]:
            proven = rep["exact"] and rep["status"] == "optimal"
            head = "policy / optimum" if proven else "[policy / best known, policy / bound]"
            unit = _objective_unit(inst)
            print(f"  competitive ratios of the online policies ({rep['objective_metric']} in {unit}):")
            print(f"    {'policy':<22} {rep['objective_metric'] + ' [' + unit + ']':>22}   {head}")
            for name, r in rep["ratios"].items():
                rng = _fmt(r["lower"]) if proven else f"[{_fmt(r['lower'])}, {_fmt(r['upper'])}]"
                print(f"    {name:<22} {_fmt(r['objective']):>22}   {rng}")
        for name, why in rep["skipped_policies"].items():
            print(f"    {name:<22} skipped, no ratio (it has no finished schedule on this instance): {why}")
        if args.out:
            print(f"  written to {args.out}")
    if rep["status"] == "interrupted":
        _log("interrupted: the best schedule found so far was verified"
             + (f" and written to {args.out}" if args.out and schedule is not None else ""))
        return EXIT_INTERRUPTED
    result = rep["status"] in ("optimal", "feasible", "time_limit", "licence_limit")
    refused_with_schedule = rep["status"] == "refused" and rep["objective"] is not None and rep["verified"]
    return 0 if result or refused_with_schedule else 1


def cmd_export(args) -> int:
    from .formulations import FORMULATIONS
    from .instance import load_instance
    import highspy

    from .outputs import check_target, write_atomic
    from .solve import check_applicable
    from .solvers.highs import to_highs

    inst = load_instance(args.instance)
    cls = check_applicable(inst, args.formulation)
    suffix = "." + args.format
    if not args.out.endswith(suffix):
        raise InputError(f"--out: must end with {suffix} for --format {args.format}, got {args.out}")
    # before the model is built; the native writer never sees a bad path
    check_target(args.out, args.force, make_parents=False)
    if getattr(cls, "native_backend", None) or getattr(cls, "closed_form", False):
        raise InputError(f"--formulation: {args.formulation!r} is not a linear model; export takes one of "
                         + ", ".join(n for n, c in FORMULATIONS.items()
                                     if not getattr(c, "native_backend", None) and not getattr(c, "closed_form", False)))
    incumbent = None
    if getattr(cls, "needs_incumbent", False):  # its horizon comes from the best verified policy schedule
        from .solve import run_policies

        runs = run_policies(inst, None, cls.objective_metric)
        incumbent = min(r.objective for r in runs) if runs else None
    form = cls(inst, incumbent)
    form.check_size()  # as solve does: a model too large to build is refused (exit 2), not a MemoryError
    model = form.build()
    h = to_highs(model)
    cols, rows = model.names()
    for j, name in enumerate(cols):
        h.passColName(j, name)
    for r, name in enumerate(rows):
        h.passRowName(r, name)

    def native_write(tmp: str) -> None:  # HiGHS picks the format from the temporary file's suffix
        status = h.writeModel(tmp)
        if status == highspy.HighsStatus.kError:
            raise InputError(f"--out: HiGHS could not write {args.out}")

    write_atomic(args.out, native_write, args.force, suffix=suffix, make_parents=False)
    print(f"{args.out}: {args.formulation} for {inst.name}, {model.n_vars} variables, {model.n_rows} rows "
          f"(objective constant {model.offset:g} included" + ("" if model.unit == 1.0 else
                                                               f"; one objective unit = {model.unit:g} s") + ")"
          + (f"; {cls.export_note}" if cls.export_note else ""))
    return 0


def _require(kind: str, *flags) -> None:
    """All of a generator's missing options in one message, not one per run."""
    missing = [flag for flag, v in flags if v is None or v == "" or (not isinstance(v, str) and v <= 0)]
    if missing:
        raise InputError(f"{kind}: missing required option(s) {', '.join(missing)} "
                         f"('{kind}' needs {', '.join(flag for flag, _ in flags)})")


#: the options each kind of ``generate`` reads, beside --out and --force (others given are refused, not ignored)
GENERATE_OPTIONS = {
    "jaillet-model1": ("seed", "count"), "jaillet-model2": ("seed", "count"),
    "poisson": ("seed", "count", "rate", "requests", "memory", "lengths", "cost_model", "token_budget"),
    "infermax-uniform": ("I", "O", "B", "memory", "cost_model", "token_budget"),
    "infermax-mix": ("seed", "mix", "B", "memory", "cost_model", "token_budget"),
    "infermax-csp51": ("I", "cost_model", "token_budget"),
    "fluid": ("seed", "count", "types", "from_instance", "horizon", "bin_width", "bins"),
}


def refuse_unused_generate_options(args) -> None:
    """Exit 2 when ``generate`` is given an option its kind does not read (it would be silently ignored)."""
    refuse_unread(args, f"generate {args.kind}", GENERATE_OPTIONS[args.kind])


def _refuse_total(total: int, what: str) -> None:
    """generate draws every instance of a run before it writes any (so that a name clash writes nothing): the
    run's requests together are held to one instance's limit."""
    from .generators import MAX_REQUESTS

    if total > MAX_REQUESTS:
        raise InputError(f"{what}: at most {MAX_REQUESTS:,} requests in one run (all are drawn before any is "
                         f"written), got {total:,}; split it into several runs")


def cmd_generate(args) -> int:
    from pathlib import Path

    from .generators import check_requests
    from .instance import parse_instance
    from .outputs import check_target, write_json

    refuse_unused_generate_options(args)
    if args.count < 1:
        raise InputError(f"--count: must be a positive integer, got {args.count}")
    if args.kind.startswith("jaillet"):
        from .generators import jaillet

        make = lambda k: jaillet.instance(args.kind, args.seed, k)  # noqa: E731
    elif args.kind.startswith("infermax"):
        from .generators import infermax

        kw = {"cost_model": args.cost_model, "token_budget": args.token_budget or 4096}
        if args.kind == "infermax-csp51":
            sizes = [2**k for k in range(11)] if args.I is None else [args.I]
            datas = [infermax.csp51(I, **kw) for I in sizes]
        elif args.kind == "infermax-mix":
            pairs = infermax.PAIRS if args.mix is None else [args.mix]
            _refuse_total(len(pairs) * check_requests(args.B or 64, "--B"), f"{len(pairs)} mixes x --B")
            datas = [infermax.mix(p, args.B or 64, args.seed, args.memory or 100_000, **kw) for p in pairs]
        else:
            _require(args.kind, ("--I", args.I), ("--O", args.O), ("--B", args.B))
            datas = [infermax.uniform(args.I, args.O, args.B, args.memory or 100_000, **kw)]
        make = None
    else:
        from .generators import poisson

        _require(args.kind, ("--rate", args.rate), ("--requests", args.requests), ("--memory", args.memory),
                 ("--lengths", args.lengths))
        _refuse_total(args.count * check_requests(args.requests, "--requests"), "--count x --requests")
        prompt, output = poisson.length_table(args.lengths)
        limits = {"token_budget": args.token_budget} if args.token_budget else None
        make = lambda k: poisson.instance(args.seed, k, args.requests, args.rate, args.memory,  # noqa: E731
                                          prompt, output, args.cost_model, limits)
    out = Path(args.out)
    if make is not None:
        datas = [make(k) for k in range(args.count)]
    paths = [out / f"{d['name']}.json" for d in datas]
    clash = [str(p) for p in paths if p.exists()]
    if clash and not args.force:
        raise InputError(f"--out: {clash[0]} already exists ({len(clash)} of {len(paths)} files); "
                         "pass --force to overwrite")
    for p in paths:
        check_target(p, args.force)
    for d, p in zip(datas, paths):
        parse_instance(d)  # a generator bug must not write an invalid file
        write_json(p, d, force=args.force)
        print(p)
    return 0


def cmd_list(args) -> int:
    if args.what == "models":
        from .costmodels import FORMS, profile_names, read_profile

        print("profiles (models/*.toml):")
        broken = []
        for name in profile_names():
            try:
                prof = read_profile(name)
            except InputError as e:  # listed as broken; the others are still listed, then exit 2
                broken += e.lines()
                print(f"  {name:<34} (broken: see below)")
                continue
            print(f"  {name:<34} form={str(prof.get('form')):<10} {prof.get('description', '')}")
        print("forms (inline {\"form\": NAME, ...}):")
        for name, cls in FORMS.items():
            print(f"  {name:<10} coefficients: {', '.join(cls.params) or '(none)'}")
        if broken:
            raise InputError(broken)
    elif args.what == "formulations":
        from .formulations import FORMULATIONS

        for name, cls in FORMULATIONS.items():
            kind = "exact" if cls.exact else "bound"
            print(f"  {name:<16} {kind:<6} models={'/'.join(cls.models):<11} {cls.summary}")
    elif args.what == "solvers":
        from .solvers import load_profiles

        for name, p in load_profiles().items():
            print(f"  {name:<14} backend={p.backend:<7} time_limit={p.time_limit:g}s rel_gap={p.rel_gap:g} "
                  f"threads={p.threads} {p.options or ''}")
    elif args.what == "policies":
        from .policies import POLICIES

        for name, cls in POLICIES.items():
            print(f"  {name:<22} models={'/'.join(cls.models):<11} {cls.summary}")
            defaults = cls.param_defaults()
            for key, spec in cls.params.items():  # what --param may set
                default = "from the instance" if defaults[key] is None else f"default {defaults[key]:g}"
                print(f"  {'':<22} --param {key}: {spec.expect()}, {default}; {spec.what}")
    return 0


def cmd_warmup(args) -> int:
    from .warmup import warm_up

    print("lpbench: compiling the numba kernels (75-110 s once after an install, a few seconds after)",
          file=sys.stderr)
    done = warm_up(log=lambda line: print(f"lpbench: {line}", file=sys.stderr))
    print(f"kernels ready ({sum(seconds for _, seconds in done):.1f} s)")
    return 0


# -- parser ----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="lpbench", description="Hindsight-optimal bounds and online policies "
                "for LLM-inference scheduling.", epilog=EXIT_CODES_HELP,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"lpbench {__version__}")
    p.add_argument("--debug", action="store_true",
                   help="print the traceback of an internal error (also accepted after the command)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("validate", help="check instance files (exit 2 with one line per problem)")
    s.add_argument("files", nargs="+", metavar="FILE", help="instance files (JSON, format v1)")
    s.add_argument("-q", "--quiet", action="store_true", help="print nothing for valid files")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("simulate", help="simulate an online policy; the schedule is verified")
    s.add_argument("instance", help="instance file")
    s.add_argument("--policy", required=True, help="see `lpbench list policies` (required)")
    s.add_argument("--seed", type=SEED, default=0, help="RNG seed of randomised policies (default 0)")
    s.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="policy parameter, e.g. alpha=0.3 (repeatable)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--out", type=OUT_FILE, help="write the schedule (and metrics) to this JSON file")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")
    s.set_defaults(func=cmd_simulate)

    s = sub.add_parser("verify", help="check a schedule against an instance and recompute its metrics")
    s.add_argument("instance", help="the instance file the schedule was made for")
    s.add_argument("schedule", help="a schedule file written by simulate/solve --out")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser("solve", help="solve a hindsight model; verify the schedule; report competitive ratios")
    s.add_argument("instance", help="instance file")
    s.add_argument("--formulation", help="see `lpbench list formulations` (default: latency-ip for the slot "
                   "model, batch-bound for the batch model)")
    s.add_argument("--solver", help="a profile of solvers.toml (default: the formulation's native solver, "
                   "cpsat for latency-cp and infermax-csp, else highs)")
    s.add_argument("--time-limit", type=POSITIVE_FLOAT, help="seconds (default: the profile's time_limit)")
    s.add_argument("--policies", help="comma-separated policies to compare (default: all applicable)")
    s.add_argument("--seed", type=SEED, default=0, help="RNG seed of randomised policies (default 0)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--out", type=OUT_FILE, help="write the report and the optimal schedule to this JSON file")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    s.set_defaults(func=cmd_solve)

    s = sub.add_parser("export", help="write a formulation as an LP or MPS file")
    s.add_argument("instance", help="instance file")
    s.add_argument("--formulation", default="latency-ip",
                   help="a linear formulation, see `lpbench list formulations` (default latency-ip)")
    s.add_argument("--format", choices=["lp", "mps"], default="lp", help="file format (default lp)")
    s.add_argument("--out", required=True, help="the file to write; must end with .lp or .mps as --format")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing regular file")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("generate", help="write seeded synthetic instances")
    s.add_argument("kind", choices=["jaillet-model1", "jaillet-model2", "poisson", "infermax-uniform",
                                    "infermax-mix", "infermax-csp51"],
                   help="seed 004 §5.1 models 1/2 (slot); Poisson arrivals with trace lengths (batch); seed 003 "
                        "uniform (I, O, B), S/L mixes (§4.6), the §5.1 CSP family")
    s.add_argument("--seed", type=SEED, default=0, help="RNG seed (default 0)")
    s.add_argument("--count", type=_int_type(1, 100_000, "a positive integer up to 100000"), default=1,
                   help="instances to write (instance k uses rng([seed, k]); default 1, at most 100000)")
    s.add_argument("--out", required=True, help="directory (created if missing)")
    s.add_argument("--force", action="store_true", help="overwrite existing files")
    g = s.add_argument_group("poisson")
    g.add_argument("--rate", type=POSITIVE_FLOAT, help="arrivals per second (required)")
    g.add_argument("--requests", type=POSITIVE_INT, help="requests per instance (required)")
    g.add_argument("--memory", type=POSITIVE_INT,
                   help="KV capacity in tokens (required for poisson; infermax default 100000)")
    g.add_argument("--lengths", help="trace CSV (ContextTokens,GeneratedTokens) or JSON length table (required)")
    g.add_argument("--cost-model", default="infermax-llama2-7b-a100",
                   help="a profile of models/*.toml (default infermax-llama2-7b-a100)")
    g.add_argument("--token-budget", type=POSITIVE_INT,
                   help="batch token budget C (default: none for poisson, 4096 for infermax)")
    g = s.add_argument_group("infermax")
    g.add_argument("--I", type=POSITIVE_INT,
                   help="input length (required for uniform; csp51: one I instead of 1..1024)")
    g.add_argument("--O", type=POSITIVE_INT, help="output length (required for uniform)")
    g.add_argument("--B", type=POSITIVE_INT, help="number of requests (required for uniform; mix, default 64)")
    g.add_argument("--mix", help="one of the six pairs, e.g. LILO+SISO (default: all six)")
    s.set_defaults(func=cmd_generate)
    remember_parser(s)

    cli_capacity.add_parsers(sub)

    s = sub.add_parser("list", help="list registered models, policies, formulations or solver profiles")
    s.add_argument("what", choices=["models", "policies", "formulations", "solvers"], help="what to list")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("warmup", help="compile the exact search's and the bounds' kernels once after an install "
                       "(a run under a time limit skips a search whose compilation would not fit)")
    s.set_defaults(func=cmd_warmup)
    __import__("lpbench.cli_traces").cli_traces.add_parsers(sub)  # import, calibrate, profile (issue 11)
    __import__("lpbench.cli_fluid").cli_fluid.add_parsers(sub)  # seed 001: generate fluid, throughput
    __import__("lpbench.cli_bench").cli_bench.add_parsers(sub)  # bench, compare, table, plot
    return p


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """lpbench's own warnings as one line on stderr; any other keeps Python's format."""
    if issubclass(category, LpbenchWarning):
        print(f"lpbench: warning: {message}", file=sys.stderr if file is None else file)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = _show_warning
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # accepted anywhere on the line
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) or a usage error (2): a code, not an exception
        return e.code if isinstance(e.code, int) else EXIT_INPUT
    try:
        return args.func(args)
    except InputError as e:
        for line in e.lines():
            print(f"lpbench: {line}", file=sys.stderr)
        return EXIT_INPUT
    except PolicyDiverged as e:
        print(f"lpbench: {e}; the policy does not finish this instance", file=sys.stderr)
        return EXIT_VERDICT
    except KeyboardInterrupt:
        print("lpbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # SolveBugError, PolicyError and anything unforeseen: a bug
        extra = OPTIONAL_EXTRAS.get((getattr(e, "name", None) or "").split(".")[0])
        if isinstance(e, ModuleNotFoundError) and extra:        # a plain install without the extra: not a bug
            print(f"lpbench: {args.command}: needs {e.name}, an optional dependency (pip install "
                  f"'lpbench[{extra}]')", file=sys.stderr)
            return EXIT_INPUT
        if isinstance(e, OSError) and getattr(e, "filename", None) is not None:    # a path the system refused
            path = str(e.filename)
            shown = path if len(path) <= 120 else f"{path[:60]}...{path[-40:]} ({len(path)} characters)"
            print(f"lpbench: {shown}: cannot use this path: {e.strerror or e}", file=sys.stderr)
            return EXIT_INPUT
        if debug:
            import traceback

            traceback.print_exc()
        what = ("internal inconsistency" if isinstance(e, (SolveBugError, PolicyError))
                else f"internal error ({type(e).__name__})")
        msg = " ".join(str(e).split())[:300]
        print(f"lpbench: {what}: {msg} (a bug, please report"
              + ("" if debug else "; rerun with --debug for the traceback") + ")", file=sys.stderr)
        return EXIT_INTERNAL


def console_main() -> None:
    """The ``lpbench`` script. A solver thread abandoned after Ctrl-C (see :mod:`lpbench.interrupt`)
    would keep the interpreter's teardown busy for seconds; exit at once instead."""
    from .interrupt import ABANDONED

    code = main()
    if any(t.is_alive() for t in ABANDONED):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    console_main()
