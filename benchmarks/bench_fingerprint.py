"""Fingerprint throughput, CSR throughput, brute-force join and cold start, against peers.

Run: ``python -m benchmarks.bench_fingerprint [--quick] [--no-peers]``. Writes
``benchmarks/results/fingerprint.json`` and prints a table with ratios measured in
this run. Real English text from ../shared/data (KJV verses + fortunes); the bundled
samples stand in when it is absent.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import pyarrow as pa

import simhash_nb as sh

from ._common import (
    ensure_peers,
    interleaved_medians,
    load_texts,
    median_time,
    run_peers,
    save,
    table,
    write_jsonl,
)


def corpus(quick: bool) -> list[str]:
    texts = load_texts("kjv_verses.jsonl.gz") + load_texts("fortunes_en.jsonl.gz")
    return texts[:5000] if quick else texts * 3


def bench_text(texts: list[str], repeats: int) -> dict:
    arr = pa.array(texts, pa.large_string())
    mb = sum(len(t.encode()) for t in texts) / 1e6
    out = {"n_docs": len(texts), "mb": mb}
    cases = {  # the peers count every occurrence (tf) of lowercased features
        "word1_lower": dict(tokenizer="word", ngram=1, weights="tf", normalize=("lower",)),
        "char4_lower": dict(tokenizer="char", ngram=4, weights="tf", normalize=("lower",)),
        "default (char5, binary, nfkc+lower+punct+ws)": {},
        "word3_binary_default_norm": dict(tokenizer="word", ngram=3),
        "word1_lower_128": dict(tokenizer="word", ngram=1, weights="tf", normalize=("lower",),
                                bits=128),
    }
    times = interleaved_medians(
        {name: (lambda kw=kw: sh.fingerprint(arr, **kw)) for name, kw in cases.items()}, repeats)
    for name, t in times.items():
        out[name] = {"s": t, "mb_per_s": mb / t, "docs_per_s": len(texts) / t}
    return out


def bench_csr(texts: list[str], repeats: int) -> dict:
    fb = sh.features(texts, tokenizer="char", ngram=4)
    fb32 = sh.FeatureBatch(fb.indptr, fb.hashes, fb.weights.astype(np.float32))
    # real-valued weights (TF-IDF-like) take the same path; no tie-breaking shortcuts
    real = np.random.default_rng(0).random(fb.hashes.shape[0]) * 5
    fbr = sh.FeatureBatch(fb.indptr, fb.hashes, real)
    out = {"nnz": int(fb.hashes.shape[0]), "mean_features_per_doc": fb.hashes.shape[0] / len(fb)}
    cases = {"float64": fb, "float32": fb32, "float64_real": fbr}
    times = interleaved_medians(
        {name: (lambda b=b: sh.fingerprint_features(b)) for name, b in cases.items()}, 3 * repeats)
    for name, t in times.items():
        out[name] = {"s": t, "m_features_per_s": fb.hashes.shape[0] / t / 1e6}
    return out


def bench_join(n: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    t = median_time(lambda: sh.pairs_within(a, 3), repeats)
    pairs = n * (n - 1) / 2
    a2 = rng.integers(0, 2**64 - 1, (n // 2, 2), dtype=np.uint64, endpoint=True)
    t2 = median_time(lambda: sh.pairs_within(a2, 6), repeats)
    pairs2 = (n // 2) * (n // 2 - 1) / 2
    return {"n": n, "s": t, "g_pairs_per_s": pairs / t / 1e9,
            "n_128": n // 2, "s_128": t2, "g_pairs_per_s_128": pairs2 / t2 / 1e9}


def bench_cold_start(repeats: int) -> dict:
    code = ("import time; t = time.perf_counter(); import simhash_nb as sh; "
            "sh.fingerprint(['warm up text']); print(time.perf_counter() - t)")

    def run(env):
        return float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                    text=True, check=True).stdout)

    warm = [run(dict(os.environ)) for _ in range(repeats)]
    cold = []
    for _ in range(max(1, repeats // 2)):
        with tempfile.TemporaryDirectory() as d:
            cold.append(run(dict(os.environ, NUMBA_CACHE_DIR=d)))
    return {"warm_cache_s": float(np.median(warm)), "cold_cache_s": float(np.median(cold))}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small inputs, few repeats")
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args(argv)
    repeats = 3 if args.quick else 7
    texts = corpus(args.quick)
    res = {"text": bench_text(texts, repeats), "csr": bench_csr(texts, repeats),
           "join": bench_join(20_000 if args.quick else 100_000, 3 if args.quick else 5),
           "cold_start": bench_cold_start(3 if args.quick else 5)}
    if not args.no_peers and ensure_peers():
        path = write_jsonl(texts)
        try:
            res["peers_words"] = run_peers("fingerprint-words", "--input", path, "--repeats",
                                           str(repeats))
            res["peers_char4"] = run_peers("fingerprint-char4", "--input", path, "--repeats",
                                           "3", "--slow-max-docs", "20000")
        finally:
            os.unlink(path)
    save("fingerprint", res)
    print(report(res))
    return res


def _peer_rows(res: dict, key: str, ours: float) -> list[list]:
    rows = []
    for name, p in res.get(key, {}).get("peers", {}).items():
        if p.get("status") == "ok" and p.get("mb_per_s"):
            rows.append([f"{name} ({p.get('threads', '?')} threads)", f"{p['mb_per_s']:.1f}",
                         f"{ours / p['mb_per_s']:.1f}x"])
        else:
            rows.append([name, p.get("status", "?"), ""])
    return rows


def report(res: dict) -> str:
    t = res["text"]
    ours_w = t["word1_lower"]["mb_per_s"]
    ours_c = t["char4_lower"]["mb_per_s"]
    rows = [
        ["simhash_nb word unigrams, lowercase, tf", f"{ours_w:.1f}", "1.0x"],
        *_peer_rows(res, "peers_words", ours_w),
    ]
    out = [f"Text: {t['n_docs']:,} documents, {t['mb']:.1f} MB of English (KJV + fortunes)", "",
           table(rows, ["word-unigram fingerprints", "MB/s", "simhash_nb is"]), ""]
    rows = [["simhash_nb char 4-grams, lowercase, tf", f"{ours_c:.1f}", "1.0x"],
            *_peer_rows(res, "peers_char4", ours_c)]
    out += [table(rows, ["char 4-gram fingerprints", "MB/s", "simhash_nb is"]), ""]
    rows = [[name, f"{v['mb_per_s']:.1f}", f"{v['docs_per_s'] / 1e6:.2f} M"]
            for name, v in t.items() if isinstance(v, dict)]
    out += [table(rows, ["simhash_nb case", "MB/s", "docs/s"]), ""]
    c, j, s = res["csr"], res["join"], res["cold_start"]
    out += [table([
        ["CSR fingerprints (float64 weights)",
         f"{c['float64']['m_features_per_s']:.0f} M features/s"],
        ["CSR fingerprints (float32 weights)",
         f"{c['float32']['m_features_per_s']:.0f} M features/s"],
        *([["CSR fingerprints (real-valued float64 weights)",
            f"{c['float64_real']['m_features_per_s']:.0f} M features/s"]]
          if "float64_real" in c else []),
        [f"brute-force join, 64-bit, n={j['n']:,}", f"{j['g_pairs_per_s']:.2f} G pairs/s"],
        [f"brute-force join, 128-bit, n={j['n_128']:,}", f"{j['g_pairs_per_s_128']:.2f} G pairs/s"],
        ["import + first fingerprint, warm cache", f"{s['warm_cache_s']:.2f} s"],
        ["import + first fingerprint, cold cache", f"{s['cold_cache_s']:.2f} s"],
    ], ["measure", "result"])]
    return "\n".join(out)


if __name__ == "__main__":
    main()
