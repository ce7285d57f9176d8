"""Which features find near duplicates: tokenizers, n, weights and bits, English and Chinese.

Run: ``python -m benchmarks.bench_features [--quick] [--no-speed]``. Writes
``benchmarks/results/features.json`` and prints one table per corpus: for every feature
setting the best F1 over Hamming thresholds k (with its k, precision and recall), from
``sh.threshold_table`` / ``sh.recommend_k`` over all pairs of documents.

Ground truth (say it with the numbers, it decides them):

- English, ``jaccard``: pairs whose word 3-shingle sets (NFKC, lowercase) have Jaccard
  similarity >= 0.5 (Broder's resemblance), found exactly or by MinHash LSH with
  recall 0.99 at the threshold (``sh.jaccard_pairs``). It favours features close to
  word 3-grams; read the ranking with that in mind.
- Chinese, ``jaccard``: Jaccard of character 3-gram sets >= 0.5 (neither of the
  two Chinese paths' own features).
- ``labels``: debian_desc_zh_CN: two packages of the same source package (caja ~
  caja-common) are the duplicates: a noisy label (a source's packages share words
  but are often different descriptions, and translations of one description by
  different people are not in the same group). spdx: licence family (GPL, BSD, CC,
  ...): noisier still (GPL-2.0 and GPL-3.0 are different texts).

Speed figures (ratios in one run, on this machine): the jieba path vs jieba's own
``jieba.lcut`` on one core, the jieba path on 2 processes vs 1, and the Numba
character-bigram path (``tokenizer="char", ngram=2``) in MB/s.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time

import simhash_nb as sh

from ._common import SHARED, median_time, save, table

WS = ("nfkc", "lower", "whitespace")
PUNCT = ("nfkc", "lower", "punct", "whitespace")
EN_CONFIGS = (
    [(f"char{n}", dict(tokenizer="char", ngram=n)) for n in (3, 4, 5, 6)]
    + [(f"char{n}_ws", dict(tokenizer="char", ngram=n, normalize=WS)) for n in (3, 4, 5, 6)]
    + [(f"char{n}_punct", dict(tokenizer="char", ngram=n, normalize=PUNCT)) for n in (4, 5)]
    + [(f"word{n}", dict(tokenizer="word", ngram=n)) for n in (1, 2, 3)]
)
ZH_CONFIGS = (
    [(f"char{n}", dict(tokenizer="char", ngram=n)) for n in (1, 2, 3)]
    + [(f"char{n}_ws", dict(tokenizer="char", ngram=n, normalize=WS)) for n in (1, 2, 3)]
    + [("char2_punct", dict(tokenizer="char", ngram=2, normalize=PUNCT))]
    + [(f"word{n}", dict(tokenizer="word", ngram=n)) for n in (1, 2)]
    + [("jieba1", dict(tokenizer="jieba", ngram=1)), ("jieba2", dict(tokenizer="jieba", ngram=2))]
)


def read(name: str) -> list[dict]:
    with gzip.open(SHARED / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def corpora(quick: bool) -> dict:
    """name -> (texts, {truth name: truth}, language)."""
    out = {}
    kjv = read("kjv_verses.jsonl.gz")
    # the books with parallel passages: Samuel/Kings ~ Chronicles, and the Gospels
    books = ("1Sa", "2Sa", "1Ki", "2Ki", "1Ch", "2Ch", "Mat", "Mar", "Luk", "Joh")
    pat = re.compile(r"^(\d?[A-Za-z]+)\d")
    kjv = [r["text"] for r in kjv if (m := pat.match(r["id"])) and m.group(1) in books]
    fortunes = sh.datasets.load_fortunes()["text"].tolist()
    spdx = read("spdx_2_5_1_texts.jsonl.gz")
    fam = [re.split(r"[-.]", r["id"])[0] for r in spdx]
    zh_fortunes = [r["text"] for r in read("fortunes_zh.jsonl.gz")]
    debian = read("debian_desc_zh_CN.jsonl.gz")
    if quick:
        kjv, fortunes, zh_fortunes = kjv[:2000], fortunes[:1500], zh_fortunes[:1500]
    en_truth = dict(tokenizer="word", ngram=3, normalize=("nfkc", "lower"))
    zh_truth = dict(tokenizer="char", ngram=3, normalize=("nfkc", "lower"))
    out["kjv_parallels"] = (kjv, {"jaccard": en_truth}, "en")
    out["fortunes_en"] = (fortunes, {"jaccard": en_truth}, "en")
    out["spdx"] = ([r["text"] for r in spdx], {"jaccard": en_truth, "labels": fam}, "en")
    out["fortunes_zh"] = (zh_fortunes, {"jaccard": zh_truth}, "zh")
    out["debian_zh"] = ([r["text"] for r in debian],
                        {"jaccard": zh_truth, "labels": [r["group"] for r in debian]}, "zh")
    return out


def truth_of(texts, spec) -> object:
    if isinstance(spec, list):
        return spec
    return sh.jaccard_pairs(texts, 0.5, **spec)


def evaluate(texts, truths, configs, bits_list) -> list[dict]:
    rows = []
    for label, cfg in configs:
        for weights in (["tfidf", "tf", "binary"] if cfg["tokenizer"] == "jieba"
                        else ["tf", "binary", "tfidf"]):
            if cfg["tokenizer"] == "jieba" and cfg["ngram"] == 2 and weights == "tfidf":
                continue  # jieba's IDF table has no bigrams
            params = {"idf": "fit"} if weights == "tfidf" and cfg["tokenizer"] != "jieba" \
                else None
            for bits in bits_list:
                t0 = time.perf_counter()
                fps = sh.fingerprint(texts, bits=bits, weights=weights, params=params, **cfg)
                secs = time.perf_counter() - t0
                row = {"features": label, "weights": weights, "bits": bits,
                       "fingerprint_s": round(secs, 3)}
                for tname, truth in truths.items():
                    tab = sh.threshold_table(fps, truth)
                    rec = sh.recommend_k(tab)
                    row[tname] = {"k": int(rec.k), "precision": round(float(rec.precision), 3),
                                  "recall": round(float(rec.recall), 3),
                                  "f1": round(float(rec.f1), 3)}
                rows.append(row)
    return rows


def quality(quick: bool) -> dict:
    results = {}
    for name, (texts, truth_specs, lang) in corpora(quick).items():
        t0 = time.perf_counter()
        truths = {k: truth_of(texts, v) for k, v in truth_specs.items()}
        n_dup = {k: (len(v) if not isinstance(v, list) else None) for k, v in truths.items()}
        configs = EN_CONFIGS if lang == "en" else ZH_CONFIGS
        rows = evaluate(texts, truths, configs, (64,) if quick else (64, 128))
        results[name] = {"n_docs": len(texts), "language": lang,
                         "truth_pairs": n_dup, "rows": rows,
                         "seconds": round(time.perf_counter() - t0, 1)}
        print_table(name, results[name])
    return results


def print_table(name: str, res: dict) -> None:
    truths = [k for k in res["rows"][0] if isinstance(res["rows"][0][k], dict)]
    header = ["features", "weights", "bits"]
    for t in truths:
        header += [f"{t} F1", f"{t} k", f"{t} P", f"{t} R"]
    key = truths[0]
    rows = sorted(res["rows"], key=lambda r: -r[key]["f1"])
    body = [[r["features"], r["weights"], r["bits"]]
            + sum([[r[t]["f1"], r[t]["k"], r[t]["precision"], r[t]["recall"]] for t in truths],
                  [])
            for r in rows]
    print(f"\n### {name}: {res['n_docs']} documents, truth pairs {res['truth_pairs']}")
    print(table(body, header))
    sys.stdout.flush()


def speed(quick: bool) -> dict:
    import jieba

    from simhash_nb.jieba_features import _shutdown_pools

    zh = [r["text"] for r in read("fortunes_zh.jsonl.gz")]
    small = zh[:1500] if quick else zh
    chars = sum(map(len, small))
    jieba.lcut("预热")  # load jieba's dictionary before timing
    sh.features(small[:10], tokenizer="jieba", n_jobs=1)
    rep = 1 if quick else 3
    t_lcut = median_time(lambda: [jieba.lcut(t) for t in small], repeats=rep, warmup=0)
    t_feat = median_time(lambda: sh.features(small, tokenizer="jieba", n_jobs=1),
                         repeats=rep, warmup=0)
    t_fp = median_time(lambda: sh.fingerprint(small, tokenizer="jieba", n_jobs=1),
                       repeats=rep, warmup=0)
    out = {"jieba_chars": chars, "jieba_lcut_s": t_lcut, "jieba_features_1proc_s": t_feat,
           "jieba_fingerprint_1proc_s": t_fp,
           "jieba_features_over_lcut": t_feat / t_lcut,
           "jieba_fingerprint_over_lcut": t_fp / t_lcut}
    big = small * (1 if quick else 2)
    t0 = time.perf_counter()
    sh.features(big, tokenizer="jieba", n_jobs=2)  # includes starting the worker processes
    out["jieba_2proc_cold_s"] = time.perf_counter() - t0
    t1 = median_time(lambda: sh.features(big, tokenizer="jieba", n_jobs=1), repeats=1,
                     warmup=0)
    t2 = median_time(lambda: sh.features(big, tokenizer="jieba", n_jobs=2), repeats=rep,
                     warmup=0)
    _shutdown_pools()
    out.update({"jieba_big_chars": sum(map(len, big)), "jieba_1proc_s": t1,
                "jieba_2proc_warm_s": t2, "jieba_speedup_2proc_warm": t1 / t2,
                "jieba_speedup_2proc_cold": t1 / out["jieba_2proc_cold_s"]})
    cjk = zh * (2 if quick else 8)
    mb = sum(len(t.encode()) for t in cjk) / 1e6
    sh.fingerprint(cjk[:100], tokenizer="char", ngram=2)
    for n_jobs in (1, 2):
        t = median_time(lambda n=n_jobs: sh.fingerprint(cjk, tokenizer="char", ngram=2,
                                                        n_jobs=n), repeats=3)
        out[f"char2_mb_s_{n_jobs}thread"] = mb / t
    out["char2_mb"] = mb
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="subsets, 64 bits only")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-quality", action="store_true")
    args = ap.parse_args(argv)
    result = {"quick": args.quick}
    if not args.no_quality:
        result["quality"] = quality(args.quick)
    if not args.no_speed:
        s = speed(args.quick)
        result["speed"] = s
        print("\n### speed")
        print(table([[k, round(v, 3) if isinstance(v, float) else v] for k, v in s.items()],
                    ["figure", "value"]))
    if not args.quick:
        path = save("features", result)
        print(f"\nwrote {path}")
    return result


if __name__ == "__main__":
    main()
