"""Exact Jaccard similarity: :func:`jaccard` of given pairs, :func:`jaccard_pairs` (a
threshold join with all, MinHash or SimHash candidates), :func:`minhash_bands`."""


from __future__ import annotations

import numbers
import warnings
from typing import Any

import numba
import numpy as np

from ..._kernels import jaccard as _jk
from ...config import config
from ..arrays import sorted_unique
from ..docstrings import shared_docs
from ..fingerprint import fingerprint_features
from ..pairs import pandas_module
from ..parallel import deferred_interrupt, sliced_pairs, threads, timed_slices
from ..progress import progress_bar, show_progress
from ..search import near_duplicates
from ..validation import bits_of, check_fraction
from .inputs import document_sets, n_pairs_of, pair_positions

_CANDIDATES = ("auto", "all", "minhash", "simhash")

# Numpydoc blocks shared by the functions of this module (see docstrings.shared_docs).
_DOCS = {
    "feature_options": """
        tokenizer, ngram, normalize, seed, spec, params
            Feature options, as in :func:`simhash_nb.features` (default: character
            5-grams of NFKC-lowercased text).
        """,
    "candidate_kinds": """
        - ``"all"``: every pair (exact and complete; ``n (n - 1) / 2`` comparisons, pruned
          by size and by early exit from each merge; refused above
          ``config["jaccard_max_all_pairs"]`` pairs);
        - ``"minhash"``: MinHash LSH (Broder 1997): finds a pair at similarity ``s`` with
          probability ``1 - (1 - s**rows)**bands``, at least 0.99 at the threshold by
          default (see :func:`minhash_bands`; reported in ``attrs["recall_at_threshold"]``);
          independent of SimHash, so it does not bias the evaluation of SimHash thresholds;
        - ``"simhash"``: pairs within Hamming distance ``k`` (default 12) of the documents'
          64-bit SimHash fingerprints (of the same features), found with
          :func:`simhash_nb.near_duplicates`; fast, but a pair the loose threshold misses
          is missing from the truth too, which flatters SimHash's recall above ``k``;
        - ``"auto"``: ``"all"`` when the pairs are few enough, else ``"minhash"``.
        """,
    "n_jobs_progress": """
        n_jobs : int, optional
            Threads.
        progress : bool, optional
            tqdm progress bars on stderr over the long stages: shingling the texts (as
            in :func:`simhash_nb.features`), comparing all pairs (documents), MinHash
            signatures (documents) and bands, the SimHash search (as in
            :func:`simhash_nb.near_duplicates`) and verifying the candidates (pairs).
            ``True`` shows them, ``False`` never; default: shown in a terminal or
            notebook when the documents have at least ``config["progress_min_shingles"]``
            shingles (the texts' and search's bars by their own measures).
        """,
}


# --- jaccard ------------------------------------------------------------------------------


@shared_docs(**_DOCS)
def jaccard(
    texts_or_features,
    pairs=None,
    *,
    ids=None,
    tokenizer: str | None = None,
    ngram: int | None = None,
    normalize=None,
    seed: int | None = None,
    spec=None,
    params=None,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Exact Jaccard similarity of documents' feature sets.

    ``J(A, B) = |A & B| / |A | B|`` over the distinct features (shingles) of each
    document, computed in parallel by merging sorted hash sets. Texts are shingled as
    :func:`simhash_nb.features` does, with the same options, so the similarity is that
    of the features SimHash sees (feature weights are ignored: sets, not bags).

    Parameters
    ----------
    texts_or_features : sequence of str, FeatureBatch, or list of hash arrays
        Documents. Missing texts are refused.
    pairs : Pairs, DataFrame, tuple or array, optional
        The pairs to compare: :class:`~simhash_nb.Pairs`, a DataFrame with columns ``i``
        and ``j``, a tuple ``(i, j)`` of arrays, or an int array of shape ``(m, 2)``.
        When omitted, all ``n (n - 1) / 2`` pairs ``i < j``, in the order of
        ``np.triu_indices(n, 1)`` (scipy's condensed order); refused above
        ``config["jaccard_max_all_pairs"]`` pairs (use :func:`jaccard_pairs`).
    ids : sequence, optional
        Document ids, one per document: the pairs then name documents by id.
    {{feature_options}}
    n_jobs : int, optional
        Threads (default: all).

    Returns
    -------
    numpy.ndarray of float64
        One similarity per pair, in ``[0, 1]``. Two documents without features (empty
        texts) have identical (empty) sets: similarity 1.

    Raises
    ------
    ValueError
        If no pairs are given and all pairs of the documents would exceed
        ``config["jaccard_max_all_pairs"]``.

    See Also
    --------
    jaccard_pairs : every pair above a threshold, without comparing all pairs.
    threshold_table : precision and recall of SimHash against this ground truth.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> texts = ["the cat sat on the mat", "the cat sat on a mat", "dogs bark"]
    >>> sh.jaccard(texts, [(0, 1), (0, 2)], tokenizer="word").round(3)
    array([0.833, 0.   ])
    >>> sh.jaccard(texts, tokenizer="word").round(3)  # pairs (0, 1), (0, 2), (1, 2)
    array([0.833, 0.   , 0.   ])
    """
    options = dict(tokenizer=tokenizer, ngram=ngram, normalize=normalize, seed=seed, spec=spec,
                   params=params)
    indptr, hashes, _ = document_sets(texts_or_features, options, n_jobs)
    n = indptr.shape[0] - 1
    with threads(n_jobs) as n_threads:
        if pairs is None:
            return _all_similarities(indptr, hashes, n_threads)
        i, j = pair_positions(pairs, n, ids)
        return _similarities(indptr, hashes, i, j)


def _similarities(indptr, hashes, i, j, advance=None) -> np.ndarray:
    """The Jaccard similarity of each pair ``(i[p], j[p])``, a timed slice of pairs a
    kernel call (Ctrl-C between slices); ``advance(pairs)`` (a bar's update) after each."""
    sims = np.empty(i.shape[0], dtype=np.float64)
    for lo, hi in timed_slices(i.shape[0], first=1 << 16):
        with deferred_interrupt():  # see deferred_interrupt: boxing the result must finish
            _jk.pair_similarities(indptr, hashes, i[lo:hi], j[lo:hi], sims[lo:hi])
        if advance is not None:
            advance(hi - lo)
    return sims


def _all_similarities(indptr, hashes, n_threads: int) -> np.ndarray:
    """Jaccard of every pair ``i < j`` in condensed order; refused above the limit."""
    n = indptr.shape[0] - 1
    total = n_pairs_of(n)
    limit = int(config["jaccard_max_all_pairs"])
    if total > limit:
        raise ValueError(
            f"{n:,} documents make {total:,} pairs, more than "
            f"config['jaccard_max_all_pairs'] = {limit:,}; pass the pairs to compare, "
            "or use sh.jaccard_pairs(..., threshold=...) which finds candidates first"
        )
    out = np.empty(total, dtype=np.float64)
    if total:
        with deferred_interrupt():  # at most config["jaccard_max_all_pairs"]: one call
            _jk.jaccard_all(indptr, hashes, max(1, min(n, 8 * n_threads)), out)
    return out


def minhash_bands(threshold: float, num_perm: int = 128, recall: float = 0.99) -> tuple[int, int]:
    """Bands and rows for MinHash LSH candidates at a Jaccard ``threshold``.

    A pair of similarity ``s`` becomes a candidate with probability
    ``1 - (1 - s**rows)**bands``. Among the designs with ``bands * rows <= num_perm``
    that find a pair at the threshold with probability ``>= recall``, this picks the one
    with the fewest expected candidates below the threshold (the integral of that
    probability over ``s < threshold``); candidates are verified exactly, so extra ones
    only cost time. If no design reaches ``recall``, the one closest to it.

    Examples
    --------
    >>> minhash_bands(0.5, 128)
    (35, 3)
    """
    s = np.linspace(0.0, threshold, 501)
    best, best_key = (1, 1), None
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            hit = 1.0 - (1.0 - threshold**r) ** b
            fp = float(np.trapezoid(1.0 - (1.0 - s**r) ** b, s))
            key = (0, fp) if hit >= recall else (1, -hit)
            if best_key is None or key < best_key:
                best, best_key = (b, r), key
    return best


def check_threshold(threshold) -> float:
    """A Jaccard threshold in (0, 1]."""
    return check_fraction(threshold, "threshold")


def _minhash_candidates(indptr, hashes, num_perm, bands, rows, random_state, max_pairs,
                        show: bool = False):
    """MinHash candidate pairs ``(i, j)``; ``show``: bars over the signatures and bands."""
    rng = np.random.default_rng(random_state)
    salts = rng.integers(0, 2**64, size=bands * rows, dtype=np.uint64)
    n = indptr.shape[0] - 1
    sig = np.empty((n, salts.shape[0]), np.uint64)
    with progress_bar(show, n, desc="minhash", unit="doc", unit_scale=True) as advance:
        for lo, hi in timed_slices(n, first=1024):  # Ctrl-C between slices
            with deferred_interrupt():
                _jk.minhash(indptr[lo:hi + 1], hashes, salts, sig[lo:hi])
            if advance is not None:
                advance(hi - lo)
    keys = np.empty((n, bands), np.uint64)
    with deferred_interrupt():  # see deferred_interrupt: boxing the result must finish
        _jk.band_keys(sig, bands, rows, keys)
    found = []
    total = 0
    with progress_bar(show, bands, desc="bands", unit="band") as advance:
        for b in range(bands):
            col = np.ascontiguousarray(keys[:, b])
            with deferred_interrupt():  # one band a call: Ctrl-C between bands
                packed, count = _jk.bucket_pairs(col, np.argsort(col, kind="stable"),
                                                 max_pairs)
            total += int(count)
            if total > max_pairs:
                raise ValueError(
                    f"MinHash bands give more than max_pairs={max_pairs:,} candidate pairs "
                    "(many identical or very short documents?); raise max_pairs or the "
                    "threshold"
                )
            found.append(packed)
            if advance is not None:
                advance(1)
    packed = _distinct(found)
    i = (packed >> np.uint64(32)).astype(np.int64)
    j = (packed & np.uint64(0xFFFFFFFF)).astype(np.int64)
    return i, j


_DISTINCT_ROWS = 1 << 21  # values one call of _distinct's merge takes, about


def _distinct(parts: list[np.ndarray]) -> np.ndarray:
    """The distinct values of ``parts`` (uint64 arrays), ascending, in calls of about
    ``_DISTINCT_ROWS`` values each, so that Ctrl-C is answered between them: each part is
    sorted alone, then the parts' values are merged range by range (ranges cut at
    evenly spaced values of the longest part; :func:`~simhash_nb._core.arrays.sorted_unique`
    in each). ``np.unique`` (a hash table in numpy 2.4) took 1.6-1.9 s for 2M of the
    MinHash candidates of 120k texts, and one call over all of them grew with the texts.

    Examples
    --------
    >>> import numpy as np
    >>> _distinct([np.array([5, 1, 5], np.uint64), np.array([3, 1], np.uint64)]).tolist()
    [1, 3, 5]
    """
    parts = [np.sort(p) for p in parts if p.shape[0]]
    if not parts:
        return np.empty(0, np.uint64)
    total = sum(p.shape[0] for p in parts)
    longest = max(parts, key=len)
    ranges = max(1, min(longest.shape[0], -(-total // _DISTINCT_ROWS)))
    cuts = sorted_unique(longest[np.arange(1, ranges) * longest.shape[0] // ranges])
    # part p's range r: p[bounds[r]:bounds[r + 1]]
    bounds = [np.concatenate(([0], np.searchsorted(p, cuts), [p.shape[0]])) for p in parts]
    out = []
    for r in range(cuts.shape[0] + 1):
        pieces = [p[b[r]:b[r + 1]] for p, b in zip(parts, bounds, strict=True)]
        out.append(sorted_unique(np.concatenate(pieces)))
    return np.concatenate(out)


@shared_docs(**_DOCS)
def jaccard_pairs(
    texts_or_features,
    threshold: float = 0.5,
    *,
    candidates: str = "auto",
    k: int | None = None,
    num_perm: int = 128,
    bands: tuple[int, int] | None = None,
    random_state: int | None = 0,
    max_pairs: int | None = None,
    # the feature options, as jaccard's (and features'): public signatures
    tokenizer: str | None = None,
    ngram: int | None = None,
    normalize=None,
    seed: int | None = None,
    spec=None,
    params=None,
    n_jobs: int | None = None,
    progress: bool | None = None,
):
    """Every pair of documents with Jaccard similarity ``>= threshold``: ground truth.

    Each candidate pair is verified with the exact :func:`jaccard`, so the result has
    no false positives; how complete it is depends on ``candidates``:

    {{candidate_kinds}}

    Parameters
    ----------
    texts_or_features : sequence of str, FeatureBatch, or list of hash arrays
    threshold : float, default 0.5
        Smallest Jaccard similarity of a duplicate pair, in ``(0, 1]``.
    candidates : {"auto", "all", "minhash", "simhash"}, default "auto"
    k : int, optional
        Hamming threshold of the ``"simhash"`` candidates.
    num_perm, bands, random_state : int, (int, int), int, optional
        MinHash signature length (default 128), ``(bands, rows)`` with ``bands * rows
        <= num_perm`` (default: chosen from ``threshold``), seed of the permutations.
    max_pairs : int, optional
        Refuse more candidate (or, with ``"all"``, result) pairs than this (default
        ``config["max_pairs"]``).
    {{feature_options}}
    {{n_jobs_progress}}

    Returns
    -------
    pandas.DataFrame
        Columns ``i``, ``j`` (row positions, ``i < j``) and ``jaccard``, sorted by
        ``(i, j)``: a truth for :func:`threshold_table`. ``attrs``: ``n_documents``,
        ``threshold``, ``candidates``, ``n_candidates`` (pairs checked) and, for
        MinHash, ``bands``, ``rows`` and ``recall_at_threshold``.

    Raises
    ------
    ValueError
        If ``threshold`` is not in ``(0, 1]``, ``candidates`` is unknown, there are
        ``2**32`` documents or more, ``"all"`` would compare over
        ``config["jaccard_max_all_pairs"]`` or any step give over ``max_pairs`` pairs.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> texts = ["the cat sat on the mat", "the cat sat on a mat", "dogs bark", "dogs bark!"]
    >>> truth = sh.jaccard_pairs(texts, threshold=0.4)
    >>> truth[["i", "j"]].values.tolist(), truth.attrs["candidates"]
    ([[0, 1], [2, 3]], 'all')
    """
    threshold, num_perm, max_pairs = _checked_join(threshold, candidates, num_perm, max_pairs)
    options = dict(tokenizer=tokenizer, ngram=ngram, normalize=normalize, seed=seed, spec=spec,
                   params=params, progress=progress)
    indptr, hashes, batch = document_sets(texts_or_features, options, n_jobs)
    n = indptr.shape[0] - 1
    if n >= 2**32:
        raise ValueError("jaccard_pairs handles fewer than 2**32 documents")
    candidates = _plan_candidates(candidates, n)
    attrs: dict[str, Any] = {"n_documents": n, "threshold": threshold, "candidates": candidates}
    with threads(n_jobs):
        i, j, sims = _joined(candidates, indptr, hashes, batch, threshold, k, num_perm, bands,
                             random_state, max_pairs, n_jobs, attrs, progress)
    return _pair_frame(i, j, sims, attrs)


def _pair_frame(i, j, sims, attrs: dict):
    """The pairs as a DataFrame sorted by ``(i, j)``, with ``attrs``."""
    pd = pandas_module()
    order = np.lexsort((j, i))
    df = pd.DataFrame({"i": i[order], "j": j[order], "jaccard": sims[order]})
    df.attrs.update(attrs)
    return df


def _checked_join(threshold, candidates, num_perm, max_pairs) -> tuple[float, int, int]:
    """:func:`jaccard_pairs`' threshold, signature length and pair limit, checked."""
    threshold = check_threshold(threshold)
    if candidates not in _CANDIDATES:
        raise ValueError(f"candidates must be one of {_CANDIDATES}, got {candidates!r}")
    num_perm = _check_num_perm(num_perm)
    return threshold, num_perm, int(config["max_pairs"]) if max_pairs is None else max_pairs


def _joined(candidates, indptr, hashes, batch, threshold, k, num_perm, bands, random_state,
            max_pairs, n_jobs, attrs, progress=None):
    """The pairs ``(i, j, jaccard)`` at or above ``threshold`` among the candidates of
    the planned kind; the candidate count and design go into ``attrs``. ``progress``:
    bars over the stages, by default from ``config["progress_min_shingles"]`` shingles
    (the search's by its own measure)."""
    show = show_progress(progress, hashes.shape[0], config["progress_min_shingles"])
    if candidates == "all":
        attrs["n_candidates"] = n_pairs_of(indptr.shape[0] - 1)
        return _all_pairs_above(indptr, hashes, threshold, max_pairs, show)
    if candidates == "minhash":
        i, j = _minhash_design_candidates(indptr, hashes, threshold, num_perm, bands,
                                          random_state, max_pairs, attrs, show)
    else:
        i, j = _simhash_candidates(batch, k, max_pairs, n_jobs, attrs, progress)
    attrs["n_candidates"] = int(i.shape[0])
    return _verified(indptr, hashes, i, j, threshold, show)


def _plan_candidates(candidates: str, n: int) -> str:
    """``"all"`` or ``"minhash"`` for ``"auto"``; refuse ``"all"`` over too many pairs."""
    limit = int(config["jaccard_max_all_pairs"])
    if candidates == "auto":
        return "all" if n_pairs_of(n) <= limit else "minhash"
    if candidates == "all" and n_pairs_of(n) > limit:
        raise ValueError(
            f"{n:,} documents make {n_pairs_of(n):,} pairs, more than "
            f"config['jaccard_max_all_pairs'] = {limit:,}; use candidates='minhash' (or "
            "raise the limit)"
        )
    return candidates


def _minhash_design_candidates(indptr, hashes, threshold, num_perm, bands, random_state,
                               max_pairs, attrs, show: bool = False):
    """MinHash candidates with the given or chosen bands; the design goes into ``attrs``."""
    if bands is None:
        b, r = minhash_bands(threshold, num_perm)
        _warn_low_recall(threshold, num_perm, b, r)
    else:
        b, r = _check_bands(bands, num_perm)
    i, j = _minhash_candidates(indptr, hashes, num_perm, b, r, random_state, max_pairs, show)
    attrs.update(bands=b, rows=r, recall_at_threshold=1.0 - (1.0 - threshold**r) ** b)
    return i, j


def _verified(indptr, hashes, i, j, threshold: float, show: bool = False):
    """The candidate pairs whose exact Jaccard is ``>= threshold``, with it (``show``: a
    bar over the pairs verified)."""
    with progress_bar(show, i.shape[0], desc="verifying", unit="pair",
                      unit_scale=True) as advance:
        sims = _similarities(indptr, hashes, i, j, advance)
    keep = sims >= threshold
    return i[keep], j[keep], sims[keep]


def _all_pairs_above(indptr, hashes, threshold: float, max_pairs: int, show: bool = False):
    """Every pair with Jaccard >= threshold: all pairs, pruned by size and by bounds
    (``show``: a bar over the documents whose pairs are done)."""

    n = indptr.shape[0] - 1
    if n < 2:
        e = np.empty(0, dtype=np.int64)
        return e, e.copy(), np.empty(0, dtype=np.float64)
    order = np.argsort(np.diff(indptr), kind="stable").astype(np.int64)
    n_tasks = max(1, min(n, numba.get_num_threads() * 8))
    done = [0]  # rows done: a slice run again (its tasks overflowed) is not counted twice

    def run(lo, hi, cap):
        out = _jk.pairs_above(indptr, hashes, order, lo, hi, threshold, n_tasks, cap)
        if advance is not None and hi > done[0]:
            advance(hi - done[0])
            done[0] = hi
        return out

    with progress_bar(show, n, desc="all pairs", unit="doc", unit_scale=True) as advance:
        left, right, sims, total = sliced_pairs(run, n, int(config["pairs_initial_capacity"]),
                                                first=max(1, (1 << 20) // n), limit=max_pairs)
    if total > max_pairs:
        raise ValueError(
            f"{total:,} pairs reach Jaccard >= {threshold}, more than "
            f"max_pairs={max_pairs:,} (many identical documents?); raise max_pairs or the "
            "threshold"
        )
    return left, right, sims


def _check_num_perm(num_perm) -> int:
    """MinHash signature length: an integer >= 2 (one permutation is one coin flip)."""
    if isinstance(num_perm, bool) or not isinstance(num_perm, numbers.Integral):
        raise TypeError(f"num_perm must be an integer >= 2, got {num_perm!r}")
    if num_perm < 2:
        raise ValueError(f"num_perm must be >= 2 (MinHash permutations), got {num_perm}")
    return int(num_perm)


def _warn_low_recall(threshold: float, num_perm: int, b: int, r: int, recall=0.99) -> None:
    hit = 1.0 - (1.0 - threshold**r) ** b
    if hit < recall:
        warnings.warn(
            f"num_perm={num_perm} MinHash permutations find a pair at Jaccard {threshold} "
            f"with probability {hit:.3f} only (bands={b}, rows={r}); pairs will be missed. "
            "Raise num_perm, or use candidates='all'",
            RuntimeWarning, stacklevel=3,
        )


def _check_bands(bands, num_perm: int) -> tuple[int, int]:
    try:
        b, r = (int(x) for x in bands)
    except (TypeError, ValueError):
        raise TypeError(f"bands must be a pair (bands, rows) of integers, got {bands!r}") from None
    if b < 1 or r < 1 or b * r > num_perm:
        raise ValueError(f"bands=({b}, {r}) needs 1 <= bands * rows <= num_perm={num_perm}")
    return b, r


def _simhash_candidates(batch, k, max_pairs, n_jobs, attrs, progress=None):
    fps = fingerprint_features(batch, n_jobs=n_jobs)
    bits = bits_of(fps)
    k = bits * 3 // 16 if k is None else k
    attrs["k"] = k
    p = near_duplicates(fps, k=k, max_pairs=max_pairs, n_jobs=n_jobs, progress=progress)
    return p.i.astype(np.int64), p.j.astype(np.int64)
