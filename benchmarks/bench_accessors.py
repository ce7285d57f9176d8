"""Overhead of the pandas accessor over the core fingerprint kernel.

Run: ``python -m benchmarks.bench_accessors [--quick]``. Times
``Series.simhash.fingerprint()`` on Arrow-backed strings (``string[pyarrow]`` and pandas
3's default ``str``) against the core path on the same pyarrow array
(``simhash_nb.fingerprint._fingerprint_texts``), and prints the ratio; the target is an
overhead of at most 10%. Object-dtype Series are timed too, for information: they pay
one conversion of Python strings to UTF-8. Writes ``benchmarks/results/accessors.json``.
"""

from __future__ import annotations

import argparse
import statistics

import pandas as pd
import pyarrow as pa

import simhash_nb as sh
from simhash_nb.fingerprint import _fingerprint_texts

from ._common import load_texts, median_time, save, table


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer texts and repeats")
    args = ap.parse_args(argv)
    texts = load_texts("kjv_verses.jsonl.gz") + load_texts("fortunes_en.jsonl.gz")
    texts = texts[:20000] if args.quick else texts * 2
    repeats = 5 if args.quick else 9
    spec = sh.make_spec()
    arr = pa.array(texts, pa.large_string())
    mb = arr.nbytes / 1e6

    series = {name: pd.Series(texts, dtype=name, index=pd.RangeIndex(len(texts)) * 2)
              for name in ("string[pyarrow]", "str", "object")}
    cases = {"core": lambda: _fingerprint_texts(arr, spec, None)}
    cases.update({name: (lambda s=s: s.simhash.fingerprint()) for name, s in series.items()})
    # interleaved rounds, so that load from other processes hits every case alike
    times = {name: [] for name in cases}
    for f in cases.values():
        f()
    for _ in range(repeats):
        for name, f in cases.items():
            times[name].append(median_time(f, 1, warmup=0))
    core_s = statistics.median(times["core"])
    rows, result = [], {"n_docs": len(texts), "mb": mb, "core_s": core_s}
    for name in series:
        t = statistics.median(times[name])
        ratio = t / core_s
        result[name] = {"s": t, "ratio": ratio}
        rows.append([name, f"{t * 1000:.1f}", f"{core_s * 1000:.1f}", f"{ratio:.3f}",
                     f"{(ratio - 1) * 100:+.1f}%"])
    print(f"{len(texts):,} texts, {mb:.1f} MB, default spec (char 4-grams, 64 bits)")
    print(table(rows, ["Series dtype", "accessor ms", "core ms", "ratio", "overhead"]))
    for name in ("string[pyarrow]", "str"):
        ok = result[name]["ratio"] <= 1.10
        print(f"{name}: accessor/core = {result[name]['ratio']:.3f} "
              f"({'within' if ok else 'OVER'} the 10% budget)")
    path = save("accessors", result)
    print(f"saved {path}")
    return result


if __name__ == "__main__":
    main()
