"""Weighted bit sums: feature hashes to SimHash fingerprints.

For each feature with 64-bit hash ``h`` and weight ``w``, and each bit ``b``, the sum
for bit ``b`` gains ``+w`` if bit ``b`` of the feature's hash is 1 and ``-w`` otherwise.
Fingerprint bit ``b`` is 1 iff its sum is ``> 0`` (ties and empty documents give 0).
128-bit fingerprints take bits 0..63 from ``h`` and bits 64..127 from ``splitmix64(h)``.

Unit weights (term frequency, binary) use integer counts: bit ``b`` is 1 iff more
than half of the ``m`` features have it set, exactly. Real weights sum in float64 in
feature order.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .shingles import doc_hashes, sort_unique
from .signsums import signed_bit_sums
from .xxh64 import splitmix64


@njit(inline="always", cache=True)
def _word_hash(h, word):
    return h if word == 0 else splitmix64(h)


_H = np.uint64(0x8080808080808080)
_ONES = np.uint64(0x0101010101010101)
_GATHER = np.uint64(0x0102040810204080)
_BLOCK = 127  # byte counters hold at most this many features, so they never carry


def spread_table() -> np.ndarray:
    """uint64[256]: byte ``v`` spread so that bit ``j`` of ``v`` is the low bit of byte ``j``."""
    v = np.arange(256, dtype=np.uint64)
    out = np.zeros(256, dtype=np.uint64)
    for j in range(8):
        out |= ((v >> np.uint64(j)) & np.uint64(1)) << np.uint64(8 * j)
    return out


SPREAD = spread_table()




@njit(inline="always", cache=True)
def _byte_at_least(acc, t):
    """Bit j is 1 iff byte j of ``acc`` (each <= 127) is >= t (1 <= t <= 64)."""
    mask = ((acc | _H) - np.uint64(t) * _ONES) & _H
    return ((mask >> np.uint64(7)) * _GATHER) >> np.uint64(56)


@njit(cache=True, nogil=True)
def unit_fingerprint(hashes, m, totals, words, out_row, spread):
    """Fingerprint of ``hashes[:m]``, each with weight 1, into ``out_row`` (uint64[words]).

    Bit ``b`` is 1 iff more than half of the features have it set. Counts are kept
    eight to a uint64 (one byte per bit position) in blocks of 127 features.
    """
    for word in range(words):
        totals[:] = 0
        f = 0
        while True:
            stop = min(m, f + _BLOCK)
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = np.uint64(0)
            for g in range(f, stop):
                h = _word_hash(hashes[g], word)
                a0 += spread[h & np.uint64(255)]
                a1 += spread[(h >> np.uint64(8)) & np.uint64(255)]
                a2 += spread[(h >> np.uint64(16)) & np.uint64(255)]
                a3 += spread[(h >> np.uint64(24)) & np.uint64(255)]
                a4 += spread[(h >> np.uint64(32)) & np.uint64(255)]
                a5 += spread[(h >> np.uint64(40)) & np.uint64(255)]
                a6 += spread[(h >> np.uint64(48)) & np.uint64(255)]
                a7 += spread[h >> np.uint64(56)]
            if f == 0 and stop == m:  # the common short document: compare bytes directly
                t = m // 2 + 1
                fp = np.uint64(0)
                if m > 0:
                    fp = (_byte_at_least(a0, t) | (_byte_at_least(a1, t) << np.uint64(8))
                          | (_byte_at_least(a2, t) << np.uint64(16))
                          | (_byte_at_least(a3, t) << np.uint64(24))
                          | (_byte_at_least(a4, t) << np.uint64(32))
                          | (_byte_at_least(a5, t) << np.uint64(40))
                          | (_byte_at_least(a6, t) << np.uint64(48))
                          | (_byte_at_least(a7, t) << np.uint64(56)))
                out_row[word] = fp
                break
            for j in range(8):
                sh = np.uint64(8 * j)
                totals[j] += (a0 >> sh) & np.uint64(255)
                totals[8 + j] += (a1 >> sh) & np.uint64(255)
                totals[16 + j] += (a2 >> sh) & np.uint64(255)
                totals[24 + j] += (a3 >> sh) & np.uint64(255)
                totals[32 + j] += (a4 >> sh) & np.uint64(255)
                totals[40 + j] += (a5 >> sh) & np.uint64(255)
                totals[48 + j] += (a6 >> sh) & np.uint64(255)
                totals[56 + j] += (a7 >> sh) & np.uint64(255)
            f = stop
            if f >= m:
                fp = np.uint64(0)
                for b in range(64):
                    if np.uint64(2) * totals[b] > np.uint64(m):
                        fp |= np.uint64(1) << np.uint64(b)
                out_row[word] = fp
                break


@njit(cache=True, nogil=True)
def weighted_fingerprint(hashes, weights, lo, hi, words, out_row):
    """Fingerprint of features ``lo..hi-1`` with real weights, into ``out_row``.

    Sums ``+w`` or ``-w`` per bit in float64, in feature order (see :mod:`.signsums`).
    Returns False if a weight is negative or not finite (``out_row`` is then garbage).
    """
    valid = True
    for word in range(words):
        out_row[word], ok = signed_bit_sums(hashes, weights, lo, hi, word == 1)
        valid = valid and ok
    return valid


_SET_MAX = 1 << 17  # largest hash-set table per chunk; longer documents are sorted instead


@njit(cache=True)
def _set_size(max_features):
    size = 16
    while size < 2 * max_features and size < _SET_MAX:
        size *= 2
    return size


@njit(cache=True, nogil=True)
def distinct(hashes, m, table, stamps, stamp):
    """Move the distinct values of ``hashes[:m]`` to the front; returns their count.

    Open addressing in ``table`` (a power-of-two size >= 2m); ``stamps[s] == stamp``
    marks slot ``s`` as used by this document, so the table is never cleared. Falls
    back to sorting when the table is too small.
    """
    size = table.shape[0]
    if 2 * m > size:
        return sort_unique(hashes, m)
    mask = np.uint64(size - 1)
    k = 0
    for t in range(m):
        h = hashes[t]
        slot = np.int64(h & mask)
        while True:
            if stamps[slot] != stamp:
                stamps[slot] = stamp
                table[slot] = h
                hashes[k] = h
                k += 1
                break
            if table[slot] == h:
                break
            slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
    return k


@njit(cache=True)
def _max_len(offsets, lo, hi):
    m = 0
    for i in range(lo, hi):
        m = max(m, offsets[i + 1] - offsets[i])
    return m


@njit(cache=True, nogil=True)
def _scratch(offsets, lo, hi, n, with_set):
    """Per-chunk buffers for documents ``lo..hi-1``: hashes, word bounds, n-gram bytes and
    (``with_set``) the hash-set table of :func:`distinct`."""
    size = _max_len(offsets, lo, hi) + 1
    set_size = _set_size(size) if with_set else 1
    return (np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.int64),
            np.empty(size, dtype=np.int64), np.empty(size + n, dtype=np.uint8),
            np.empty(set_size, dtype=np.uint64), np.zeros(set_size, dtype=np.int64))


@njit(parallel=True, cache=True, nogil=True)
def fingerprint_texts(data, offsets, chunks, mode, n, seed, classes, binary, words, spread):
    """Fused tokenise + hash + bit sums over documents, in parallel over ``chunks``.

    Returns ``(fingerprints uint64[ndocs, words], n_features int64[ndocs])``.
    """
    ndocs = offsets.shape[0] - 1
    out = np.zeros((ndocs, words), dtype=np.uint64)
    nfeat = np.zeros(ndocs, dtype=np.int64)
    seed = np.uint64(seed)
    for c in prange(chunks.shape[0] - 1):
        lo = chunks[c]
        hi = chunks[c + 1]
        hashes, wstart, wend, gram, table, stamps = _scratch(offsets, lo, hi, n, binary)
        counts = np.empty(64, dtype=np.uint64)
        for i in range(lo, hi):
            m = doc_hashes(mode, data, offsets[i], offsets[i + 1], n, seed, classes,
                           wstart, wend, gram, hashes)
            if binary:
                m = distinct(hashes, m, table, stamps, i + 1)
            nfeat[i] = m
            unit_fingerprint(hashes, m, counts, words, out[i], spread)
    return out, nfeat


@njit(parallel=True, cache=True, nogil=True)
def fingerprint_csr(indptr, hashes, weights, chunks, words):
    """Fingerprints of a CSR feature batch, in parallel over ``chunks`` of rows.

    Returns ``(fingerprints uint64[ndocs, words], first_invalid int64)``: the first
    document with a negative or non-finite weight, or -1 if all weights are valid.
    """
    ndocs = indptr.shape[0] - 1
    nchunks = chunks.shape[0] - 1
    out = np.zeros((ndocs, words), dtype=np.uint64)
    invalid = np.full(max(nchunks, 1), ndocs, dtype=np.int64)
    for c in prange(nchunks):
        for i in range(chunks[c], chunks[c + 1]):
            if not weighted_fingerprint(hashes, weights, indptr[i], indptr[i + 1], words, out[i]):
                invalid[c] = i
                break
    first = invalid.min()
    return out, first if first < ndocs else -1


@njit(parallel=True, cache=True, nogil=True)
def feature_counts_texts(data, offsets, chunks, mode, n, seed, classes, binary):
    """Number of distinct features per document (first pass of :func:`features_texts`)."""
    ndocs = offsets.shape[0] - 1
    nfeat = np.zeros(ndocs, dtype=np.int64)
    seed = np.uint64(seed)
    for c in prange(chunks.shape[0] - 1):
        lo = chunks[c]
        hi = chunks[c + 1]
        hashes, wstart, wend, gram, table, stamps = _scratch(offsets, lo, hi, n, True)
        for i in range(lo, hi):
            m = doc_hashes(mode, data, offsets[i], offsets[i + 1], n, seed, classes,
                           wstart, wend, gram, hashes)
            nfeat[i] = distinct(hashes, m, table, stamps, i + 1)
    return nfeat


@njit(parallel=True, cache=True, nogil=True)
def features_texts(data, offsets, chunks, mode, n, seed, classes, binary, indptr):
    """Distinct feature hashes per document (sorted) with tf (or 1) weights, as CSR."""
    seed = np.uint64(seed)
    nnz = indptr[-1]
    out_h = np.empty(nnz, dtype=np.uint64)
    out_w = np.empty(nnz, dtype=np.float64)
    for c in prange(chunks.shape[0] - 1):
        lo = chunks[c]
        hi = chunks[c + 1]
        hashes, wstart, wend, gram, _, _ = _scratch(offsets, lo, hi, n, False)
        for i in range(lo, hi):
            m = doc_hashes(mode, data, offsets[i], offsets[i + 1], n, seed, classes,
                           wstart, wend, gram, hashes)
            if m > 1:
                hashes[:m].sort()
            base = indptr[i]
            k = -1
            for t in range(m):
                if k >= 0 and hashes[t] == out_h[base + k]:
                    if not binary:
                        out_w[base + k] += 1.0
                else:
                    k += 1
                    out_h[base + k] = hashes[t]
                    out_w[base + k] = 1.0
    return out_h, out_w
