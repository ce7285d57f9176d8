"""The verification stages of the Dask verified path: candidate pairs shuffled with the
shingles they need, then verified by exact Jaccard.

Stage 1 keeps each partition's shingles with its persisted prints (:func:`shingle_column`:
a :data:`SHINGLES` column of each row's sorted distinct ``uint64`` hashes as bytes), so
that no text is shingled twice. Two routes, no gather:

1. :func:`attach_left` runs on the prints partition that holds the left rows of the
   candidates routed to it and attaches each left row's shingles -- once for each pair
   of (left row, other partition of a right row), not once per pair, so a group of
   ``m`` copies carries ``m`` shingle sets per partition, not ``m (m - 1) / 2``; a pair
   whose right row is in the same partition carries nothing (that partition has them).
2. :func:`verify_right` runs on the prints partition of the right rows: its own rows'
   shingles and the carried ones go as they are (no copy, none shingled) into one
   in-memory :class:`~simhash_nb._core.pipeline.ShingleStore`, which computes the exact
   Jaccard of every pair that passes the single machine's size filter and sketches'
   check (:func:`~simhash_nb._core.pipeline.stages.worth_verifying`: the verify stage
   of the single-machine runners). A pair with a document without shingles is in no
   pair.

Fewer candidates reach them than the search finds: the search drops the pairs whose
shingle counts cannot reach the threshold (the single machine's size filter, on the
counts the records carry), so their shingles never travel.

Shingles travel, not texts: they are several times the bytes of a text (8 bytes a
shingle, about one shingle a character for character n-grams), but copying them through
the shuffle costs the workers less than shingling each carried text again (measured at
200,000 texts in 8 partitions: 264,000 texts were carried, more than the corpus, as a
row is carried to each partition where it has pairs). They travel as an Arrow
``large_binary`` column, null on the pairs that do not carry any (a binary type,
because Dask's P2P shuffle restores column types from their names and knows
``large_binary[pyarrow]``): built and read as offsets and one buffer per chunk, never
one Python object per document.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from .._core.batch import FeatureBatch
from .._core.parallel import threads
from .._core.pipeline import Shingler, ShingleStore
from .._core.pipeline.stages import worth_verifying
from .input import row_base

CARRIED = pd.ArrowDtype(pa.large_binary())
SHINGLES = "shingles"  # the prints' (and the carried pairs') column of shingle bytes
_HELD = 1 << 62  # a store's memory bytes: a worker's store never spills


def shingle(texts, shingler: Shingler, n_jobs: int | None) -> tuple[FeatureBatch, np.ndarray]:
    """Binary-weight shingles and fingerprints ``uint64[n, bits // 64]`` of ``texts``
    (none missing), in ``n_jobs`` Numba threads."""
    if len(texts) == 0:  # Shingler's reshape(0, -1) refuses no texts
        return (FeatureBatch(np.zeros(1, np.int64), np.empty(0, np.uint64),
                             np.empty(0, np.float64)),
                np.empty((0, shingler.bits // 64), np.uint64))
    with threads(n_jobs):
        fb, fps, _ = shingler(texts, n_jobs)
    return fb, fps


def shingle_column(counts: np.ndarray, hashes: np.ndarray) -> pd.arrays.ArrowExtensionArray:
    """Rows of ``counts[r]`` shingles each, laid one after the other in ``hashes``, as a
    ``large_binary`` column of their ``uint64`` bytes (no copy of the hashes)."""
    offsets = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    data = np.ascontiguousarray(hashes[: int(offsets[-1])], dtype=np.uint64)
    arr = pa.LargeBinaryArray.from_buffers(pa.large_binary(), counts.shape[0],
                                           [None, pa.py_buffer(offsets * 8),
                                            pa.py_buffer(data)])
    return pd.arrays.ArrowExtensionArray(arr)


def _chunks(column: pd.Series) -> list[pa.Array]:
    """A column of byte runs (Arrow binary of any width, or bytes objects) as its
    ``large_binary`` chunks (not copied where they are ``large_binary`` already)."""
    if isinstance(column.dtype, pd.ArrowDtype):
        arr = column.array.__arrow_array__()
    else:  # bytes objects
        arr = pa.array(column.to_numpy(object), type=pa.large_binary())
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    return [c if c.type == pa.large_binary() else c.cast(pa.large_binary()) for c in chunks]


def _runs(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr int64[n + 1], hashes uint64[nnz])`` of a ``large_binary`` array of
    shingle bytes, a null being no shingles; the hashes are not copied where they lie
    aligned."""
    n = len(arr)
    if arr.null_count:
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), bool)
        offsets = np.frombuffer(arr.buffers()[1], np.int64, n + 1, 8 * arr.offset)
        if np.diff(offsets)[~valid].any():  # a null slot with bytes under it
            arr = arr.fill_null(b"")
    offsets = np.frombuffer(arr.buffers()[1], np.int64, n + 1, 8 * arr.offset)
    start, end = int(offsets[0]), int(offsets[-1])
    if end == start:
        return np.zeros(n + 1, np.int64), np.empty(0, np.uint64)
    data = np.frombuffer(arr.buffers()[2], np.uint8)[start:end]
    hashes = (data.view(np.uint64) if data.ctypes.data % 8 == 0
              else data.copy().view(np.uint64))
    hashes.flags.writeable = False  # read-only like the views: one kernel signature
    return (offsets - start) // 8, hashes


def column_shingles(column: pd.Series) -> list[tuple[np.ndarray, np.ndarray]]:
    """The shingles of a :func:`shingle_column` (any binary column; a null: none), as
    ``(indptr, hashes)`` CSR parts, one per chunk, in row order (as
    :class:`~simhash_nb._core.batch.FeatureBatch` lays them)."""
    return [_runs(c) for c in _chunks(column) if len(c)]


def carried_meta(label_dtype=None) -> pd.DataFrame:
    """Meta of :func:`attach_left`'s output."""
    meta = pd.DataFrame({"left": np.empty(0, np.int64), "right": np.empty(0, np.int64),
                         "distance": np.empty(0, np.uint8),
                         SHINGLES: pd.Series([], dtype=CARRIED)})
    if label_dtype is not None:
        meta["left_label"] = pd.Series([], dtype=label_dtype)
    return meta


def verified_meta(label_dtype=None) -> pd.DataFrame:
    """Meta of the verified pairs: ``left``, ``right``, ``jaccard``, ``distance``."""
    ids = (np.empty(0, np.int64) if label_dtype is None
           else pd.Series([], dtype=label_dtype))
    return pd.DataFrame({"left": ids, "right": ids, "jaccard": np.empty(0, np.float64),
                         "distance": np.empty(0, np.uint8)})


def _local(rows: np.ndarray, base: int, n: int) -> np.ndarray:
    local = rows - base
    if local.shape[0] and (local.min() < 0 or local.max() >= n):
        raise RuntimeError("a candidate was routed to the wrong partition")  # pragma: no cover
    return local


def attach_left(prints: pd.DataFrame, cands: pd.DataFrame, offsets: np.ndarray,
                labels: bool, partition_info=None) -> pd.DataFrame:
    """Candidates whose left row is in this partition of the prints, with its shingles
    attached once per (left row, partition of the right row); see the module
    docstring."""
    base = row_base(prints, offsets, partition_info)
    i, j = cands["left"].to_numpy(np.int64), cands["right"].to_numpy(np.int64)
    d = cands["distance"].to_numpy(np.uint8)
    part = np.searchsorted(offsets, j, side="right") - 1
    order = np.lexsort((j, i, part))
    i, j, d, part = i[order], j[order], d[order], part[order]
    first = np.ones(i.shape[0], dtype=bool)
    first[1:] = (part[1:] != part[:-1]) | (i[1:] != i[:-1])
    first &= (j < base) | (j >= base + len(prints))  # verified here: nothing to carry
    rows = pa.array(_local(i, base, len(prints)), pa.int64(), mask=~first)
    own = pa.chunked_array(_chunks(prints[SHINGLES]), pa.large_binary())
    out = pd.DataFrame({"left": i, "right": j, "distance": d,  # one copy: the take
                        SHINGLES: pd.arrays.ArrowExtensionArray(own.take(rows))})
    if labels:
        out["left_label"] = prints.index.take(i - base)
    return out


def _store(prints: pd.DataFrame, rows: pd.DataFrame) -> ShingleStore:
    """This partition's rows (documents ``0 .. len(prints) - 1``), then the routed
    ``rows`` (one document each, empty where it carries nothing): their shingles in one
    sealed in-memory store, as they lie (a part per chunk, not copied)."""
    store = ShingleStore(_HELD, _HELD)
    for indptr, hashes in column_shingles(prints[SHINGLES]):
        store.append(indptr, hashes)
    if len(rows):
        for indptr, hashes in column_shingles(rows[SHINGLES]):
            store.append(indptr, hashes)
    store.seal()
    return store


def _left_documents(i: np.ndarray, base: int, n: int, rows: pd.DataFrame) -> np.ndarray:
    """Each pair's left document in :func:`_store`: its row in this partition, or ``n +``
    the position of the routed row that carries its shingles (one per left row from
    another partition)."""
    here = (i >= base) & (i < base + n)
    carriers = np.flatnonzero(rows[SHINGLES].notna().to_numpy(bool))
    left_ids = i[carriers]
    by_id = np.argsort(left_ids, kind="stable")
    left = np.empty(i.shape[0], np.int64)
    left[here] = i[here] - base
    away = ~here
    left[away] = n + carriers[by_id[np.searchsorted(left_ids, i[away], sorter=by_id)]]
    return left


def verify_right(prints: pd.DataFrame, rows: pd.DataFrame, offsets: np.ndarray,
                 n_jobs: int | None, threshold: float, labels: bool,
                 partition_info=None) -> pd.DataFrame:
    """The pairs whose right row is in this partition, verified: exact Jaccard of the
    carried left rows' shingles and the right row's own, kept when ``>= threshold``;
    each pair comes out as ``left < right`` (the routed ``left`` need not be the
    lower row), sorted."""
    base = row_base(prints, offsets, partition_info)
    i, j = rows["left"].to_numpy(np.int64), rows["right"].to_numpy(np.int64)
    inv = _local(j, base, len(prints))
    left = _left_documents(i, base, len(prints), rows)
    sims = np.full(i.shape[0], -1.0)
    with _store(prints, rows) as store:
        # as on one machine: the size filter (a document without shingles is in no
        # pair) and the sketches' check, then the exact Jaccard
        ok = worth_verifying(store, left, store, inv, threshold)
        if ok.any():
            with threads(n_jobs):
                sims[ok] = store.similarities(left[ok], inv[ok], threshold)
    keep = np.flatnonzero(sims >= threshold)
    swap = i[keep] > j[keep]  # a pair comes out as (lower, higher) row
    lo, hi = np.where(swap, j[keep], i[keep]), np.where(swap, i[keep], j[keep])
    order = np.lexsort((hi, lo))
    keep, swap = keep[order], swap[order]
    if labels:
        a = rows["left_label"].array.take(keep)
        b = prints.index.take(j[keep] - base).array
        out_i, out_j = a.copy(), b.copy()
        out_i[swap], out_j[swap] = b[swap], a[swap]
    else:
        out_i, out_j = lo[order], hi[order]
    return pd.DataFrame({"left": out_i, "right": out_j, "jaccard": sims[keep],
                         "distance": rows["distance"].to_numpy(np.uint8)[keep]})
