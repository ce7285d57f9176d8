"""Radix sort of table words: a parallel MSD partition, then cache-sized LSD sorts."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .prange import PRANGE_ONLY
from .table_keys import ONE, make_words


@njit(cache=True, nogil=True)
def _offsets(hist, bounds):
    """Per-chunk histograms ``hist[c, d]`` -> scatter offsets (in place), digit bounds."""
    total = 0
    for d in range(hist.shape[1]):
        bounds[d] = total
        for c in range(hist.shape[0]):
            cnt = hist[c, d]
            hist[c, d] = total
            total += cnt
    bounds[hist.shape[1]] = total


@njit(cache=True, nogil=True)
def _scatter(src, lo, hi, dst, offsets, tshift, tmask):
    for i in range(lo, hi):
        word = src[i]
        d = (word >> tshift) & tmask
        dst[offsets[d]] = word
        offsets[d] += 1


@njit(cache=True, nogil=True)
def _sort_segment(buf, tmp, s, e, low, rem_bits, local_bits):
    """Stable sort of ``buf[s:e]`` by bits ``[low, low + rem_bits)``: LSD radix with
    ``tmp[s:e]`` as scratch, insertion sort for short segments."""
    m = e - s
    if m <= 16:
        kmask = (ONE << np.uint64(rem_bits)) - ONE
        for x in range(s + 1, e):
            v = buf[x]
            kv = (v >> low) & kmask
            y = x - 1
            while y >= s and ((buf[y] >> low) & kmask) > kv:
                buf[y + 1] = buf[y]
                y -= 1
            buf[y + 1] = v
        return
    passes = (rem_bits + local_bits - 1) // local_bits
    dbits = (rem_bits + passes - 1) // passes
    n_buckets = 1 << dbits
    dmask = np.uint64(n_buckets - 1)
    hist = np.empty(n_buckets, dtype=np.int64)
    src = buf
    dst = tmp
    flipped = False
    for p in range(passes):
        shift = low + np.uint64(p * dbits)
        hist[:] = 0
        for x in range(s, e):
            hist[(src[x] >> shift) & dmask] += 1
        total = s
        single = False
        for d in range(n_buckets):
            cnt = hist[d]
            if cnt == m:
                single = True
            hist[d] = total
            total += cnt
        if single:
            continue
        for x in range(s, e):
            v = src[x]
            d = (v >> shift) & dmask
            dst[hist[d]] = v
            hist[d] += 1
        src, dst = dst, src
        flipped = not flipped
    if flipped:
        for x in range(s, e):
            buf[x] = src[x]


@njit(cache=True, nogil=True)
def _sort_segments(buf, tmp, bounds, d_lo, d_hi, low, rem_bits, local_bits):
    for d in range(d_lo, d_hi):
        if bounds[d + 1] - bounds[d] > 1:
            _sort_segment(buf, tmp, bounds[d], bounds[d + 1], low, rem_bits, local_bits)


@njit(cache=True, nogil=True)
def _digits(key_bits, extra_bits, row_bits, top_bits):
    """(top digit bits, its shift, its mask, shift of the key) of a table's words."""
    top = min(top_bits, key_bits)
    low = np.uint64(extra_bits + row_bits)
    tshift = np.uint64(extra_bits + row_bits + key_bits - top)
    return top, tshift, np.uint64((1 << top) - 1), low


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def sort_table(
    fps, key_pieces, extra_pieces, hashed, key_bits, extra_bits, row_bits, top_bits,
    local_bits, n_chunks, buf, tmp,
):
    """Sorted words of one table, in ``buf`` (``tmp`` is scratch of the same length).

    MSD radix sort on the key bits: the words are made in parallel chunks, each with
    its own histogram of the top ``top_bits`` key bits, so the partition scatter is
    stable and race-free; then each partition, small enough for the cache, is sorted
    on the remaining key bits by a serial LSD radix sort (``local_bits`` per digit),
    partitions in parallel. Rows keep their order within equal keys.
    """
    n = fps.shape[0]
    top, tshift, tmask, low = _digits(key_bits, extra_bits, row_bits, top_bits)
    n_top = 1 << top
    hist = np.zeros((n_chunks, n_top), dtype=np.int64)
    for c in prange(n_chunks):
        make_words(
            fps, c * n // n_chunks, (c + 1) * n // n_chunks, key_pieces, extra_pieces, hashed,
            key_bits, extra_bits, row_bits, tmp, hist[c], tshift, tmask,
        )
    bounds = np.empty(n_top + 1, dtype=np.int64)
    _offsets(hist, bounds)
    for c in prange(n_chunks):
        _scatter(tmp, c * n // n_chunks, (c + 1) * n // n_chunks, buf, hist[c], tshift, tmask)
    if key_bits > top:
        n_parts = min(n_top, 8 * n_chunks)
        for c in prange(n_parts):
            _sort_segments(
                buf, tmp, bounds, c * n_top // n_parts, (c + 1) * n_top // n_parts, low,
                key_bits - top, local_bits,
            )
    return buf


@njit(cache=True, nogil=True)
def sort_table_serial(
    fps, key_pieces, extra_pieces, hashed, key_bits, extra_bits, row_bits, top_bits,
    local_bits, buf, tmp,
):
    """:func:`sort_table` on the calling thread."""
    n = fps.shape[0]
    top, tshift, tmask, low = _digits(key_bits, extra_bits, row_bits, top_bits)
    n_top = 1 << top
    hist = np.zeros((1, n_top), dtype=np.int64)
    make_words(
        fps, 0, n, key_pieces, extra_pieces, hashed, key_bits, extra_bits, row_bits, tmp,
        hist[0], tshift, tmask,
    )
    bounds = np.empty(n_top + 1, dtype=np.int64)
    _offsets(hist, bounds)
    _scatter(tmp, 0, n, buf, hist[0], tshift, tmask)
    if key_bits > top:
        _sort_segments(buf, tmp, bounds, 0, n_top, low, key_bits - top, local_bits)
    return buf
