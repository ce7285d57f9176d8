"""Tunables in one place (as in STUMPY's ``config``): defaults, and a reset."""

from __future__ import annotations

from typing import Any

_DEFAULTS: dict[str, Any] = {
    # hamming_matrix refuses outputs larger than this many bytes.
    "max_matrix_bytes": 1 << 30,
    # Slots per parallel task for pair output before the kernel is re-run at the exact size.
    "pairs_initial_capacity": 1 << 14,
    # near_duplicates refuses to return more pairs than this (use clusters instead).
    "max_pairs": 100_000_000,
    # Documents per parallel chunk are chosen so each thread gets this many chunks.
    "chunks_per_thread": 8,
    # Texts are fingerprinted in pieces of about this many bytes (see _text.text_slices):
    # a smaller working set is faster on big batches and needs less memory.
    "text_slice_bytes": 64 << 20,
    # --- near-duplicate search (search.py, index.py) ---
    # Table sorts: the parallel first radix pass uses at most this many key bits
    # (2**radix_bits partitions); partitions are then sorted with digits of
    # radix_local_bits.
    "radix_bits": 12,
    "radix_local_bits": 8,
    # Hashed table keys get log2(n) + this many bits: collisions add ~n / 2**this candidates.
    "search_hash_extra_bits": 10,
    # Memory for the work arrays of tables sorted side by side (16 bytes per row each).
    "search_memory_bytes": 1 << 30,
    # A run of rows sharing a table key with more candidate pairs than this is searched
    # again on the bits outside the key (nested at most search_max_refinements deep).
    "search_big_run_pairs": 1 << 22,
    "search_max_refinements": 6,
    # Dense tables (entries carry the fingerprint: pigeonhole at large k, sampling): tables
    # per thread per parallel call (progress is reported between calls).
    "dense_tables_per_wave": 8,
    # Searches without k or similarity find pairs at this Jaccard similarity of shingle
    # sets, through the angle relation (k = 12 of 64 bits, 25 of 128; see k_for_similarity).
    "default_similarity": 0.7,
    # Searches modelled to take longer than this (seconds on all cores) warn first, naming a
    # cheaper alternative.
    "search_warn_seconds": 60.0,
    # ... and show a progress bar (progress=None, stderr a terminal) past this many.
    "search_progress_seconds": 10.0,
    # The automatic choice compares all pairs when that is modelled this fast (seconds on one
    # core): small searches then need no table kernels (seconds to compile, cold).
    "search_brute_seconds": 0.01,
    # Refuse table designs with more tables than this.
    "max_tables": 4096,
    # cluster_texts / dedupe_texts verify candidates in batches of this many (closest
    # first); a pair already joined by earlier batches is not verified.
    "verify_batch": 1 << 16,
    # The verified path turns a candidate away before reading its shingles when the two
    # documents' 64-bit sketches agree in fewer bins than a pair at the threshold fails
    # to reach with at most this probability (0: every candidate is verified); see
    # simhash_nb._core.pipeline.sketches.
    "verify_sketch_miss": 1e-4,
    # Cost model of table_design, seconds on one core of the reference machine (2-core
    # AMD EPYC, numba 0.68): per table (start-up), per row per table (key, partition,
    # scan), per row per local radix pass, per candidate pair, per candidate whose extra
    # bits pass (reads both fingerprints), per brute-force pair of 64-bit fingerprints.
    "search_cost_table": 20e-6,
    "search_cost_row": 8e-9,
    "search_cost_pass": 2.5e-9,
    "search_cost_candidate": 1.2e-9,
    "search_cost_verify": 60e-9,
    "search_cost_brute": 0.85e-9,
    # Dense tables: per row per table (hash, two radix passes moving the fingerprint,
    # scan), per candidate pair (a streamed, vectorised popcount), and the share more
    # of each for a second word (128 bits). Measured with the 8-lane run scan, in
    # seconds of one thread, 2026-12-01: 34 ns and 0.24 ns at 64 bits, 45 ns and
    # 0.37 ns at 128 bits, alike at 1M and 10M rows.
    "search_cost_dense_row": 34e-9,
    "search_cost_dense_word": 0.3,
    "search_cost_dense_candidate": 0.24e-9,
    "search_cost_dense_candidate_word": 0.5,
    # The verified path (near_duplicate_texts): verifying a candidate, per shingle of the
    # two documents (a merge of their sorted hashes), in the units of the costs above
    # (measured against the dense tables: 141 ms a table of 1M 128-bit rows, 270 ns a
    # candidate of 2 x 112 shingles, 2026-12-01; scaled by 1.1 with the dense costs'
    # recalibration, which keeps the k chosen on the benchmark corpora).
    "search_cost_verify_feature": 0.72e-9,
    # ... and, when the shingles are in a temporary file (a memory limit), reading them:
    # 2M documents, word 3-grams, 1GB limit: 1.7 us a candidate against 0.27 in memory,
    # about half the candidates skipped unread by the size filter (2026-12-02).
    "search_cost_read_feature": 3.0e-9,
    # The verified path searches the next wave of candidates in a background thread
    # while it verifies the current one (the search of a tight memory limit sorts one
    # table at a time, one thread; verifying from a temporary file waits on reads).
    "search_ahead": True,
    # ... and from this many texts on, k is chosen with the corpus's distances (a sample
    # of 3,000 fingerprints, all pairs): below it, verifying costs little anyway.
    "verify_sample_rows": 50_000,
    # The cost model picks dense over packed pigeonhole tables only when this many times
    # cheaper (packed tables also refine big runs of near-identical fingerprints).
    "search_dense_preference": 2.0,
    # SimhashIndex merges its newest sorted run into the previous one while the previous
    # is at most this many times larger (LSM size tiers), and compacts when more than
    # this fraction of its rows are removed.
    "index_merge_factor": 2,
    "index_compact_fraction": 0.5,
    # Identical fingerprints among fewer rows than this are grouped with numpy's sort
    # (no kernel to compile on a first call); more rows take the parallel radix sort.
    "numpy_group_rows": 20_000,
    # Brute-force joins and distance matrices that compute at most this many distances
    # (n * m; a threshold table's upper triangle) run in numpy (no kernel to compile on a
    # first call: a demo, a small tuning table); more run the parallel kernels.
    "numpy_brute_pairs": 1 << 24,
    # Batches of fewer text bytes than this find their non-ASCII pieces with numpy (no
    # kernel to compile on a first call), more with the parallel kernel.
    "numpy_segment_bytes": 1 << 23,
    # Searches and index runs over fewer rows than this run on one thread.
    "parallel_min_rows": 20_000,
    # --- Dask (distributed.py) ---
    # Table records per partition the distributed search aims for: the shuffle's default
    # partition count, and how many tables one task emits.
    "distributed_partition_rows": 1_000_000,
    # Modelled seconds to shuffle one table record between Dask workers (2-core reference
    # machine, p2p shuffle), added to table_design's cost when sh.distributed picks blocks.
    "distributed_cost_record": 1.0e-6,
    # --- threshold tuning (evaluate.py) ---
    # sh.jaccard / jaccard_pairs compare all pairs only up to this many (8 bytes each).
    "jaccard_max_all_pairs": 10_000_000,
    # threshold_table counts every pair's distance (self-join without max_k) up to this many.
    "evaluate_max_brute_pairs": 50_000_000,
    # --- slow tokenizers (jieba_features.py) ---
    # With n_jobs=None jieba uses one worker process per this many characters (at most one
    # per core); worker processes start with this multiprocessing method.
    "jieba_min_chars_per_process": 1_000_000,
    "jieba_mp_context": "spawn",
    # Characters per task sent to a worker (and per progress-bar step).
    "jieba_chunk_chars": 200_000,
    # progress=None shows a bar on jieba/callable batches of at least this many characters
    # (in a terminal or notebook).
    "progress_min_chars": 5_000_000,
    # --- progress bars of other long calls (progress=None, in a terminal or notebook;
    # see _core/progress.py), each from about 2 s on the reference machine ---
    # texts of sh.fingerprint / sh.features with the built-in tokenizers (~4 us a text);
    "progress_min_texts": 500_000,
    # distinct shingles of jaccard_pairs' documents (MinHash, verification; ~0.5 us each);
    "progress_min_shingles": 4_000_000,
    # query rows times tables of SimhashIndex.query (~0.5-2 us each);
    "progress_min_probes": 1_000_000,
    # stored documents a corpus store query searches by their signatures (~0.5 us each
    # with 200k new ones; simhash_nb._core.pipeline.signatures);
    "store_progress_rows": 4_000_000,
    # pairs threshold_table counts at every distance (~10 ns each: past the default
    # evaluate_max_brute_pairs, so a bar there is shown only when asked).
    "progress_min_pairs": 200_000_000,
}

config: dict[str, Any] = dict(_DEFAULTS)
"""Current settings; change entries in place, restore them with :func:`reset_config`."""


def reset_config() -> None:
    """Restore every tunable to its default.

    Examples
    --------
    >>> from simhash_nb.config import config, reset_config
    >>> config["max_pairs"] = 10
    >>> reset_config(); config["max_pairs"]
    100000000
    """
    config.clear()
    config.update(_DEFAULTS)
