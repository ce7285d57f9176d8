"""The public pair search: :func:`near_duplicates` (self-join or against another set)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..docstrings import shared_docs
from ..pairs import Pairs
from ..parallel import threads
from ..validation import as_fingerprints, as_words, bits_of, same_width
from .dense import dense_waves
from .docs import SEARCH_DOCS
from .engine import design_family, pair_order, search_distinct, sorted_pairs, too_many
from .groups import expand_pairs, group_identical, identical_rows, threads_for
from .layout import Work
from .options import SearchOptions


@shared_docs(**SEARCH_DOCS)
def near_duplicates(
    fps: Any,
    k: int | None = None,
    *,
    similarity: float | None = None,
    recall: float | None = None,
    method: str = "auto",
    blocks: int | None = None,
    against: Any = None,
    max_pairs: int | None = None,
    random_state: int | None = 0,
    progress: bool | None = None,
    n_jobs: int | None = None,
) -> Pairs:
    """Every pair of fingerprints within Hamming distance ``k``.

    Identical fingerprints are merged first (in linear time); the distinct ones are
    searched with the cheapest method of the cost model (:func:`table_design`):
    pigeonhole permutation tables (Manku et al., 2007) over packed words for small
    ``k``, the same tables with dense entries for large ``k``, or all pairs. The result
    is complete and lists each pair exactly once, however many tables found it: a pair
    is reported only by the first table whose key it matches. With ``recall < 1``,
    bit-sampling LSH tables may be chosen instead: each pair at distance ``k`` is then
    found with probability at least ``recall`` (more often when closer), and no pair
    beyond ``k`` is ever reported.

    Parameters
    ----------
    fps : ndarray of uint64, shape (n,) or (n, 2)
        64-bit or 128-bit fingerprints (128-bit: low word first).
    {{search_k}}
    {{search_method}}
    against : ndarray of uint64, optional
        A second set: report pairs ``(i, j)`` with ``i`` a row of ``fps`` and ``j`` a
        row of ``against`` (no pairs inside either set).
    {{search_run}}

    Returns
    -------
    Pairs
        ``i``, ``j`` (int64 rows; ``i < j`` in a self-join) and ``distance`` (uint8),
        sorted by ``(i, j)``.

    {{search_raises}}

    Notes
    -----
    {{search_notes}}

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
    >>> len(sh.near_duplicates(fps, k=1, recall=0.99))
    3
    """
    a = as_fingerprints(fps, "fps")
    opts = SearchOptions.make(bits_of(a), k, similarity, recall, method, blocks, random_state,
                              max_pairs, progress)
    a, b = _checked_sets(a, against)
    with threads(n_jobs), threads_for(a.shape[0] + (0 if b is None else b.shape[0])):
        return self_join(a, opts) if b is None else _cross_join(a, b, opts)


def _checked_sets(a, against) -> tuple[np.ndarray, np.ndarray | None]:
    """Checked fingerprints ``a`` and ``against`` (or None) as ``uint64[n, words]`` of
    one width, fewer than ``2**32`` rows in all."""
    b = None
    if against is not None:
        b = as_fingerprints(against, "against")
        same_width(a, b, ("fps", "against"))
    a2 = as_words(a)
    if b is None and a2.shape[0] >= 2**32 or b is not None and a2.shape[0] + b.shape[0] >= 2**32:
        raise ValueError("near_duplicates handles fewer than 2**32 fingerprints at a time")
    return a2, None if b is None else as_words(b)


def self_join(a, opts: SearchOptions) -> Pairs:
    """The pairs of ``a`` (``uint64[n, words]``, validated) under ``opts``: identical
    fingerprints grouped first, the distinct ones searched."""
    work = Work(a.shape[0])
    ga = group_identical(a, work)
    identical = ga.identical_pairs()
    max_pairs = opts.max_pairs
    if identical > max_pairs:
        raise too_many(identical, max_pairs, identical)
    ua = ga.distinct(a)
    design = opts.design(ua.shape[0])
    w = ga.weights()
    with opts.bar(design) as bar:
        got = search_distinct(ua, None, opts.k, design, w, w, max_pairs - identical, work,
                              random_state=opts.random_state, progress=bar)
    if got.over:
        raise too_many(got.weighted + identical, max_pairs, identical)
    i, j, d = expand_pairs(*got.result(), ga, ga, True)
    if identical:
        ii, jj, dd = identical_rows(ga)
        i, j, d = np.concatenate([i, ii]), np.concatenate([j, jj]), np.concatenate([d, dd])
    return sorted_pairs(i, j, d)


def candidate_waves(a, opts: SearchOptions, against=None):
    """Candidate pairs of ``a`` (``uint64[n, words]``, validated), or of ``a`` against
    ``against``, yielded wave by wave as ``(i, j, d)`` as the search finds them, so that
    a consumer that filters them (exact verification) never holds them all.

    A self-join yields the pairs between identical fingerprints first (they join big
    clusters early), then each table's pairs (``i < j``, each pair once). Against
    another set, ``i`` is a row of ``a`` and ``j`` one of ``against``.
    ``opts.max_pairs`` bounds the identical pairs only. Dense and sampled designs stream
    table by table; the other methods yield their pairs at once.

    Examples
    --------
    >>> import numpy as np
    >>> from simhash_nb._core.search.options import SearchOptions
    >>> a = np.array([[5], [5], [7], [2**60]], dtype=np.uint64)
    >>> waves = candidate_waves(a, SearchOptions.make(64, 2))
    >>> sorted((int(i), int(j)) for w in waves for i, j in zip(w[0], w[1]))
    [(0, 1), (0, 2), (1, 2)]
    """
    work = Work(a.shape[0] + (0 if against is None else against.shape[0]))
    ga = group_identical(a, work)
    gb = ga if against is None else group_identical(against, work)
    if against is None:
        identical = ga.identical_pairs()
        if identical > opts.max_pairs:
            raise too_many(identical, opts.max_pairs, identical)
        yield identical_rows(ga)
    ua = ga.distinct(a)
    ub = None if against is None else gb.distinct(against)
    design = opts.design(ua.shape[0], n_against=None if ub is None else ub.shape[0])
    unweighted = np.empty(0, dtype=np.int64)  # no limit to weigh the pairs against
    self_join = against is None
    with opts.bar(design) as bar:
        if design.method in ("dense", "sampling"):
            del work  # the grouping's sort buffers: the dense tables have their own
            fps = ua if self_join else np.concatenate([ua, ub])
            waves = dense_waves(np.ascontiguousarray(fps), -1 if self_join else ua.shape[0],
                                design_family(design, opts.k, opts.random_state), opts.k,
                                progress=bar, memory_bytes=opts.memory_bytes)
            for u, v, d in waves:
                yield expand_pairs(u, v, d, ga, gb, self_join)
            return
        got = search_distinct(ua, ub, opts.k, design, unweighted, unweighted, 2**62, work,
                              random_state=opts.random_state, progress=bar)
    yield expand_pairs(*got.result(), ga, gb, self_join)


def filtered_self_join(a, opts: SearchOptions, verify) -> tuple[np.ndarray, ...]:
    """The pairs of ``a`` (as :func:`self_join`) that ``verify(i, j, d)`` keeps (it
    returns the arrays it keeps, ``(i, j, d, *extra)``), filtered wave by wave as
    :func:`candidate_waves` yields them; sorted by ``(i, j)``."""
    parts = [verify(*wave) for wave in candidate_waves(a, opts)]
    out = tuple(np.concatenate(arrays) for arrays in zip(*parts, strict=True))
    order = pair_order(out[0], out[1])
    return tuple(x[order] for x in out)


def _cross_join(a, b, opts: SearchOptions) -> Pairs:
    work = Work(a.shape[0] + b.shape[0])
    ga = group_identical(a, work)
    gb = group_identical(b, work)
    ua, ub = ga.distinct(a), gb.distinct(b)
    design = opts.design(ua.shape[0], n_against=ub.shape[0])
    with opts.bar(design) as bar:
        got = search_distinct(ua, ub, opts.k, design, ga.weights(), gb.weights(),
                              opts.max_pairs, work, random_state=opts.random_state,
                              progress=bar)
    if got.over:
        raise too_many(got.weighted, opts.max_pairs, 0)
    return sorted_pairs(*expand_pairs(*got.result(), ga, gb, False))
