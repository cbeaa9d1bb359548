"""CLI commands of real data: ``lpbench import`` (traces -> instances), ``lpbench calibrate``
(timings -> cost-model profile) and ``lpbench profile`` (GPU timings of a transformer shape)."""
from __future__ import annotations

import sys

from .errors import InputError


def _log(msg: str) -> None:
    print(f"lpbench: {msg}", file=sys.stderr, flush=True)


def cmd_import(args) -> int:
    from .costmodels import build
    from .outputs import check_target, write_instance_columns
    from .traces import ImportSpec, import_trace

    spec = ImportSpec.for_format(
        args.format, arrival=args.arrival, prompt=args.prompt, output=args.output, time_unit=args.time_unit,
        start=args.start, end=args.end, limit=args.limit, rate_scale=args.rate_scale, max_context=args.max_context,
        memory=args.memory, cost_model=args.cost_model, token_budget=args.token_budget, skip_bad=args.skip_bad,
        licence=args.licence, attribution=args.attribution, name=args.name)
    check_target(args.out, args.force, make_parents=False)  # refuse a bad --out before the trace is read
    build(spec.cost_model, path="--cost-model")  # an unknown profile fails before the trace is read
    head, cols = import_trace(args.path, spec, argv=sys.argv[1:], progress=lambda n: _log(f"{n:,} rows read"))
    write_instance_columns(args.out, head, cols, force=args.force, make_parents=False)
    c = head["meta"]["import"]["counts"]
    print(f"{args.out}: {c['imported']} requests from {c['rows_read']} rows of {args.path} "
          f"(span {float(cols['arrival'][-1]):.6g} s)")
    for key in ("skipped_malformed", "outside_window", "prompt_raised_to_1", "output_raised_to_1",
                "prompt_truncated", "output_truncated", "dropped_exceeds_memory"):
        if c[key]:
            print(f"  {key:<24} {c[key]}")
    if c["limit_reached"]:
        print(f"  limit_reached            --limit {spec.limit}")
    for line in head["meta"]["import"].get("malformed_first", [])[:5]:
        print(f"  skipped {line}", file=sys.stderr)
    return 0


def cmd_calibrate(args) -> int:
    import shlex
    from pathlib import Path

    from .calibrate import calibrate, profile_toml, read_timings
    from .outputs import check_target, write_text

    if args.out and not args.out.endswith(".toml"):
        raise InputError(f"--out: must end with .toml (a profile for models/), got {args.out}")
    if args.out:
        check_target(args.out, args.force)  # refuse a bad --out before the fit (a new models/ folder is made)
    t = read_timings(args.timings, args.where, args.exclude)
    best, fits = calibrate(t, args.form, args.folds, args.seed, args.loss == "relative", args.layers, args.phi)
    print(f"{args.timings}: {t.rows} rows, {len(t)} distinct batches ({t.layout}); "
          f"{args.folds}-fold cross-validation, {args.loss} least squares, coefficients >= 0")
    print(f"  {'form':<10} {'in-sample MAPE':>14} {'held-out R2':>12} {'MAPE':>8} {'worst':>8}")
    for f in fits:
        h = f.heldout
        mark = " <- chosen" if f is best and len(fits) > 1 else ""
        print(f"  {f.form:<10} {100 * f.train['mape']:>13.2f}% {h['r2']:>12.4f} {100 * h['mape']:>7.2f}% "
              f"{100 * h['worst_rel_error']:>7.2f}%{mark}")
    print("  coefficients: " + ", ".join(f"{k}={v:.6g}" for k, v in best.coefficients.items()))
    if args.out:
        command = "lpbench " + " ".join(shlex.quote(a) for a in args.argv if a != "--force")
        desc = args.description or f"{best.form} form calibrated on {Path(args.timings).name}; seconds"
        write_text(args.out, profile_toml(best, t, args.timings, command, desc, args.where, args.exclude,
                                          args.folds, args.seed, args.loss, args.note), force=args.force)
        print(f"  profile written to {args.out} (held-out MAPE {100 * best.heldout['mape']:.2f} %)")
    return 0


def add_parsers(sub) -> None:
    from .cli import SEED  # the shared argument check (exit 2, one line)

    s = sub.add_parser("import", help="import a request trace (Azure LLM traces, or any CSV/JSONL) as an instance",
                       description="Stream a trace into a batch-model instance. Clipping rules (counted in the "
                       "output and in meta.import.counts): window, zero lengths -> 1, --max-context truncation, "
                       "drop requests above --memory, --limit. See lpbench/traces.py.")
    s.add_argument("format", choices=["azure", "csv", "jsonl"],
                   help="azure: TIMESTAMP,ContextTokens,GeneratedTokens (2023/2024, CC-BY-4.0); csv/jsonl: "
                        "name the columns with --arrival/--prompt/--output")
    s.add_argument("path")
    s.add_argument("--out", required=True, help="instance JSON to write")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")
    s.add_argument("--arrival", help="arrival-time column (csv/jsonl)")
    s.add_argument("--prompt", help="prompt-length column (csv/jsonl)")
    s.add_argument("--output", help="output-length column (csv/jsonl)")
    s.add_argument("--time-unit", choices=["s", "ms", "us", "iso"],
                   help="unit of the arrival column (default s; iso = ISO-8601 date-times, azure's)")
    s.add_argument("--start", type=float, help="keep arrivals >= S seconds after the first request")
    s.add_argument("--end", type=float, help="keep arrivals < S seconds after the first request")
    s.add_argument("--limit", type=int, help="stop after N imported requests")
    s.add_argument("--rate-scale", type=float, default=1.0, help="divide arrival times by X (X=2: twice the rate)")
    s.add_argument("--max-context", type=int, help="truncate prompts to T tokens and outputs so that "
                   "prompt + output - 1 <= T")
    s.add_argument("--memory", type=int, default=100_000,
                   help="KV capacity M in tokens (default 100000, seed 003); requests above it are dropped")
    s.add_argument("--cost-model", default="infermax-llama2-7b-a100", help="profile name (lpbench list models)")
    s.add_argument("--token-budget", type=int, help="limits.token_budget C of the instance")
    s.add_argument("--skip-bad", action="store_true", help="skip malformed rows (counted) instead of exit 2")
    s.add_argument("--licence", help="licence of the trace, recorded in meta (azure: CC-BY-4.0)")
    s.add_argument("--attribution", help="citation of the trace, recorded in meta")
    s.add_argument("--name", help="instance name (default: the file's stem)")
    s.set_defaults(func=cmd_import)

    s = sub.add_parser("calibrate", help="fit a cost-model form to measured batch timings; write a models/ profile",
                       description="Sign-constrained least squares (scipy lsq_linear, coefficients >= 0) of a "
                       "cost-model form to batch timings (lpbench profile CSV or splitwise perf_model.csv); "
                       "R2, MAPE and worst relative error on held-out batches. See lpbench/calibrate.py.")
    s.add_argument("timings", help="CSV: lpbench timings v1 (lpbench profile) or splitwise perf_model.csv")
    s.add_argument("--form", default="auto", help="linear, piecewise, staircase, infermax or auto (lowest held-out "
                   "MAPE; default)")
    s.add_argument("--out", help="profile to write, e.g. models/NAME.toml")
    s.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")
    s.add_argument("--where", action="append", metavar="COL=VALUE[,COL=VALUE]", help="keep only matching rows")
    s.add_argument("--exclude", action="append", metavar="COL=VALUE[,COL=VALUE]",
                   help="drop rows matching every pair (repeatable)")
    s.add_argument("--folds", type=int, default=4, help="K of the K-fold cross-validation (default 4)")
    s.add_argument("--seed", type=SEED, default=0, help="seed of the fold assignment (default 0)")
    s.add_argument("--loss", choices=["relative", "absolute"], default="relative")
    s.add_argument("--layers", type=int, default=1, help="infermax: layers L (coefficients per layer; default 1)")
    s.add_argument("--phi", type=float, default=0.0, help="infermax: GQA batching overhead (default 0)")
    s.add_argument("--description", help="profile description (lpbench list models)")
    s.add_argument("--note", help="a comment line for the profile (e.g. why rows were excluded)")
    s.set_defaults(func=cmd_calibrate, argv=sys.argv[1:])

    from .profile import SHAPES, add_arguments, cmd_profile

    s = sub.add_parser("profile", help="time prefill, decode and mixed batches of a transformer shape (needs torch)",
                       description="Random-weight Llama-architecture decoder built from a config "
                       f"({', '.join(SHAPES)}); writes the timings CSV that lpbench calibrate reads. "
                       "See lpbench/profile.py.")
    add_arguments(s)
    s.set_defaults(func=cmd_profile)
