"""``lpbench capacity INSTANCE --policy NAME``: see :mod:`lpbench.capacity`."""
from __future__ import annotations

import json
import math

from .errors import InputError


def _slo(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"--slo: must be a positive number of seconds (median TTFT target), got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise InputError(f"--slo: must be a positive number of seconds (median TTFT target), got {text!r}")
    return v


def cmd_capacity(args) -> int:
    from .capacity import SearchConfig, log_stderr, search
    from .instance import load_instance, require_requests
    from .outputs import check_target, write_json

    slo = _slo(args.slo) if args.slo is not None else None
    inst = load_instance(args.instance)
    require_requests(inst, "capacity (its workload is the instance's requests)", args.instance)
    if args.out:
        check_target(args.out, args.force, make_parents=False)  # refuse a bad --out before the search
    from .cli import parse_params

    cfg = SearchConfig(requests=args.requests, seeds=args.seeds, threshold=args.threshold, iters=args.iters,
                       seed=args.seed, slo_ttft=slo, params=tuple(parse_params(args.param).items()))
    rep = search(inst, args.policy, cfg, workers=args.workers, log=None if args.quiet else log_stderr)
    if args.out:
        write_json(args.out, rep, force=args.force, make_parents=False)
    if args.json:
        print(json.dumps(rep))
    else:
        f = lambda v: "-" if v is None else f"{v:.6g}"  # noqa: E731
        params = "".join(f" {k}={v:g}" for k, v in rep["params"].items())
        print(f"{rep['instance']}: policy {rep['policy']}{params}, criterion: {rep['criterion']}")
        print(f"  capacity   {f(rep['capacity'])} requests/s ({f(rep['capacity_multiplier'])} x base rate "
              f"{f(rep['base_rate'])}; resolution {f(rep['resolution'])}), {f(rep['capacity_tokens_per_s'])} tokens/s")
        b = rep["bound_detail"]
        print(f"  bound      {f(rep['bound'])} requests/s" + (f" ({b['formulation']})" if b else " (none for this cost model)"))
        print(f"  ratio      {f(rep['ratio'])}")
        st = rep["stability"]
        print(f"  stability  {st['seeds']} seeds x {st['requests_per_run']} requests, threshold {st['threshold']:g} on "
              f"backlog slope / arrival rate; {len(st['probes'])} probes")
    return 0


def add_parsers(sub) -> None:
    from .cli import POSITIVE_INT, SEED  # the shared argument checks (exit 2, one line)

    s = sub.add_parser("capacity", help="largest stable (or SLO-meeting) arrival rate of a policy, by bisection")
    s.add_argument("instance", help="its (prompt, output) pairs and arrival rate define the workload")
    s.add_argument("--policy", required=True, help="see `lpbench list policies`")
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help="policy parameter (repeatable)")
    s.add_argument("--slo", help="median TTFT target in seconds; also P99 TBT <= each class's tbt_slo (seed 000)")
    s.add_argument("--requests", type=POSITIVE_INT, default=10000, help="arrivals per simulation (default 10000)")
    s.add_argument("--seeds", type=POSITIVE_INT, default=3, help="simulations per tested rate (default 3)")
    s.add_argument("--threshold", type=float, default=0.02,
                   help="largest mean backlog slope / arrival rate counted as stable (default 0.02)")
    s.add_argument("--iters", type=POSITIVE_INT, default=7, help="bisection steps below the bound (default 7)")
    s.add_argument("--seed", type=SEED, default=0, help="workload RNG seed (default 0)")
    s.add_argument("--workers", type=POSITIVE_INT, default=1, help="parallel simulations (default 1)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--out", help="write the JSON report to this file")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    s.set_defaults(func=cmd_capacity)
