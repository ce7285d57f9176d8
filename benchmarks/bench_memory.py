"""Peak memory of the in-memory verified path on 1M texts with the default features
(character 5-grams): ``sh.near_duplicate_texts(texts, 0.7)`` with its default memory limit
and with ``memory_limit="2GB"``, each in its own process under ``/usr/bin/time -v``.

Run: ``python -m benchmarks.bench_memory [--n 1000000]``. The texts are
:func:`benchmarks.corpus.real_like` (the end-to-end corpus); they alone hold about 1.1 GB
of a process's memory at 1M, and count against the limit.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

from ._common import ROOT, save, table

LIMITS = (None, "2GB")


def _child(n: int, limit: str | None) -> None:
    import time

    import simhash_nb as sh

    from .corpus import real_like

    texts = real_like(n, 0)
    t = time.perf_counter()
    pairs = sh.near_duplicate_texts(texts, 0.7, memory_limit=limit)
    print(json.dumps({"seconds": time.perf_counter() - t, "pairs": len(pairs), "k": pairs.k}))


def run(n: int, limit: str | None) -> dict:
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "benchmarks.bench_memory",
           "--child", str(n), limit or "default"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", out.stderr)
    parts = [float(x) for x in wall.group(1).split(":")]
    got.update(limit=limit or "default", peak_rss_gb=int(rss.group(1)) / 1024**2,
               wall_s=sum(p * 60**i for i, p in enumerate(reversed(parts))))
    return got


def report(res: dict) -> str:
    rows = [[r["limit"], f"{r['seconds']:.1f}", f"{r['wall_s']:.1f}", f"{r['peak_rss_gb']:.2f}",
             f"{r['pairs']:,}", r["k"]] for r in res["runs"]]
    head = (f"`sh.near_duplicate_texts` on {res['n']:,} real-like texts, character 5-grams "
            "(the default), J >= 0.7; each run its own process")
    return head + "\n\n" + table(rows, ["memory_limit", "call s", "process s", "peak RSS GB",
                                        "pairs", "k"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        n, limit = args.child
        _child(int(n), None if limit == "default" else limit)
        return
    res = {"n": args.n, "runs": [run(args.n, limit) for limit in LIMITS]}
    print(save("memory", res))
    print(report(res))


if __name__ == "__main__":
    main()
