"""CLI for seed 001: ``lpbench generate fluid`` and ``lpbench throughput`` (see :mod:`lpbench.fluid`)."""
from __future__ import annotations

import json
import sys

from .errors import InputError


def cmd_generate_fluid(args) -> int:
    from pathlib import Path

    from .cli import refuse_unused_generate_options
    from .generators import fluid as gen
    from .instance import load_instance, parse_instance
    from .outputs import write_json

    refuse_unused_generate_options(args)
    if (args.types is None) == (args.from_instance is None):
        raise InputError("generate fluid: give exactly one of --types FILE (an instance with a types block) "
                         "or --from INSTANCE (types derived from its requests)")
    if args.horizon is None:
        raise InputError("--horizon: required for 'fluid' (time units of the cost model)")
    if args.count < 1:
        raise InputError(f"--count: must be a positive integer, got {args.count}")
    if args.types is not None:
        base = load_instance(args.types)
        if base.types is None:
            raise InputError("--types: the file has no types block", source=args.types)
        types = base.types
    else:
        base = load_instance(args.from_instance)
        types = gen.derive_types(base, args.bin_width, args.bins)
    datas = [gen.instance(base, types, args.horizon, args.seed, k) for k in range(args.count)]
    out = Path(args.out)
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


def cmd_throughput(args) -> int:
    from .cli import parse_params, run_policy
    from .instance import load_instance, require_requests
    from .outputs import check_target, write_json
    from .throughput import measure

    if args.out:
        check_target(args.out, args.force, make_parents=False)  # refuse a bad --out before the simulation
    inst = load_instance(args.instance)
    require_requests(inst, "throughput", args.instance)
    res, ver = run_policy(inst, args.policy, args.seed, params=parse_params(args.param))
    if not ver.feasible:
        print(f"lpbench: policy {args.policy} produced an infeasible schedule (a bug): {ver.violations[0]}",
              file=sys.stderr)
        return 1
    rep = {"instance": inst.name, "policy": args.policy, "verified": True, "simulate_seconds": res.seconds,
           **measure(inst, ver, args.horizon, args.warmup)}
    if args.out:
        write_json(args.out, rep, force=args.force, make_parents=False)
    if args.json:
        print(json.dumps(rep))
    else:
        for k, v in rep.items():
            print(f"  {k:<26} {v:.6g}" if isinstance(v, float) else f"  {k:<26} {v}")
    return 0


def add_parsers(sub) -> None:
    from .cli import NON_NEGATIVE_FLOAT, OUT_FILE, POSITIVE_FLOAT, POSITIVE_INT, SEED  # the shared checks (exit 2)

    s = sub.add_parser("throughput", help="simulate a policy, verify it, and measure throughput over a horizon "
                       "beside seed 001's bound")
    s.add_argument("instance")
    s.add_argument("--policy", required=True, help="see `lpbench list policies` (e.g. wait, nested-wait, fcfs)")
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help="policy parameter, e.g. B=448")
    s.add_argument("--seed", type=SEED, default=0)
    s.add_argument("--horizon", type=POSITIVE_FLOAT, help="window end T (default: the last arrival)")
    s.add_argument("--warmup", type=NON_NEGATIVE_FLOAT, default=0.0, help="window start t0 (default 0)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--out", type=OUT_FILE, help="write the report to this JSON file")
    s.add_argument("--force", action="store_true")
    s.set_defaults(func=cmd_throughput)

    # `lpbench generate fluid`: one more kind on the shared `generate` command, dispatched here
    gen = sub.choices["generate"]
    kind = next(a for a in gen._actions if a.dest == "kind")
    kind.choices = [*kind.choices, "fluid"]
    g = gen.add_argument_group("fluid (seed 001)")
    g.add_argument("--types", help="an instance file with a types block")
    g.add_argument("--from", dest="from_instance", help="derive the types from this instance's requests")
    g.add_argument("--horizon", type=POSITIVE_FLOAT, help="Poisson arrivals on [0, horizon)")
    g.add_argument("--bin-width", type=POSITIVE_INT, default=50, help="--from: output-length bin width (default 50)")
    g.add_argument("--bins", type=POSITIVE_INT, default=10, help="--from: number of bins, the last open (default 10)")
    other = gen.get_default("func")
    gen.set_defaults(func=lambda a: cmd_generate_fluid(a) if a.kind == "fluid" else other(a))
