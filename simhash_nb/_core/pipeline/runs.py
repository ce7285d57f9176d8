"""Runs of shingles taken by row, back to back: what the Dask verification carries
(:mod:`simhash_nb.distributed.shingles`), gathered by a kernel rather than by Arrow's
``take``, which copies a ``large_binary`` value at a time."""

from __future__ import annotations

import numpy as np

from ..._kernels.runs import copy_runs
from ..parallel import deferred_interrupt, threads

__all__ = ["take_runs"]


def take_runs(data: np.ndarray, offsets: np.ndarray, rows: np.ndarray,
              n_jobs: int | None = 1, alloc=None) -> tuple[np.ndarray, np.ndarray]:
    """The runs ``data[offsets[r]:offsets[r + 1]]`` of ``rows``, back to back; a row
    of ``-1`` takes an empty run.

    Parameters
    ----------
    data : ndarray of uint64
        Shingle hashes, each row's a run.
    offsets : ndarray of int64, shape (n + 1,)
        Where each run starts and ends in ``data`` (non-decreasing).
    rows : ndarray of int64
        Runs to take, in ``0 .. n - 1``, or -1.
    n_jobs : int or None, default 1
        Numba threads.
    alloc : callable, optional
        ``alloc(n)`` gives the writable ``uint64[n]`` to copy into (default
        ``np.empty``): a pool's memory, say, which a worker reuses where a fresh array
        of this size would be mapped and faulted in page by page.

    Returns
    -------
    (ndarray of uint64, ndarray of int64)
        The runs, and where each starts and ends in them (``len(rows) + 1`` offsets).

    Examples
    --------
    >>> import numpy as np
    >>> data = np.arange(10, 16, dtype=np.uint64)
    >>> out, ends = take_runs(data, np.array([0, 2, 3, 6]), np.array([2, -1, 0]))
    >>> out.tolist(), ends.tolist()
    ([13, 14, 15, 10, 11], [0, 3, 3, 5])
    """
    rows = np.asarray(rows, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if rows.shape[0] and (rows.max() >= offsets.shape[0] - 1 or rows.min() < -1):
        raise IndexError(f"rows must be in [-1, {offsets.shape[0] - 1}), got "
                         f"{int(rows.min())} .. {int(rows.max())}")
    taken = rows >= 0
    at = np.maximum(rows, 0)
    lo = np.where(taken, offsets[at], 0)
    ends = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.where(taken, offsets[at + 1] - lo, 0), out=ends[1:])
    total = int(ends[-1])
    out = np.empty(total, dtype=np.uint64) if alloc is None else alloc(total)
    with threads(n_jobs), deferred_interrupt():
        copy_runs(np.ascontiguousarray(data, dtype=np.uint64), lo, ends, out)
    return out, ends
