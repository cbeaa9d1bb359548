"""Fuzz the command line with the Hypothesis properties of tests/test_cli_properties.py at scale
(issue 14): profile ``fuzz`` runs each of the four properties with ``--examples`` examples
(default 2,500, so >= 10,000 CLI runs in all) and reports examples, failures and time.

    python benchmarks/fuzz_cli.py [--examples 2500]

Exit 0 when every property holds; a failure prints Hypothesis's shrunk counterexample."""
from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=2500, help="examples per property (default 2500)")
    args = ap.parse_args()
    os.environ["LPBENCH_HYPOTHESIS_PROFILE"] = "fuzz"
    sys.path.insert(0, str(ROOT / "tests"))
    from hypothesis import settings

    import test_cli_properties as props

    failed = 0
    total_start = time.perf_counter()
    for name in ("test_instance_files", "test_schedule_files", "test_cli_arguments", "test_output_paths"):
        fn = settings(max_examples=args.examples)(getattr(props, name))
        before = props.EXAMPLES["count"]
        t0 = time.perf_counter()
        try:
            fn()
            verdict = "ok"
        except Exception:  # a property failed: Hypothesis has shrunk it; show it
            failed += 1
            verdict = "FAILED"
            traceback.print_exc()
        n = props.EXAMPLES["count"] - before
        print(f"{name:<22} {n:>6} CLI runs  {time.perf_counter() - t0:7.1f} s  {verdict}", flush=True)
    print(f"total {props.EXAMPLES['count']} CLI runs in {time.perf_counter() - total_start:.1f} s, "
          f"{failed} failing properties")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
