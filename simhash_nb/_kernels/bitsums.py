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

from .prange import PRANGE_ONLY
from .shingles import (
    doc_hashes,
    insert_sorted,
    sort_u64,
    sort_unique,
    unit_class,
)
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


_SET_MAX = 1 << 17  # largest shared hash-set table per chunk (see distinct, sorted_distinct)
_NO_MAX = 1 << 62  # a table that holds any document (see fingerprint_chunks)


def set_size(max_features, most):
    """Slots of the shared hash-set table for documents of up to ``max_features``
    features: a power of two >= twice that (>= 16), at most ``most``. Plain Python,
    compiled below for the kernels."""
    size = 16
    while size < 2 * max_features and size < most:
        size *= 2
    return size


_set_size = njit(inline="always", cache=True)(set_size)


@njit(inline="always", cache=True, nogil=True)
def _doc_set_bits(m):
    """log2 of the hash-set table size for ``m`` values: a power of two >= 2m (>= 16)."""
    bits = 4
    while (1 << bits) < 2 * m:
        bits += 1
    return bits


@njit(cache=True, nogil=True)
def distinct(hashes, m, table, stamps, stamp):
    """Move the distinct values of ``hashes[:m]`` to the front; returns their count.

    Open addressing in the first ``2**b >= 2m`` slots (``b >= 4``) of ``table``, which
    must hold them (:func:`chunk_scratch` sizes it for the longest document); small
    documents stay in cache. ``stamps[s] == stamp`` marks slot ``s`` as used by this
    document, so the table is never cleared. Nothing is allocated (not a sort either):
    the first fingerprint compiles no allocation and no sort kernel.
    """
    size = 1 << _doc_set_bits(m)
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


_MAX_PROBE = 128  # sorted_distinct sorts instead past this: bounds its insertion sort


@njit(cache=True, nogil=True)
def sorted_distinct(hashes, m, table, stamps, stamp):
    """Sort the distinct values of ``hashes[:m]`` to the front; returns their count.

    Distinct as :func:`distinct`, but a value's home slot is its top bits, so the table
    read in slot order is almost sorted: linear probing (into the slack past the end,
    no wrap-around) moves a value at most ``_MAX_PROBE`` slots from its home, and an
    insertion sort over the slots read in order finishes the job in linear time.
    Falls back to :func:`sort_unique` when the table is too small or a probe too long.
    """
    if m <= 1:
        return m
    bits = _doc_set_bits(m)
    if (1 << bits) + m > table.shape[0]:
        return sort_unique(hashes, m)
    shift = np.uint64(64 - bits)
    top = 0
    for t in range(m):  # reads hashes[:m] only: the fallback below still has them all
        h = hashes[t]
        home = np.int64(h >> shift)
        slot = home
        while stamps[slot] == stamp and table[slot] != h:
            slot += 1
        if slot - home > _MAX_PROBE:
            return sort_unique(hashes, m)
        if stamps[slot] != stamp:
            stamps[slot] = stamp
            table[slot] = h
            top = max(top, slot)
    k = 0
    for s in range(top + 1):
        if stamps[s] == stamp:
            insert_sorted(hashes, k, table[s])
            k += 1
    return k


@njit(inline="always", cache=True)
def max_doc_len(offsets, lo, hi):
    """Longest document (in bytes) among documents ``lo:hi`` of ``offsets``."""
    m = 0
    for i in range(lo, hi):
        m = max(m, offsets[i + 1] - offsets[i])
    return m


def scratch_buffers(size, n, slots):
    """Buffers for documents of up to ``size - 1`` bytes: hashes, word bounds, n-gram
    bytes (``n``: the n-gram length) and a hash-set table of ``slots`` slots with its
    stamps. Plain Python (numpy), compiled below for the kernels."""
    return (np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.int64),
            np.empty(size, dtype=np.int64), np.empty(size + n, dtype=np.uint8),
            np.empty(slots, dtype=np.uint64), np.zeros(slots, dtype=np.int64))


_scratch_buffers = njit(inline="always", cache=True, nogil=True)(scratch_buffers)


@njit(inline="always", cache=True, nogil=True)
def _scratch(offsets, lo, hi, n, with_set, most):
    """Per-chunk buffers for documents ``lo..hi-1`` (:func:`scratch_buffers`), the
    hash-set table (``with_set``) of at most ``most`` slots, with slack for
    :func:`sorted_distinct`."""
    size = max_doc_len(offsets, lo, hi) + 1
    return _scratch_buffers(size, n, _set_size(size, most) * 3 // 2 if with_set else 1)


def chunk_scratch(offsets, chunks, c0, c1, n, with_set):
    """The buffers of :func:`fingerprint_chunks` over chunks ``c0..c1-1``, allocated by
    numpy (a first call compiles no allocation: Numba's array constructors took 0.45 s
    of a cold first fingerprint's 5 s), the hash-set table large enough for every
    document (:func:`distinct` allocates none)."""
    lo, hi = chunks[c0], chunks[c1]
    size = int(np.diff(offsets[lo : hi + 1]).max(initial=0)) + 1
    return scratch_buffers(size, n, set_size(size, _NO_MAX) * 3 // 2 if with_set else 1)


@njit(cache=True, nogil=True)
def fingerprint_chunks(data, offsets, chunks, c0, c1, n, seed, classes, binary, out, nfeat,
                       scratch):
    """Fused tokenise + hash + bit sums over the documents of chunks ``c0..c1-1``.

    Writes their rows of ``out`` (uint64[ndocs, words]) and ``nfeat`` (int64[ndocs]);
    ``scratch``: buffers for the longest of those documents, whose hash-set table holds
    any of them (:func:`chunk_scratch`).
    Serial: callers run disjoint chunk ranges on threads (it releases the GIL), so a
    first call compiles no parallel kernel.
    """
    seed = np.uint64(seed)
    words = out.shape[1]
    hashes, wstart, wend, gram, table, stamps = scratch
    for i in range(chunks[c0], chunks[c1]):
        m = doc_hashes(data, offsets[i], offsets[i + 1], n, seed, classes,
                       wstart, wend, gram, hashes)
        if binary:
            m = distinct(hashes, m, table, stamps, i + 1)
        nfeat[i] = m
        unit_fingerprint(hashes, 0, m, words, out[i])


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def fingerprint_texts(data, offsets, chunks, n, seed, classes, binary, words):
    """:func:`fingerprint_chunks` over all ``chunks``, in parallel over them.

    Returns ``(fingerprints uint64[ndocs, words], n_features int64[ndocs])``.
    """
    ndocs = offsets.shape[0] - 1
    out = np.zeros((ndocs, words), dtype=np.uint64)
    nfeat = np.zeros(ndocs, dtype=np.int64)
    for c in prange(chunks.shape[0] - 1):
        c0 = np.int64(c)  # prange's index is unsigned: the signature Python callers use
        fingerprint_chunks(data, offsets, chunks, c0, c0 + 1, n, seed, classes, binary, out,
                           nfeat, _scratch(offsets, chunks[c0], chunks[c0 + 1], n, binary,
                                           _NO_MAX))
    return out, nfeat


@njit(cache=True, nogil=True)
def _all_ones(weights, lo, hi):
    for f in range(lo, hi):  # real weights leave at once; unit ones are read again, from cache
        if weights[f] != 1.0:
            return False
    return True


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
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


def feature_counts_texts(data, offsets, chunks, n, seed, classes):
    """Number of distinct features per document (first pass of :func:`features_texts`):
    those :func:`fingerprint_texts` counts, with binary weights and no fingerprint words.
    Called from Python, not compiled: the flag and width are then typed as any caller's
    (``bool``, ``int64``), not as literals, so no extra signature is compiled."""
    return fingerprint_texts(data, offsets, chunks, n, seed, classes, True, 0)[1]


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def features_texts(data, offsets, chunks, n, seed, classes, indptr):
    """Distinct feature hashes per document (sorted) with tf weights, as CSR (binary
    features: :func:`binary_features_fingerprints`)."""
    seed = np.uint64(seed)
    nnz = indptr[-1]
    out_h = np.empty(nnz, dtype=np.uint64)
    out_w = np.empty(nnz, dtype=np.float64)
    for c in prange(chunks.shape[0] - 1):
        lo = chunks[c]
        hi = chunks[c + 1]
        hashes, wstart, wend, gram, _, _ = _scratch(offsets, lo, hi, n, False, _SET_MAX)
        tmp = np.empty_like(hashes)
        for i in range(lo, hi):
            m = doc_hashes(data, offsets[i], offsets[i + 1], n, seed, classes,
                           wstart, wend, gram, hashes)
            sort_u64(hashes, m, tmp)
            base = indptr[i]
            k = -1
            for t in range(m):
                if k >= 0 and hashes[t] == out_h[base + k]:
                    out_w[base + k] += 1.0
                else:
                    k += 1
                    out_h[base + k] = hashes[t]
                    out_w[base + k] = 1.0
    return out_h, out_w


@njit(cache=True, nogil=True)
def occurrences(data, start, end, n, classes):
    """Number of feature occurrences :func:`doc_hashes` finds in ``data[start:end]``.

    Counts the units (code points, or words as :func:`word_bounds` splits them) without
    hashing: ``0`` units give no feature, fewer than ``n`` one, else ``units - n + 1``.
    """
    units = 0
    if classes is None:  # character n-grams (see doc_hashes)
        for p in range(start, end):
            units += (data[p] & 0xC0) != 0x80
    else:
        in_word = False
        p = start
        while p < end:
            q, cls = unit_class(data, p, end, classes)
            if cls == 1:
                units += not in_word
                in_word = True
            else:
                in_word = False
                units += cls == 2
            p = q
    if units == 0:
        return 0
    return 1 if units < n else units - n + 1


@njit(cache=True, nogil=True)
def chunk_occurrences(data, offsets, chunks, c0, c1, n, classes, totals):
    """Feature occurrences (:func:`occurrences`, no hashing) of the documents of each
    chunk ``c`` of ``c0..c1-1``, into ``totals[c + 1]``: they size the regions of
    :func:`binary_features_fingerprints`. Serial, as :func:`fingerprint_chunks`."""
    for c in range(c0, c1):
        total = 0
        for i in range(chunks[c], chunks[c + 1]):
            total += occurrences(data, offsets[i], offsets[i + 1], n, classes)
        totals[c + 1] = total


@njit(cache=True, nogil=True)
def binary_features_fingerprints(data, offsets, chunks, c0, c1, n, seed, classes, region,
                                 buf, out, nfeat):
    """Binary-weight features and unit-weight fingerprints of the documents of chunks
    ``c0..c1-1``, in one tokenising pass.

    Chunk ``c`` writes its documents' distinct feature hashes, each document's in
    increasing order (those of :func:`features_texts`), one document after the other
    from ``buf[region[c]]``; their counts to ``nfeat`` (int64[ndocs]) and each one's
    fingerprint (as :func:`fingerprint_csr` with weights 1) to its row of ``out``
    (uint64[ndocs, words]). ``region[c + 1] - region[c]`` is the chunk's room: its
    feature occurrences (:func:`chunk_occurrences`). Returns False if a chunk would
    write past its room (never: it has one slot an occurrence). Serial: callers run
    disjoint chunk ranges on threads (it releases the GIL), so a first call compiles no
    parallel kernel.
    """
    seed = np.uint64(seed)
    words = out.shape[1]
    for c in range(c0, c1):
        lo = chunks[c]
        hi = chunks[c + 1]
        hashes, wstart, wend, gram, table, stamps = _scratch(offsets, lo, hi, n, True,
                                                             _SET_MAX)
        pos = region[c]
        for i in range(lo, hi):
            m = doc_hashes(data, offsets[i], offsets[i + 1], n, seed, classes,
                           wstart, wend, gram, hashes)
            k = sorted_distinct(hashes, m, table, stamps, i + 1)
            if pos + k > region[c + 1]:  # occurrences() undercounted: never write past
                return False
            nfeat[i] = k
            unit_fingerprint(hashes, 0, k, words, out[i])
            for t in range(k):  # a loop: a slice copy compiles its shape-error message
                buf[pos + t] = hashes[t]
            pos += k
    return True
