"""Bit-sum kernels against a plain Numba loop, compiled for three CPU levels.

Run: ``python -m benchmarks.bench_bitsums [--quick]``. Writes
``benchmarks/results/bitsums.json``.

The CSR fingerprint kernel keeps its 64 sums in LLVM vector registers
(``simhash_nb/_kernels/signsums.py``). The baseline is the straightforward Numba loop
it replaced (``acc[b] += w if bit else -w`` over a ``float64[64]`` array), which gives
the same bits. Each CPU level runs in its own process with ``NUMBA_CPU_NAME`` set and a
fresh cache: the host (AVX-512 here), ``haswell`` (AVX2) and ``x86-64`` (SSE2), so the
table shows what machines without AVX-512 get. Features: char 4-grams of the English
corpus; unit weights (all 1) and real weights (uniform in [0, 5)).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from numba import njit, prange

from simhash_nb._kernels.xxh64 import splitmix64

from ._common import interleaved_medians, load_texts, save, table

TARGETS = {"host": None, "AVX2 (haswell)": "haswell", "SSE2 (x86-64)": "x86-64"}


# The straightforward Numba kernel (simhash_nb before the vector IR), verbatim.


@njit(inline="always", cache=True)
def _word_hash(h, word):
    return h if word == 0 else splitmix64(h)


@njit(cache=True, nogil=True)
def _weighted_fingerprint(hashes, weights, lo, hi, acc, words, out_row):
    for word in range(words):
        acc[:] = 0.0
        for f in range(lo, hi):
            h = _word_hash(hashes[f], word)
            w = np.float64(weights[f])
            for b in range(64):
                acc[b] += w if (h >> np.uint64(b)) & np.uint64(1) else -w
        fp = np.uint64(0)
        for b in range(64):
            if acc[b] > 0.0:
                fp |= np.uint64(1) << np.uint64(b)
        out_row[word] = fp


@njit(parallel=True, cache=True, nogil=True)
def plain_fingerprint_csr(indptr, hashes, weights, chunks, words):
    """Fingerprints of a CSR batch with a ``float64[64]`` accumulator in memory."""
    ndocs = indptr.shape[0] - 1
    out = np.zeros((ndocs, words), dtype=np.uint64)
    for c in prange(chunks.shape[0] - 1):
        acc = np.empty(64, dtype=np.float64)
        for i in range(chunks[c], chunks[c + 1]):
            _weighted_fingerprint(hashes, weights, indptr[i], indptr[i + 1], acc, words, out[i])
    return out


def worker(quick: bool) -> dict:
    """Time both kernels in this process (its CPU level comes from the environment)."""
    import numba

    import simhash_nb as sh
    from simhash_nb._core.parallel import balanced_chunks
    from simhash_nb._kernels import bitsums

    texts = load_texts("kjv_verses.jsonl.gz") + load_texts("fortunes_en.jsonl.gz")
    texts = texts[:20_000] if quick else texts * 3
    fb = sh.features(texts, tokenizer="char", ngram=4)
    real = np.random.default_rng(0).random(fb.hashes.shape[0]) * 5
    chunks = balanced_chunks(fb.indptr)
    plain = plain_fingerprint_csr
    cases = {}
    for wname, w in (("unit", fb.weights), ("real", real)):
        ours = bitsums.fingerprint_csr(fb.indptr, fb.hashes, w, chunks, 1)[0]
        if not np.array_equal(ours, plain(fb.indptr, fb.hashes, w, chunks, 1)):
            raise AssertionError(f"{wname} weights: the kernels disagree")
        cases[f"plain_{wname}"] = lambda w=w: plain(fb.indptr, fb.hashes, w, chunks, 1)
        cases[f"ours_{wname}"] = lambda w=w: bitsums.fingerprint_csr(fb.indptr, fb.hashes, w,
                                                                     chunks, 1)
    times = interleaved_medians(cases, 3 if quick else 11)
    nnz = fb.hashes.shape[0]
    return {"cpu_name": numba.config.CPU_NAME or "host", "nnz": int(nnz),
            "threads": numba.get_num_threads(),
            **{name: nnz / t / 1e6 for name, t in times.items()}}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        json.dump(worker(args.quick), sys.stdout)
        return {}
    res = {"targets": {}}
    for label, cpu in TARGETS.items():
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            if cpu:
                env.update(NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="")
            cmd = [sys.executable, "-m", "benchmarks.bench_bitsums", "--worker"]
            cmd += ["--quick"] if args.quick else []
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                                 cwd=os.path.dirname(os.path.dirname(__file__)) or ".")
            res["targets"][label] = json.loads(out.stdout.strip().splitlines()[-1])
    save("bitsums", res)
    print(report(res))
    return res


def report(res: dict) -> str:
    rows = []
    for label, r in res["targets"].items():
        rows.append([label, f"{r['plain_unit']:.0f}", f"{r['ours_unit']:.0f}",
                     f"{r['ours_unit'] / r['plain_unit']:.1f}x", f"{r['plain_real']:.0f}",
                     f"{r['ours_real']:.0f}", f"{r['ours_real'] / r['plain_real']:.1f}x"])
    first = next(iter(res["targets"].values()))
    head = (f"CSR fingerprints, M features/s ({first['nnz']:,} char 4-gram features, "
            f"{first['threads']} threads); plain = the straightforward Numba loop")
    return head + "\n\n" + table(rows, ["compiled for", "plain, unit w", "ours, unit w",
                                        "ratio", "plain, real w", "ours, real w", "ratio"])


if __name__ == "__main__":
    main()
