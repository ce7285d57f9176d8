"""The public pair search: :func:`near_duplicates` (self-join or against another set)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..pairs import Pairs
from ..parallel import threads
from ..validation import as_fingerprints, as_words, bits_of, check_k, same_width
from .design import check_blocks, table_design
from .engine import check_max_pairs, search_distinct, sorted_pairs, too_many
from .groups import expand_pairs, group_identical, identical_rows, threads_for
from .layout import Work


def near_duplicates(
    fps: Any,
    k: int = 3,
    *,
    blocks: int | None = None,
    against: Any = None,
    max_pairs: int | None = None,
    n_jobs: int | None = None,
) -> Pairs:
    """Every pair of fingerprints within Hamming distance ``k``.

    Identical fingerprints are merged first (in linear time); the distinct ones are
    searched with permutation tables (the pigeonhole method of Manku et al., 2007), or
    compared all against all when the cost model finds that cheaper. The result is
    complete and lists each pair exactly once, however many tables found it: a pair is
    reported only by the first table (in lexicographic order of block choices) whose
    key it matches, which is computed from the blocks the two fingerprints agree on (no
    global set of pairs seen).

    Parameters
    ----------
    fps : ndarray of uint64, shape (n,) or (n, 2)
        64-bit or 128-bit fingerprints (128-bit: low word first).
    k : int, default 3
        Largest Hamming distance reported (inclusive), ``0 <= k < bits``.
    blocks : int, optional
        Number of blocks ``b`` (``k < b <= bits``), giving ``C(b, k)`` tables. By default
        chosen by :func:`table_design` from the size, width and ``k``.
    against : ndarray of uint64, optional
        A second set: report pairs ``(i, j)`` with ``i`` a row of ``fps`` and ``j`` a
        row of ``against`` (no pairs inside either set).
    max_pairs : int, optional
        Refuse to return more pairs than this (default ``config["max_pairs"]``). The
        pairs are counted before any is materialised; a group of ``m`` identical
        fingerprints alone makes ``m (m - 1) / 2``.
    n_jobs : int, optional
        Threads (default: Numba's setting; -1 all).

    Returns
    -------
    Pairs
        ``i``, ``j`` (int64 rows; ``i < j`` in a self-join) and ``distance`` (uint8),
        sorted by ``(i, j)``.

    Raises
    ------
    TooManyPairsError
        If there would be more than ``max_pairs`` pairs (a ``ValueError``).

    Notes
    -----
    Each table is a parallel radix sort of 64-bit words holding the key, a few bits
    from outside the key (which reject most candidates without reading the
    fingerprints) and the row. Tables run side by side, one per thread. A *run* of rows
    sharing a key with more than ``config["search_big_run_pairs"]`` candidate pairs (a
    large group of near-identical fingerprints) is not compared pair by pair but
    searched again with tables over the bits that vary inside it, so such groups cost
    time near their output rather than their size squared. Extra memory is about
    16 bytes per fingerprint per concurrent table (``config["search_memory_bytes"]``
    caps it) plus 17 bytes per pair returned.

    See Also
    --------
    simhash_nb.pairs_within : brute-force join (the reference).
    simhash_nb.clusters, simhash_nb.dedupe : groups without listing pairs.
    simhash_nb.table_design : the automatic design and its cost model.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b0111, 0b1111_0000, 0b0001, 0b0000], dtype=np.uint64)
    >>> p = sh.near_duplicates(fps, k=1)
    >>> p.i, p.j, p.distance
    (array([0, 0, 3]), array([3, 4, 4]), array([1, 0, 1], dtype=uint8))
    >>> sh.near_duplicates(fps, k=1, against=np.array([0b0011], dtype=np.uint64)).i
    array([1, 3])
    """
    a = as_fingerprints(fps, "fps")
    bits = bits_of(a)
    k = check_k(k, bits)
    b = None
    if against is not None:
        b = as_fingerprints(against, "against")
        same_width(a, b, ("fps", "against"))
    if blocks is not None:
        blocks = check_blocks(blocks, k, bits)
    max_pairs = check_max_pairs(max_pairs)
    a2 = as_words(a)
    if b is None and a2.shape[0] >= 2**32 or b is not None and a2.shape[0] + b.shape[0] >= 2**32:
        raise ValueError("near_duplicates handles fewer than 2**32 fingerprints at a time")
    rows = a2.shape[0] + (0 if b is None else b.shape[0])
    with threads(n_jobs), threads_for(rows):
        if b is None:
            return _self_join(a2, k, blocks, max_pairs)
        return _cross_join(a2, as_words(b), k, blocks, max_pairs)


def _self_join(a, k, blocks, max_pairs) -> Pairs:
    work = Work(a.shape[0])
    ga = group_identical(a, work)
    identical = ga.identical_pairs()
    if identical > max_pairs:
        raise too_many(identical, max_pairs, identical)
    ua = ga.distinct(a)
    design = table_design(ua.shape[0], k, a.shape[1] * 64, blocks=blocks)
    w = ga.weights()
    got = search_distinct(ua, None, k, design, w, w, max_pairs - identical, work)
    if got.over:
        raise too_many(got.weighted + identical, max_pairs, identical)
    i, j, d = expand_pairs(*got.result(), ga, ga, True)
    if identical:
        ii, jj, dd = identical_rows(ga)
        i, j, d = np.concatenate([i, ii]), np.concatenate([j, jj]), np.concatenate([d, dd])
    return sorted_pairs(i, j, d)


def _cross_join(a, b, k, blocks, max_pairs) -> Pairs:
    work = Work(a.shape[0] + b.shape[0])
    ga = group_identical(a, work)
    gb = group_identical(b, work)
    ua, ub = ga.distinct(a), gb.distinct(b)
    design = table_design(ua.shape[0], k, a.shape[1] * 64, n_against=ub.shape[0], blocks=blocks)
    got = search_distinct(ua, ub, k, design, ga.weights(), gb.weights(), max_pairs, work)
    if got.over:
        raise too_many(got.weighted, max_pairs, 0)
    return sorted_pairs(*expand_pairs(*got.result(), ga, gb, False))
