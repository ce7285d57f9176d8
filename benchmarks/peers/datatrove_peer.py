"""datatrove (huggingface): its four-stage MinHash dedup pipeline over parquet shards
(ooc-pairs), on disk in a temporary folder, with the local executor.

Stages, as in datatrove's ``examples/minhash_deduplication.py``, each a
``LocalPipelineExecutor`` (``--workers`` processes, default 2):

1. ``ParquetReader`` + ``MinhashDedupSignature``: one task a shard; word 3-grams of
   datatrove's own normalisation (``simplify_text``: lowercase, punctuation removed,
   numbers and diacritics normalised) and its English word tokeniser (spaCy blank "en"),
   64-bit xxhash, ``--lsh-bands`` buckets x ``--lsh-rows`` hashes.
2. ``MinhashDedupBuckets``: one task a bucket; sorted signatures merged, matches written.
3. ``MinhashDedupCluster``: union-find over the matches, the ids to remove.
4. ``ParquetReader`` + ``MinhashDedupFilter`` + ``JsonlWriter``: the kept documents
   (its ``ParquetWriter`` fails on our shards past one batch: "child 0, file_path: string",
   a metadata struct whose schema differs between batches).

Pairs: datatrove has no pair output. Within one bucket, documents with equal band
signatures come out as a chain of matches (a-b, b-c, ...); each chain is one group of
LSH candidates, and every pair inside a group is reported (no estimate, no
verification: datatrove removes on a band match). A small step before the signatures
records each task's document ids, so that (task, position) maps back to ids.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

from harness import maxrss_mb, parse_shingles, save_id_pairs, shard_files


class RecordIds:
    """Pipeline step: pass documents on and write their ids, per task, to ``folder``."""

    def __init__(self, folder: str):
        self.folder = folder

    def __call__(self, data, rank: int = 0, world_size: int = 1):
        ids = []
        for doc in data:
            ids.append(int(doc.id))
            yield doc
        import numpy as np

        np.save(os.path.join(self.folder, f"{rank:05d}.npy"), np.asarray(ids, np.int64))


def _group_pairs(dups, np):
    """All pairs inside each chain of (f1, d1, f2, d2) matches of one bucket."""
    if len(dups) == 0:
        return np.empty((0, 4), np.int64)
    a = dups[:, :2].astype(np.int64)
    b = dups[:, 2:].astype(np.int64)
    start = np.ones(len(dups), bool)
    start[1:] = (a[1:] != b[:-1]).any(axis=1)
    bounds = np.flatnonzero(np.r_[start, True])
    single = np.diff(bounds) == 1  # a chain of one match: one pair (most groups)
    lo1 = bounds[:-1][single]
    out = [np.hstack([a[lo1], b[lo1]])]
    for g in np.flatnonzero(~single).tolist():
        lo, hi = bounds[g], bounds[g + 1]
        members = np.vstack([a[lo:lo + 1], b[lo:hi]])
        i, j = np.triu_indices(len(members), 1)
        out.append(np.hstack([members[i], members[j]]))
    return np.vstack(out)


def ooc_datatrove(a):
    import numpy as np
    from datatrove.executor.local import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import ParquetReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.hashing import HashConfig

    kind, n = parse_shingles(a.shingles)
    if kind != "word":
        raise SystemExit("datatrove's MinHash dedup shingles words only")
    files = shard_files(a.input)
    tmp = tempfile.mkdtemp(prefix="datatrove-", dir=a.tmp_dir)
    try:
        ids_dir = os.path.join(tmp, "ids")
        os.makedirs(ids_dir)
        config = MinhashConfig(n_grams=n, num_buckets=a.lsh_bands, hashes_per_bucket=a.lsh_rows,
                               hash_config=HashConfig(precision=64))
        ex = dict(workers=a.workers, start_method="fork")

        def reader():
            return ParquetReader(a.input, text_key="text", id_key="id", glob_pattern="*.parquet")

        stage_s = {}
        t = time.perf_counter()
        LocalPipelineExecutor(
            [reader(), RecordIds(ids_dir),
             MinhashDedupSignature(output_folder=f"{tmp}/signatures", config=config,
                                   language="en")],
            tasks=len(files), logging_dir=f"{tmp}/logs/signatures", **ex).run()
        stage_s["signatures"] = time.perf_counter() - t
        t = time.perf_counter()
        LocalPipelineExecutor(
            [MinhashDedupBuckets(input_folder=f"{tmp}/signatures",
                                 output_folder=f"{tmp}/buckets", config=config)],
            tasks=config.num_buckets, logging_dir=f"{tmp}/logs/buckets", **ex).run()
        stage_s["buckets"] = time.perf_counter() - t
        t = time.perf_counter()
        LocalPipelineExecutor(
            [MinhashDedupCluster(input_folder=f"{tmp}/buckets",
                                 output_folder=f"{tmp}/remove_ids", config=config)],
            tasks=1, logging_dir=f"{tmp}/logs/clusters", **ex).run()
        stage_s["clusters"] = time.perf_counter() - t
        t = time.perf_counter()
        LocalPipelineExecutor(
            [reader(), MinhashDedupFilter(input_folder=f"{tmp}/remove_ids"),
             JsonlWriter(output_folder=f"{tmp}/deduplicated")],
            tasks=len(files), logging_dir=f"{tmp}/logs/filter", **ex).run()
        stage_s["filter"] = time.perf_counter() - t

        t = time.perf_counter()
        task_ids = {int(f[:-4]): np.load(os.path.join(ids_dir, f)) for f in os.listdir(ids_dir)}
        found = []
        for f in sorted(os.listdir(f"{tmp}/buckets")):
            if f.endswith(".dups"):
                raw = np.fromfile(os.path.join(tmp, "buckets", f), dtype="<u4").reshape(-1, 4)
                found.append(_group_pairs(raw, np))
        quad = np.vstack(found) if found else np.empty((0, 4), np.int64)
        left = np.array([task_ids[f][d] for f, d in quad[:, :2].tolist()], np.int64)
        right = np.array([task_ids[f][d] for f, d in quad[:, 2:].tolist()], np.int64)
        lo, hi = np.minimum(left, right), np.maximum(left, right)
        packed = np.unique(np.stack([lo, hi], axis=1), axis=0) if len(lo) else np.empty((0, 2))
        pairs_s = time.perf_counter() - t
        removed = sum(os.path.getsize(os.path.join(tmp, "remove_ids", f)) // 4
                      for f in os.listdir(f"{tmp}/remove_ids") if f.endswith(".remove"))
        disk_mb = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tmp)
                      for f in fs) / 1e6
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dict(
        api=(
            f"datatrove MinhashConfig(n_grams={n}, num_buckets={a.lsh_bands}, "
            f"hashes_per_bucket={a.lsh_rows}, HashConfig(precision=64)); LocalPipelineExecutor"
            f"(workers={a.workers}) x 4 stages: ParquetReader + MinhashDedupSignature, "
            "MinhashDedupBuckets, MinhashDedupCluster, ParquetReader + MinhashDedupFilter + "
            "JsonlWriter"
        ),
        timed_path=(
            "the four stages (stage_s), on disk in a temporary folder; pairs_s: reading the "
            "buckets' matches back and expanding each chain of equal band signatures into "
            "its pairs (our post-processing, so that pairs can be scored)"
        ),
        threads=a.workers,
        n_docs=sum(len(v) for v in task_ids.values()),
        bands=a.lsh_bands,
        rows=a.lsh_rows,
        stage_s=stage_s,
        pairs_s=pairs_s,
        median_s=sum(stage_s.values()) + pairs_s,
        removed=int(removed),
        tmp_disk_mb=disk_mb,
        n_pairs=int(len(packed)),
        pairs_file=save_id_pairs(a, "datatrove", packed[:, 0], packed[:, 1]),
        peak_rss_mb=maxrss_mb(),
        rss_note="peak RSS of the parent process; the workers are other processes",
    )
