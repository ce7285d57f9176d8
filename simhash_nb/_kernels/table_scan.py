"""Table scan: candidate pairs in runs of equal keys, verified with popcount."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .popcount import popcount64
from .prange import PRANGE_ONLY
from .radix import sort_table_serial
from .table_keys import ONE, is_owner


@njit(inline="always", cache=True)
def first_run_at(sorted_, lo, hi, shift):
    """The first position in ``[lo, hi)`` where a run of equal ``sorted_ >> shift``
    starts (a run begun before ``lo`` belongs to the range before), or ``hi``."""
    s = lo
    if s > 0:
        prev = sorted_[s - 1] >> shift
        while s < hi and (sorted_[s] >> shift) == prev:
            s += 1
    return s


@njit(inline="always", cache=True)
def run_end(sorted_, s, shift):
    """The end of the run of equal ``sorted_ >> shift`` that starts at ``s``."""
    key = sorted_[s] >> shift
    e = s + 1
    while e < sorted_.shape[0] and (sorted_[e] >> shift) == key:
        e += 1
    return e


@njit(inline="always", cache=True)
def _differs_in_each(fps, rx, ry, must_differ):
    """Whether rows ``rx`` and ``ry`` differ somewhere in each ``must_differ`` mask."""
    for r in range(must_differ.shape[0]):
        same = True
        for w in range(fps.shape[1]):
            if ((fps[rx, w] ^ fps[ry, w]) & must_differ[r, w]) != 0:
                same = False
        if same:
            return False
    return True


# One loop nest (run detection, the extra-bit filter, the ownership test, pair output
# with overflow to big runs), kept in one piece for the compiler.
@njit(cache=True, nogil=True)
def scan_range(
    sorted_, lo, hi, extra_bits, row_bits, fps, k, n_left, sel, block_masks, must_differ,
    wa, wb, left, right, dist, base, cap, big_pairs, big, big_base, big_cap,
):
    """Verify the runs that start in ``[lo, hi)`` of one sorted table; keep the pairs it
    owns in ``left/right/dist[base : base + cap]``.

    Self-join (``n_left < 0``): every pair ``x < y`` of a run. Cross join: rows below
    ``n_left`` are the left set, the others the right set (reported as
    ``row - n_left``); a run lists its left rows first. A pair is kept only if it also
    differs somewhere in each of the ``must_differ`` masks (the condition that an outer
    table owns it, when this search refines one of that table's runs).

    A run with over ``big_pairs`` candidate pairs is recorded as ``(start, end)`` in
    ``big[big_base + r]`` for the caller to refine (at most ``big_cap``; others scanned).

    Counts go on past ``cap`` (the caller retries at the exact size). Returns ``(count,
    weighted, n_big)``, ``weighted`` summing ``wa[i] * wb[j]`` (1 per empty ``wa``/``wb``).
    """
    words = fps.shape[1]
    rb = np.uint64(row_bits)
    low = np.uint64(extra_bits + row_bits)
    rmask = (ONE << rb) - ONE
    emask = ((ONE << np.uint64(extra_bits)) - ONE) << rb
    kk = np.uint64(k)
    weigh_a = wa.shape[0] > 0
    weigh_b = wb.shape[0] > 0
    s = first_run_at(sorted_, lo, hi, low)
    c = 0
    wsum = 0
    n_big = 0
    while s < hi:
        e = run_end(sorted_, s, low)
        if e - s > 1:
            m = s
            if n_left >= 0:
                while m < e and np.int64(sorted_[m] & rmask) < n_left:
                    m += 1
                candidates = (m - s) * (e - m)
            else:
                candidates = (e - s) * (e - s - 1) // 2
            if candidates > big_pairs and n_big < big_cap:
                big[big_base + n_big, 0] = s
                big[big_base + n_big, 1] = e
                n_big += 1
                s = e
                continue
            x_end = m if n_left >= 0 else e - 1
            for x in range(s, x_end):
                wx = sorted_[x]
                for y in range(m if n_left >= 0 else x + 1, e):
                    wy = sorted_[y]
                    if popcount64((wx ^ wy) & emask) > kk:
                        continue
                    rx = np.int64(wx & rmask)
                    ry = np.int64(wy & rmask)
                    d = np.uint64(0)
                    for w in range(words):
                        d += popcount64(fps[rx, w] ^ fps[ry, w])
                    if d > kk or not is_owner(fps, rx, fps, ry, sel, block_masks):
                        continue
                    if not _differs_in_each(fps, rx, ry, must_differ):
                        continue
                    jy = ry if n_left < 0 else ry - n_left
                    if c < cap:
                        left[base + c] = rx
                        right[base + c] = jy
                        dist[base + c] = d
                    c += 1
                    wsum += (wa[rx] if weigh_a else 1) * (wb[jy] if weigh_b else 1)
        s = e
    return c, wsum, n_big


@njit(inline="always", cache=True)
def _outputs(n_tasks, cap, big_cap):
    """Output slices of ``n_tasks`` tasks: ``cap`` pairs and ``big_cap`` big runs each."""
    return (np.empty(n_tasks * cap, dtype=np.int64), np.empty(n_tasks * cap, dtype=np.int64),
            np.empty(n_tasks * cap, dtype=np.uint8), np.zeros(n_tasks, dtype=np.int64),
            np.zeros(n_tasks, dtype=np.int64), np.empty((n_tasks * big_cap, 2), dtype=np.int64),
            np.zeros(n_tasks, dtype=np.int64))


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def scan_runs(
    sorted_, lo, hi, extra_bits, row_bits, fps, k, n_left, sel, block_masks, must_differ, wa,
    wb, n_tasks, cap, big_pairs, big_cap,
):
    """:func:`scan_range` over the runs that start in ``[lo, hi)`` of one sorted table,
    in ``n_tasks`` parallel tasks, task ``t`` writing into its own output slices (pairs
    from ``t * cap``, big runs from ``t * big_cap``).

    Returns ``(left, right, dist, counts, weighted, big, n_big)``.
    """
    left, right, dist, counts, weighted, big, n_big = _outputs(n_tasks, cap, big_cap)
    span = hi - lo
    for t in prange(n_tasks):
        c, w, nb = scan_range(
            sorted_, lo + t * span // n_tasks, lo + (t + 1) * span // n_tasks, extra_bits,
            row_bits, fps, k, n_left, sel, block_masks, must_differ, wa, wb, left, right, dist,
            t * cap, cap, big_pairs, big, t * big_cap, big_cap,
        )
        counts[t] = c
        weighted[t] = w
        n_big[t] = nb
    return left, right, dist, counts, weighted, big, n_big


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def sort_tables(fps, tables, key_pieces, extra_pieces, hashed, key_bits, extra_bits, row_bits,
                top_bits, local_bits, bufs, tmps):
    """Sort several tables at once, one a parallel task: table ``tables[w]`` into
    ``bufs[w]`` (``tmps[w]``: scratch); :func:`scan_tables` then scans them a slice of
    rows at a time (Ctrl-C is answered between slices)."""
    for w in prange(tables.shape[0]):
        t = tables[w]
        sort_table_serial(
            fps, key_pieces[t], extra_pieces[t], hashed[t], key_bits[t], extra_bits[t],
            row_bits, top_bits, local_bits, bufs[w], tmps[w],
        )


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def scan_tables(
    bufs, lo, hi, tables, extra_bits, row_bits, fps, k, n_left, sels, block_masks,
    must_differ, wa, wb, cap, big_pairs, big_cap,
):
    """:func:`scan_range` of the runs that start in ``[lo, hi)`` of several sorted tables
    (``bufs[w]`` holds table ``tables[w]``, see :func:`sort_tables`), one a parallel
    task, task ``w`` writing its pairs from ``w * cap`` and its big runs from
    ``w * big_cap``.

    Returns ``(left, right, dist, counts, weighted, big, n_big)``, one count per task.
    """
    n_w = tables.shape[0]
    left, right, dist, counts, weighted, big, n_big = _outputs(n_w, cap, big_cap)
    for w in prange(n_w):
        t = tables[w]
        c, s, nb = scan_range(
            bufs[w], lo, hi, extra_bits[t], row_bits, fps, k, n_left, sels[t], block_masks,
            must_differ, wa, wb, left, right, dist, w * cap, cap, big_pairs, big,
            w * big_cap, big_cap,
        )
        counts[w] = c
        weighted[w] = s
        n_big[w] = nb
    return left, right, dist, counts, weighted, big, n_big


@njit(cache=True, nogil=True)
def search_tables(
    fps, n_left, tables, key_pieces, extra_pieces, hashed, key_bits, extra_bits, row_bits,
    top_bits, local_bits, sels, block_masks, must_differ, k, wa, wb, bufs, tmps, cap,
    big_pairs, big_cap,
):
    """:func:`sort_tables`, then :func:`scan_tables` of all rows, in one call. The
    search itself calls the two apart, to answer Ctrl-C between slices of the scan.

    Returns ``(left, right, dist, counts, weighted, big, n_big)``, one count per table.
    """
    sort_tables(fps, tables, key_pieces, extra_pieces, hashed, key_bits, extra_bits, row_bits,
                top_bits, local_bits, bufs, tmps)
    return scan_tables(bufs, 0, fps.shape[0], tables, extra_bits, row_bits, fps, k, n_left,
                       sels, block_masks, must_differ, wa, wb, cap, big_pairs, big_cap)
