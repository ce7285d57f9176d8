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

from ._common import RESULTS, SHARED, save, table

BASE = ("nfkc", "lower")  # the plain names: no punctuation or white-space steps
WS = ("nfkc", "lower", "whitespace")
PUNCT = ("nfkc", "lower", "punct", "whitespace")
EN_CONFIGS = (
    [(f"char{n}", dict(tokenizer="char", ngram=n, normalize=BASE)) for n in (3, 4, 5, 6)]
    + [(f"char{n}_ws", dict(tokenizer="char", ngram=n, normalize=WS)) for n in (3, 4, 5, 6)]
    + [(f"char{n}_punct", dict(tokenizer="char", ngram=n, normalize=PUNCT)) for n in (4, 5)]
    + [(f"word{n}", dict(tokenizer="word", ngram=n, normalize=BASE)) for n in (1, 2, 3)]
)
ZH_CONFIGS = (
    [(f"char{n}", dict(tokenizer="char", ngram=n, normalize=BASE)) for n in (1, 2, 3)]
    + [(f"char{n}_ws", dict(tokenizer="char", ngram=n, normalize=WS)) for n in (1, 2, 3)]
    + [("char2_punct", dict(tokenizer="char", ngram=2, normalize=PUNCT))]
    + [(f"word{n}", dict(tokenizer="word", ngram=n, normalize=BASE)) for n in (1, 2)]
    + [("jieba1", dict(tokenizer="jieba", ngram=1, normalize=BASE)),
       ("jieba2", dict(tokenizer="jieba", ngram=2, normalize=BASE))]
)


def read(name: str) -> list[dict]:
    with gzip.open(SHARED / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def corpora(quick: bool) -> dict:
    """name -> (texts, {truth name: truth}, language)."""
    out = {}
    kjv = read("kjv_verses.jsonl.gz")
    # the Gospels: parallel passages (Mat11:10 ~ Luke7:27) are natural near duplicates
    books = ("Mat", "Mark", "Luke", "John")
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


def quality(quick: bool, only=None) -> dict:
    results = {}
    for name, (texts, truth_specs, lang) in corpora(quick).items():
        if only and name not in only:
            continue
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


def summary(results: dict) -> dict:
    """Mean best-F1 (Jaccard truth) over each language's corpora, per setting."""
    out = {}
    for lang in ("en", "zh"):
        names = [n for n, r in results.items() if r["language"] == lang]
        scores: dict = {}
        for n in names:
            for r in results[n]["rows"]:
                key = (r["features"], r["weights"], r["bits"])
                scores.setdefault(key, {})[n] = r["jaccard"]["f1"]
        rows = [{"features": f, "weights": w, "bits": b,
                 "mean_f1": round(sum(v.values()) / len(v), 3), **v}
                for (f, w, b), v in scores.items() if len(v) == len(names)]
        out[lang] = sorted(rows, key=lambda r: -r["mean_f1"])
    return out


def print_summary(summ: dict, top: int = 12) -> None:
    for lang, rows in summ.items():
        if not rows:
            continue
        names = [k for k in rows[0] if k not in ("features", "weights", "bits", "mean_f1")]
        print(f"\n### {lang}: mean best F1 over {', '.join(names)} (Jaccard truth)")
        body = [[r["features"], r["weights"], r["bits"], r["mean_f1"]] + [r[n] for n in names]
                for r in rows[:top]]
        print(table(body, ["features", "weights", "bits", "mean F1", *names]))


def best_time(fns: dict, repeats: int, clock=time.perf_counter) -> dict:
    """Fastest of ``repeats`` runs of each function, the functions taking turns (so a busy
    shared machine slows them alike). ``clock=time.process_time`` counts this process's
    CPU seconds (all its threads), which other users of the machine barely change."""
    best = {k: float("inf") for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t = clock()
            fn()
            best[k] = min(best[k], clock() - t)
    return best


def speed(quick: bool) -> dict:
    import os

    import jieba

    from simhash_nb._core.jieba import _shutdown_pools

    zh = [r["text"] for r in read("fortunes_zh.jsonl.gz")]
    small = zh[:1500] if quick else zh
    jieba.lcut("预热")  # load jieba's dictionary before timing
    sh.fingerprint(small[:10], tokenizer="jieba", n_jobs=1)
    rep = 1 if quick else 3
    out = {"load_average": os.getloadavg()[0], "jieba_chars": sum(map(len, small))}
    # one core: CPU seconds of jieba.lcut over the texts vs our whole path
    t = best_time({
        "lcut": lambda: [jieba.lcut(x) for x in small],
        "features": lambda: sh.features(small, tokenizer="jieba", n_jobs=1),
        "fingerprint": lambda: sh.fingerprint(small, tokenizer="jieba", n_jobs=1),
    }, 1 if quick else 5, time.process_time)  # lcut's own time varies by +-5% run to run
    out.update({"jieba_lcut_cpu_s": t["lcut"], "jieba_features_cpu_s": t["features"],
                "jieba_fingerprint_cpu_s": t["fingerprint"],
                "jieba_features_over_lcut": t["features"] / t["lcut"],
                "jieba_fingerprint_over_lcut": t["fingerprint"] / t["lcut"]})
    # two processes: wall time (needs two idle cores to show), and the parent's own CPU
    # time, whose share bounds the speed-up whatever the load (Amdahl)
    big = small * (1 if quick else 2)
    t0 = time.perf_counter()
    sh.features(big, tokenizer="jieba", n_jobs=2)  # includes starting the worker processes
    out["jieba_2proc_cold_s"] = time.perf_counter() - t0
    wall = best_time({"one": lambda: sh.features(big, tokenizer="jieba", n_jobs=1),
                      "two": lambda: sh.features(big, tokenizer="jieba", n_jobs=2)}, rep)
    cpu = best_time({"one": lambda: sh.features(big, tokenizer="jieba", n_jobs=1),
                     "two": lambda: sh.features(big, tokenizer="jieba", n_jobs=2)}, rep,
                    time.process_time)
    _shutdown_pools()
    serial = cpu["two"] / cpu["one"]
    out.update({"jieba_big_chars": sum(map(len, big)), "jieba_1proc_s": wall["one"],
                "jieba_2proc_warm_s": wall["two"],
                "jieba_speedup_2proc_warm": wall["one"] / wall["two"],
                "jieba_parent_cpu_share_2proc": serial,
                "jieba_speedup_2proc_bound": 1.0 / (serial + (1.0 - serial) / 2)})
    cjk = zh * (2 if quick else 8)
    mb = sum(len(x.encode()) for x in cjk) / 1e6
    sh.fingerprint(cjk[:100], tokenizer="char", ngram=2)
    fns = {n: (lambda n=n: sh.fingerprint(cjk, tokenizer="char", ngram=2, n_jobs=n))
           for n in (1, 2)}
    wall = best_time(fns, 5)
    cpu = best_time(fns, 3, time.process_time)
    out.update({"char2_mb": mb, "char2_mb_s_1thread": mb / wall[1],
                "char2_mb_s_2threads": mb / wall[2],
                "char2_mb_per_cpu_s_2threads": mb / cpu[2],
                "load_average_after": os.getloadavg()[0]})
    return out


def report(res: dict, top: int = 8) -> str:
    """README tables: the best settings per language (64 and 128 bits) and the speed figures."""
    out = []
    for lang, rows in res.get("summary", {}).items():
        if not rows:
            continue
        corpora = [k for k in rows[0] if k not in ("features", "weights", "bits", "mean_f1")]
        for bits in (64, 128):
            body = [[r["features"], r["weights"], r["mean_f1"]] + [r[c] for c in corpora]
                    for r in rows if r["bits"] == bits][:top]
            out += [f"Best F1 over k, {lang}, {bits} bits (truth: shingle Jaccard >= 0.5; "
                    "`_ws`: + white space, `_punct`: + punctuation and white space; plain: "
                    "NFKC + lowercase only)", "",
                    table(body, ["features", "weights", "mean F1", *corpora]), ""]
    sp = res.get("speed")
    if sp:
        out += [table([
            ["jieba path / `jieba.lcut` alone (CPU s, one process)",
             f"{sp['jieba_fingerprint_over_lcut']:.2f}"],
            ["jieba on 2 processes vs 1 (wall, warm pool)",
             f"{sp['jieba_speedup_2proc_warm']:.2f}x (bound by parent share: "
             f"{sp['jieba_speedup_2proc_bound']:.2f}x)"],
            ["Numba CJK bigrams, 1 thread", f"{sp['char2_mb_s_1thread']:.0f} MB/s"],
            ["Numba CJK bigrams, 2 threads", f"{sp['char2_mb_s_2threads']:.0f} MB/s"],
        ], ["Chinese paths", "result"])]
    return "\n".join(out)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="subsets, 64 bits only")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--corpora", nargs="*", help="only these corpora (others are kept from "
                    "the last results file)")
    args = ap.parse_args(argv)
    result = {"quick": args.quick}
    old = RESULTS / "features.json"
    if (args.corpora or args.no_speed or args.no_quality) and old.exists() and not args.quick:
        previous = json.loads(old.read_text())
        result.update({k: previous[k] for k in ("quality", "speed") if k in previous})
    if not args.no_quality:
        result["quality"] = {**result.get("quality", {}), **quality(args.quick, args.corpora)}
    if "quality" in result:
        result["summary"] = summary(result["quality"])
        print_summary(result["summary"])
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
