"""End to end: texts to verified near-duplicate pairs, against MinHash LSH peers.

Run: ``python -m benchmarks.bench_e2e`` (sizes 300,000 and 1,000,000; takes long) or
``python -m benchmarks.bench_e2e --quick`` (10,000 documents, a smoke run). Options:
``--sizes 300000,1000000``, ``--features word3,char5``, ``--threshold 0.7``,
``--repeats R``, ``--no-peers``, ``--datasketch-max-s 600``. Writes
``benchmarks/results/e2e.json`` and ``e2e.png`` (``e2e-quick.*`` with ``--quick``, which
are not figures to publish).

Corpus: :func:`benchmarks.corpus.real_like` (see its module docstring): base texts from
``../shared/data`` (fortunes, KJV verses, SPDX licence paragraphs; else the bundled
samples), 85% unique documents of 1 to 6 base texts each, 15% edited copies
(:func:`simhash_nb.datasets.make_near_duplicates`, edit rates 0 to 0.3), shuffled.

Methods, each run in the same run, in turns (round-robin over the repeats, the order
rotating each round); simhash_nb's in a fresh child process per run, so the peak RSS is
that method's (after warm-up calls on the first 2,000 and 30,000 texts, so compilation
and loading Numba's cache are excluded), the
peers in their own environment (``benchmarks/peers/run_peers.py minhash-pairs``):

- ``simhash_nb default``: ``sh.near_duplicates(sh.fingerprint(texts))`` (default
  features, character 5-grams; ``k = 3``); no verification: the pure SimHash path.
- ``simhash_nb verified``: ``sh.near_duplicate_texts(texts, threshold, tokenizer=...,
  ngram=...)`` when the library has it, else ``sh.jaccard_pairs(texts, threshold,
  candidates="simhash", ...)`` (SimHash candidates at the library's default ``k``, each
  verified by exact Jaccard).
- ``simhash_nb jaccard_pairs minhash``: ``sh.jaccard_pairs(texts, threshold,
  candidates="minhash", ...)`` (MinHash LSH candidates, verified exactly).
- ``gaoya``: ``MinHash32StringIntIndexHashSet`` (Rust, rayon): insert all, query all;
  keeps the candidates whose MinHash estimate reaches the threshold.
- ``datasketch``: ``MinHash`` + ``MinHashLSH`` (Python): insert all, query all (raw LSH
  candidates), and ``datasketch + estimate`` (the same candidates kept when their MinHash
  estimate reaches the threshold). Skipped where its estimated time exceeds
  ``--datasketch-max-s``. Timed once (not repeated).

Each feature choice (``word3``: word 3-grams; ``char5``: simhash_nb's default features,
character 5-grams) runs every method with those shingles; the peers' shingling is
described in ``benchmarks/peers/README.md``. Times include shingling and hashing.

Scoring: the union of every method's pairs (all sizes are scored separately) is judged
by exact Jaccard (``sh.jaccard``) of word 3-grams and of the default features; the truth
under a judge is the pooled pairs with Jaccard >= threshold. Precision is exact;
**recall is relative to the pairs some method found** (pooled truth), not to all pairs
of the corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import corpus
from ._common import ROOT, ensure_peers, run_peers, save, table

SIZES = (300_000, 1_000_000)
QUICK_SIZES = (10_000,)
THRESHOLD = 0.7
FEATURES = {  # name -> (simhash_nb feature options, run_peers --shingles)
    "word3": ({"tokenizer": "word", "ngram": 3}, "word3"),
    "char5": ({}, "char5"),  # the library's defaults: character 5-grams
}
JUDGES = ("word3", "char5")
OURS = ("default", "verified", "minhash")
LABELS = {
    "default": "simhash_nb default, no verification",
    "verified": "simhash_nb verified",
    "minhash": "simhash_nb jaccard_pairs minhash",
    "gaoya": "gaoya MinHash index",
    "datasketch": "datasketch MinHashLSH (candidates)",
    "datasketch-estimate": "datasketch MinHashLSH + estimate",
}


# --------------------------------------------------------------------------- children


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _ours(method: str, texts, feats: dict, threshold: float, k: int | None):
    """(pairs (m, 2) int64, info) of one simhash_nb method."""
    import simhash_nb as sh

    if method == "default":
        fps = sh.fingerprint(texts)
        p = sh.near_duplicates(fps)
        k_default = sh.table_design(len(fps)).k if hasattr(sh, "k_for_similarity") else 3
        return np.stack([p.i, p.j], axis=1).astype(np.int64), {
            "api": "sh.near_duplicates(sh.fingerprint(texts))", "k": k_default}
    if method == "verified" and hasattr(sh, "near_duplicate_texts"):
        kw = {} if k is None else {"k": k}
        r = sh.near_duplicate_texts(texts, threshold=threshold, **feats, **kw)
        opts = ", ".join(f"{a}={b!r}" for a, b in {**feats, **kw}.items())
        return np.stack([np.asarray(r.i), np.asarray(r.j)], axis=1).astype(np.int64), {
            "api": f"sh.near_duplicate_texts(texts, threshold={threshold}"
                   + (f", {opts}" if opts else "") + ")",
            "k": getattr(r, "k", None) or (getattr(r, "attrs", None) or {}).get("k", k)}
    cand = "simhash" if method == "verified" else "minhash"
    kw = {"k": k} if (k is not None and cand == "simhash") else {}
    df = sh.jaccard_pairs(texts, threshold, candidates=cand, **feats, **kw)
    opts = ", ".join(f"{a}={b!r}" for a, b in {**feats, **kw}.items())
    info = {"api": f"sh.jaccard_pairs(texts, {threshold}, candidates={cand!r}"
                   + (f", {opts}" if opts else "") + ")",
            "k": df.attrs.get("k"), "n_candidates": df.attrs.get("n_candidates")}
    if cand == "minhash":
        info.update(bands=df.attrs.get("bands"), rows=df.attrs.get("rows"))
    return np.stack([df["i"].to_numpy(), df["j"].to_numpy()], axis=1).astype(np.int64), info


def _child(method: str, path: str, feature: str, threshold: float, k: str, out: str) -> dict:
    import numba

    texts = corpus.load(path)[0]
    feats = FEATURES[feature][0]
    kk = None if k == "none" else int(k)
    # compile / load the cache: on 2,000 texts, then on 30,000 (above the library's
    # parallel_min_rows, so the parallel code paths are loaded too), both untimed
    for m in (2000, 30_000):
        _ours(method, texts[:m], feats, threshold, kk)
        if m >= len(texts):
            break
    before = _maxrss_mb()
    t = time.perf_counter()
    pairs, info = _ours(method, texts, feats, threshold, kk)
    seconds = time.perf_counter() - t
    np.save(out, pairs)
    return {"seconds": seconds, "n_pairs": int(len(pairs)), "rss_before_mb": before,
            "peak_rss_mb": _maxrss_mb(), "threads": numba.get_num_threads(),
            "load_avg": os.getloadavg()[0], **info}


def _run_child(method, path, feature, threshold, k, out, timeout=7200) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.bench_e2e", "--child", method, str(path), feature,
           str(threshold), "none" if k is None else str(k), str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    if p.returncode != 0:
        return {"error": p.stderr[-2000:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- scoring


def _pack(pairs: np.ndarray) -> np.ndarray:
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    i, j = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    keep = i != j
    return np.unique((i[keep].astype(np.uint64) << np.uint64(32)) | j[keep].astype(np.uint64))


def score(texts, method_pairs: dict, threshold: float) -> dict:
    """Precision, recall and F1 of each method against the pooled truth, per judge."""
    import simhash_nb as sh

    packed = {name: _pack(p) for name, p in method_pairs.items()}
    pool = np.unique(np.concatenate(list(packed.values()) or [np.empty(0, np.uint64)]))
    i = (pool >> np.uint64(32)).astype(np.int64)
    j = (pool & np.uint64(0xFFFFFFFF)).astype(np.int64)
    out = {"pooled_pairs": int(pool.size), "judges": {}}
    for judge in JUDGES:
        t = time.perf_counter()
        sims = sh.jaccard(texts, (i, j), **FEATURES[judge][0]) if pool.size else np.empty(0)
        truth = pool[sims >= threshold]
        rows = {}
        for name, mp in packed.items():
            tp = int(np.isin(mp, truth, assume_unique=True).sum())
            prec = tp / mp.size if mp.size else float("nan")
            rec = tp / truth.size if truth.size else float("nan")
            f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
            rows[name] = {"pairs": int(mp.size), "tp": tp, "precision": prec, "recall": rec,
                          "f1": f1}
        out["judges"][judge] = {"truth_pairs": int(truth.size), "jaccard_s":
                                time.perf_counter() - t, "methods": rows}
    return out


# --------------------------------------------------------------------------- driver


def _peer_rounds(path, feature, args, outdir, with_datasketch) -> dict:
    peers = "gaoya,datasketch" if with_datasketch else "gaoya"
    return run_peers("minhash-pairs", "--input", str(path), "--threshold", str(args.threshold),
                     "--shingles", FEATURES[feature][1], "--out", str(outdir),
                     "--repeats", "1", "--peers", peers,
                     "--max-est-s", str(args.datasketch_max_s),
                     "--gaoya-tokens", args.gaoya_tokens, "--timeout", "7200",
                     timeout=4 * 3600)


def run_size(n: int, args, features: list[str], repeats: int) -> dict:
    path = corpus.path_for(n, args.seed)
    meta_path = path.with_suffix(".meta.json")
    res: dict = {"n": n, "corpus": str(path.relative_to(ROOT)),
                 "corpus_meta": json.loads(meta_path.read_text()) if meta_path.exists() else {},
                 "repeats": repeats, "runs": {}}
    tmp = Path(tempfile.mkdtemp(prefix=f"e2e{n}-"))
    runs: dict = {}  # key "feature/method" -> {"times": [...], "last": info, "pairs": path}
    # the pure SimHash path always runs (its features are the defaults: filed under char5)
    jobs = [("char5", "default")] + [(f, m) for f in features for m in OURS if m != "default"]
    if not args.no_peers and ensure_peers():
        jobs += [(f, "peers") for f in features]
    if args.methods:
        keep = {m.strip() for m in args.methods.split(",")}
        jobs = [(f, m) for f, m in jobs if m in keep]
    for r in range(repeats):
        shift = r % len(jobs)
        for feature, method in jobs[shift:] + jobs[:shift]:
            print(f"[e2e] n={n:,} round {r + 1}/{repeats}: {feature} {method}", file=sys.stderr,
                  flush=True)
            if method == "peers":
                d = tmp / f"peers-{feature}-{r}"
                out = _peer_rounds(path, feature, args, d, r == 0)
                for name, p in (out.get("peers") or {}).items():
                    _add_peer(runs, feature, name, p)
                if "error" in out:
                    runs.setdefault(f"{feature}/gaoya", {})["error"] = out["error"]
                continue
            out_file = tmp / f"{feature}-{method}-{r}.npy"
            info = _run_child(method, path, feature, args.threshold, args.k, out_file)
            key = f"{feature}/{method}"
            entry = runs.setdefault(key, {"times_s": [], "peak_rss_mb": []})
            if "error" in info:
                entry["error"] = info["error"]
                print(info["error"], file=sys.stderr)
                continue
            entry["times_s"].append(info.pop("seconds"))
            entry["peak_rss_mb"].append(info["peak_rss_mb"])
            entry.update(info=info, pairs=str(out_file))
    texts = corpus.load(path)[0]
    method_pairs = {key: np.load(e["pairs"]) for key, e in runs.items() if e.get("pairs")}
    res["score"] = score(texts, method_pairs, args.threshold)
    for e in runs.values():
        e.pop("pairs", None)
        if e.get("times_s"):
            e["median_s"] = statistics.median(e["times_s"])
            e["peak_rss_mb"] = max(e["peak_rss_mb"])
    res["runs"] = runs
    for f in tmp.rglob("*.npy"):
        f.unlink()
    return res


def _add_peer(runs: dict, feature: str, name: str, p: dict) -> None:
    status = p.get("status", "")
    if status != "ok":
        runs.setdefault(f"{feature}/{name}", {"times_s": [], "peak_rss_mb": []})["status"] = status
        if name == "datasketch":
            runs.setdefault(f"{feature}/datasketch-estimate",
                            {"times_s": [], "peak_rss_mb": []})["status"] = status
        return
    subs = [(name, p)]
    if name == "datasketch" and p.get("estimate"):
        subs.append(("datasketch-estimate", {**p, **p["estimate"]}))
    for sub, q in subs:
        e = runs.setdefault(f"{feature}/{sub}", {"times_s": [], "peak_rss_mb": []})
        e["times_s"].append(q["median_s"])
        e["peak_rss_mb"].append(p.get("peak_rss_mb"))
        e["status"] = "ok"
        e["pairs"] = q["pairs_file"]
        e["info"] = {k: p.get(k) for k in ("api", "timed_path", "threads", "version", "bands",
                                            "rows", "calibration", "gaoya_tokens")}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10,000 documents: a smoke run")
    ap.add_argument("--sizes", default=None, help="comma-separated (default 300000,1000000)")
    ap.add_argument("--features", default="word3,char5", help="word3,char5 or one of them")
    ap.add_argument("--threshold", type=float, default=THRESHOLD)
    ap.add_argument("--k", type=int, default=None,
                    help="Hamming k of the verified SimHash path (default: the library's)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="rounds (default 3 up to 300k documents, 1 above; 2 with --quick)")
    ap.add_argument("--seed", type=int, default=0, help="corpus seed")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--methods", default=None,
                    help="subset of default,verified,minhash,peers (default: all)")
    ap.add_argument("--gaoya-tokens", default="auto", choices=("auto", "own", "python"),
                    help="gaoya's own tokeniser (auto = own) or simhash_nb's shingles")
    ap.add_argument("--datasketch-max-s", type=float, default=600,
                    help="skip datasketch where its estimated time is above this")
    ap.add_argument("--out", default=None, help="results name (default e2e, e2e-quick)")
    ap.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        m, path, feature, thr, k, out = args.child
        print(json.dumps(_child(m, path, feature, float(thr), k, out)))
        return {}
    sizes = ([int(float(s)) for s in args.sizes.split(",")] if args.sizes
             else list(QUICK_SIZES if args.quick else SIZES))
    features = [f.strip() for f in args.features.split(",") if f.strip()]
    bad = [f for f in features if f not in FEATURES]
    if bad:
        ap.error(f"unknown features {bad}; choose from {list(FEATURES)}")
    name = args.out or ("e2e-quick" if args.quick else "e2e")
    res: dict = {"threshold": args.threshold, "features": features, "sizes": {},
                 "recall_note": "recall is relative to the pooled pairs of all methods",
                 "quick": args.quick}
    for n in sizes:
        reps = args.repeats or (2 if args.quick else (3 if n <= 300_000 else 1))
        res["sizes"][str(n)] = run_size(n, args, features, reps)
        path = save(name, res)  # after each size, so a long run keeps what it has
    try:
        plot(res, path.with_suffix(".png"))
    except ImportError:
        pass
    print(report(res))
    return res


# --------------------------------------------------------------------------- report


def _label(key: str, e: dict) -> str:
    feature, method = key.split("/")
    k = (e.get("info") or {}).get("k")
    label = LABELS.get(method, method)
    if method == "default":
        return f"{label} (char5, k={k})"
    return f"{label} ({feature}" + (f", k={k})" if method == "verified" and k is not None
                                    else ")")


def _rows(res: dict, judge: str, show_default: bool = True) -> list[list]:
    rows = []
    for n, sr in sorted(res["sizes"].items(), key=lambda x: int(x[0])):
        scored = sr["score"]["judges"][judge]["methods"]
        for key, e in sr["runs"].items():
            feature, method = key.split("/")
            if feature != judge and not (method == "default" and show_default):
                continue  # other features: in e2e.json ("score"), not in the table
            ref = sr["runs"].get(f"{judge}/verified", {}).get("median_s")
            s = scored.get(key)
            if not e.get("median_s") or s is None:
                why = e.get("status") or ("error" if e.get("error") else "not run")
                rows.append([_label(key, e), f"{int(n):,}", why, "", "", "", "", "", ""])
                continue
            t = e["median_s"]
            ratio = f"{t / ref:.1f}x" if ref and method != "verified" else (
                "1.0x" if method == "verified" else "")
            rss = e.get("peak_rss_mb")
            rows.append([_label(key, e), f"{int(n):,}", f"{t:.2f}",
                         f"{rss:.0f}" if rss else "", f"{s['pairs']:,}", f"{s['precision']:.3f}",
                         f"{s['recall']:.3f}", f"{s['f1']:.3f}", ratio])
    return rows


def report(res: dict) -> str:
    header = ["method", "n", "time s", "peak RSS MB", "pairs", "precision", "recall*", "F1",
              "simhash_nb verified is Nx faster"]
    out = []
    if res.get("quick"):
        out += ["**SMOKE RUN (--quick): small n on a shared machine; not figures to quote.**", ""]
    thr = res["threshold"]
    for judge in JUDGES:
        what = "word 3-grams" if judge == "word3" else "the default features (char 5-grams)"
        out += [f"Methods run with {what}, judged by exact Jaccard of {what} >= {thr}"
                f" (and the pure SimHash default path):", "",
                table(_rows(res, judge), header), ""]
    out += ["\\* Recall against the pooled truth: the pairs any method found that reach "
            "the threshold, not every such pair of the corpus. \"Nx faster\": this method's "
            "time over simhash_nb verified's with the table's features. Times are wall seconds "
            "(median of the rounds, methods taking turns), texts in, pairs out, shingling "
            "and hashing included.", ""]
    verdict = _verdict(res)
    if verdict:
        out += verdict
    png = "e2e-quick.png" if res.get("quick") else "e2e.png"
    out.append(f"![time against n](benchmarks/results/{png})")
    return "\n".join(out)


def _verdict(res: dict) -> list[str]:
    lines = []
    for n, sr in sorted(res["sizes"].items(), key=lambda x: int(x[0])):
        ours = sr["runs"].get("word3/verified", {})
        gaoya = sr["runs"].get("word3/gaoya", {})
        s = sr["score"]["judges"]["word3"]["methods"].get("word3/verified")
        if ours.get("median_s") and s:
            line = (f"- n = {int(n):,}: simhash_nb verified (word3) F1 {s['f1']:.3f} "
                    f"(target >= 0.95)")
            if gaoya.get("median_s"):
                line += (f", {gaoya['median_s'] / ours['median_s']:.1f}x faster than gaoya "
                         "(target >= 2x)")
            lines.append(line)
    return lines + [""] if lines else []


def plot(res: dict, path) -> None:
    """Time against n, log-log: a panel per feature choice, a line per method (and k)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    feats = [f for f in res["features"] if f in FEATURES]
    methods = list(LABELS)
    colours = {m: f"C{i}" for i, m in enumerate(methods)}
    fig, axes = plt.subplots(1, len(feats), figsize=(5.2 * len(feats), 5.6), sharey=True,
                             squeeze=False)
    for ax, feature in zip(axes[0], feats):
        for method in methods:
            key_f = "char5" if method == "default" else feature
            pts, label = [], None
            for n, sr in res["sizes"].items():
                e = sr["runs"].get(f"{key_f}/{method}", {})
                if e.get("median_s"):
                    pts.append((int(n), e["median_s"]))
                    label = _label(f"{key_f}/{method}", e)
            if not pts:
                continue
            pts.sort()
            style = "o-" if method in OURS else ("^:" if method.endswith("estimate") else "s--")
            ax.plot(*zip(*pts), style, color=colours[method], label=label, markersize=5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("documents (n)")
        what = "word 3-grams" if feature == "word3" else "char 5-grams (defaults)"
        ax.set_title(f"{what}, Jaccard >= {res['threshold']}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    axes[0][0].set_ylabel("seconds, texts to pairs (median)")
    if res.get("quick"):
        fig.suptitle("SMOKE RUN (--quick): not figures to quote", fontsize=10, color="C3")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
