"""gaoya (Rust, pyo3 + rayon): SimHash fingerprints, search and index; MinHash pairs."""

from __future__ import annotations

import math
import statistics
import time

from harness import (
    _punct_table,
    load_texts,
    lsh_params,
    maxrss_mb,
    pairs_from_lists,
    parse_shingles,
    rayon_threads,
    save_pairs,
    shingles,
    texts_for,
    throughput,
    timed,
    utf8_len,
)


def gaoya_index_class():
    from gaoya.gaoya import simhash as gs  # native classes (the wrapper lacks bulk fingerprinting)

    return gs.SimHash64StringIntIndex


def fp_gaoya(texts, mode, a):
    C = gaoya_index_class()
    if mode == "words":
        idx = C(6, 3, "word", True, None)
        path = (
            "Rust, all in the timed call: Unicode lowercase, split on ASCII whitespace+ASCII "
            "punctuation (non-ASCII punctuation stays inside tokens; CJK runs are one token), "
            "SipHash-2-4 per token, bit counts; rayon-parallel over docs. Includes converting "
            "the Python list of str in and the list of int out."
        )
        ctor = (
            "SimHash64StringIntIndex(num_blocks=6, max_distance=3, analyzer='word', "
            "lowercase=True, ngram_range=None)"
        )
    else:
        idx = C(6, 3, "char", True, (4, 4))
        path = (
            "Rust, all in the timed call: Unicode lowercase, character 4-gram shingles of the "
            "raw lowercased text (whitespace and punctuation kept), SipHash-2-4, bit counts; "
            "rayon-parallel over docs."
        )
        ctor = "SimHash64StringIntIndex(6, 3, analyzer='char', lowercase=True, ngram_range=(4, 4))"
    idx.par_bulk_doc2signatures(texts[:200])  # warm-up (thread pool)
    med, times, fps = timed(lambda: idx.par_bulk_doc2signatures(texts), a.repeats)
    nb = utf8_len(texts)
    e2e = throughput(med, len(texts), nb)
    return dict(
        api=f"gaoya.gaoya.simhash.{ctor}.par_bulk_doc2signatures(texts)",
        timed_path=path,
        threads=rayon_threads(),
        n_docs=len(texts),
        bytes=nb,
        times_s=times,
        **e2e,
        core=None,
        core_note="same as e2e: the call takes raw texts",
        sample_fp=int(fps[0]) if fps else None,
    )

def search_gaoya(a):
    texts = texts_for(a)
    if texts is None:
        return dict(
            status=(
                "n/a: gaoya's Python API indexes texts/token lists only (it hashes them "
                "itself); it cannot insert precomputed fingerprints. Pass --texts FILE "
                "(or a JSON-lines --input) to time it"
            )
        )
    C = gaoya_index_class()
    maxd = a.k + 1
    blocks = a.gaoya_blocks or maxd + 2
    ids = list(range(len(texts)))
    w = C(blocks, maxd, "word", True, None)
    w.par_bulk_insert_docs(ids[:200], texts[:200])
    w.par_bulk_query(texts[:200])  # warm-up
    fp_med, _, _ = timed(
        lambda: C(6, 3, "word", True, None).par_bulk_doc2signatures(texts), a.repeats
    )
    rss0 = maxrss_mb()

    def run():
        idx = C(blocks, maxd, "word", True, None)
        idx.par_bulk_insert_docs(ids, texts)
        res = idx.par_bulk_query(texts)
        return (sum(len(r) for r in res) - len(texts)) // 2

    med, times, pairs = timed(run, a.repeats)
    return dict(
        api=(
            f"gaoya.gaoya.simhash.SimHash64StringIntIndex({blocks}, max_distance={maxd}, 'word', "
            f"lowercase=True).par_bulk_insert_docs(ids, texts) + par_bulk_query(texts)"
        ),
        timed_path=(
            "texts in: fingerprinting (as in fingerprint-words) happens inside BOTH the "
            "bulk insert and the bulk query, so each text is fingerprinted twice; "
            f"{math.comb(blocks, maxd)} hash tables; rayon-parallel. "
            "index_only_est_s = median_s - 2 * fingerprint_s (estimate)."
        ),
        threads=rayon_threads(),
        n=len(texts),
        times_s=times,
        median_s=med,
        fingerprint_s=fp_med,
        index_only_est_s=med - 2 * fp_med,
        pairs=pairs,
        maxrss_delta_mb=maxrss_mb() - rss0,
        note=(
            f"gaoya returns matches with distance STRICTLY below max_distance, so "
            f"max_distance={maxd} is passed for 'within k={a.k}' (and needs num_blocks > "
            f"max_distance); results are ids. Fingerprints are gaoya's own (SipHash, its "
            f"tokenizer), not the .npy ones, so pair counts differ from other peers"
        ),
    )

def index_gaoya(a):
    texts = texts_for(a)
    if texts is None:
        return search_gaoya(a)  # same n/a reason
    C = gaoya_index_class()
    n = len(texts)
    q = min(a.q or min(n, 10000), n)
    maxd = a.k + 1
    blocks = a.gaoya_blocks or maxd + 2
    ids = list(range(n))
    qtexts = texts[:q]
    w = C(blocks, maxd, "word", True, None)
    w.par_bulk_insert_docs(ids[:200], texts[:200])
    w.par_bulk_query(texts[:200])  # warm-up
    fp = C(6, 3, "word", True, None)
    fp_add, _, _ = timed(lambda: fp.par_bulk_doc2signatures(texts), a.repeats)
    fp_q, _, _ = timed(lambda: fp.par_bulk_doc2signatures(qtexts), a.repeats)
    rss0 = maxrss_mb()
    t_add, t_query, hits = [], [], 0
    for _ in range(max(1, a.repeats)):
        idx = C(blocks, maxd, "word", True, None)
        t0 = time.perf_counter()
        idx.par_bulk_insert_docs(ids, texts)
        t1 = time.perf_counter()
        res = idx.par_bulk_query(qtexts)
        t2 = time.perf_counter()
        hits = sum(len(r) for r in res)
        t_add.append(t1 - t0)
        t_query.append(t2 - t1)
        del idx, res
    add_s, query_s = statistics.median(t_add), statistics.median(t_query)
    return dict(
        api=(
            f"gaoya.gaoya.simhash.SimHash64StringIntIndex({blocks}, max_distance={maxd}, 'word', "
            f"lowercase=True): par_bulk_insert_docs(ids, texts) then par_bulk_query(first Q texts)"
        ),
        timed_path=(
            "texts in: add_s and query_s each include fingerprinting their texts "
            "(fingerprint_add_s / fingerprint_query_s are that part alone, timed "
            f"separately); {math.comb(blocks, maxd)} hash tables; rayon-parallel."
        ),
        threads=rayon_threads(),
        n=n,
        q=q,
        times_add_s=t_add,
        times_query_s=t_query,
        add_s=add_s,
        query_s=query_s,
        median_s=add_s + query_s,
        fingerprint_add_s=fp_add,
        fingerprint_query_s=fp_q,
        index_only_est_s=add_s + query_s - fp_add - fp_q,
        adds_per_s=n / add_s if add_s else None,
        queries_per_s=q / query_s if query_s else None,
        hits=hits,
        maxrss_delta_mb=maxrss_mb() - rss0,
        note=(
            f"max_distance={maxd} because gaoya matches distance < max_distance; results are "
            f"ids; gaoya's own fingerprints (not the .npy ones)"
        ),
    )

def gaoya_mode(a, kind: str) -> str:
    """'own' (gaoya's Rust tokeniser) or 'python' (our shingles fed as tokens)."""
    if a.gaoya_tokens != "auto":
        return a.gaoya_tokens
    # 'own' for both: gaoya's word tokeniser is close to simhash_nb's (0.8% of texts
    # differ). Its char n-grams keep punctuation and repeated white space, but feeding it
    # our char5 shingles from Python made it 3.5x slower at 10k texts for 0.5% more
    # pairs, so its native path is the fair one to time (README.md, minhash-pairs).
    return "own"


def mh_gaoya(a):
    from gaoya.gaoya import minhash as gm

    texts = load_texts(a.input, a.n)
    kind, n = parse_shingles(a.shingles)
    bands, rows = (a.bands, a.rows) if a.bands else lsh_params(a.threshold, a.num_perm)
    mode = gaoya_mode(a, kind)
    C = gm.MinHash32StringIntIndexHashSet

    def run(docs):
        ids = list(range(len(docs)))
        if mode == "own":
            idx = C(a.threshold, bands, rows, None, kind, True, (n, n))
            idx.par_bulk_insert_docs(ids, docs)
            return pairs_from_lists(idx.par_bulk_query(docs))
        toks = [list(shingles(t, kind, n)) for t in docs]
        idx = C(a.threshold, bands, rows, None, "word", True, None)
        idx.par_bulk_insert_tokens(ids, toks)
        return pairs_from_lists(idx.par_bulk_query_tokens(toks))

    if mode == "python":
        _punct_table()  # built once (untimed)
    run(texts[:200])  # warm-up: rayon thread pool
    rss0 = maxrss_mb()
    med, times, pairs = timed(lambda: run(texts), a.repeats)
    if mode == "own":
        api = (
            f"gaoya.gaoya.minhash.MinHash32StringIntIndexHashSet(jaccard_threshold={a.threshold}, "
            f"num_bands={bands}, band_width={rows}, num_hashes=None, analyzer='{kind}', "
            f"lowercase=True, ngram_range=({n}, {n})): par_bulk_insert_docs(ids, texts), "
            f"then par_bulk_query(texts)"
        )
        shingling = f"Rust: Unicode lowercase, gaoya's own tokeniser ({kind} {n}-grams)"
    else:
        api = (
            f"gaoya.gaoya.minhash.MinHash32StringIntIndexHashSet(jaccard_threshold={a.threshold}, "
            f"num_bands={bands}, band_width={rows}, num_hashes=None): "
            f"par_bulk_insert_tokens(ids, shingle lists), then par_bulk_query_tokens(shingle lists)"
        )
        shingling = (
            f"Python: simhash_nb's {kind} {n}-gram shingles (run_peers.shingles, as for "
            "datasketch), then passed to Rust as lists of str"
        )
    return dict(
        api=api,
        gaoya_tokens=mode,
        timed_path=(
            f"all timed: shingling ({shingling}), building the index (MinHash with "
            f"{bands * rows} 32-bit hashes, {bands} bands x {rows} rows), querying every text "
            "(band look-ups, then gaoya keeps candidates whose MinHash-estimated Jaccard >= "
            "threshold), and turning the result lists into unique pairs i < j (numpy); the "
            "Rust parts rayon-parallel over documents"
        ),
        threads=rayon_threads(),
        n_docs=len(texts),
        bands=bands,
        rows=rows,
        times_s=times,
        median_s=med,
        n_pairs=int(len(pairs)),
        pairs_file=save_pairs(a, "gaoya", pairs),
        maxrss_delta_mb=maxrss_mb() - rss0,
        peak_rss_mb=maxrss_mb(),
    )


def ooc_gaoya(a):
    """ooc-pairs: read every parquet shard into memory, then the minhash-pairs path."""
    import numpy as np
    from gaoya.gaoya import minhash as gm
    from harness import read_shards, save_id_pairs

    t0 = time.perf_counter()
    ids, texts = read_shards(a.input)
    read_s = time.perf_counter() - t0
    kind, n = parse_shingles(a.shingles)
    bands, rows = (a.bands, a.rows) if a.bands else lsh_params(a.threshold, a.num_perm)
    C = gm.MinHash32StringIntIndexHashSet
    t1 = time.perf_counter()
    idx = C(a.threshold, bands, rows, None, kind, True, (n, n))
    idx.par_bulk_insert_docs(list(range(len(texts))), texts)
    pairs = pairs_from_lists(idx.par_bulk_query(texts))
    compute_s = time.perf_counter() - t1
    del idx
    pairs = pairs if len(pairs) else np.empty((0, 2), np.int64)
    return dict(
        api=(
            f"gaoya.gaoya.minhash.MinHash32StringIntIndexHashSet({a.threshold}, {bands}, {rows}, "
            f"None, '{kind}', True, ({n}, {n})): par_bulk_insert_docs(rows, texts), "
            "par_bulk_query(texts)"
        ),
        timed_path=(
            "read_s: every shard read into one list of texts (pyarrow); compute_s: as "
            "minhash-pairs (gaoya's tokeniser, MinHash, LSH, its MinHash-estimate filter), "
            "result lists to unique pairs; no exact verification"
        ),
        threads=rayon_threads(),
        n_docs=len(texts),
        bands=bands,
        rows=rows,
        read_s=read_s,
        compute_s=compute_s,
        median_s=read_s + compute_s,
        n_pairs=int(len(pairs)),
        pairs_file=save_id_pairs(a, "gaoya", ids[pairs[:, 0]], ids[pairs[:, 1]]),
        peak_rss_mb=maxrss_mb(),
    )
