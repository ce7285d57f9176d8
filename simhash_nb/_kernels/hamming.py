"""Hamming distance kernels: all-pairs matrices and brute-force threshold joins.

Fingerprints arrive as ``uint64[n]`` (64 bits) or ``uint64[n, words]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import overload

from .popcount import popcount64
from .prange import PRANGE_ONLY


def row_distance(a, i, b, j):
    """Hamming distance between row ``i`` of ``a`` and row ``j`` of ``b``.

    Compiled code uses the overload below; this body runs only under
    ``NUMBA_DISABLE_JIT=1`` (the coverage run).
    """
    return np.uint64(np.bitwise_count(a[i] ^ b[j]).sum(dtype=np.uint64))


@overload(row_distance, inline="always")
def _row_distance_impl(a, i, b, j):
    if a.ndim == 1:

        def impl(a, i, b, j):
            return popcount64(a[i] ^ b[j])

    else:

        def impl(a, i, b, j):
            d = np.uint64(0)
            for w in range(a.shape[1]):
                d += popcount64(a[i, w] ^ b[j, w])
            return d

    return impl


@njit(inline="always", cache=True)
def emit(left, right, dist, at, room, c, i, j, d):
    """Write pair ``(i, j, d)`` at ``at + c`` if ``c < room``; the count, one more."""
    if c < room:
        left[at + c] = i
        right[at + c] = j
        dist[at + c] = d
    return c + 1


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def hamming_matrix(a, b, out):
    """``out[i, j] = popcount(a[i] ^ b[j])`` for all i, j."""
    for i in prange(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = row_distance(a, i, b, j)
    return out


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def pairs_within(a, b, lo, hi, k, self_join, n_tasks, cap):
    """Every (i, j) with distance <= k and ``lo <= i < hi``, brute force, in parallel.

    Task ``t`` handles rows ``lo + t, lo + t + n_tasks, ...`` (balanced for the
    self-join triangle) and writes at most ``cap`` pairs into its own slice of the
    output; it keeps counting past ``cap`` so the caller can retry with the exact
    size. For a self-join only ``i < j`` is visited.

    Returns ``(left, right, dist, counts)``; task t's pairs are
    ``[t * cap, t * cap + min(counts[t], cap))``.
    """
    left = np.empty(n_tasks * cap, dtype=np.int64)
    right = np.empty(n_tasks * cap, dtype=np.int64)
    dist = np.empty(n_tasks * cap, dtype=np.uint8)
    counts = np.zeros(n_tasks, dtype=np.int64)
    m = b.shape[0]
    kk = np.uint64(k)
    for t in prange(n_tasks):
        base = t * cap
        c = 0
        for i in range(lo + t, hi, n_tasks):
            start = i + 1 if self_join else 0
            for j in range(start, m):
                d = row_distance(a, i, b, j)
                if d <= kk:
                    c = emit(left, right, dist, base, cap, c, i, j, d)
        counts[t] = c
    return left, right, dist, counts
