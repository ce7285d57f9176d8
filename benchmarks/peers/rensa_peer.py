"""rensa (Rust MinHash, pyo3): MinHash + LSH pairs over parquet shards (ooc-pairs).

R-MinHash signatures of simhash_nb's shingles (built in Python, ``harness.shingles``),
an ``RMinHashLSH`` of all of them, every document queried, and each candidate pair kept
when its MinHash-estimated Jaccard (``RMinHash.jaccard``) reaches the threshold, as
gaoya's query does. No exact verification.
"""

from __future__ import annotations

import time

from harness import (
    maxrss_mb,
    pairs_from_lists,
    parse_shingles,
    read_shards,
    save_id_pairs,
    shingles,
)

NUM_PERM = 128
SEED = 42


def ooc_rensa(a):
    import numpy as np
    from rensa import RMinHash, RMinHashLSH

    t0 = time.perf_counter()
    ids, texts = read_shards(a.input)
    read_s = time.perf_counter() - t0
    kind, n = parse_shingles(a.shingles)
    bands = a.lsh_bands
    if NUM_PERM % bands:
        raise SystemExit(f"rensa: --lsh-bands {bands} must divide num_perm {NUM_PERM}")
    t1 = time.perf_counter()
    mhs = RMinHash.from_token_sets((list(shingles(t, kind, n)) for t in texts),
                                   num_perm=NUM_PERM, seed=SEED)
    t2 = time.perf_counter()
    lsh = RMinHashLSH(a.threshold, NUM_PERM, bands)
    lsh.insert_many(mhs)
    cand = pairs_from_lists(lsh.query_all(mhs))
    keep = np.fromiter((mhs[i].jaccard(mhs[j]) >= a.threshold for i, j in cand.tolist()),
                       dtype=bool, count=len(cand))
    pairs = cand[keep] if len(cand) else np.empty((0, 2), np.int64)
    compute_s = time.perf_counter() - t1
    return dict(
        api=(
            f"rensa.RMinHash.from_token_sets(shingle lists, num_perm={NUM_PERM}, seed={SEED}); "
            f"RMinHashLSH({a.threshold}, {NUM_PERM}, num_bands={bands}).insert_many, query_all; "
            "RMinHash.jaccard >= threshold per candidate"
        ),
        timed_path=(
            "read_s: every shard read into one list (pyarrow); compute_s: Python shingling "
            f"(simhash_nb's {kind} {n}-grams, harness.shingles; {t2 - t1:.1f} s with the "
            "MinHash), R-MinHash in Rust, LSH insert and query, estimate filter"
        ),
        threads=1,
        n_docs=len(texts),
        bands=bands,
        rows=NUM_PERM // bands,
        read_s=read_s,
        shingle_minhash_s=t2 - t1,
        compute_s=compute_s,
        median_s=read_s + compute_s,
        n_candidates=int(len(cand)),
        n_pairs=int(len(pairs)),
        pairs_file=save_id_pairs(a, "rensa", ids[pairs[:, 0]], ids[pairs[:, 1]]),
        peak_rss_mb=maxrss_mb(),
    )
