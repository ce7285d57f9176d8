"""Evaluation inputs: documents as sorted feature sets, pairs as positions, labels."""


from __future__ import annotations

from typing import Any

import numpy as np

from ..batch import FeatureBatch
from ..features import features
from ..pairs import Pairs, pandas_module
from ..text import to_arrow

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


def document_sets(x, options: dict, n_jobs):
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
    arr = to_arrow(x)
    if arr.null_count:
        missing = np.flatnonzero(~arr.is_valid().to_numpy(zero_copy_only=False))
        raise ValueError(
            f"{arr.null_count} texts are missing (first at positions {missing[:5].tolist()}); "
            "Jaccard similarity needs every text: drop or fill them first"
        )
    fb = features(arr, **{k: v for k, v in options.items() if v is not None}, n_jobs=n_jobs)
    return (*_sorted_sets(fb), fb)


def n_pairs_of(n: int) -> int:
    return n * (n - 1) // 2


# --- input: pairs -------------------------------------------------------------------------


def as_positions(values, n: int, ids, what: str) -> np.ndarray:
    """Map pair entries to row positions: through ``ids`` if given, else as integers."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {values.shape}")
    if ids is not None:
        pd = pandas_module()
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


def pair_columns(pairs) -> tuple[Any, Any, Any, Any]:
    """Split any pair table into ``(i, j, label or None, similarity or None)``."""
    pd = pandas_module()
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


def pair_positions(pairs, n: int, ids) -> tuple[np.ndarray, np.ndarray]:
    i, j, _, _ = pair_columns(pairs)
    i = as_positions(i, n, ids, "i")
    j = as_positions(j, n, ids, "j")
    if i.shape != j.shape:
        raise ValueError(f"i and j differ in length: {i.shape[0]} and {j.shape[0]}")
    return i, j


def as_bool_labels(label, m: int) -> np.ndarray:
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


def check_table(table, need=("k", "precision", "recall", "f1")):
    """``table`` if it is a non-empty DataFrame from threshold_table with the ``need``
    columns; ``TypeError`` or ``ValueError`` saying what it lacks."""
    pd = pandas_module()
    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            f"table must be a DataFrame from sh.threshold_table, got {type(table).__name__}"
        )
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks columns {missing}; make it with sh.threshold_table")
    if len(table) == 0:
        raise ValueError("table is empty")
    return table
