"""Fingerprint and search speed of this tree against another revision, in the same run.

For a refactoring that must not change speed (issue 24: "benchmarks within noise"):
each round runs, in turn, a fresh process of each tree (the other revision checked out
into a temporary ``git worktree``, with its own Numba cache), which warms its kernels
(one untimed call of each at full size) and then times ``sh.fingerprint`` of 200,000
real-like texts (character 5-grams, the default) and ``sh.near_duplicates`` of 1,000,000
random 64-bit fingerprints at k = 12 with recall 0.99, each ``--repeats`` times; the
table gives the medians over all rounds.

    python -m benchmarks.bench_revisions [--base REV] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ._common import ROOT, table

_CHILD = r"""
import json, sys, time
import numpy as np
import simhash_nb as sh
from simhash_nb.datasets import load_sample
base = [t for name in ("fortunes", "gospels", "licences") for t in load_sample(name)["text"]]
texts = [base[i % len(base)] + f" {i}" for i in range(200_000)]
fps = np.random.default_rng(0).integers(0, 2**64, 1_000_000, dtype=np.uint64)
sh.fingerprint(texts); sh.near_duplicates(fps, 12, recall=0.99)  # warm: every kernel loaded
out = {"fingerprint": [], "search": []}
for _ in range(int(sys.argv[1])):
    t = time.perf_counter(); sh.fingerprint(texts)
    out["fingerprint"].append(time.perf_counter() - t)
    t = time.perf_counter(); sh.near_duplicates(fps, 12, recall=0.99)
    out["search"].append(time.perf_counter() - t)
print(json.dumps(out))
"""


def run_child(tree: Path, cache: str, repeats: int) -> dict:
    res = subprocess.run([sys.executable, "-c", _CHILD, str(repeats)], cwd=tree, check=True,
                         capture_output=True, text=True,
                         env=dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(tree)))
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="a3e3d06", help="the revision to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3, help="timed calls a process")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-rev-") as tmp:
        old = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "-f", "--detach", str(old), args.base],
                       cwd=ROOT, check=True, capture_output=True)
        try:
            times = {"base": {"fingerprint": [], "search": []},
                     "head": {"fingerprint": [], "search": []}}
            for _ in range(args.rounds):
                for name, tree in (("base", old), ("head", ROOT)):
                    got = run_child(tree, str(Path(tmp) / f"cache-{name}"), args.repeats)
                    for what, xs in got.items():
                        times[name][what] += xs
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT,
                           capture_output=True)
    rows = []
    for what in ("fingerprint", "search"):
        b = statistics.median(times["base"][what])
        h = statistics.median(times["head"][what])
        rows.append([what, f"{b:.3f}", f"{h:.3f}", f"{h / b:.2f}"])
    print(table(rows, ["case", f"{args.base} s", "HEAD s", "HEAD / base"]))
    return times


if __name__ == "__main__":
    main()
