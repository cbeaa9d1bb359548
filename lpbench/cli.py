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


def run_policy(inst, name: str, seed: int = 0, progress=None):
    """Simulate one policy and verify its schedule. Returns (SimResult, VerifyResult)."""
    from .policies import make_policy
    from .sim import simulate
    from .verify import verify

    policy = make_policy(name, inst, seed=seed)
    res = simulate(inst, policy, progress=progress)
    return res, verify(inst, res.schedule)


def cmd_simulate(args) -> int:
    from .instance import load_instance
    from .outputs import write_json

    inst = load_instance(args.instance)
    if args.out and os.path.exists(args.out) and not args.force:
        raise InputError(f"--out: {args.out} already exists; choose another path or pass --force to overwrite")
    res, ver = run_policy(inst, args.policy, args.seed, progress=None if args.json else _progress)
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
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--out", help="write the schedule (and metrics) to this JSON file")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")
    s.set_defaults(func=cmd_simulate)

    s = sub.add_parser("verify", help="check a schedule against an instance and recompute its metrics")
    s.add_argument("instance")
    s.add_argument("schedule")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser("list", help="list registered models or policies")
    s.add_argument("what", choices=["models", "policies"])
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
