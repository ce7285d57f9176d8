"""Run every benchmark in one process, one after the other, and print their tables.

``make bench`` runs this; ``python -m benchmarks.run --quick`` for a fast smoke run.
Each benchmark writes ``benchmarks/results/<name>.json``; ``benchmarks/report.py`` turns
them into the README's tables. Do not run it while other heavy work uses the machine.
"""

from __future__ import annotations

import argparse
import importlib
import sys

BENCHMARKS = ["bench_fingerprint", "bench_bitsums", "bench_search", "bench_large_k", "bench_widths",
              "bench_accessors", "bench_evaluate", "bench_features", "bench_distributed",
              "bench_distributed_verified",
              "bench_e2e", "bench_compare", "bench_cold", "bench_out_of_core",
              "bench_memory"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="*", help="benchmark module names to run")
    args = ap.parse_args(argv)
    failed = []
    for name in args.only or BENCHMARKS:
        try:
            mod = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError as e:
            print(f"== {name}: not available ({e})")
            continue
        print(f"== {name}", flush=True)
        try:
            mod.main(["--quick"] if args.quick else [])
        except Exception as e:  # keep going: one broken benchmark must not hide the others
            failed.append(name)
            print(f"== {name} failed: {e!r}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
