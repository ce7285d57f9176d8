"""Tokenise UTF-8 text and hash its features, per document.

Text arrives as Arrow-style buffers: ``data`` (uint8, valid UTF-8) and ``offsets``
(int64, document ``i`` is ``data[offsets[i]:offsets[i + 1]]``).

Features (see ``docs`` in :mod:`simhash_nb._core.fingerprint`):

- ``MODE_CHAR``: every run of ``n`` consecutive code points; the feature's bytes are
  the UTF-8 bytes of the run.
- ``MODE_WORD``: words are maximal runs of word code points (class 1 in the shipped
  table); a CJK ideograph or kana (class 2) is a word on its own; everything else
  separates words. A feature is ``n`` consecutive words joined by one space (U+0020),
  the way scikit-learn names n-grams.

A non-empty document with fewer than ``n`` units gives one feature: all of its units.
A document with no units gives no features. The document kernels take the tokenizer as
the word-class table (word n-grams) or None (character n-grams): see :func:`doc_hashes`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .xxh64 import xxh64

MODE_CHAR = 0
MODE_WORD = 1


@njit(cache=True, nogil=True)
def next_cp_start(data, p, end):
    """Position of the code point after the one starting at ``p``."""
    p += 1
    while p < end and (data[p] & 0xC0) == 0x80:
        p += 1
    return p


@njit(cache=True, nogil=True)
def decode_cp(data, p):
    """Code point starting at ``p`` (input is valid UTF-8)."""
    b0 = np.int64(data[p])
    if b0 < 0x80:
        return b0
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(data[p + 1]) & 0x3F)
    if b0 < 0xF0:
        return ((b0 & 0x0F) << 12) | ((np.int64(data[p + 1]) & 0x3F) << 6) | (
            np.int64(data[p + 2]) & 0x3F
        )
    return (
        ((b0 & 0x07) << 18)
        | ((np.int64(data[p + 1]) & 0x3F) << 12)
        | ((np.int64(data[p + 2]) & 0x3F) << 6)
        | (np.int64(data[p + 3]) & 0x3F)
    )


@njit(cache=True, nogil=True)
def char_hashes(data, start, end, n, seed, out):
    """Hashes of the character n-grams of ``data[start:end]`` into ``out``; returns the count."""
    c = 0
    units = 0
    head = start
    p = start
    while p < end:
        p = next_cp_start(data, p, end)
        units += 1
        if units >= n or p >= end:  # an n-gram, or all of a text shorter than n
            out[c] = xxh64(data, head, p, seed)  # one call site: xxh64 is inlined
            c += 1
            head = next_cp_start(data, head, end)
    return c


@njit(cache=True, nogil=True)
def unit_class(data, p, end, classes):
    """``(q, cls)``: where the code point at ``p`` ends, and its class in ``classes``."""
    b0 = data[p]
    if b0 < 0x80:  # ASCII fast path
        return p + 1, classes[b0]
    return next_cp_start(data, p, end), classes[decode_cp(data, p)]


@njit(cache=True, nogil=True)
def word_bounds(data, start, end, classes, wstart, wend):
    """Word boundaries of ``data[start:end]`` into ``wstart``/``wend``; returns the count."""
    nw = 0
    in_word = False
    p = start
    while p < end:
        q, cls = unit_class(data, p, end, classes)
        if cls == 1:
            if not in_word:
                wstart[nw] = p
                in_word = True
        else:
            if in_word:
                wend[nw] = p
                nw += 1
                in_word = False
            if cls == 2:
                wstart[nw] = p
                wend[nw] = q
                nw += 1
        p = q
    if in_word:
        wend[nw] = end
        nw += 1
    return nw


@njit(cache=True, nogil=True)
def _spaced(data, wstart, wend, first, last):
    """True if words ``first..last-1`` stand in the text with one space between each."""
    w = first
    while w < last - 1 and wstart[w + 1] == wend[w] + 1 and data[wend[w]] == 32:
        w += 1
    return w == last - 1


@njit(cache=True, nogil=True)
def _joined_hash(data, wstart, wend, first, last, seed, gram):
    """xxh64 of words ``first..last-1`` joined by single spaces (built in ``gram``)."""
    g = 0
    for w in range(first, last):
        if w > first:
            gram[g] = 32
            g += 1
        for p in range(wstart[w], wend[w]):
            gram[g] = data[p]
            g += 1
    return xxh64(gram, 0, g, seed)


@njit(cache=True, nogil=True)
def word_hashes(data, start, end, n, seed, classes, wstart, wend, gram, out):
    """Hashes of the word n-grams of ``data[start:end]`` into ``out``; returns the count.

    An n-gram whose words already stand one space apart in the text (as in normalised
    text) is hashed where it is; others are joined in ``gram`` first: the same bytes.
    """
    nw = word_bounds(data, start, end, classes, wstart, wend)
    if nw == 0:
        return 0
    if n == 1:
        for w in range(nw):
            out[w] = xxh64(data, wstart[w], wend[w], seed)
        return nw
    if nw < n:
        out[0] = _joined_hash(data, wstart, wend, 0, nw, seed, gram)
        return 1
    for w in range(nw - n + 1):
        if _spaced(data, wstart, wend, w, w + n):
            out[w] = xxh64(data, wstart[w], wend[w + n - 1], seed)
        else:
            out[w] = _joined_hash(data, wstart, wend, w, w + n, seed, gram)
    return nw - n + 1


@njit(cache=True, nogil=True)
def doc_hashes(data, start, end, n, seed, classes, wstart, wend, gram, out):
    """Feature hashes of one document (occurrences, in text order); returns the count.

    ``classes`` is the word-class table for word n-grams, or None for character
    n-grams: the argument's type picks the tokenizer when Numba compiles (the other
    branch is pruned), so a kernel compiles only the tokenizer it is called with.
    Scratch arrays must hold ``end - start + 1`` entries (``gram``: ``+ n``).
    """
    if classes is None:
        return char_hashes(data, start, end, n, seed, out)
    return word_hashes(data, start, end, n, seed, classes, wstart, wend, gram, out)


@njit(cache=True, nogil=True)
def insert_sorted(values, j, v):
    """Insert ``v`` into the sorted ``values[:j]``, which grows by one (into ``values[j]``)."""
    while j > 0 and values[j - 1] > v:
        values[j] = values[j - 1]
        j -= 1
    values[j] = v


@njit(cache=True, nogil=True)
def sort_u64(values, m, tmp):
    """Sort ``values[:m]`` in place, ascending; ``tmp`` holds at least ``m`` values.

    Insertion sort below 32 values, else an LSD radix sort over the bytes that differ
    (a byte every value shares is skipped). Written out rather than ``ndarray.sort``,
    whose quicksort takes seconds to compile on a first call.
    """
    if m < 32:
        for t in range(1, m):
            insert_sorted(values, t, values[t])
        return
    counts = np.empty(256, dtype=np.int64)
    src = values
    dst = tmp
    moved = False  # the sorted values are in tmp
    for byte in range(8):
        shift = np.uint64(8 * byte)
        counts[:] = 0
        for t in range(m):
            counts[np.int64((src[t] >> shift) & np.uint64(255))] += 1
        skip = False
        for d in range(256):  # (not counts.max(): its overload is slow to compile)
            skip = skip or counts[d] == m
        if skip:
            continue
        total = 0
        for d in range(256):
            c = counts[d]
            counts[d] = total
            total += c
        for t in range(m):
            d = np.int64((src[t] >> shift) & np.uint64(255))
            dst[counts[d]] = src[t]
            counts[d] += 1
        src, dst = dst, src
        moved = not moved
    if moved:
        for t in range(m):
            values[t] = tmp[t]


@njit(cache=True, nogil=True)
def sort_unique(values, m):
    """Sort ``values[:m]`` in place and move the distinct values to the front.

    Returns the number of distinct values; ``counts[:k]`` is not computed here.
    """
    if m <= 1:
        return m
    sort_u64(values, m, np.empty(m, dtype=values.dtype))
    k = 1
    for t in range(1, m):
        if values[t] != values[k - 1]:
            values[k] = values[t]
            k += 1
    return k
