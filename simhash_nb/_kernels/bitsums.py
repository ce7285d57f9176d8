"""Weighted bit sums: feature hashes to SimHash fingerprints.

For each feature with 64-bit hash ``h`` and weight ``w``, and each bit ``b``, the sum
for bit ``b`` gains ``+w`` if bit ``b`` of the feature's hash is 1 and ``-w`` otherwise.
Fingerprint bit ``b`` is 1 iff its sum is ``> 0`` (ties and empty documents give 0).
128-bit fingerprints take bits 0..63 from ``h`` and bits 64..127 from ``splitmix64(h)``.

Unit weights (term frequency, binary) use integer counts: bit ``b`` is 1 iff more
than half of the ``m`` features have it set, exactly. Real weights sum in float64 in
feature order. A CSR document whose weights are all 1 takes the integer path; the
float sums of ``+-1`` are exact, so both paths give the same bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .shingles import doc_hashes, sort_unique
from .signsums import bit_majority, signed_bit_sums

MAX_UNIT_FEATURES = 2**31 - 1  # bit_majority counts in int32 lanes


@njit(cache=True, nogil=True)
def unit_fingerprint(hashes, lo, hi, words, out_row):
    """Fingerprint of features ``lo..hi-1``, each with weight 1, into ``out_row``.

    Bit ``b`` is 1 iff more than half of the features have it set (see :mod:`.signsums`).
    Needs ``hi - lo <= MAX_UNIT_FEATURES``.
    """
    for word in range(words):
        out_row[word] = bit_majority(hashes, lo, hi, word == 1)


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
def fingerprint_texts(data, offsets, chunks, mode, n, seed, classes, binary, words):
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
        for i in range(lo, hi):
            m = doc_hashes(mode, data, offsets[i], offsets[i + 1], n, seed, classes,
                           wstart, wend, gram, hashes)
            if binary:
                m = distinct(hashes, m, table, stamps, i + 1)
            nfeat[i] = m
            unit_fingerprint(hashes, 0, m, words, out[i])
    return out, nfeat


@njit(inline="always", cache=True)
def _all_ones(weights, lo, hi):
    for f in range(lo, hi):  # real weights leave at once; unit ones are read again, from cache
        if weights[f] != 1.0:
            return False
    return True


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
            lo = indptr[i]
            hi = indptr[i + 1]
            if hi - lo <= MAX_UNIT_FEATURES and _all_ones(weights, lo, hi):
                unit_fingerprint(hashes, lo, hi, words, out[i])
            elif not weighted_fingerprint(hashes, weights, lo, hi, words, out[i]):
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
