"""The cold demo: ``simhash-nb demo`` on an empty Numba cache (a first run), against warm.

Each run is a fresh process: ``simhash-nb demo`` with ``NUMBA_CACHE_DIR`` set to a new
empty folder (cold), then on the cache it left (warm). Cases are interleaved,
``--repeats`` rounds; wall-clock medians and CPU seconds. The target is a cold demo of
at most 25 s.

    python -m benchmarks.bench_cold [--quick]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from ._common import save, table

TARGET_S = 25.0

_CODE = ("import sys; from simhash_nb.cli import main; "
         "sys.exit(main(['demo', '--out', sys.argv[1]]))")


def run_demo(cache: str, out: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds with children) of one demo run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", _CODE, out], check=True,
                   env=dict(os.environ, NUMBA_CACHE_DIR=cache), capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="one round")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    rounds = 1 if args.quick else args.repeats
    runs: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            cache = tempfile.mkdtemp(dir=tmp)
            runs["cold"].append(run_demo(cache, os.path.join(tmp, f"out{r}c")))
            runs["warm"].append(run_demo(cache, os.path.join(tmp, f"out{r}w")))
    res = {case: {"wall_s": statistics.median(w for w, _ in v),
                  "cpu_s": statistics.median(c for _, c in v),
                  "runs_wall_s": [w for w, _ in v]} for case, v in runs.items()}
    res["target_s"] = TARGET_S
    res["cores"] = os.cpu_count()
    save("cold", res)
    print(report(res))
    return res


def report(res: dict) -> str:
    rows = [[name, f"{res[key]['wall_s']:.1f} s", f"{res[key]['cpu_s']:.1f} s"]
            for key, name in (("cold", "cold cache (first run)"), ("warm", "warm cache"))]
    met = "met" if res["cold"]["wall_s"] <= res["target_s"] else "missed"
    return "\n".join([
        f"`simhash-nb demo` in a fresh process, {res['cores']} cores (medians)", "",
        table(rows, ["case", "wall", "CPU"]), "",
        f"target: cold demo <= {res['target_s']:.0f} s: {met}"])


if __name__ == "__main__":
    main()
