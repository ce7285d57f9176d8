"""The verification stages of the Dask verified path: candidate pairs shuffled with the
shingle hashes they need, then verified by exact Jaccard.

Two routes, no gather:

1. :func:`attach_left` runs on the input partition that holds the left rows of the
   candidates routed to it: it shingles those rows (only those), drops pairs whose left
   document has no shingles, and attaches the left document's hashes -- once for each
   pair of (left row, partition of the right row), not once per pair, so a group of
   ``m`` copies carries ``m`` shingle sets per partition, not ``m (m - 1) / 2``.
2. :func:`verify_right` runs on the partition of the right rows: it shingles them,
   lays them and the carried left documents in one in-memory
   :class:`~simhash_nb._core.pipeline.ShingleStore`, and computes the exact Jaccard of
   every pair with it (the verify stage of the single-machine runners).

Shingle hashes travel as an Arrow ``large_binary`` column, each value a document's
``uint64`` hashes (empty on the pairs that do not carry them; a binary type, not a list
one, because Dask's P2P shuffle restores column types from their names and knows
``large_binary[pyarrow]``): built and read as offsets and one buffer, never one Python
object per document.

Both shingle with the run's :class:`~simhash_nb._core.pipeline.Shingler` (a
binary-weight spec and the objects it stands for; it pickles, so it travels as it is).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from .._core.batch import FeatureBatch
from .._core.parallel import threads
from .._core.pipeline import Shingler, ShingleStore
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


def take_runs(indptr: np.ndarray, hashes: np.ndarray,
              docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hashes of documents ``docs`` of a CSR batch, concatenated: ``(lengths, values)``."""
    starts = indptr[docs]
    lengths = indptr[docs + 1] - starts
    total = int(lengths.sum())
    first = np.cumsum(lengths) - lengths
    idx = np.repeat(starts - first, lengths) + np.arange(total, dtype=np.int64)
    return lengths, hashes[idx]


def carried_meta(label_dtype=None) -> pd.DataFrame:
    """Meta of :func:`attach_left`'s output."""
    meta = pd.DataFrame({"left": np.empty(0, np.int64), "right": np.empty(0, np.int64),
                         "distance": np.empty(0, np.uint8),
                         "shingles": pd.Series([], dtype=CARRIED)})
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


def attach_left(texts: pd.Series, cands: pd.DataFrame, offsets: np.ndarray, shingler: Shingler,
                n_jobs: int | None, labels: bool, partition_info=None) -> pd.DataFrame:
    """Candidates whose left row is in this partition, with its shingles attached once
    per (left row, partition of the right row); see the module docstring."""
    base = row_base(texts, offsets, partition_info)
    i, j = cands["left"].to_numpy(np.int64), cands["right"].to_numpy(np.int64)
    d = cands["distance"].to_numpy(np.uint8)
    docs, inv = np.unique(_local(i, base, len(texts)), return_inverse=True)
    fb, _ = shingle(texts.iloc[docs], shingler, n_jobs)
    ok = np.diff(fb.indptr)[inv] > 0  # a document without shingles is in no pair
    i, j, d, inv = i[ok], j[ok], d[ok], inv[ok]
    part = np.searchsorted(offsets, j, side="right") - 1
    order = np.lexsort((j, i, part))
    i, j, d, inv, part = i[order], j[order], d[order], inv[order], part[order]
    first = np.ones(i.shape[0], dtype=bool)
    first[1:] = (part[1:] != part[:-1]) | (i[1:] != i[:-1])
    lengths = np.zeros(i.shape[0], dtype=np.int64)
    carried, values = take_runs(fb.indptr, fb.hashes, inv[first])
    lengths[first] = carried
    out = pd.DataFrame({"left": i, "right": j, "distance": d,
                        "shingles": _as_binary(lengths, values)})
    if labels:
        out["left_label"] = texts.index.take(i - base)
    return out


def _as_binary(lengths: np.ndarray, values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Runs of ``uint64`` values (``lengths`` of them each) as a ``large_binary`` array,
    without a copy per run."""
    offs = np.concatenate(([0], np.cumsum(lengths) * 8)).astype(np.int64)
    data = np.ascontiguousarray(values, dtype=np.uint64)
    arr = pa.LargeBinaryArray.from_buffers(pa.large_binary(), lengths.shape[0],
                                           [None, pa.py_buffer(offs), pa.py_buffer(data)])
    return pd.arrays.ArrowExtensionArray(arr)


def _carried(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(lengths, values)`` of the shingles carried in ``rows`` (empty where none);
    ``values`` is a view of the column's buffer, perhaps unaligned (a store copies it)."""
    if len(rows) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    col = rows["shingles"]
    arr = (arrow_of(col) if isinstance(col.dtype, pd.ArrowDtype)
           else pa.array(col.to_numpy(object), type=pa.large_binary()))  # bytes objects
    if arr.type != pa.large_binary():  # a shuffle may narrow the offsets
        arr = arr.cast(pa.large_binary())
    offs = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    return np.diff(offs) // 8, raw[offs[0]:offs[-1]].view(np.uint64)


def _right_store(texts: pd.Series, docs: np.ndarray, shingler: Shingler, n_jobs: int | None,
                 lengths: np.ndarray, values: np.ndarray) -> ShingleStore:
    """This partition's rows ``docs`` (documents ``0 .. len(docs) - 1``), then the carried
    left documents (``lengths[c]`` of ``values`` each), in one sealed in-memory store."""
    store = ShingleStore(_HELD, _HELD)
    fb, _ = shingle(texts.iloc[docs], shingler, n_jobs)
    store.append(fb.indptr, fb.hashes)
    del fb  # the store holds a copy: the partition's hashes are not held twice at seal
    store.append(np.concatenate(([0], np.cumsum(lengths))), values)
    store.seal()
    return store


def verify_right(texts: pd.Series, rows: pd.DataFrame, offsets: np.ndarray, shingler: Shingler,
                 n_jobs: int | None, threshold: float, labels: bool,
                 partition_info=None) -> pd.DataFrame:
    """The pairs whose right row is in this partition, verified: exact Jaccard of the
    carried left shingles and the right row's own, kept when ``>= threshold``."""
    base = row_base(texts, offsets, partition_info)
    i, j = rows["left"].to_numpy(np.int64), rows["right"].to_numpy(np.int64)
    lengths, values = _carried(rows)
    carriers = np.flatnonzero(lengths > 0)
    left_ids = i[carriers]  # one carrier per left row in this partition
    by_id = np.argsort(left_ids, kind="stable")
    docs, inv = np.unique(_local(j, base, len(texts)), return_inverse=True)
    left = docs.shape[0] + by_id[np.searchsorted(left_ids, i, sorter=by_id)]
    sims = np.full(i.shape[0], -1.0)
    with _right_store(texts, docs, shingler, n_jobs, lengths[carriers], values) as store:
        ok = store.n_features[inv] > 0  # a right document without shingles: in no pair
        if ok.any():
            with threads(n_jobs):
                sims[ok] = store.similarities(left[ok], inv[ok], threshold)
    keep = np.flatnonzero(sims >= threshold)
    keep = keep[np.lexsort((j[keep], i[keep]))]
    out_i = rows["left_label"].array.take(keep) if labels else i[keep]
    out_j = texts.index.take(j[keep] - base) if labels else j[keep]
    return pd.DataFrame({"left": out_i, "right": out_j, "jaccard": sims[keep],
                         "distance": rows["distance"].to_numpy(np.uint8)[keep]})
