"""The verification stages of the Dask verified path: candidate pairs shuffled with the
texts they need, then verified by exact Jaccard.

Two routes, no gather:

1. :func:`attach_left` runs on the input partition that holds the left rows of the
   candidates routed to it and attaches each left row's text -- once for each pair of
   (left row, other partition of a right row), not once per pair, so a group of ``m``
   copies carries ``m`` texts per partition, not ``m (m - 1) / 2``; a pair whose right
   row is in the same partition carries nothing (that partition has the text). It
   shingles nothing.
2. :func:`verify_right` runs on the partition of the right rows: its own rows' shingles
   are those stage 1 kept with the partition's prints (:data:`SHINGLES`, laid in a
   :class:`~simhash_nb._core.pipeline.ShingleStore` as they are, not shingled again),
   the carried texts are shingled in one pass, and the exact Jaccard of every pair is
   computed with that store (the verify stage of the single-machine runners). A pair
   with a document without shingles is in no pair.

Fewer candidates reach them than the search finds: the search drops the pairs whose
shingle counts cannot reach the threshold (the single machine's size filter, on the
counts the records carry), so their texts never travel.

The texts travel, not their shingles: a text's UTF-8 bytes are several times smaller
than its shingle hashes (8 bytes a shingle, about one shingle a character for
character n-grams: several times the copying in the shuffles), and the left texts were
to be shingled once anyway. They travel as
an Arrow ``large_binary`` column, null on the pairs that do not carry one (a binary
type, because Dask's P2P shuffle restores column types from their names and knows
``large_binary[pyarrow]``): built and read as offsets and one buffer, never one Python
object per document.

Both use the run's :class:`~simhash_nb._core.pipeline.Shingler` (a binary-weight spec
and the objects it stands for; it pickles, so it travels as it is).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from .._core.batch import FeatureBatch
from .._core.fingerprint import binary_shingles
from .._core.parallel import threads
from .._core.pipeline import Shingler, ShingleStore
from .._core.text import to_arrow
from .._core.tokenizers import MODES
from .._frames import arrow_of
from .input import row_base

CARRIED = pd.ArrowDtype(pa.large_binary())
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


def shingle_only(texts, shingler: Shingler, n_jobs: int | None) -> FeatureBatch:
    """Binary-weight shingles of ``texts`` (none missing), without their fingerprints
    where the tokenizer is a built-in one (the others' shingles come with them)."""
    if len(texts) == 0 or shingler.spec.tokenizer not in MODES:
        return shingle(texts, shingler, n_jobs)[0]
    with threads(n_jobs):
        fb, _, _ = binary_shingles(texts, shingler.spec, shingler.extras, 0, n_jobs)
    return fb


SHINGLES = "shingles"  # the prints' column of each row's shingle hashes (bytes)


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


def column_shingles(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr int64[n + 1], hashes uint64[nnz])`` of a :func:`shingle_column` (each
    row's shingles, as :class:`~simhash_nb._core.batch.FeatureBatch` lays them), without
    copying the hashes where they lie aligned."""
    arr = arrow_of(column)
    if arr.type != pa.large_binary():  # a transfer may narrow the offsets
        arr = arr.cast(pa.large_binary())
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], np.int64, count=n + 1, offset=8 * arr.offset)
    start, end = int(offsets[0]), int(offsets[-1])
    if end == start:
        return np.zeros(n + 1, np.int64), np.empty(0, np.uint64)
    data = np.frombuffer(arr.buffers()[2], np.uint8)[start:end]
    hashes = (data.view(np.uint64) if data.ctypes.data % 8 == 0
              else data.copy().view(np.uint64))
    return (offsets - start) // 8, hashes


def carried_meta(label_dtype=None) -> pd.DataFrame:
    """Meta of :func:`attach_left`'s output."""
    meta = pd.DataFrame({"left": np.empty(0, np.int64), "right": np.empty(0, np.int64),
                         "distance": np.empty(0, np.uint8),
                         "text": pd.Series([], dtype=CARRIED)})
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


def attach_left(texts: pd.Series, cands: pd.DataFrame, offsets: np.ndarray, labels: bool,
                partition_info=None) -> pd.DataFrame:
    """Candidates whose left row is in this partition, with its text attached once per
    (left row, partition of the right row); see the module docstring."""
    base = row_base(texts, offsets, partition_info)
    i, j = cands["left"].to_numpy(np.int64), cands["right"].to_numpy(np.int64)
    d = cands["distance"].to_numpy(np.uint8)
    part = np.searchsorted(offsets, j, side="right") - 1
    order = np.lexsort((j, i, part))
    i, j, d, part = i[order], j[order], d[order], part[order]
    first = np.ones(i.shape[0], dtype=bool)
    first[1:] = (part[1:] != part[:-1]) | (i[1:] != i[:-1])
    first &= (j < base) | (j >= base + len(texts))  # verified here: nothing to carry
    out = pd.DataFrame({"left": i, "right": j, "distance": d,
                        "text": _carry(texts, _local(i, base, len(texts)), first)})
    if labels:
        out["left_label"] = texts.index.take(i - base)
    return out


def _carry(texts: pd.Series, rows: np.ndarray, first: np.ndarray):
    """The UTF-8 texts of local ``rows`` where ``first`` (null elsewhere), as a
    ``large_binary`` array."""
    carriers = np.flatnonzero(first)
    arr = to_arrow(texts.iloc[rows[carriers]]).view(pa.large_binary())
    slot = np.cumsum(first) - 1  # each row's carrier, valid where it is one
    take = pa.array(slot, type=pa.int64(), mask=~first)
    return pd.arrays.ArrowExtensionArray(arr.take(take))


def _carried(rows: pd.DataFrame) -> tuple[np.ndarray, pa.Array]:
    """Which of ``rows`` carry a text, and those texts (``large_string``)."""
    if len(rows) == 0:
        return np.zeros(0, bool), pa.array([], pa.large_string())
    col = rows["text"]
    arr = (arrow_of(col) if isinstance(col.dtype, pd.ArrowDtype)
           else pa.array(col.to_numpy(object), type=pa.large_binary()))  # bytes objects
    if arr.type != pa.large_binary():  # a shuffle may narrow the offsets
        arr = arr.cast(pa.large_binary())
    carries = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    return carries, to_arrow(arr.filter(pa.array(carries)))


def _store(prints: pd.DataFrame, carried: pa.Array, shingler: Shingler,
           n_jobs: int | None) -> ShingleStore:
    """This partition's rows (documents ``0 .. len(prints) - 1``: their shingles as
    stage 1 kept them, not copied), then the carried left texts, shingled, in one sealed
    in-memory store."""
    store = ShingleStore(_HELD, _HELD)
    store.append(*column_shingles(prints[SHINGLES]))
    if len(carried):
        fb = shingle_only(pd.Series(pd.arrays.ArrowExtensionArray(carried)), shingler,
                          n_jobs)
        store.append(fb.indptr, fb.hashes)
        del fb  # the store holds them now
    store.seal()
    return store


def _documents(i: np.ndarray, base: int, n: int, rows: pd.DataFrame):
    """``(left, carried)``: each pair's left document (its row in this partition, or
    ``n +`` its carried text's position), and the carried left texts (one per left row
    from another partition)."""
    here = (i >= base) & (i < base + n)
    carries, carried = _carried(rows)
    left_ids = i[carries]  # one carrier per left row from another partition
    by_id = np.argsort(left_ids, kind="stable")
    left = np.empty(i.shape[0], np.int64)
    left[here] = i[here] - base
    away = ~here
    left[away] = n + by_id[np.searchsorted(left_ids, i[away], sorter=by_id)]
    return left, carried


def verify_right(prints: pd.DataFrame, rows: pd.DataFrame, offsets: np.ndarray,
                 shingler: Shingler, n_jobs: int | None, threshold: float, labels: bool,
                 partition_info=None) -> pd.DataFrame:
    """The pairs whose right row is in this partition, verified: exact Jaccard of the
    carried left texts' shingles and the right row's own, kept when ``>= threshold``;
    each pair comes out as ``left < right`` (the routed ``left`` need not be the
    lower row), sorted."""
    base = row_base(prints, offsets, partition_info)
    i, j = rows["left"].to_numpy(np.int64), rows["right"].to_numpy(np.int64)
    inv = _local(j, base, len(prints))
    left, carried = _documents(i, base, len(prints), rows)
    sims = np.full(i.shape[0], -1.0)
    with _store(prints, carried, shingler, n_jobs) as store:
        # a document without shingles is in no pair
        ok = (store.n_features[inv] > 0) & (store.n_features[left] > 0)
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
