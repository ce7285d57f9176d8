"""Connected components of the near-duplicate graph, and deduplication masks."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .._kernels import unionfind as _uf
from .pairs import Pairs
from .parallel import threads
from .search.engine import TooManyPairsError, search_distinct
from .search.groups import group_identical, threads_for
from .search.layout import Work
from .search.options import SearchOptions
from .validation import as_fingerprints, as_words

__all__ = ["clusters", "dedupe"]


def clusters(
    fps: Any,
    k: int | None = None,
    *,
    similarity: float | None = None,
    recall: float | None = None,
    pairs: Pairs | tuple[Any, Any] | None = None,
    method: str = "auto",
    blocks: int | None = None,
    max_pairs: int | None = None,
    random_state: int | None = 0,
    progress: bool | None = None,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Cluster label of each fingerprint: connected components of the graph whose edges
    join fingerprints within ``k`` bits (single linkage).

    Identical fingerprints are merged first, so a group of ``m`` identical fingerprints
    costs ``O(m)``; only pairs of distinct fingerprints are searched (with
    :func:`simhash_nb.near_duplicates`' tables) and joined by union-find.

    Parameters
    ----------
    fps : ndarray of uint64, shape (n,) or (n, 2)
        Fingerprints. With ``pairs``, only their number is used.
    k : int, optional
        Largest Hamming distance of an edge; by default from ``similarity``.
    similarity : float, optional
        Instead of ``k``, as in :func:`~simhash_nb.near_duplicates` (default 0.7: k = 12
        at 64 bits, 25 at 128).
    recall : float, optional
        Accept edges found with this probability at distance ``k`` (sampled tables), as
        in :func:`~simhash_nb.near_duplicates`; a missed edge can split a cluster only
        if no other path joins it.
    pairs : Pairs or (i, j) arrays, optional
        Use these edges (row positions, e.g. from :func:`~simhash_nb.near_duplicates`
        with a filter applied) instead of searching.
    method, blocks, random_state, progress
        Table design overrides, the sampling seed and the progress bar, as in
        :func:`~simhash_nb.near_duplicates`.
    max_pairs : int, optional
        Refuse searches that would hold more pairs of *distinct* fingerprints than this
        (default ``config["max_pairs"]``); pairs inside groups of identical
        fingerprints are never listed.
    n_jobs : int, optional
        Threads (default: Numba's setting).

    Returns
    -------
    ndarray of int64, shape (n,)
        The smallest row index of each row's cluster (so ``labels[i] == i`` marks the
        first row of a cluster).

    Raises
    ------
    TooManyPairsError
        If the pairs of distinct fingerprints to join would exceed ``max_pairs``.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b1111_0000, 0b0001, 0b0011, 0b1111_0000], dtype=np.uint64)
    >>> sh.clusters(fps, k=1)
    array([0, 1, 0, 0, 1])
    """
    a = as_fingerprints(fps, "fps")
    n = a.shape[0]
    if pairs is not None:
        i, j = _edges(pairs, n)
        return _uf.components(n, i, j)
    bits = 64 if a.ndim == 1 else 128
    opts = SearchOptions.make(bits, k, similarity, recall, method, blocks, random_state,
                              max_pairs, progress)
    a2 = as_words(a)
    with threads(n_jobs), threads_for(n):
        work = Work(n)
        groups = group_identical(a2, work)
        distinct = groups.distinct(a2)
        design = opts.design(distinct.shape[0])
        empty = np.empty(0, dtype=np.int64)
        with opts.bar(design) as bar:
            got = search_distinct(distinct, None, opts.k, design, empty, empty,
                                  opts.max_pairs, work, random_state=opts.random_state,
                                  progress=bar)
        if got.over:
            raise TooManyPairsError(
                f"clusters would hold {got.weighted:,} pairs of distinct fingerprints in "
                f"memory, more than max_pairs={opts.max_pairs:,}; raise max_pairs "
                f"(about 17 bytes per pair) or lower k"
            )
        u, v, _ = got.result()
        roots = _uf.components(groups.n_distinct, u, v)
    if not groups.has_duplicates:
        return roots
    # distinct rows are numbered by first occurrence, so the smallest distinct row of a
    # component is the one whose first row is smallest
    return groups.first[roots[groups.inverse]]


def _edges(pairs, n: int) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(pairs, Pairs):
        i, j = pairs.i, pairs.j
    else:
        try:
            i, j = pairs[0], pairs[1]
        except (TypeError, IndexError, KeyError) as exc:
            raise TypeError("pairs must be a Pairs object or a pair of index arrays") from exc
    i, j = np.asarray(i), np.asarray(j)
    if i.shape != j.shape or i.ndim != 1:
        raise ValueError(f"pair index arrays must be 1-D of equal length, got {i.shape}, {j.shape}")
    for x in (i, j):
        if x.size and x.dtype.kind not in "iu":
            raise TypeError(f"pair indices must be integers, got dtype {x.dtype}")
        if x.size and (x.min() < 0 or x.max() >= n):
            raise ValueError(f"pair indices must be in [0, {n}), got range [{x.min()}, {x.max()}]")
    return i.astype(np.int64), j.astype(np.int64)


def dedupe(
    fps: Any,
    k: int | None = None,
    *,
    keep: Literal["first", "last", False] = "first",
    similarity: float | None = None,
    recall: float | None = None,
    pairs: Pairs | tuple[Any, Any] | None = None,
    method: str = "auto",
    blocks: int | None = None,
    max_pairs: int | None = None,
    random_state: int | None = 0,
    progress: bool | None = None,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Boolean mask of the rows to keep so that one row per near-duplicate cluster
    remains.

    Clusters are the connected components of :func:`clusters` (a chain
    ``a ~ b ~ c`` is one cluster even if ``a`` and ``c`` are more than ``k`` apart).

    Parameters
    ----------
    fps, k, similarity, recall, pairs, method, blocks, max_pairs, random_state, progress, n_jobs
        As in :func:`clusters`.
    keep : {"first", "last", False}, default "first"
        Keep the smallest row of each cluster, the largest, or (``False``, as in
        pandas' ``drop_duplicates``) only rows that have no near-duplicate at all.

    Returns
    -------
    ndarray of bool, shape (n,)

    Raises
    ------
    ValueError
        If ``keep`` is not "first", "last" or False.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b1111_0000, 0b0001, 0b0011], dtype=np.uint64)
    >>> sh.dedupe(fps, k=1)
    array([ True,  True, False, False])
    >>> sh.dedupe(fps, k=1, keep="last")
    array([False,  True, False,  True])
    >>> sh.dedupe(fps, k=1, keep=False)
    array([False,  True, False, False])
    """
    check_keep(keep)
    labels = clusters(fps, k, similarity=similarity, recall=recall, pairs=pairs, method=method,
                      blocks=blocks, max_pairs=max_pairs, random_state=random_state,
                      progress=progress, n_jobs=n_jobs)
    return keep_from_labels(labels, keep)


def check_keep(keep) -> None:
    """Refuse a ``keep`` other than "first", "last" or False."""
    if not (keep is False or (isinstance(keep, str) and keep in ("first", "last"))):
        raise ValueError(f"keep must be 'first', 'last' or False, got {keep!r}")


def keep_from_labels(labels: np.ndarray, keep) -> np.ndarray:
    """The rows :func:`dedupe` keeps, from cluster labels (each the smallest row of its
    cluster)."""
    n = labels.shape[0]
    if keep == "first":
        return labels == np.arange(n)
    if keep == "last":
        return _uf.last_of_component(labels)
    sizes = np.bincount(labels, minlength=n)
    return sizes[labels] == 1

