"""CLI commands of real data: ``lpbench import`` (traces -> instances), ``lpbench calibrate``
(timings -> cost-model profile) and ``lpbench profile`` (GPU timings of a transformer shape)."""
from __future__ import annotations

import sys


def _log(msg: str) -> None:
    print(f"lpbench: {msg}", file=sys.stderr, flush=True)


def cmd_import(args) -> int:
    from .costmodels import build
    from .outputs import write_instance_columns
    from .traces import ImportSpec, import_trace

    spec = ImportSpec.for_format(
        args.format, arrival=args.arrival, prompt=args.prompt, output=args.output, time_unit=args.time_unit,
        start=args.start, end=args.end, limit=args.limit, rate_scale=args.rate_scale, max_context=args.max_context,
        memory=args.memory, cost_model=args.cost_model, token_budget=args.token_budget, skip_bad=args.skip_bad,
        licence=args.licence, attribution=args.attribution, name=args.name)
    build(spec.cost_model, path="--cost-model")  # an unknown profile fails before the trace is read
    head, cols = import_trace(args.path, spec, argv=sys.argv[1:], progress=lambda n: _log(f"{n:,} rows read"))
    write_instance_columns(args.out, head, cols, force=args.force)
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


def add_parsers(sub) -> None:
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
