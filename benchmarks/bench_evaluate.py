"""Ground truth and threshold tables: sh.jaccard against Python sets, threshold tables.

Run: ``python -m benchmarks.bench_evaluate [--quick]``. Writes
``benchmarks/results/evaluate.json`` and prints the ratios measured in this run.

- ``sh.jaccard`` on 100,000 candidate pairs of ~2 KB documents (KJV verses joined into
  2 KB chunks, plus edited copies of them) against the same Jaccard with Python sets of
  4-gram strings: precomputed sets (the set operations only), and end to end (shingling
  included on both sides). Target: >= 10x.
- ``sh.threshold_table`` for 1,000,000 labelled pairs. Target: < 1 s.
- Also: the exact all-pairs ground truth (``jaccard_pairs``) and a self-join table on the
  bundled fortunes.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import simhash_nb as sh

from ._common import load_texts, median_time, save, table


def documents(size: int = 2000, limit: int = 2000) -> list[str]:
    """KJV verses joined into chunks of about ``size`` characters."""
    docs, cur = [], []
    length = 0
    for verse in load_texts("kjv_verses.jsonl.gz"):
        cur.append(verse)
        length += len(verse) + 1
        if length >= size:
            docs.append(" ".join(cur))
            cur, length = [], 0
            if len(docs) == limit:
                break
    return docs


def random_pairs(n_total: int, m: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """About ``m`` random pairs ``i < j``."""
    a = rng.integers(0, n_total, size=m)
    b = rng.integers(0, n_total, size=m)
    a, b = np.minimum(a, b), np.maximum(a, b)
    keep = a != b
    return a[keep].astype(np.int64), b[keep].astype(np.int64)


def python_sets(texts: list[str]) -> list[set[str]]:
    out = []
    for t in texts:
        t = t.lower()
        out.append({t[p : p + 4] for p in range(len(t) - 3)} if len(t) >= 4 else {t})
    return out


def python_jaccard(sets: list[set[str]], i, j) -> list[float]:
    res = []
    for a, b in zip(i.tolist(), j.tolist()):
        x, y = sets[a], sets[b]
        c = len(x & y)
        res.append(c / (len(x) + len(y) - c))
    return res


def bench_jaccard(quick: bool) -> dict:
    rng = np.random.default_rng(0)
    base = documents(limit=500 if quick else 2000)
    synthetic = sh.datasets.make_near_duplicates(base, n=len(base), edit_rate=0.05,
                                                 random_state=0)
    texts = synthetic.texts
    n_pairs = 20_000 if quick else 100_000
    pos = synthetic.pairs[synthetic.pairs["duplicate"]]
    ri, rj = random_pairs(len(texts), n_pairs, rng)  # candidates: copies, then random pairs
    i = np.concatenate([pos["i"].to_numpy(), ri])[:n_pairs]
    j = np.concatenate([pos["j"].to_numpy(), rj])[:n_pairs]
    order = np.lexsort((j, i))  # sorted by (i, j), as near_duplicates returns them
    i, j = i[order], j[order]
    opts = dict(ngram=4, normalize=("lower",))  # the features python_sets builds
    fb = sh.features(texts, **opts)
    sh.jaccard(fb, (i[:10], j[:10]))  # compile / load the cache
    t_kernel = median_time(lambda: sh.jaccard(fb, (i, j)), 5)
    t_end = median_time(lambda: sh.jaccard(texts, (i, j), **opts), 3)
    # Python: time a sample of the pairs and scale (the full run would take minutes)
    sample = min(n_pairs, 10_000)
    t0 = time.perf_counter()
    sets = python_sets(texts)
    t_py_sets_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    py = python_jaccard(sets, i[:sample], j[:sample])
    t_py_pairs = (time.perf_counter() - t0) * n_pairs / sample
    ours = sh.jaccard(fb, (i[:sample], j[:sample]))
    max_diff = float(np.max(np.abs(np.asarray(py) - ours)))
    return {
        "n_docs": len(texts),
        "mean_chars": float(np.mean([len(t) for t in texts])),
        "mean_features": float(fb.n_features.mean()),
        "n_pairs": n_pairs,
        "ours_features_s": t_kernel,
        "ours_texts_s": t_end,
        "python_sets_pairs_s": t_py_pairs,
        "python_sets_build_s": t_py_sets_build,
        "python_sample_pairs": sample,
        "speedup_sets": t_py_pairs / t_kernel,
        "speedup_end_to_end": (t_py_pairs + t_py_sets_build) / t_end,
        "max_abs_diff_vs_python": max_diff,
    }


def bench_table(quick: bool) -> dict:
    rng = np.random.default_rng(1)
    n_docs, n_pairs = 200_000, (200_000 if quick else 1_000_000)
    fps = rng.integers(0, 2**64 - 1, n_docs, dtype=np.uint64, endpoint=True)
    i = rng.integers(0, n_docs, n_pairs)
    j = (i + 1 + rng.integers(0, n_docs - 1, n_pairs)) % n_docs
    truth = pd.DataFrame({"i": i, "j": j, "duplicate": rng.random(n_pairs) < 0.1})
    t = median_time(lambda: sh.threshold_table(fps, truth), 5)
    return {"n_docs": n_docs, "n_pairs": n_pairs, "s": t, "m_pairs_per_s": n_pairs / t / 1e6}


def bench_ground_truth() -> dict:
    texts = sh.datasets.load_fortunes()["text"]
    sh.jaccard_pairs(texts[:50], threshold=0.5)
    sh.jaccard_pairs(texts[:50], threshold=0.5, candidates="minhash")
    n = len(texts)
    t_exact = median_time(lambda: sh.jaccard_pairs(texts, threshold=0.5), 3)
    t_all = median_time(lambda: sh.jaccard(texts), 1, warmup=0)
    t_minhash = median_time(
        lambda: sh.jaccard_pairs(texts, threshold=0.5, candidates="minhash"), 3)
    exact = sh.jaccard_pairs(texts, threshold=0.5)
    found = sh.jaccard_pairs(texts, threshold=0.5, candidates="minhash")
    fps = sh.fingerprint(texts)
    t_table = median_time(lambda: sh.threshold_table(fps, exact), 3)
    return {
        "n_docs": n, "n_pairs_all": n * (n - 1) // 2, "n_truth": len(exact),
        "jaccard_all_pairs_s": t_all, "jaccard_pairs_exact_s": t_exact,
        "jaccard_pairs_minhash_s": t_minhash, "minhash_found": len(found),
        "self_join_table_s": t_table,
    }


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small inputs")
    args = ap.parse_args(argv)
    res = {"jaccard": bench_jaccard(args.quick), "table": bench_table(args.quick),
           "ground_truth": bench_ground_truth()}
    save("evaluate", res)
    print(report(res))
    return res


def report(res: dict) -> str:
    j, t, g = res["jaccard"], res["table"], res["ground_truth"]
    rows = [
        [f"sh.jaccard, {j['n_pairs']:,} pairs, features given", f"{j['ours_features_s']:.3f} s",
         f"{j['speedup_sets']:.0f}x"],
        ["Python sets, same pairs (sets prebuilt)", f"{j['python_sets_pairs_s']:.2f} s", "1x"],
        [f"sh.jaccard from texts ({j['n_docs']:,} docs, shingling included)",
         f"{j['ours_texts_s']:.3f} s", f"{j['speedup_end_to_end']:.0f}x"],
        ["Python: build 4-gram sets + pairs",
         f"{j['python_sets_pairs_s'] + j['python_sets_build_s']:.2f} s", "1x"],
        [f"sh.threshold_table, {t['n_pairs']:,} labelled pairs", f"{t['s']:.3f} s",
         f"{t['m_pairs_per_s']:.0f} M pairs/s"],
        [f"sh.jaccard, all {g['n_pairs_all']:,} pairs of the fortunes",
         f"{g['jaccard_all_pairs_s']:.2f} s", ""],
        [f"sh.jaccard_pairs(threshold=0.5), exact ({g['n_truth']} pairs)",
         f"{g['jaccard_pairs_exact_s']:.2f} s", ""],
        [f"sh.jaccard_pairs(threshold=0.5), MinHash candidates ({g['minhash_found']} pairs)",
         f"{g['jaccard_pairs_minhash_s']:.2f} s", ""],
        ["sh.threshold_table, self-join of the fortunes (all pairs, k = 0..64)",
         f"{g['self_join_table_s']:.3f} s", ""],
    ]
    head = (f"Documents of {j['mean_chars']:.0f} characters on average "
            f"({j['mean_features']:.0f} distinct 4-grams); Python checked on "
            f"{j['python_sample_pairs']:,} pairs and scaled; largest difference from Python: "
            f"{j['max_abs_diff_vs_python']:.1e}.")
    return head + "\n\n" + table(rows, ["task", "time", "speed-up / rate"])


if __name__ == "__main__":
    main()
