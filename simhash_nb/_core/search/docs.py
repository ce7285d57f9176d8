"""Numpydoc blocks of the search options, written once for every face that takes them
(see :func:`simhash_nb._core.docstrings.shared_docs`)."""

from __future__ import annotations

SEARCH_DOCS = {
    "search_k": """
        k : int, optional
            Largest Hamming distance reported (inclusive), ``0 <= k < bits``. By default
            derived from ``similarity``.
        similarity : float, optional
            Instead of ``k``: the shingle-set Jaccard similarity to find, through the angle
            relation (:func:`~simhash_nb.k_for_similarity`); default
            ``config["default_similarity"]`` = 0.7, i.e. k = 12 at 64 bits, 25 at 128.
        """,
    "search_method": """
        recall : float, optional
            Accept an approximate search that finds a pair at distance ``k`` with at least
            this probability, ``0 < recall <= 1`` (None or 1: exact).
        method : {"auto", "tables", "dense", "sampling", "brute"}, default "auto"
            Force a search method (see :class:`TableDesign`); ``"brute"`` compares all
            pairs, as the reference :func:`simhash_nb.pairs_within` does.
        blocks : int, optional
            Number of pigeonhole blocks ``b`` (``k < b <= bits``), giving ``C(b, k)``
            tables. By default chosen by :func:`table_design`.
        """,
    "search_run": """
        max_pairs : int, optional
            Refuse to return more pairs than this (default ``config["max_pairs"]``). The
            pairs are counted before any is materialised; a group of ``m`` identical
            fingerprints alone makes ``m (m - 1) / 2``.
        random_state : int or None, default 0
            Seed of the sampled tables (``recall < 1``): the same seed gives the same pairs.
        progress : bool, optional
            A progress bar over the tables (default: for searches modelled to take over
            ``config["search_progress_seconds"]``, when stderr is a terminal).
        n_jobs : int, optional
            Threads (default: Numba's setting; -1 all).
        """,
    "search_raises": """
        Raises
        ------
        TooManyPairsError
            If there would be more than ``max_pairs`` pairs (a ``ValueError``), or ``k`` is
            so large that random fingerprints alone would exceed it.
        ValueError
            If ``k`` and ``similarity`` are both given, an option is out of range, or there
            are ``2**32`` fingerprints or more.

        Warns
        -----
        SearchCostWarning
            When the modelled time exceeds ``config["search_warn_seconds"]``, with a
            cheaper alternative.
        """,
    "search_notes": """
        Packed tables are parallel radix sorts of 64-bit words holding the key, a few bits
        from outside the key (which reject most candidates without reading the
        fingerprints) and the row. Runs of rows sharing a key with more than
        ``config["search_big_run_pairs"]`` candidate pairs are searched again with tables
        over the bits that vary inside them. Dense tables sort ``(hash, row, fingerprint)``
        entries and verify the pairs of a run by streaming popcounts, which vectorise: they
        make the ``C(b, k)`` tables of large ``k`` affordable, and serve the sampled
        tables. Extra memory is about 16 bytes per fingerprint per concurrent packed
        table, ``16 + 16 * words`` per dense one (``config["search_memory_bytes"]`` caps
        it), plus 17 bytes per pair returned.
        """,
}
