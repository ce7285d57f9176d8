"""Overhead of the pandas accessor over the core fingerprint kernel.

Run: ``python -m benchmarks.bench_accessors [--quick]``. Times
``Series.simhash.fingerprint()`` on Arrow-backed strings (``string[pyarrow]`` and pandas
3's default ``str``) against the core path on the same pyarrow array
(``simhash_nb.fingerprint.fingerprint_texts``), and prints the ratio; the target is an
overhead of at most 10%. Object-dtype Series are timed too, for information: they pay
one conversion of Python strings to UTF-8.

On a shared machine whole-call ratios swing by tens of percent either way, so the
accessor's own work (text to Arrow, result to a pandas Series) is also timed alone and
reported as a fraction of the kernel's time, with a check that Arrow-backed text reaches
the kernel without a copy. Writes ``benchmarks/results/accessors.json``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
import pyarrow as pa

import simhash_nb as sh
from simhash_nb._core.fingerprint import fingerprint_texts
from simhash_nb._core.text import to_arrow
from simhash_nb._frames import fingerprint_array

from ._common import load_texts, median_time, save, table


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer texts and repeats")
    args = ap.parse_args(argv)
    texts = load_texts("kjv_verses.jsonl.gz") + load_texts("fortunes_en.jsonl.gz")
    texts = texts[:20000] if args.quick else texts * 2
    repeats = 15 if args.quick else 21
    spec = sh.make_spec()
    arr = pa.array(texts, pa.large_string())
    mb = arr.nbytes / 1e6

    series = {name: pd.Series(texts, dtype=name, index=pd.RangeIndex(len(texts)) * 2)
              for name in ("string[pyarrow]", "str", "object")}
    cases = {"core": lambda: fingerprint_texts(arr, spec, None)}
    cases.update({name: (lambda s=s: s.simhash.fingerprint()) for name, s in series.items()})
    # Interleaved rounds, so that load from other processes hits every case alike; the
    # minimum over rounds estimates the cost without interference, and CPU time (all
    # threads) the work done whatever the wall clock.
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    for f in cases.values():
        f()
    for _ in range(repeats):
        for name, f in cases.items():
            w, c = time.perf_counter(), time.process_time()
            f()
            wall[name].append(time.perf_counter() - w)
            cpu[name].append(time.process_time() - c)
    core_s, core_cpu = min(wall["core"]), min(cpu["core"])
    rows = []
    result = {"n_docs": len(texts), "mb": mb, "core_s": core_s, "core_cpu_s": core_cpu}
    for name in series:
        t, c = min(wall[name]), min(cpu[name])
        ratio, cpu_ratio = t / core_s, c / core_cpu
        result[name] = {"s": t, "ratio": ratio, "cpu_s": c, "cpu_ratio": cpu_ratio}
        rows.append([name, f"{t * 1000:.1f}", f"{core_s * 1000:.1f}", f"{ratio:.3f}",
                     f"{cpu_ratio:.3f}"])
    # The accessor's own work, timed alone (robust to load): text to Arrow, and the
    # result wrapped as a pandas Series. Arrow-backed text must arrive without a copy.
    fps, _, valid = fingerprint_texts(arr, spec, None)
    glue_rows = []
    for name, s in series.items():
        def glue(s=s):
            to_arrow(s)
            pd.Series(fingerprint_array(fps, valid), index=s.index, copy=False)

        g = min(median_time(glue, 1, warmup=0) for _ in range(50))
        data = to_arrow(s).buffers()[2].address
        zero_copy = (name != "object"
                     and data == s.array.__arrow_array__().chunk(0).buffers()[2].address)
        result[name].update({"glue_s": g, "glue_fraction": g / core_s, "zero_copy": zero_copy})
        glue_rows.append([name, f"{g * 1000:.3f}", f"{g / core_s * 100:.2f}%",
                          "yes" if zero_copy else "no"])
    print(f"{len(texts):,} texts, {mb:.1f} MB, default spec (char 4-grams, 64 bits)")
    print(table(rows, ["Series dtype", "accessor ms", "core ms", "wall ratio", "CPU ratio"]))
    print("\naccessor's own work (to Arrow + wrapping the result), timed alone:")
    print(table(glue_rows, ["Series dtype", "glue ms", "of the kernel", "text zero-copy"]))
    for name in ("string[pyarrow]", "str"):
        r = result[name]
        ok = r["glue_fraction"] <= 0.10
        print(f"{name}: accessor/core = {r['ratio']:.3f} (wall, min of rounds), "
              f"{r['cpu_ratio']:.3f} (CPU); own work {r['glue_fraction'] * 100:.2f}% of the "
              f"kernel ({'within' if ok else 'OVER'} the 10% budget)")
    path = save("accessors", result)
    print(f"saved {path}")
    return result


if __name__ == "__main__":
    main()


def report(res: dict) -> str:
    """README table: accessor against the core kernel on the same texts."""
    rows = []
    for dtype in ("string[pyarrow]", "str", "object"):
        r = res.get(dtype)
        if r:
            rows.append([f"`s.simhash.fingerprint()` on {dtype}", f"{r['s'] * 1e3:.0f} ms",
                         f"{res['core_s'] * 1e3:.0f} ms", f"{r['ratio']:.3f}",
                         f"{100 * r['glue_fraction']:.2f}%",
                         "yes" if r["zero_copy"] else "no"])
    head = [f"pandas accessor on {res['n_docs']:,} texts ({res['mb']:.1f} MB), default spec", ""]
    return "\n".join(head + [table(rows, ["call", "accessor", "core", "ratio",
                                          "accessor's own work", "text zero-copy"])])
