"""Connected components of the near-duplicate graph, and deduplication masks."""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np

from .._kernels import unionfind as _uf
from .docstrings import shared_docs
from .pairs import Pairs
from .parallel import deferred_interrupt, threads
from .search.engine import TooManyPairsError, search_distinct
from .search.groups import Groups, group_identical, threads_for
from .search.layout import Work
from .search.options import SearchOptions
from .validation import as_fingerprints, as_words

__all__ = ["ChainingWarning", "KEEP_DOCS", "clusters", "dedupe"]

# A searched clustering warns of chaining when its largest cluster holds more than this
# share of the rows, of more than CHAIN_MIN_ROWS rows, and pairs of its distinct members
# sampled at random are typically (median) more than k bits apart.
CHAIN_SHARE = 0.10
CHAIN_MIN_ROWS = 50
CHAIN_SAMPLE_PAIRS = 1000

# Numpydoc blocks of every function that keeps one row per cluster (:func:`dedupe`,
# ``SimilarPairs.dedupe``, ``dedupe_texts`` on one machine and on Dask), filled into
# their ``{{keep}}`` and ``{{kept}}`` lines by :func:`~simhash_nb._core.docstrings.shared_docs`.
KEEP_DOCS = {
    "keep": """keep : {"first", "last", False}, default "first"
    Keep the first (smallest) row of each cluster, the last, or (``False``, as in
    pandas' ``drop_duplicates``) only rows that have no near-duplicate at all.""",
    "kept": """Returns
-------
ndarray of bool, shape (n,)
    True for the rows kept.

Raises
------
ValueError
    If ``keep`` is not "first", "last" or False.""",
}


class ChainingWarning(UserWarning):
    """One cluster holds a large share of the rows, joined by chains of near pairs.

    Single linkage joins ``a ~ b ~ c`` even when ``a`` and ``c`` are far apart; with a
    large ``k`` the random pairs within ``k`` bits link unrelated fingerprints into one
    giant cluster (at 64 bits, ``k = 22`` puts every row of 20,000 unrelated
    fingerprints in one cluster). Warned by :func:`~simhash_nb.clusters` and
    :func:`~simhash_nb.dedupe` after a search when the largest cluster holds more than
    10% of more than 50 rows and its members, sampled in pairs, are typically (median)
    more than ``k`` bits apart, so the cluster is a chain, not a group of near
    duplicates (a big group of identical or close rows does not warn). The message
    gives the share and points to :func:`~simhash_nb.cluster_texts` (verified Jaccard
    edges) or a smaller ``k``. A ``UserWarning``; the labels are returned as computed.
    Clusters of edges given with ``pairs=`` are not checked.

    Examples
    --------
    >>> import warnings, numpy as np, simhash_nb as sh
    >>> fps = np.random.default_rng(0).integers(0, 2**64, 2_000, dtype=np.uint64)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     labels = sh.clusters(fps, k=22)
    >>> [w.category.__name__ for w in caught]
    ['ChainingWarning']
    >>> str(caught[0].message)[:36]
    'sh.clusters: one cluster holds 100.0'
    """


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

    Single linkage chains: ``a ~ b ~ c`` is one cluster even if ``a`` and ``c`` are
    more than ``k`` apart, and at a large ``k`` chance pairs join unrelated
    fingerprints into one giant cluster. A :class:`~simhash_nb.ChainingWarning` says
    so when one cluster holds more than 10% of the rows and its members are typically
    more than ``k`` bits apart. For texts, :func:`~simhash_nb.cluster_texts` joins only
    pairs verified by exact Jaccard.

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

    Warns
    -----
    ChainingWarning
        If one cluster of a search holds more than 10% of more than 50 rows and its
        members are typically more than ``k`` bits apart.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b1111_0000, 0b0001, 0b0011, 0b1111_0000], dtype=np.uint64)
    >>> sh.clusters(fps, k=1)
    array([0, 1, 0, 0, 1])
    """
    return _cluster_labels(fps, k, similarity, recall, pairs, method, blocks, max_pairs,
                           random_state, progress, n_jobs, caller="sh.clusters")


def _cluster_labels(fps, k, similarity, recall, pairs, method, blocks, max_pairs,
                    random_state, progress, n_jobs, *, caller: str) -> np.ndarray:
    """:func:`clusters`, warning of chaining in the name of ``caller`` (one level above
    the public function)."""
    a = as_fingerprints(fps, "fps")
    n = a.shape[0]
    if pairs is not None:
        i, j = _edges(pairs, n)
        return components(n, i, j)
    bits = 64 if a.ndim == 1 else 128
    opts = SearchOptions.make(bits, k, similarity, recall, method, blocks, random_state,
                              max_pairs, progress)
    a2 = as_words(a)
    with threads(n_jobs), threads_for(n):
        work = Work(n)
        groups = group_identical(a2, work)
        distinct = groups.distinct(a2)
        u, v = _distinct_edges(distinct, opts, work)
        roots = components(groups.n_distinct, u, v)
    labels = _row_labels(groups, roots)
    _warn_if_chained(labels, groups, roots, distinct, opts.k, caller)
    return labels


def components(n: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Connected components of the edges ``(i, j)`` over ``n`` rows: each row's label
    is the smallest row of its component.

    Examples
    --------
    >>> import numpy as np
    >>> components(4, np.array([1, 3]), np.array([2, 1])).tolist()
    [0, 1, 1, 1]
    """
    with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
        return _uf.components(n, i, j)


def _distinct_edges(distinct: np.ndarray, opts: SearchOptions,
                    work: Work) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(u, v)`` of distinct fingerprints within ``opts.k`` bits, searched with
    the design ``opts`` picks; refuses more than ``opts.max_pairs``."""
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
    return u, v


def _row_labels(groups: Groups, roots: np.ndarray) -> np.ndarray:
    """Labels of the rows from the components of the distinct fingerprints."""
    if not groups.has_duplicates:
        return roots
    # distinct rows are numbered by first occurrence, so the smallest distinct row of a
    # component is the one whose first row is smallest
    return groups.first[roots[groups.inverse]]


def _warn_if_chained(labels: np.ndarray, groups: Groups, roots: np.ndarray,
                     distinct: np.ndarray, k: int, caller: str) -> None:
    """Warn (:class:`ChainingWarning`) when the largest cluster holds more than
    ``CHAIN_SHARE`` of more than ``CHAIN_MIN_ROWS`` rows and its distinct members are
    typically more than ``k`` bits apart."""
    n = labels.shape[0]
    if n <= CHAIN_MIN_ROWS:
        return
    sizes = np.bincount(labels, minlength=n)
    big = int(np.argmax(sizes))  # the first row of the largest cluster
    if sizes[big] <= CHAIN_SHARE * n:
        return
    first = groups.inverse[big] if groups.has_duplicates else big
    spread = _typical_distance(distinct, np.flatnonzero(roots == roots[first]))
    if spread <= k:
        return  # a big group of near duplicates, not a chain
    warnings.warn(
        f"{caller}: one cluster holds {sizes[big] / n:.1%} of the rows ({sizes[big]:,} of "
        f"{n:,}), and its members are typically {spread:g} bits apart, more than k={k}: "
        f"single linkage chained them through pairs within {k} bits (at large k, many "
        f"of them chance pairs). For texts, sh.cluster_texts(texts, threshold=0.7) joins "
        f"only pairs verified by exact Jaccard; for fingerprints, pass a smaller k",
        ChainingWarning, stacklevel=4,  # the caller of sh.clusters or sh.dedupe
    )


def _typical_distance(distinct: np.ndarray, members: np.ndarray) -> float:
    """Median Hamming distance of ``CHAIN_SAMPLE_PAIRS`` random pairs of ``members``
    (rows of the ``(m, words)`` array ``distinct``), seeded: the same call, the same
    answer."""
    if members.shape[0] < 2:
        return 0.0
    rng = np.random.default_rng(0)
    a = rng.choice(members, CHAIN_SAMPLE_PAIRS)
    b = rng.choice(members, CHAIN_SAMPLE_PAIRS)
    a, b = a[a != b], b[a != b]
    if a.shape[0] == 0:
        return 0.0
    d = np.bitwise_count(distinct[a] ^ distinct[b]).sum(axis=1)
    return float(np.median(d))


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


@shared_docs(**KEEP_DOCS)
def dedupe(  # the parameters of clusters, and keep: explicit, for help() and editors
        fps: Any, k: int | None = None, *, keep: Literal["first", "last", False] = "first",
        similarity: float | None = None, recall: float | None = None,
        pairs: Pairs | tuple[Any, Any] | None = None, method: str = "auto",
        blocks: int | None = None, max_pairs: int | None = None,
        random_state: int | None = 0, progress: bool | None = None,
        n_jobs: int | None = None) -> np.ndarray:
    """Boolean mask of the rows to keep so that one row per near-duplicate cluster
    remains.

    Clusters are the connected components of :func:`clusters` (a chain
    ``a ~ b ~ c`` is one cluster even if ``a`` and ``c`` are more than ``k`` apart; a
    :class:`~simhash_nb.ChainingWarning` says when one cluster holds more than 10% of
    the rows through such chains).

    Parameters
    ----------
    fps, k, similarity, recall, pairs, method, blocks, max_pairs, random_state, progress, n_jobs
        As in :func:`clusters`.
    {{keep}}

    {{kept}}
    TooManyPairsError
        As in :func:`clusters`.

    Warns
    -----
    ChainingWarning
        As in :func:`clusters`.

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
    labels = _cluster_labels(fps, k, similarity, recall, pairs, method, blocks, max_pairs,
                             random_state, progress, n_jobs, caller="sh.dedupe")
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
        with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
            return _uf.last_of_component(labels)
    sizes = np.bincount(labels, minlength=n)
    return sizes[labels] == 1

