"""The ``lpbench`` command line: a thin layer over the library.

Exit codes: 0 success; 1 a schedule that fails verification or a solve that found nothing;
2 bad input (one line per problem: field, value, what was expected; never a traceback).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__
from .errors import InputError, PolicyError
from .errors import PolicyDiverged
from .solve import SolveBugError


def _print_metrics(metrics: dict, out=sys.stdout) -> None:
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
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--param: expected KEY=VALUE, got {item!r}")
        try:
            params[key] = float(value)
        except ValueError:
            raise InputError(f"--param {key}: must be a number, got {value!r}") from None
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
    from .instance import load_instance
    from .outputs import write_json

    inst = load_instance(args.instance)
    if args.out and os.path.exists(args.out) and not args.force:
        raise InputError(f"--out: {args.out} already exists; choose another path or pass --force to overwrite")
    res, ver = run_policy(inst, args.policy, args.seed, progress=None if args.json else _progress,
                          params=parse_params(args.param))
    if not args.json and sys.stderr.isatty():
        print(file=sys.stderr)
    report = {"policy": args.policy, "instance": inst.name, "verified": ver.feasible,
              "violations": ver.violations, "simulate_seconds": res.seconds, "metrics": ver.metrics}
    if args.out:
        write_json(args.out, {**res.schedule.to_dict(inst), "policy": args.policy, "seed": args.seed,
                              "verified": ver.feasible, "metrics": ver.metrics}, force=args.force)
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


def cmd_verify(args) -> int:
    from .instance import load_instance, read_json
    from .schedule import Schedule
    from .verify import verify

    inst = load_instance(args.instance)
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


def cmd_solve(args) -> int:
    from .instance import load_instance
    from .outputs import write_json
    from .solve import solve_instance

    inst = load_instance(args.instance)
    if args.out and os.path.exists(args.out) and not args.force:
        raise InputError(f"--out: {args.out} already exists; choose another path or pass --force to overwrite")
    policies = None if args.policies is None else [p for p in args.policies.split(",") if p]
    rep = solve_instance(inst, args.formulation, args.solver, args.time_limit, policies, args.seed,
                         log=None if args.quiet else _log)
    schedule = rep.pop("_schedule")
    if args.out:
        out = dict(rep)
        if schedule is not None:
            out.update(schedule.to_dict(inst))
        write_json(args.out, out, force=args.force)
    if args.json:
        print(json.dumps(rep))
    else:
        kind = "exact model" if rep["exact"] else "relaxation (certified lower bound)"
        print(f"{inst.name}: {rep['formulation']} ({kind}) with {rep['solver']} ({rep['backend']}): {rep['status']}")
        print(f"  objective ({rep['objective_metric']}) {_fmt(rep['objective'])}")
        print(f"  bound                  {_fmt(rep['bound'])}"
              + (f" ({rep['bound_source']})" if rep["bound_source"] not in (None, rep["backend"]) else ""))
        print(f"  gap                    {_fmt(rep['gap'])}")
        print(f"  build {rep['build_seconds']:.3f}s, solve {rep['solve_seconds']:.3f}s; {rep['variables']} variables, "
              f"{rep['rows']} rows" + (f"; warm start from {rep['warm_start']}" if rep["warm_start"] else ""))
        if rep["message"]:
            print(f"  note: {rep['message']}")
        if rep["verified"] is not None:
            print(f"  schedule verified: {'yes' if rep['verified'] else 'no schedule'}")
        if rep["ratios"]:
            proven = rep["exact"] and rep["status"] == "optimal"
            head = "policy / optimum" if proven else "certified interval [policy / best known, policy / bound]"
            print(f"  competitive ratios ({head}):")
            for name, r in rep["ratios"].items():
                rng = _fmt(r["lower"]) if proven else f"[{_fmt(r['lower'])}, {_fmt(r['upper'])}]"
                print(f"    {name:<22} {_fmt(r['objective']):>12}   {rng}")
        for name, why in rep["skipped_policies"].items():
            print(f"    {name:<22} skipped: {why}")
        if args.out:
            print(f"  written to {args.out}")
    return 0 if rep["status"] in ("optimal", "feasible", "time_limit", "licence_limit") else 1


def cmd_export(args) -> int:
    from .formulations import FORMULATIONS
    from .instance import load_instance
    from .solve import check_applicable
    from .solvers.highs import to_highs

    inst = load_instance(args.instance)
    cls = check_applicable(inst, args.formulation)
    if os.path.exists(args.out) and not args.force:
        raise InputError(f"--out: {args.out} already exists; choose another path or pass --force to overwrite")
    suffix = "." + args.format
    if not args.out.endswith(suffix):
        raise InputError(f"--out: must end with {suffix} for --format {args.format}, got {args.out}")
    if getattr(cls, "native_backend", None) or getattr(cls, "closed_form", False):
        raise InputError(f"--formulation: {args.formulation!r} is not a linear model; export takes one of "
                         + ", ".join(n for n, c in FORMULATIONS.items()
                                     if not getattr(c, "native_backend", None) and not getattr(c, "closed_form", False)))
    incumbent = None
    if getattr(cls, "needs_incumbent", False):  # its horizon comes from the best verified policy schedule
        from .solve import run_policies

        runs = run_policies(inst, None, cls.objective_metric)
        incumbent = min(r.objective for r in runs) if runs else None
    model = cls(inst, incumbent).build()
    h = to_highs(model)
    cols, rows = model.names()
    for j, name in enumerate(cols):
        h.passColName(j, name)
    for r, name in enumerate(rows):
        h.passRowName(r, name)
    h.writeModel(args.out)
    print(f"{args.out}: {args.formulation} for {inst.name}, {model.n_vars} variables, {model.n_rows} rows "
          f"(objective constant {model.offset:g} included" + ("" if model.unit == 1.0 else
                                                               f"; one objective unit = {model.unit:g} s") + ")")
    return 0


def cmd_generate(args) -> int:
    from pathlib import Path

    from .instance import parse_instance
    from .outputs import write_json

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
            datas = [infermax.mix(p, args.B or 64, args.seed, args.memory or 100_000, **kw) for p in pairs]
        else:
            for flag, v in (("--I", args.I), ("--O", args.O), ("--B", args.B)):
                if v is None or v <= 0:
                    raise InputError(f"{flag}: required and positive for 'infermax-uniform', got {v}")
            datas = [infermax.uniform(args.I, args.O, args.B, args.memory or 100_000, **kw)]
        make = None
    else:
        from .generators import poisson

        for flag, v in (("--rate", args.rate), ("--requests", args.requests), ("--memory", args.memory)):
            if v is None or v <= 0:
                raise InputError(f"{flag}: required and positive for 'poisson', got {v}")
        if not args.lengths:
            raise InputError("--lengths: required for 'poisson' (a trace CSV or a JSON length table)")
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
    for d, p in zip(datas, paths):
        parse_instance(d)  # a generator bug must not write an invalid file
        write_json(p, d, force=True)
        print(p)
    return 0


def cmd_list(args) -> int:
    if args.what == "models":
        from .costmodels import FORMS, profile_names, read_profile

        print("profiles (models/*.toml):")
        for name in profile_names():
            prof = read_profile(name)
            print(f"  {name:<34} form={prof['form']:<10} {prof.get('description', '')}")
        print("forms (inline {\"form\": NAME, ...}):")
        for name, cls in FORMS.items():
            print(f"  {name:<10} coefficients: {', '.join(cls.params) or '(none)'}")
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
    return 0


# -- parser ----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lpbench", description="Hindsight-optimal bounds and online policies "
                                "for LLM-inference scheduling.")
    p.add_argument("--version", action="version", version=f"lpbench {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("validate", help="check instance files (exit 2 with one line per problem)")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("-q", "--quiet", action="store_true", help="print nothing for valid files")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("simulate", help="simulate an online policy; the schedule is verified")
    s.add_argument("instance")
    s.add_argument("--policy", required=True, help="see `lpbench list policies`")
    s.add_argument("--seed", type=int, default=0, help="RNG seed of randomised policies (default 0)")
    s.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="policy parameter, e.g. alpha=0.3 (repeatable)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--out", help="write the schedule (and metrics) to this JSON file")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")
    s.set_defaults(func=cmd_simulate)

    s = sub.add_parser("verify", help="check a schedule against an instance and recompute its metrics")
    s.add_argument("instance")
    s.add_argument("schedule")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser("solve", help="solve a hindsight model; verify the schedule; report competitive ratios")
    s.add_argument("instance")
    s.add_argument("--formulation", help="see `lpbench list formulations` (default: latency-ip for the slot "
                   "model, batch-bound for the batch model)")
    s.add_argument("--solver", default="highs", help="a profile of solvers.toml (default highs)")
    s.add_argument("--time-limit", type=float, help="seconds (overrides the profile)")
    s.add_argument("--policies", help="comma-separated policies to compare (default: all applicable)")
    s.add_argument("--seed", type=int, default=0, help="RNG seed of randomised policies (default 0)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--out", help="write the report and the optimal schedule to this JSON file")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    s.set_defaults(func=cmd_solve)

    s = sub.add_parser("export", help="write a formulation as an LP or MPS file")
    s.add_argument("instance")
    s.add_argument("--formulation", default="latency-ip")
    s.add_argument("--format", choices=["lp", "mps"], default="lp")
    s.add_argument("--out", required=True)
    s.add_argument("--force", action="store_true")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("generate", help="write seeded synthetic instances")
    s.add_argument("kind", choices=["jaillet-model1", "jaillet-model2", "poisson", "infermax-uniform",
                                    "infermax-mix", "infermax-csp51"],
                   help="seed 004 §5.1 models 1/2 (slot); Poisson arrivals with trace lengths (batch); seed 003 "
                        "uniform (I, O, B), S/L mixes (§4.6), the §5.1 CSP family")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--count", type=int, default=1, help="instances to write (instance k uses rng([seed, k]))")
    s.add_argument("--out", required=True, help="directory")
    s.add_argument("--force", action="store_true", help="overwrite existing files")
    g = s.add_argument_group("poisson")
    g.add_argument("--rate", type=float, help="arrivals per second")
    g.add_argument("--requests", type=int, help="requests per instance")
    g.add_argument("--memory", type=int, help="KV capacity in tokens")
    g.add_argument("--lengths", help="trace CSV (ContextTokens,GeneratedTokens) or JSON length table")
    g.add_argument("--cost-model", default="infermax-llama2-7b-a100")
    g.add_argument("--token-budget", type=int)
    g = s.add_argument_group("infermax")
    g.add_argument("--I", type=int, help="input length (uniform; csp51: one I instead of 1..1024)")
    g.add_argument("--O", type=int, help="output length (uniform)")
    g.add_argument("--B", type=int, help="number of requests (uniform; mix, default 64)")
    g.add_argument("--mix", help="one of the six pairs, e.g. LILO+SISO (default: all six)")
    s.set_defaults(func=cmd_generate)

    s = sub.add_parser("list", help="list registered models, policies, formulations or solver profiles")
    s.add_argument("what", choices=["models", "policies", "formulations", "solvers"])
    s.set_defaults(func=cmd_list)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InputError as e:
        for line in e.lines():
            print(f"lpbench: {line}", file=sys.stderr)
        return 2
    except SolveBugError as e:
        print(f"lpbench: internal inconsistency (a bug, please report): {e}", file=sys.stderr)
        return 1
    except PolicyDiverged as e:
        print(f"lpbench: {e}; the policy does not finish this instance", file=sys.stderr)
        return 1
    except PolicyError as e:
        print(f"lpbench: policy error (a bug, please report): {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("lpbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
