"""Threshold tuning: Jaccard ground truth, precision and recall per Hamming threshold.

"Why k = 3?" depends on the texts. This module gives the pieces to answer it on yours:

- :func:`jaccard` — exact Jaccard similarity of the documents' feature sets (the same
  shingles :func:`simhash_nb.features` makes), for given pairs or all pairs;
- :func:`jaccard_pairs` — every pair above a Jaccard threshold, with candidates from
  MinHash bands or a loose SimHash threshold when all pairs would be too many;
- :func:`threshold_table` — true/false positives, precision, recall and F1 for every
  Hamming threshold ``k``, against Jaccard pairs, cluster labels or labelled pairs;
- :func:`recommend_k` — the threshold that meets a target, and why.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any

import numpy as np

from ._kernels import jaccard as _jk
from ._parallel import threads
from ._validation import as_fingerprints, bits_of
from .config import config
from .features import FeatureBatch
from .pairs import Pairs

__all__ = ["Recommendation", "jaccard", "jaccard_pairs", "recommend_k", "threshold_table"]

_CANDIDATES = ("auto", "all", "minhash", "simhash")


# --- input: documents as sorted sets ----------------------------------------------------


def _sorted_sets(fb: FeatureBatch) -> tuple[np.ndarray, np.ndarray]:
    """CSR arrays whose runs are strictly increasing (sorted, distinct) hashes."""
    fb = fb.validated()
    indptr, hashes = fb.indptr, fb.hashes
    if hashes.shape[0] < 2:
        return indptr, hashes
    up = hashes[1:] > hashes[:-1]
    boundary = np.zeros(hashes.shape[0] - 1, dtype=bool)
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < hashes.shape[0])]
    boundary[starts - 1] = True
    if np.all(up | boundary):
        return indptr, hashes
    doc = np.repeat(np.arange(len(fb), dtype=np.int64), np.diff(indptr))
    order = np.lexsort((hashes, doc))
    h, d = hashes[order], doc[order]
    keep = np.ones(h.shape[0], dtype=bool)
    keep[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
    h, d = h[keep], d[keep]
    counts = np.bincount(d, minlength=len(fb))
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return indptr, np.ascontiguousarray(h)


def _looks_like_hash_lists(x) -> bool:
    if isinstance(x, (list, tuple)) and len(x) > 0:
        first = x[0]
        return isinstance(first, (np.ndarray, list, tuple))
    return False


def _document_sets(x, options: dict, n_jobs):
    """Texts, a FeatureBatch or per-document hash lists to sorted-set CSR arrays.

    Returns ``(indptr, hashes, batch)``: ``batch`` is the FeatureBatch with its weights
    (as :func:`simhash_nb.features` made it, or as given), for fingerprinting.
    """
    if isinstance(x, FeatureBatch):
        return (*_sorted_sets(x), x)
    if isinstance(x, Pairs):
        raise TypeError("jaccard needs texts or features, not Pairs")
    if isinstance(x, np.ndarray) and x.dtype == np.uint64:
        raise TypeError(
            "jaccard needs texts or features (sh.features(texts)), not fingerprints: "
            "Jaccard similarity is defined on feature sets"
        )
    if _looks_like_hash_lists(x):
        fb = FeatureBatch.from_lists(x)
        return (*_sorted_sets(fb), fb)
    from ._text import to_arrow
    from .features import features

    arr = to_arrow(x)
    if arr.null_count:
        missing = np.flatnonzero(~arr.is_valid().to_numpy(zero_copy_only=False))
        raise ValueError(
            f"{arr.null_count} texts are missing (first at positions {missing[:5].tolist()}); "
            "Jaccard similarity needs every text: drop or fill them first"
        )
    fb = features(arr, **{k: v for k, v in options.items() if v is not None}, n_jobs=n_jobs)
    return (*_sorted_sets(fb), fb)


def _pair_count(n: int) -> int:
    return n * (n - 1) // 2


# --- input: pairs -------------------------------------------------------------------------


def _as_positions(values, n: int, ids, what: str) -> np.ndarray:
    """Map pair entries to row positions: through ``ids`` if given, else as integers."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {values.shape}")
    if ids is not None:
        import pandas as pd

        index = ids if isinstance(ids, pd.Index) else pd.Index(np.asarray(ids, dtype=object))
        if len(index) != n:
            raise ValueError(f"ids has {len(index)} entries but there are {n} documents")
        if not index.is_unique:
            dup = index[index.duplicated()][:3].tolist()
            raise ValueError(f"ids must be unique; repeated: {dup}")
        pos = index.get_indexer(pd.Index(values.astype(object)))
        unknown = pos < 0
        if unknown.any():
            bad = values[unknown][:5].tolist()
            raise ValueError(
                f"{int(unknown.sum())} entries of {what} are not among the ids "
                f"(first: {bad})"
            )
        return pos.astype(np.int64)
    if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
        if values.dtype == object or np.issubdtype(values.dtype, np.floating):
            try:
                as_int = values.astype(np.int64)
            except (TypeError, ValueError):
                as_int = None
            if as_int is not None and np.array_equal(as_int, values):
                values = as_int
        if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
            raise TypeError(
                f"{what} must hold integer row positions, got dtype {values.dtype}; "
                "pass ids= to refer to documents by id"
            )
    values = values.astype(np.int64)
    bad = (values < 0) | (values >= n)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{what}[{first}] = {int(values[first])} is not a row position of the "
            f"{n} documents ({int(bad.sum())} such entries); pass ids= for document ids"
        )
    return values


_LABEL_COLUMNS = ("duplicate", "label")
_SIMILARITY_COLUMNS = ("jaccard", "similarity")


def _pair_columns(pairs) -> tuple[Any, Any, Any, Any]:
    """Split any pair table into ``(i, j, label or None, similarity or None)``."""
    import pandas as pd

    if isinstance(pairs, Pairs):
        return pairs.i, pairs.j, None, None
    if isinstance(pairs, pd.DataFrame):
        missing = [c for c in ("i", "j") if c not in pairs.columns]
        if missing:
            raise ValueError(
                f"a pair table needs columns 'i' and 'j'; got {list(pairs.columns)}"
            )
        label = next((pairs[c] for c in _LABEL_COLUMNS if c in pairs.columns), None)
        sim = next((pairs[c] for c in _SIMILARITY_COLUMNS if c in pairs.columns), None)
        return pairs["i"].to_numpy(), pairs["j"].to_numpy(), label, sim
    if isinstance(pairs, tuple) and len(pairs) in (2, 3):
        label = pairs[2] if len(pairs) == 3 else None
        return pairs[0], pairs[1], label, None
    arr = np.asarray(pairs)
    if arr.ndim == 2 and arr.shape[1] in (2, 3):
        label = arr[:, 2] if arr.shape[1] == 3 else None
        return arr[:, 0], arr[:, 1], label, None
    raise TypeError(
        "pairs must be a Pairs, a DataFrame with columns 'i' and 'j', a tuple (i, j) or "
        f"(i, j, label), or an array of shape (m, 2) or (m, 3); got {type(pairs).__name__}"
    )


def _pair_positions(pairs, n: int, ids) -> tuple[np.ndarray, np.ndarray]:
    i, j, _, _ = _pair_columns(pairs)
    i = _as_positions(i, n, ids, "i")
    j = _as_positions(j, n, ids, "j")
    if i.shape != j.shape:
        raise ValueError(f"i and j differ in length: {i.shape[0]} and {j.shape[0]}")
    return i, j


def _as_bool_labels(label, m: int) -> np.ndarray:
    lab = np.asarray(label)
    if lab.shape != (m,):
        raise ValueError(f"pair labels have shape {lab.shape}, expected ({m},)")
    if lab.dtype == bool:
        return lab
    if lab.dtype == object:
        if any(v is None or (isinstance(v, float) and v != v) for v in lab):
            raise ValueError("pair labels must not be missing; every pair needs True or False")
    try:
        as_num = lab.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"pair labels must be booleans or 0/1, got dtype {lab.dtype}") from None
    if np.isnan(as_num).any():
        raise ValueError("pair labels must not be missing; every pair needs True or False")
    if not np.all((as_num == 0) | (as_num == 1)):
        raise ValueError("pair labels must be booleans or 0/1")
    return as_num == 1


# --- jaccard ------------------------------------------------------------------------------


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
    tokenizer, ngram, normalize, seed, spec, params
        Feature options, as in :func:`simhash_nb.features` (default: character
        4-grams of NFKC-lowercased text).
    n_jobs : int, optional
        Threads (default: all).

    Returns
    -------
    numpy.ndarray of float64
        One similarity per pair, in ``[0, 1]``. Two documents without features (empty
        texts) have identical (empty) sets: similarity 1.

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
    indptr, hashes, _ = _document_sets(texts_or_features, options, n_jobs)
    n = indptr.shape[0] - 1
    with threads(n_jobs) as n_threads:
        if pairs is None:
            total = _pair_count(n)
            limit = int(config["jaccard_max_all_pairs"])
            if total > limit:
                raise ValueError(
                    f"{n:,} documents make {total:,} pairs, more than "
                    f"config['jaccard_max_all_pairs'] = {limit:,}; pass the pairs to compare, "
                    "or use sh.jaccard_pairs(..., threshold=...) which finds candidates first"
                )
            out = np.empty(total, dtype=np.float64)
            if total:
                _jk.jaccard_all(indptr, hashes, max(1, min(n, 8 * n_threads)), out)
            return out
        i, j = _pair_positions(pairs, n, ids)
        out = np.empty(i.shape[0], dtype=np.float64)
        if i.shape[0]:
            _jk.jaccard_pairs(indptr, hashes, i, j, out)
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


def _check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"threshold must be a number in (0, 1], got {threshold!r}")
    t = float(threshold)
    if not 0.0 < t <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    return t


def _minhash_candidates(indptr, hashes, num_perm, bands, rows, random_state, max_pairs):
    rng = np.random.default_rng(random_state)
    salts = rng.integers(0, 2**64, size=bands * rows, dtype=np.uint64)
    n = indptr.shape[0] - 1
    sig = _jk.minhash(indptr, hashes, salts, np.empty((n, salts.shape[0]), np.uint64))
    keys = _jk.band_keys(sig, bands, rows, np.empty((n, bands), np.uint64))
    found = []
    total = 0
    for b in range(bands):
        col = np.ascontiguousarray(keys[:, b])
        packed, count = _jk.bucket_pairs(col, np.argsort(col, kind="stable"), max_pairs)
        total += int(count)
        if total > max_pairs:
            raise ValueError(
                f"MinHash bands give more than max_pairs={max_pairs:,} candidate pairs "
                "(many identical or very short documents?); raise max_pairs or the threshold"
            )
        found.append(packed)
    packed = np.unique(np.concatenate(found)) if found else np.empty(0, np.uint64)
    i = (packed >> np.uint64(32)).astype(np.int64)
    j = (packed & np.uint64(0xFFFFFFFF)).astype(np.int64)
    return i, j


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
    tokenizer: str | None = None,
    ngram: int | None = None,
    normalize=None,
    seed: int | None = None,
    spec=None,
    params=None,
    n_jobs: int | None = None,
):
    """Every pair of documents with Jaccard similarity ``>= threshold``: ground truth.

    Each candidate pair is verified with the exact :func:`jaccard`, so the result has
    no false positives; how complete it is depends on ``candidates``:

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

    Parameters
    ----------
    texts_or_features : sequence of str, FeatureBatch, or list of hash arrays
    threshold : float, default 0.5
        Smallest Jaccard similarity of a duplicate pair, in ``(0, 1]``.
    candidates : {"auto", "all", "minhash", "simhash"}, default "auto"
    k : int, optional
        Hamming threshold of the ``"simhash"`` candidates.
    num_perm : int, default 128
        MinHash signature length.
    bands : (int, int), optional
        MinHash ``(bands, rows)`` with ``bands * rows <= num_perm`` (default: chosen
        from ``threshold``).
    random_state : int, optional
        Seed of the MinHash permutations.
    max_pairs : int, optional
        Refuse more candidate (or, with ``"all"``, result) pairs than this (default
        ``config["max_pairs"]``).
    tokenizer, ngram, normalize, seed, spec, params
        Feature options, as in :func:`simhash_nb.features`.
    n_jobs : int, optional
        Threads.

    Returns
    -------
    pandas.DataFrame
        Columns ``i``, ``j`` (row positions, ``i < j``) and ``jaccard``, sorted by
        ``(i, j)``. ``attrs`` holds ``n_documents``, ``threshold``, ``candidates``, the
        number of candidate pairs checked and, for MinHash, the bands and
        ``recall_at_threshold``. Pass it to :func:`threshold_table` as the truth.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> texts = ["the cat sat on the mat", "the cat sat on a mat", "dogs bark", "dogs bark!"]
    >>> truth = sh.jaccard_pairs(texts, threshold=0.4)
    >>> truth[["i", "j"]].values.tolist(), truth.attrs["candidates"]
    ([[0, 1], [2, 3]], 'all')
    """
    import pandas as pd

    threshold = _check_threshold(threshold)
    if candidates not in _CANDIDATES:
        raise ValueError(f"candidates must be one of {_CANDIDATES}, got {candidates!r}")
    num_perm = _check_num_perm(num_perm)
    if max_pairs is None:
        max_pairs = int(config["max_pairs"])
    options = dict(tokenizer=tokenizer, ngram=ngram, normalize=normalize, seed=seed, spec=spec,
                   params=params)
    indptr, hashes, batch = _document_sets(texts_or_features, options, n_jobs)
    n = indptr.shape[0] - 1
    if n >= 2**32:
        raise ValueError("jaccard_pairs handles fewer than 2**32 documents")
    attrs: dict[str, Any] = {"n_documents": n, "threshold": threshold}
    limit = int(config["jaccard_max_all_pairs"])
    if candidates == "auto":
        candidates = "all" if _pair_count(n) <= limit else "minhash"
    elif candidates == "all" and _pair_count(n) > limit:
        raise ValueError(
            f"{n:,} documents make {_pair_count(n):,} pairs, more than "
            f"config['jaccard_max_all_pairs'] = {limit:,}; use candidates='minhash' (or "
            "raise the limit)"
        )
    attrs["candidates"] = candidates
    with threads(n_jobs):
        if candidates == "all":
            i, j, sims = _all_pairs_above(indptr, hashes, threshold, max_pairs)
            attrs["n_candidates"] = _pair_count(n)
        else:
            if candidates == "minhash":
                if bands is None:
                    b, r = minhash_bands(threshold, num_perm)
                    _warn_low_recall(threshold, num_perm, b, r)
                else:
                    b, r = _check_bands(bands, num_perm)
                i, j = _minhash_candidates(indptr, hashes, num_perm, b, r, random_state, max_pairs)
                attrs.update(bands=b, rows=r,
                             recall_at_threshold=1.0 - (1.0 - threshold**r) ** b)
            else:
                i, j = _simhash_candidates(batch, k, max_pairs, n_jobs, attrs)
            attrs["n_candidates"] = int(i.shape[0])
            sims = np.empty(i.shape[0], dtype=np.float64)
            if i.shape[0]:
                _jk.jaccard_pairs(indptr, hashes, i, j, sims)
            keep = sims >= threshold
            i, j, sims = i[keep], j[keep], sims[keep]
    order = np.lexsort((j, i))
    df = pd.DataFrame({"i": i[order], "j": j[order], "jaccard": sims[order]})
    df.attrs.update(attrs)
    return df


def _all_pairs_above(indptr, hashes, threshold: float, max_pairs: int):
    """Every pair with Jaccard >= threshold: all pairs, pruned by size and by bounds."""
    import numba

    n = indptr.shape[0] - 1
    if n < 2:
        e = np.empty(0, dtype=np.int64)
        return e, e.copy(), np.empty(0, dtype=np.float64)
    order = np.argsort(np.diff(indptr), kind="stable").astype(np.int64)
    n_tasks = max(1, min(n, numba.get_num_threads() * 8))
    cap = int(config["pairs_initial_capacity"])
    left, right, sims, counts = _jk.pairs_above(indptr, hashes, order, threshold, n_tasks, cap)
    if counts.sum() > max_pairs:
        raise ValueError(
            f"{int(counts.sum()):,} pairs reach Jaccard >= {threshold}, more than "
            f"max_pairs={max_pairs:,} (many identical documents?); raise max_pairs or the "
            "threshold"
        )
    if counts.max() > cap:
        cap = int(counts.max())
        left, right, sims, counts = _jk.pairs_above(indptr, hashes, order, threshold,
                                                    n_tasks, cap)
    keep = (np.arange(n_tasks * cap) % cap) < np.repeat(counts, cap)
    return left[keep], right[keep], sims[keep]


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
        import warnings

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


def _simhash_candidates(batch, k, max_pairs, n_jobs, attrs):
    from .fingerprint import fingerprint_features
    from .search import near_duplicates

    fps = fingerprint_features(batch, n_jobs=n_jobs)
    bits = bits_of(fps)
    k = bits * 3 // 16 if k is None else k
    attrs["k"] = k
    p = near_duplicates(fps, k=k, max_pairs=max_pairs, n_jobs=n_jobs)
    return p.i.astype(np.int64), p.j.astype(np.int64)


# --- ground truth for threshold tables ----------------------------------------------------


@dataclasses.dataclass
class _Truth:
    """Ground truth in one of three forms.

    ``labels``: cluster id per document (self-join: same id = duplicate);
    ``positives``: every duplicate pair (self-join: pairs not listed are not duplicates);
    ``labelled``: pairs with a True/False label (only they are evaluated).
    """

    kind: str
    labels: np.ndarray | None = None
    i: np.ndarray | None = None
    j: np.ndarray | None = None
    label: np.ndarray | None = None


def _labels_to_codes(labels, n: int) -> np.ndarray:
    import pandas as pd

    if len(labels) != n:
        raise ValueError(
            f"labels has {len(labels)} entries but there are {n} fingerprints; give one "
            "cluster id per document"
        )
    codes, _ = pd.factorize(pd.Series(labels) if not isinstance(labels, pd.Series) else labels)
    codes = np.asarray(codes, dtype=np.int64).copy()
    missing = codes < 0
    if missing.any():  # a document without a label is nobody's duplicate
        codes[missing] = codes.max(initial=-1) + 1 + np.arange(int(missing.sum()))
    return codes


def _parse_truth(truth, n: int, ids, threshold) -> _Truth:
    import pandas as pd

    n_docs = getattr(truth, "attrs", {}).get("n_documents") if isinstance(
        truth, pd.DataFrame) else None
    if n_docs is not None and n_docs != n:
        raise ValueError(
            f"the ground truth was computed for {n_docs} documents but there are {n} "
            "fingerprints; texts and fingerprints must be the same documents in the same order"
        )
    is_pair_table = isinstance(truth, (Pairs, pd.DataFrame)) or (
        isinstance(truth, tuple) and len(truth) in (2, 3) and all(np.ndim(t) == 1 for t in truth)
    ) or (isinstance(truth, np.ndarray) and truth.ndim == 2)
    if not is_pair_table:
        if isinstance(truth, (str, bytes)) or np.ndim(truth) != 1:
            raise TypeError(
                "truth must be cluster labels (one per document), a pair table "
                "(DataFrame with columns i, j and optionally duplicate/label or jaccard), "
                f"Pairs, or a tuple (i, j[, label]); got {type(truth).__name__}"
            )
        if threshold is not None:
            raise ValueError("threshold applies to a pair table with a 'jaccard' column")
        return _Truth("labels", labels=_labels_to_codes(truth, n))
    i, j, label, sim = _pair_columns(truth)
    i = _as_positions(i, n, ids, "i")
    j = _as_positions(j, n, ids, "j")
    if i.shape != j.shape:
        raise ValueError(f"i and j differ in length: {i.shape[0]} and {j.shape[0]}")
    same = i == j
    if same.any():
        first = int(np.flatnonzero(same)[0])
        raise ValueError(f"pair {first} joins document {int(i[first])} with itself")
    if label is not None:
        if threshold is not None:
            raise ValueError("threshold applies to a 'jaccard' column, not to labelled pairs")
        return _Truth("labelled", i=i, j=j, label=_as_bool_labels(label, i.shape[0]))
    if threshold is not None:
        if sim is None:
            raise ValueError("threshold needs a pair table with a 'jaccard' column")
        t = _check_threshold(threshold)
        lowest = getattr(truth, "attrs", {}).get("threshold")
        if lowest is not None and t < lowest:
            raise ValueError(
                f"threshold={t} is below the threshold the pairs were collected at ({lowest}); "
                "pairs between them are not in the table: recompute with jaccard_pairs"
            )
        keep = np.asarray(sim, dtype=np.float64) >= t
        i, j = i[keep], j[keep]
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    packed = np.unique(lo.astype(np.uint64) * np.uint64(max(n, 1)) + hi.astype(np.uint64))
    i = (packed // np.uint64(max(n, 1))).astype(np.int64)
    j = (packed % np.uint64(max(n, 1))).astype(np.int64)
    return _Truth("positives", i=i, j=j)


def _distances(fps: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    d = np.bitwise_count(fps[i] ^ fps[j]).astype(np.int64)
    return d if d.ndim == 1 else d.sum(axis=1)


def _self_join_counts(fps, truth: _Truth, max_k: int | None, n_jobs):
    """Per-distance counts ``(all pairs, true pairs)`` up to ``K`` and the total of true pairs."""
    n = fps.shape[0]
    bits = bits_of(fps)
    top = bits if max_k is None else max_k
    codes = truth.labels
    if truth.kind == "labels":
        sizes = np.bincount(codes)
        n_true = int((sizes * (sizes - 1) // 2).sum())
    else:
        n_true = int(truth.i.shape[0])
    all_hist = np.zeros(top + 1, dtype=np.int64)
    pos_hist = np.zeros(top + 1, dtype=np.int64)
    if truth.kind == "positives" and n_true:
        d = _distances(fps, truth.i, truth.j)
        pos_hist += np.bincount(d[d <= top], minlength=top + 1)[: top + 1]
    if max_k is None:
        limit = int(config["evaluate_max_brute_pairs"])
        if _pair_count(n) > limit:
            raise ValueError(
                f"{n:,} fingerprints have {_pair_count(n):,} pairs, more than "
                f"config['evaluate_max_brute_pairs'] = {limit:,} to count at every distance; "
                "pass max_k= to count pairs up to that distance with near_duplicates"
            )
        from .hamming import hamming_matrix

        chunk = max(1, (1 << 24) // max(n, 1))
        for s in range(0, n, chunk):
            e = min(n, s + chunk)
            m = hamming_matrix(fps[s:e], fps[s:])
            upper = np.arange(n - s)[None, :] > np.arange(e - s)[:, None]
            all_hist += np.bincount(m[upper], minlength=top + 1)
            if truth.kind == "labels":
                same = upper & (codes[s:e, None] == codes[None, s:])
                pos_hist += np.bincount(m[same], minlength=top + 1)
    elif n >= 2:
        from .search import near_duplicates

        with threads(n_jobs):
            p = near_duplicates(fps, k=max_k)
        d = p.distance.astype(np.int64)
        all_hist += np.bincount(d, minlength=top + 1)[: top + 1]
        if truth.kind == "labels":
            same = codes[p.i] == codes[p.j]
            pos_hist += np.bincount(d[same], minlength=top + 1)[: top + 1]
    return all_hist, pos_hist, n_true


def threshold_table(
    fps,
    truth,
    *,
    ids=None,
    threshold: float | None = None,
    max_k: int | None = None,
    n_jobs: int | None = None,
):
    """Precision, recall and F1 of SimHash at every Hamming threshold ``k``.

    At threshold ``k`` a pair is predicted a duplicate iff its fingerprints differ in at
    most ``k`` bits (``<= k``, as in :func:`simhash_nb.near_duplicates`).

    Parameters
    ----------
    fps : ndarray of uint64, shape (n,) or (n, 2)
        Fingerprints of the ``n`` documents.
    truth
        The ground truth, in one of three forms:

        - **cluster labels**: one id per document (array, list or Series of length
          ``n``); documents with the same id are duplicates, a missing id (None, NaN)
          is a document without duplicates. Evaluated over all pairs (self-join).
        - **duplicate pairs**: a DataFrame with columns ``i``, ``j`` (such as
          :func:`jaccard_pairs` returns), :class:`~simhash_nb.Pairs`, a tuple
          ``(i, j)`` or an int array ``(m, 2)``: every duplicate pair, and every pair
          not listed is not a duplicate. Evaluated over all pairs (self-join).
        - **labelled pairs**: a DataFrame with columns ``i``, ``j`` and ``duplicate``
          (or ``label``), a tuple ``(i, j, label)`` or an array ``(m, 3)``: only these
          pairs are evaluated.
    ids : sequence, optional
        Document ids, one per fingerprint; pair tables then name documents by id.
    threshold : float, optional
        For a pair table with a ``jaccard`` column: pairs at or above this similarity
        are the duplicates (default: all listed pairs).
    max_k : int, optional
        Self-joins count all ``n (n - 1) / 2`` pairs at every distance (refused above
        ``config["evaluate_max_brute_pairs"]``); with ``max_k`` only pairs within
        ``max_k`` are found (with :func:`simhash_nb.near_duplicates`) and the table
        stops at ``k = max_k``.
    n_jobs : int, optional
        Threads.

    Returns
    -------
    pandas.DataFrame
        One row per ``k = 0 .. bits`` (or ``max_k``) with columns ``k``, ``predicted``
        (pairs within ``k``), ``tp``, ``fp``, ``fn``, ``tn``, ``precision``, ``recall``,
        ``f1`` and ``note``. Undefined ratios are NaN, never a division by zero, and
        ``note`` says why (no predicted pairs: precision undefined; no duplicates in
        the truth: recall undefined). ``attrs`` holds ``mode`` ("self-join" or
        "labelled pairs"), ``n_documents``, ``n_pairs`` (pairs evaluated),
        ``n_duplicates``, ``bits`` and ``note``.

    See Also
    --------
    recommend_k : pick a threshold from this table.
    simhash_nb.plotting : plots of this table.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b0001, 0b0111, 0b1111_1111], dtype=np.uint64)
    >>> t = sh.threshold_table(fps, [0, 0, 0, 1])
    >>> t.loc[:3, ["k", "tp", "fp", "fn", "precision", "recall"]].round(2)
       k  tp  fp  fn  precision  recall
    0  0   0   0   3        NaN    0.00
    1  1   1   0   2        1.0    0.33
    2  2   2   0   1        1.0    0.67
    3  3   3   0   0        1.0    1.00
    """
    import pandas as pd

    fps = as_fingerprints(fps, "fps")
    n = fps.shape[0]
    bits = bits_of(fps)
    if max_k is not None:
        if isinstance(max_k, bool) or not isinstance(max_k, numbers.Integral):
            raise TypeError(f"max_k must be an integer, got {type(max_k).__name__}")
        if not 0 <= max_k <= bits:
            raise ValueError(f"max_k must be in [0, {bits}], got {max_k}")
        max_k = int(max_k) if max_k < bits else None
    t = _parse_truth(truth, n, ids, threshold)
    if t.kind == "labelled":
        top = bits if max_k is None else max_k
        d = _distances(fps, t.i, t.j)
        pos = np.bincount(d[t.label], minlength=bits + 1)[: top + 1]
        neg = np.bincount(d[~t.label], minlength=bits + 1)[: top + 1]
        n_true = int(t.label.sum())
        n_false = int(t.label.shape[0]) - n_true
        tp, fp = np.cumsum(pos), np.cumsum(neg)
        mode, n_pairs = "labelled pairs", int(t.label.shape[0])
    else:
        all_hist, pos_hist, n_true = _self_join_counts(fps, t, max_k, n_jobs)
        tp, predicted = np.cumsum(pos_hist), np.cumsum(all_hist)
        fp = predicted - tp
        n_pairs = _pair_count(n)
        n_false = n_pairs - n_true
        mode = "self-join"
    fn = n_true - tp
    tn = n_false - fp
    predicted = tp + fp
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, tp / np.maximum(predicted, 1), np.nan)
        recall = np.where(n_true > 0, tp / max(n_true, 1), np.nan)
        # 2 TP / (2 TP + FP + FN): defined whenever the truth has duplicates
        f1 = np.where(n_true > 0, 2 * tp / np.maximum(predicted + n_true, 1), np.nan)
    notes = np.full(tp.shape[0], "", dtype=object)
    none_predicted = predicted == 0
    if n_true == 0:
        notes[:] = "no duplicates in the truth: recall and F1 undefined"
        notes[none_predicted] = (
            "no duplicates in the truth and no pairs predicted: all ratios undefined"
        )
    else:
        notes[none_predicted] = "no pairs predicted: precision undefined"
    table = pd.DataFrame({
        "k": np.arange(tp.shape[0], dtype=np.int64),
        "predicted": predicted.astype(np.int64),
        "tp": tp.astype(np.int64),
        "fp": fp.astype(np.int64),
        "fn": fn.astype(np.int64),
        "tn": tn.astype(np.int64),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "note": pd.Series(notes, dtype=object),
    })
    note = "" if n_true else (
        "the ground truth has no duplicate pairs: recall and F1 are undefined (NaN), and "
        "precision is 0 wherever pairs are predicted (each is a false positive)"
    )
    table.attrs.update(mode=mode, n_documents=n, n_pairs=n_pairs, n_duplicates=n_true,
                       bits=bits, max_k=max_k, note=note)
    return table


# --- recommendation -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Recommendation:
    """A Hamming threshold chosen from a :func:`threshold_table`, and why.

    Attributes
    ----------
    k : int
        The threshold (pairs within ``k`` bits are duplicates).
    criterion : str
        What was asked: ``"max f1"``, ``"precision >= 0.95"`` or ``"recall >= 0.95"``.
    met : bool
        False when no threshold reaches the target (then ``k`` is the closest).
    reason : str
        One sentence saying why this ``k``.
    precision, recall, f1 : float
        The table's values at ``k`` (NaN where undefined).
    tp, fp, fn : int
        Counts at ``k``.
    """

    k: int
    criterion: str
    met: bool
    reason: str
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int

    def __repr__(self) -> str:
        return (
            f"Recommendation(k={self.k}, precision={self.precision:.3f}, "
            f"recall={self.recall:.3f}, f1={self.f1:.3f}, met={self.met})\n  {self.reason}"
        )

    def __int__(self) -> int:
        return self.k

    def __index__(self) -> int:
        return self.k


def _check_target_value(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1], got {value!r}")
    v = float(value)
    if not 0.0 < v <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return v


def recommend_k(
    table,
    target: str | None = None,
    *,
    precision: float | None = None,
    recall: float | None = None,
) -> Recommendation:
    """Choose a Hamming threshold from a :func:`threshold_table`.

    Give one target:

    - ``target="f1"`` (the default): the ``k`` with the highest F1 (ties: the smallest);
    - ``precision=p``: among thresholds with precision ``>= p``, the one with the highest
      recall (ties: the smallest ``k``) — "as many duplicates as possible while at most
      ``1 - p`` of the reported pairs are wrong";
    - ``recall=r``: among thresholds with recall ``>= r``, the one with the highest
      precision (ties: the smallest ``k``).

    When no threshold reaches a precision or recall target, the closest one is returned
    with ``met=False`` and the reason says so.

    Parameters
    ----------
    table : pandas.DataFrame
        As returned by :func:`threshold_table`.
    target : {"f1"}, optional
    precision, recall : float, optional
        Targets in ``(0, 1]``.

    Returns
    -------
    Recommendation
        ``k``, its precision, recall and F1, and ``reason``; usable as an int.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b0001, 0b0111, 0b1111_1111], dtype=np.uint64)
    >>> table = sh.threshold_table(fps, [0, 0, 0, 1])
    >>> rec = sh.recommend_k(table)
    >>> rec.k, rec.f1
    (3, 1.0)
    >>> sh.recommend_k(table, recall=0.5).k
    2
    """
    import pandas as pd

    given = [name for name, v in (("target", target), ("precision", precision),
                                  ("recall", recall)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give one target, not {' and '.join(given)}")
    if target is not None and target != "f1":
        raise ValueError(
            f"target must be 'f1'; for precision or recall targets pass precision=0.95 "
            f"or recall=0.95 (got target={target!r})"
        )
    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            f"table must be a DataFrame from threshold_table, got {type(table).__name__}"
        )
    need = ["k", "tp", "fp", "fn", "precision", "recall", "f1"]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks columns {missing}; make it with sh.threshold_table")
    if len(table) == 0:
        raise ValueError("table is empty")
    k = table["k"].to_numpy()
    p = table["precision"].to_numpy(dtype=np.float64)
    r = table["recall"].to_numpy(dtype=np.float64)
    f = table["f1"].to_numpy(dtype=np.float64)
    span = f"k = {int(k.min())}..{int(k.max())}"

    def pick(row: int, criterion: str, met: bool, reason: str) -> Recommendation:
        return Recommendation(
            int(k[row]), criterion, met, reason, float(p[row]), float(r[row]), float(f[row]),
            int(table["tp"].iloc[row]), int(table["fp"].iloc[row]), int(table["fn"].iloc[row]),
        )

    def first_max(values: np.ndarray, mask: np.ndarray) -> int:
        v = np.where(mask, values, -np.inf)
        return int(np.flatnonzero(v == v.max())[0])

    if precision is None and recall is None:
        ok = ~np.isnan(f)
        if not ok.any():
            raise ValueError(
                "no threshold has a defined F1: " + (table.attrs.get("note") or
                "no pairs are predicted or the truth has no duplicates")
            )
        row = first_max(f, ok)
        return pick(row, "max f1", True,
                    f"k={int(k[row])} has the highest F1 ({f[row]:.3f}) among {span}: "
                    f"precision {p[row]:.3f}, recall {r[row]:.3f}")
    if precision is not None:
        goal = _check_target_value("precision", precision)
        ok = ~np.isnan(p) & (p >= goal)
        if ok.any():
            row = first_max(np.nan_to_num(r, nan=-1.0), ok)
            return pick(row, f"precision >= {goal:g}", True,
                        f"k={int(k[row])} has the highest recall ({r[row]:.3f}) among the "
                        f"thresholds with precision >= {goal:g} (its precision: {p[row]:.3f})")
        defined = ~np.isnan(p)
        if not defined.any():
            raise ValueError("no threshold has a defined precision: no pairs are predicted")
        row = first_max(p, defined)
        return pick(row, f"precision >= {goal:g}", False,
                    f"no threshold in {span} reaches precision {goal:g}; k={int(k[row])} has "
                    f"the highest precision ({p[row]:.3f}), recall {r[row]:.3f}")
    goal = _check_target_value("recall", recall)
    defined = ~np.isnan(r)
    if not defined.any():
        raise ValueError(
            "recall is undefined at every threshold: the ground truth has no duplicate pairs"
        )
    ok = defined & (r >= goal)
    if ok.any():
        row = first_max(np.nan_to_num(p, nan=-1.0), ok)
        return pick(row, f"recall >= {goal:g}", True,
                    f"k={int(k[row])} has the highest precision ({p[row]:.3f}) among the "
                    f"thresholds with recall >= {goal:g} (its recall: {r[row]:.3f})")
    row = first_max(r, defined)
    return pick(row, f"recall >= {goal:g}", False,
                f"no threshold in {span} reaches recall {goal:g}; k={int(k[row])} has the "
                f"highest recall ({r[row]:.3f}), precision {p[row]:.3f}")
