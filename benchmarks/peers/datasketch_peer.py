"""datasketch (pure Python + numpy): MinHash + MinHashLSH pairs."""

from __future__ import annotations

import statistics
import time

from harness import (
    _punct_table,
    load_texts,
    lsh_params,
    maxrss_mb,
    pairs_from_lists,
    parse_shingles,
    save_pairs,
    shingles,
)


def _datasketch_run(texts, kind, n, a, bands, rows):
    """(candidate pairs, estimate-filtered pairs, seconds to candidates, seconds to filtered)."""
    import numpy as np
    from datasketch import MinHash, MinHashLSH

    t0 = time.perf_counter()
    feats = ([s.encode("utf-8") for s in shingles(t, kind, n)] for t in texts)
    mhs = list(MinHash.generator(feats, num_perm=a.num_perm))
    lsh = MinHashLSH(threshold=a.threshold, num_perm=a.num_perm, params=(bands, rows))
    with lsh.insertion_session() as session:
        for key, m in enumerate(mhs):
            session.insert(key, m, check_duplication=False)
    pairs = pairs_from_lists([lsh.query(m) for m in mhs])
    t1 = time.perf_counter()
    # the same candidates kept when their MinHash estimate reaches the threshold (gaoya does
    # this inside its query): MinHash.jaccard, vectorised over the candidate pairs
    sig = np.stack([m.hashvalues for m in mhs]) if mhs else np.empty((0, a.num_perm))
    est = np.empty(len(pairs))
    for lo in range(0, len(pairs), 1 << 16):
        p = pairs[lo : lo + (1 << 16)]
        est[lo : lo + len(p)] = (sig[p[:, 0]] == sig[p[:, 1]]).mean(axis=1)
    kept = pairs[est >= a.threshold]
    t2 = time.perf_counter()
    return pairs, kept, t1 - t0, t2 - t0


def mh_datasketch(a):
    texts = load_texts(a.input, a.n)
    kind, n = parse_shingles(a.shingles)
    bands, rows = (a.bands, a.rows) if a.bands else lsh_params(a.threshold, a.num_perm)
    _punct_table()  # built once (untimed): ~1 s over all code points
    m = min(len(texts), a.calibrate_docs)
    _, _, _, cal_s = _datasketch_run(texts[:m], kind, n, a, bands, rows)
    est_s = cal_s * len(texts) / max(m, 1)
    base = dict(
        api=(
            f"datasketch.MinHash.generator(shingle utf-8 bytes per doc, num_perm={a.num_perm}) "
            f"(MinHash.update_batch, default sha1_hash32, scheme 'affine32'); "
            f"MinHashLSH(threshold={a.threshold}, num_perm={a.num_perm}, params=({bands}, {rows}))"
            f" filled in an insertion_session, then lsh.query(m) for every doc"
        ),
        timed_path=(
            "all timed: Python shingling (normalise: NFKC, lower, punctuation/symbols to "
            f"space, white space collapsed; {kind} {n}-grams as in simhash_nb), utf-8 "
            "encoding, MinHash (sha1 per shingle, numpy permutations), LSH insert of all, "
            "query of all, result lists to unique pairs i < j. 'candidates' are the raw LSH "
            "results; 'estimate' additionally keeps pairs whose MinHash-estimated Jaccard "
            ">= threshold (MinHash.jaccard, vectorised), as gaoya's query does"
        ),
        threads=1,
        n_docs=len(texts),
        bands=bands,
        rows=rows,
        calibration=dict(n_docs=m, seconds=cal_s, est_full_s=est_s),
    )
    if est_s > a.max_est_s:
        return dict(
            base,
            status=f"skipped (too slow: est. {est_s / 60:.0f} min)",
            note=f"linear extrapolation from {m} docs ({cal_s:.2f} s); --max-est-s {a.max_est_s:g}",
        )
    rss0 = maxrss_mb()
    reps = max(1, a.repeats)
    cand_t, est_t = [], []
    for _ in range(reps):
        pairs, kept, t_c, t_e = _datasketch_run(texts, kind, n, a, bands, rows)
        cand_t.append(t_c)
        est_t.append(t_e)
    return dict(
        base,
        times_s=cand_t,
        median_s=statistics.median(cand_t),
        n_pairs=int(len(pairs)),
        pairs_file=save_pairs(a, "datasketch", pairs),
        estimate=dict(
            times_s=est_t,
            median_s=statistics.median(est_t),
            n_pairs=int(len(kept)),
            pairs_file=save_pairs(a, "datasketch-estimate", kept),
        ),
        maxrss_delta_mb=maxrss_mb() - rss0,
        peak_rss_mb=maxrss_mb(),
    )
