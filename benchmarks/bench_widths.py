"""Quality by fingerprint width: F1 at 64, 128 and (emulated) 256 bits on the bundled
corpora, at the best k, at the default k, and for the verified text path.

Run: ``python -m benchmarks.bench_widths``. Writes ``benchmarks/results/widths.json``.

Truth: exact Jaccard >= 0.7 of the default shingles (character 5-grams; character
bigrams for Chinese), all pairs (:func:`simhash_nb.jaccard_pairs`, ``candidates="all"``).
For each width, :func:`simhash_nb.threshold_table` gives precision/recall/F1 at every k;
"default k" is the library's default (similarity 0.7 through the angle relation:
k = 12, 25, 49). 256 bits are emulated by two independent 128-bit fingerprints (seeds
0 and 1) whose distances add: the library makes 64 and 128 bits only, and this measures
whether a 256-bit width would pay. "verified" is :func:`simhash_nb.near_duplicate_texts`
(128-bit candidates, exact Jaccard), scored against the same truth.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ._common import save, table

CORPORA = {"fortunes": "en", "licences": "en", "gospels": "en", "debian_zh": "zh"}
THRESHOLD = 0.7


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / max(1, 2 * tp + fp + fn)


def _f1_by_k(dist: np.ndarray, is_true: np.ndarray, bits: int) -> np.ndarray:
    """F1 of "distance <= k" for every k = 0..bits."""
    got = np.cumsum(np.bincount(dist, minlength=bits + 1))
    tp = np.cumsum(np.bincount(dist[is_true], minlength=bits + 1))
    return 2 * tp / np.maximum(1, got + is_true.sum())


def main(argv=None) -> dict:
    import simhash_nb as sh

    argparse.ArgumentParser(description=__doc__).parse_args(argv)
    res: dict = {"threshold": THRESHOLD, "corpora": {}}
    for name, lang in CORPORA.items():
        texts = sh.datasets.load_sample(name)["text"].tolist()
        spec = sh.FingerprintSpec.for_language(lang)
        opts = {"tokenizer": spec.tokenizer, "ngram": spec.ngram}
        truth_df = sh.jaccard_pairs(texts, THRESHOLD, candidates="all", **opts)
        truth = set(zip(truth_df["i"].tolist(), truth_df["j"].tolist()))
        n = len(texts)
        i, j = np.triu_indices(n, 1)
        key = i.astype(np.int64) * n + j
        is_true = np.isin(key, truth_df["i"].to_numpy() * n + truth_df["j"].to_numpy())
        fps64 = sh.fingerprint(texts, spec=spec)
        fps128 = sh.fingerprint(texts, spec=spec.replace(bits=128))
        fps128b = sh.fingerprint(texts, spec=spec.replace(bits=128, seed=1))
        d64 = sh.hamming(fps64[i], fps64[j]).astype(np.int64)
        d128 = sh.hamming(fps128[i], fps128[j], bits=128).astype(np.int64)
        d256 = d128 + sh.hamming(fps128b[i], fps128b[j], bits=128).astype(np.int64)
        row = {"documents": n, "truth_pairs": len(truth)}
        for bits, dist in ((64, d64), (128, d128), (256, d256)):
            f1 = _f1_by_k(dist, is_true, bits)
            kd = int(round(bits * math.acos(2 * THRESHOLD / (1 + THRESHOLD)) / math.pi))
            row[str(bits)] = {"best_f1": float(f1.max()), "best_k": int(f1.argmax()),
                              "default_k": kd, "default_f1": float(f1[kd]),
                              "k3_f1": float(f1[3])}
        ver = sh.near_duplicate_texts(texts, THRESHOLD, **opts)
        got = set(zip(ver.i.tolist(), ver.j.tolist()))
        tp = len(got & truth)
        row["verified_f1"] = _f1(tp, len(got) - tp, len(truth) - tp)
        res["corpora"][name] = row
        print(name, row, flush=True)
    save("widths", res)
    print(report(res))
    return res


def report(res: dict) -> str:
    rows = []
    for name, r in res["corpora"].items():
        cells = [name, f"{r['documents']:,}", f"{r['truth_pairs']:,}",
                 f"{r['64']['k3_f1']:.3f}"]
        for bits in ("64", "128", "256"):
            b = r[bits]
            cells.append(f"{b['default_f1']:.3f} (k={b['default_k']}) / {b['best_f1']:.3f} "
                         f"(k={b['best_k']})")
        cells.append(f"{r['verified_f1']:.3f}")
        rows.append(cells)
    head = ["corpus", "docs", "pairs J >= 0.7", "64 bits, k = 3 (old default)",
            "64 bits: default / best", "128 bits",
            "256 bits (emulated)", "verified (near_duplicate_texts)"]
    return ("F1 against exact Jaccard >= 0.7 of the default shingles (all pairs), "
            "at the default k and the best k\n\n" + table(rows, head))


if __name__ == "__main__":
    main()
