"""Exact Jaccard similarity of feature sets, and MinHash candidate generation.

Documents arrive in CSR layout (``indptr``, ``hashes``) with each document's hashes
distinct and in increasing order, as :func:`simhash_nb.features` makes them. The
Jaccard similarity of two sets is ``|A & B| / |A | B|``; the intersection is counted
by a branch-free merge of the two sorted runs (or by binary search of the shorter run
in the longer one when their sizes differ a lot). Two empty sets are identical:
their similarity is 1.

MinHash (Broder 1997): signature entry ``p`` of a document is the minimum over its
features ``h`` of ``splitmix64(h ^ salts[p])``. Band ``b`` of ``r`` rows hashes the
entries ``b * r .. b * r + r - 1`` into one key; documents that share a key in any
band are candidates.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .prange import PRANGE_ONLY
from .xxh64 import splitmix64

_U64_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)
_GALLOP = 16  # search the shorter run in the longer when it is this many times longer


@njit(inline="always", cache=True)
def lower_bound(hashes, lo, hi, x):
    """First position in ``hashes[lo:hi]`` (sorted) whose value is ``>= x``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if hashes[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(inline="always", cache=True)
def intersect_count(hashes, a0, a1, b0, b1):
    """Size of the intersection of the sorted distinct runs ``[a0, a1)`` and ``[b0, b1)``."""
    na = a1 - a0
    nb = b1 - b0
    if na == 0 or nb == 0:
        return 0
    if na > nb:
        a0, a1, b0, b1 = b0, b1, a0, a1
        na, nb = nb, na
    c = 0
    if na * _GALLOP < nb:
        lo = b0
        for p in range(a0, a1):
            x = hashes[p]
            lo = lower_bound(hashes, lo, b1, x)
            if lo == b1:
                break
            if hashes[lo] == x:
                c += 1
        return c
    ia = a0
    ib = b0
    while ia < a1 and ib < b1:
        x = hashes[ia]
        y = hashes[ib]
        c += x == y
        ia += x <= y
        ib += y <= x
    return c


@njit(inline="always", cache=True)
def pair_jaccard(indptr, hashes, i, j):
    """Jaccard similarity of documents ``i`` and ``j`` (1 when both are empty)."""
    a0 = indptr[i]
    a1 = indptr[i + 1]
    b0 = indptr[j]
    b1 = indptr[j + 1]
    total = (a1 - a0) + (b1 - b0)
    if total == 0:
        return 1.0
    c = intersect_count(hashes, a0, a1, b0, b1)
    return c / (total - c)


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def pair_similarities(indptr, hashes, left, right, out):
    """``out[p] = J(left[p], right[p])`` for every pair, in parallel (the Jaccard similarities
    of given pairs; the threshold join is :func:`simhash_nb.jaccard_pairs`)."""
    for p in prange(left.shape[0]):
        out[p] = pair_jaccard(indptr, hashes, left[p], right[p])
    return out


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def jaccard_all(indptr, hashes, n_tasks, out):
    """All pairs ``i < j`` in condensed order (that of ``np.triu_indices(n, 1)``).

    Task ``t`` handles rows ``t, t + n_tasks, ...`` so the triangle is shared evenly.
    """
    n = indptr.shape[0] - 1
    for t in prange(n_tasks):
        for i in range(t, n, n_tasks):
            base = i * (2 * n - i - 1) // 2 - i - 1
            for j in range(i + 1, n):
                out[base + j] = pair_jaccard(indptr, hashes, i, j)
    return out


@njit(inline="always", cache=True)
def count_between_at_least(ha, a0, a1, hb, b0, b1, need):
    """Intersection size of the sorted runs ``ha[a0:a1]`` and ``hb[b0:b1]``, or -1 once
    it cannot reach ``need`` (the merge stops there)."""
    c = 0
    ia = a0
    ib = b0
    while ia < a1 and ib < b1:
        if c + min(a1 - ia, b1 - ib) < need:
            return -1
        x = ha[ia]
        y = hb[ib]
        c += x == y
        ia += x <= y
        ib += y <= x
    return c if c >= need else -1


@njit(inline="always", cache=True)
def count_at_least(hashes, a0, a1, b0, b1, need):
    """Intersection size of two sorted runs, or -1 once it cannot reach ``need``."""
    return count_between_at_least(hashes, a0, a1, hashes, b0, b1, need)


@njit(inline="always", cache=True)
def jaccard_between_at_least(indptr_a, hashes_a, a, indptr_b, hashes_b, b, threshold):
    """Jaccard similarity of document ``a`` of one CSR and ``b`` of another (or the same)
    if it is ``>= threshold``, else -1.

    The filters of :func:`pairs_above` make most pairs below the threshold cheap: the
    size filter (``J <= |A| / |B|``) and a merge that stops once the remaining
    elements cannot lift the intersection to ``t (|A| + |B|) / (1 + t)``.
    """
    slack = 1e-9
    a0 = indptr_a[a]
    a1 = indptr_a[a + 1]
    b0 = indptr_b[b]
    b1 = indptr_b[b + 1]
    sa = a1 - a0
    sb = b1 - b0
    total = sa + sb
    sim = -1.0
    if total == 0:
        sim = 1.0
    elif min(sa, sb) >= threshold * max(sa, sb) * (1.0 - slack):
        need = int(threshold * total / (1.0 + threshold) * (1.0 - slack))
        inter = count_between_at_least(hashes_a, a0, a1, hashes_b, b0, b1, need)
        if inter >= 0:
            sim = inter / (total - inter)
    return sim if sim >= threshold else -1.0


@njit(inline="always", cache=True)
def jaccard_at_least(indptr, hashes, a, b, threshold):
    """:func:`jaccard_between_at_least` of two documents of one CSR."""
    return jaccard_between_at_least(indptr, hashes, a, indptr, hashes, b, threshold)


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def listed_at_least(indptr, hashes, left, right, todo, threshold, ok):
    """``ok[t]``: whether pair ``todo[t]`` of ``left``/``right`` has Jaccard
    ``>= threshold``, in parallel."""
    for t in prange(todo.shape[0]):
        e = todo[t]
        ok[t] = jaccard_at_least(indptr, hashes, left[e], right[e], threshold) >= 0.0
    return ok


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def pair_similarities_above(indptr, hashes, left, right, threshold, out):
    """``out[p] = J(left[p], right[p])`` where it is ``>= threshold``, else -1
    (:func:`jaccard_at_least` for every pair, in parallel)."""
    for p in prange(left.shape[0]):
        out[p] = jaccard_at_least(indptr, hashes, left[p], right[p], threshold)
    return out


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def pairs_above(indptr, hashes, order, lo, hi, threshold, n_tasks, cap):
    """Every pair with Jaccard ``>= threshold``, pruned (the AllPairs filters).

    ``order`` sorts the documents by size. Size filter: ``J <= |A| / |B|`` for
    ``|A| <= |B|``, so a row stops at the first partner ``|A| < t |B|``. Merges stop as
    soon as the remaining elements cannot lift the intersection to
    ``t (|A| + |B|) / (1 + t)``. Both bounds carry a small tolerance so that rounding
    never drops a pair; the final test is the exact ``J >= t``.

    Task ``t`` handles sorted rows ``lo + t, lo + t + n_tasks, ...`` below ``hi`` and
    writes at most ``cap`` pairs into its slice, counting past it so the caller can
    retry with the exact size. Returns ``(left, right, sims, counts)``.
    """
    n = order.shape[0]
    left = np.empty(n_tasks * cap, dtype=np.int64)
    right = np.empty(n_tasks * cap, dtype=np.int64)
    sims = np.empty(n_tasks * cap, dtype=np.float64)
    counts = np.zeros(n_tasks, dtype=np.int64)
    slack = 1e-9
    for t in prange(n_tasks):
        base = t * cap
        c = 0
        for x in range(lo + t, hi, n_tasks):
            a = order[x]
            a0 = indptr[a]
            a1 = indptr[a + 1]
            sa = a1 - a0
            for y in range(x + 1, n):
                b = order[y]
                b0 = indptr[b]
                b1 = indptr[b + 1]
                sb = b1 - b0
                if sa < threshold * sb * (1.0 - slack):
                    break
                total = sa + sb
                if total == 0:
                    sim = 1.0
                else:
                    need = int(threshold * total / (1.0 + threshold) * (1.0 - slack))
                    inter = count_at_least(hashes, a0, a1, b0, b1, need)
                    if inter < 0:
                        continue
                    sim = inter / (total - inter)
                if sim >= threshold:
                    if c < cap:
                        left[base + c] = min(a, b)
                        right[base + c] = max(a, b)
                        sims[base + c] = sim
                    c += 1
        counts[t] = c
    return left, right, sims, counts


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def minhash(indptr, hashes, salts, out):
    """MinHash signatures: ``out[d, p] = min_h splitmix64(h ^ salts[p])`` (max if empty)."""
    n = indptr.shape[0] - 1
    m = salts.shape[0]
    for d in prange(n):
        for p in range(m):
            out[d, p] = _U64_MAX
        for f in range(indptr[d], indptr[d + 1]):
            h = hashes[f]
            for p in range(m):
                v = splitmix64(h ^ salts[p])
                if v < out[d, p]:
                    out[d, p] = v
    return out


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def band_keys(sig, bands, rows, out):
    """``out[d, b]``: hash of signature entries ``b * rows .. b * rows + rows - 1``."""
    for d in prange(sig.shape[0]):
        for b in range(bands):
            key = np.uint64(b)
            for r in range(b * rows, (b + 1) * rows):
                key = splitmix64(key ^ sig[d, r])
            out[d, b] = key
    return out


@njit(inline="always", cache=True)
def _bucket_end(keys, order, s):
    """The end of the run of rows sharing ``keys[order[s]]`` in key order."""
    e = s + 1
    while e < order.shape[0] and keys[order[e]] == keys[order[s]]:
        e += 1
    return e


@njit(cache=True, nogil=True)
def bucket_pairs(keys, order, max_pairs):
    """All pairs of rows that share a key, packed ``min << 32 | max``.

    ``order`` sorts ``keys``; rows are below ``2**32``. Returns ``(packed, total)``:
    when the total number of pairs exceeds ``max_pairs`` nothing is materialised and
    ``packed`` is empty, so the caller can refuse with the count.
    """
    n = order.shape[0]
    total = 0
    s = 0
    while s < n:
        e = _bucket_end(keys, order, s)
        m = e - s
        total += m * (m - 1) // 2
        s = e
    if total > max_pairs:
        return np.empty(0, dtype=np.uint64), total
    out = np.empty(total, dtype=np.uint64)
    c = 0
    s = 0
    while s < n:
        e = _bucket_end(keys, order, s)
        for x in range(s, e):
            for y in range(x + 1, e):
                a = order[x]
                b = order[y]
                if a > b:
                    a, b = b, a
                out[c] = (np.uint64(a) << np.uint64(32)) | np.uint64(b)
                c += 1
        s = e
    return out, total
