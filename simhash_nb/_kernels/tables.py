"""Permutation-table (pigeonhole) search kernels.

A *table* is a sorted array of 64-bit *words* ``key << (extra_bits + row_bits) |
extra << row_bits | row``: the key is made of some blocks of the fingerprint (the
table's *selection*), ``extra`` holds a few bits from outside the key, and ``row`` is
the row's position. Rows with equal keys form a *run*; only pairs inside a run are
candidates, and the extra bits reject most of them without touching the fingerprints
(their differing bits are at most the distance). Sorting is an MSD radix sort by the
key bits only (a parallel partition on the top bits, then cache-sized partitions sorted
by LSD radix) and keeps the row order, so rows ascend in a run.

A pair within ``k`` bits agrees on at least ``b - k`` of the ``b`` blocks, so it shares
the key of at least one table. It is reported only by its *owner*: the table whose
selection is the first ``b - k`` agreeing blocks (tables are enumerated in
lexicographic order, so this is the first table whose key the pair matches). No
global hash set is needed to report each pair once.

Key and extra bits are gathered by *pieces* ``(word, shift, mask, pos)``: bits
``(fps[i, word] >> shift) & mask`` go to bit ``pos`` of a 128-bit value (pieces never
straddle a word; padding pieces have ``mask == 0``). Keys wider than ``key_bits`` are
hashed (splitmix64) to their top ``key_bits`` bits; equal blocks still give equal keys.

Fingerprints arrive as ``uint64[n, words]`` (a 64-bit set has one word). The hot
loops are written out in each kernel: a call that passes arrays costs reference
counting per call.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .popcount import popcount64

_ONE = np.uint64(1)
_SEED = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SIXTY_FOUR = np.uint64(64)


@njit(cache=True, inline="always")
def mix64(z):
    """splitmix64 finaliser: a bijective scramble of a ``uint64``."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _finish_key(lo, hi, hashed, key_bits):
    if hashed:
        return mix64(lo ^ mix64(hi ^ _SEED)) >> np.uint64(64 - key_bits)
    return lo


@njit(cache=True)
def is_owner(a, i, b, j, sel, block_masks):
    """Whether the table selecting ``sel`` owns the pair (row i of a, row j of b):
    whether ``sel`` is the first ``len(sel)`` blocks on which the rows agree."""
    c = 0
    nsel = sel.shape[0]
    for blk in range(block_masks.shape[0]):
        agree = True
        for w in range(block_masks.shape[1]):
            if ((a[i, w] ^ b[j, w]) & block_masks[blk, w]) != 0:
                agree = False
                break
        if agree:
            if sel[c] != blk:
                return False
            c += 1
            if c == nsel:
                return True
    return False


@njit(inline="always", cache=True)
def row_key(fps, i, kp, ep, hashed, key_bits):
    """Table key and stored extra bits of row ``i``, gathered from its pieces.

    A piece ``(word, shift, mask, at)`` takes ``(fps[i, word] >> shift) & mask`` to bit
    ``at`` of the 128-bit raw key (of the extra bits for ``ep``).
    """
    klo = np.uint64(0)
    khi = np.uint64(0)
    for p in range(kp.shape[0]):
        v = (fps[i, kp[p, 0]] >> kp[p, 1]) & kp[p, 2]
        if kp[p, 3] >= _SIXTY_FOUR:
            khi |= v << (kp[p, 3] - _SIXTY_FOUR)
        else:
            klo |= v << kp[p, 3]
    ev = np.uint64(0)
    for p in range(ep.shape[0]):
        ev |= ((fps[i, ep[p, 0]] >> ep[p, 1]) & ep[p, 2]) << ep[p, 3]
    return _finish_key(klo, khi, hashed, key_bits), ev


@njit(cache=True, nogil=True)
def make_words(
    fps, lo, hi, kp, ep, hashed, key_bits, extra_bits, row_bits, out, hist, tshift, tmask
):
    """Words of rows ``[lo, hi)`` into ``out[lo:hi]``, counting their top key digits
    (``(word >> tshift) & tmask``) in ``hist``."""
    low = np.uint64(extra_bits + row_bits)
    rb = np.uint64(row_bits)
    if fps.shape[1] == 1 and not hashed:  # 64-bit fingerprints, exact keys: the fast path
        for i in range(lo, hi):
            x = fps[i, 0]
            key = np.uint64(0)
            for p in range(kp.shape[0]):
                key |= ((x >> kp[p, 1]) & kp[p, 2]) << kp[p, 3]
            ev = np.uint64(0)
            for p in range(ep.shape[0]):
                ev |= ((x >> ep[p, 1]) & ep[p, 2]) << ep[p, 3]
            out[i] = (key << low) | (ev << rb) | np.uint64(i)
    else:
        for i in range(lo, hi):
            key, ev = row_key(fps, i, kp, ep, hashed, key_bits)
            out[i] = (key << low) | (ev << rb) | np.uint64(i)
    for i in range(lo, hi):
        hist[(out[i] >> tshift) & tmask] += 1


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
        kmask = (_ONE << np.uint64(rem_bits)) - _ONE
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


@njit(parallel=True, cache=True, nogil=True)
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

    A run with more than ``big_pairs`` candidate pairs is not scanned but recorded as
    ``(start, end)`` in ``big[big_base + r]`` (at most ``big_cap``; further ones are
    scanned), for the caller to refine.

    Counting goes on past ``cap`` so the caller can retry at the exact size. Returns
    ``(count, weighted, n_big)``, ``weighted`` summing ``wa[i] * wb[j]`` (group sizes
    when identical fingerprints were merged; an empty weight array counts 1 per row).
    """
    n = sorted_.shape[0]
    words = fps.shape[1]
    rb = np.uint64(row_bits)
    low = np.uint64(extra_bits + row_bits)
    rmask = (_ONE << rb) - _ONE
    emask = ((_ONE << np.uint64(extra_bits)) - _ONE) << rb
    kk = np.uint64(k)
    weigh_a = wa.shape[0] > 0
    weigh_b = wb.shape[0] > 0
    s = lo
    if s > 0:  # a run begun before lo belongs to the previous range
        prev = sorted_[s - 1] >> low
        while s < hi and (sorted_[s] >> low) == prev:
            s += 1
    c = 0
    wsum = 0
    n_big = 0
    while s < hi:
        key = sorted_[s] >> low
        e = s + 1
        while e < n and (sorted_[e] >> low) == key:
            e += 1
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
                    outer = True
                    for r in range(must_differ.shape[0]):
                        same = True
                        for w in range(words):
                            if ((fps[rx, w] ^ fps[ry, w]) & must_differ[r, w]) != 0:
                                same = False
                        if same:
                            outer = False
                            break
                    if not outer:
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


@njit(parallel=True, cache=True, nogil=True)
def scan_runs(
    sorted_, extra_bits, row_bits, fps, k, n_left, sel, block_masks, must_differ, wa, wb,
    n_tasks, cap, big_pairs, big_cap,
):
    """:func:`scan_range` over one sorted table in ``n_tasks`` parallel tasks, task ``t``
    writing into its own output slices (pairs from ``t * cap``, big runs from
    ``t * big_cap``).

    Returns ``(left, right, dist, counts, weighted, big, n_big)``.
    """
    n = sorted_.shape[0]
    left = np.empty(n_tasks * cap, dtype=np.int64)
    right = np.empty(n_tasks * cap, dtype=np.int64)
    dist = np.empty(n_tasks * cap, dtype=np.uint8)
    counts = np.zeros(n_tasks, dtype=np.int64)
    weighted = np.zeros(n_tasks, dtype=np.int64)
    big = np.empty((n_tasks * big_cap, 2), dtype=np.int64)
    n_big = np.zeros(n_tasks, dtype=np.int64)
    for t in prange(n_tasks):
        c, w, nb = scan_range(
            sorted_, t * n // n_tasks, (t + 1) * n // n_tasks, extra_bits, row_bits, fps, k,
            n_left, sel, block_masks, must_differ, wa, wb, left, right, dist, t * cap, cap,
            big_pairs, big, t * big_cap, big_cap,
        )
        counts[t] = c
        weighted[t] = w
        n_big[t] = nb
    return left, right, dist, counts, weighted, big, n_big


@njit(parallel=True, cache=True, nogil=True)
def search_tables(
    fps, n_left, tables, key_pieces, extra_pieces, hashed, key_bits, extra_bits, row_bits,
    top_bits, local_bits, sels, block_masks, must_differ, k, wa, wb, bufs, tmps, cap,
    big_pairs, big_cap,
):
    """Sort and scan several tables at once, one table per parallel task (one parallel
    region however many tables: cheap to start, and robust on busy machines).

    Task ``w`` handles table ``tables[w]`` with the work arrays ``bufs[w]`` (which holds
    the sorted table afterwards) and ``tmps[w]``, and writes its pairs from ``w * cap``
    and its big runs (see :func:`scan_range`) from ``w * big_cap``.

    Returns ``(left, right, dist, counts, weighted, big, n_big)``, one count per task.
    """
    n = fps.shape[0]
    n_w = tables.shape[0]
    left = np.empty(n_w * cap, dtype=np.int64)
    right = np.empty(n_w * cap, dtype=np.int64)
    dist = np.empty(n_w * cap, dtype=np.uint8)
    counts = np.zeros(n_w, dtype=np.int64)
    weighted = np.zeros(n_w, dtype=np.int64)
    big = np.empty((n_w * big_cap, 2), dtype=np.int64)
    n_big = np.zeros(n_w, dtype=np.int64)
    for w in prange(n_w):
        t = tables[w]
        sorted_ = sort_table_serial(
            fps, key_pieces[t], extra_pieces[t], hashed[t], key_bits[t], extra_bits[t],
            row_bits, top_bits, local_bits, bufs[w], tmps[w],
        )
        c, s, nb = scan_range(
            sorted_, 0, n, extra_bits[t], row_bits, fps, k, n_left, sels[t], block_masks,
            must_differ, wa, wb, left, right, dist, w * cap, cap, big_pairs, big,
            w * big_cap, big_cap,
        )
        counts[w] = c
        weighted[w] = s
        n_big[w] = nb
    return left, right, dist, counts, weighted, big, n_big


@njit(parallel=True, cache=True, nogil=True)
def group_identical(sorted_, row_bits, fps, n_tasks, write, rep):
    """Number of distinct fingerprints, from a table sorted by a hash of the whole
    fingerprint (equal rows share a run; rows ascend in a run).

    With ``write``, also ``rep[row]`` = smallest row with the same fingerprint. Linear in
    the size of a run of identical rows; a run mixing ``g`` distinct fingerprints (a
    hash collision) costs ``O(run * g)``.
    """
    n = sorted_.shape[0]
    words = fps.shape[1]
    rb = np.uint64(row_bits)
    rmask = (_ONE << rb) - _ONE
    groups = np.zeros(n_tasks, dtype=np.int64)
    for t in prange(n_tasks):
        lo = t * n // n_tasks
        hi = (t + 1) * n // n_tasks
        s = lo
        if s > 0:
            prev = sorted_[s - 1] >> rb
            while s < hi and (sorted_[s] >> rb) == prev:
                s += 1
        g = 0
        while s < hi:
            key = sorted_[s] >> rb
            e = s + 1
            while e < n and (sorted_[e] >> rb) == key:
                e += 1
            r0 = np.int64(sorted_[s] & rmask)
            same = True
            for x in range(s + 1, e):
                rx = np.int64(sorted_[x] & rmask)
                for w in range(words):
                    if fps[rx, w] != fps[r0, w]:
                        same = False
                if not same:
                    break
            if same:
                g += 1
                if write:
                    for x in range(s, e):
                        rep[np.int64(sorted_[x] & rmask)] = r0
            else:  # a hash collision: split the run by value
                done = np.zeros(e - s, dtype=np.bool_)
                for x in range(s, e):
                    if done[x - s]:
                        continue
                    rx = np.int64(sorted_[x] & rmask)
                    g += 1
                    for y in range(x, e):
                        ry = np.int64(sorted_[y] & rmask)
                        eq = True
                        for w in range(words):
                            if fps[rx, w] != fps[ry, w]:
                                eq = False
                        if eq and not done[y - s]:
                            done[y - s] = True
                            if write:
                                rep[ry] = rx
            s = e
        groups[t] = g
    return groups.sum()


@njit(cache=True, nogil=True)
def group_members(inverse, n_groups):
    """CSR of the rows of each group: ``rows[ptr[g]:ptr[g + 1]]`` ascending."""
    ptr = np.zeros(n_groups + 1, dtype=np.int64)
    for r in range(inverse.shape[0]):
        ptr[inverse[r] + 1] += 1
    for g in range(n_groups):
        ptr[g + 1] += ptr[g]
    fill = ptr[:-1].copy()
    rows = np.empty(inverse.shape[0], dtype=np.int64)
    for r in range(inverse.shape[0]):
        g = inverse[r]
        rows[fill[g]] = r
        fill[g] += 1
    return ptr, rows


@njit(parallel=True, cache=True, nogil=True)
def expand_pairs(u, v, d, ptr_a, rows_a, ptr_b, rows_b, offsets, self_join, out_i, out_j, out_d):
    """Every (row of group u) x (row of group v) for each group pair; ``i < j`` when
    ``self_join``. Pair ``p`` writes from ``offsets[p]``."""
    for p in prange(u.shape[0]):
        o = offsets[p]
        for x in range(ptr_a[u[p]], ptr_a[u[p] + 1]):
            for y in range(ptr_b[v[p]], ptr_b[v[p] + 1]):
                a = rows_a[x]
                b = rows_b[y]
                if self_join and a > b:
                    a, b = b, a
                out_i[o] = a
                out_j[o] = b
                out_d[o] = d[p]
                o += 1


@njit(parallel=True, cache=True, nogil=True)
def expand_groups(groups, ptr, rows, offsets, out_i, out_j, out_d):
    """All pairs (distance 0) inside each listed group of identical rows."""
    for p in prange(groups.shape[0]):
        g = groups[p]
        o = offsets[p]
        for x in range(ptr[g], ptr[g + 1]):
            for y in range(x + 1, ptr[g + 1]):
                out_i[o] = rows[x]
                out_j[o] = rows[y]
                out_d[o] = 0
                o += 1


@njit(parallel=True, cache=True, nogil=True)
def query_run(
    q, k, fps, lo, alive, tabs, row_bits, sels, key_pieces, extra_pieces, hashed, key_bits,
    extra_bits, block_masks, n_tasks, cap,
):
    """Probe every table of one index run with every query row.

    ``tabs[t]`` holds the sorted words of table ``t`` over the rows ``lo + offset`` of
    ``fps``. Live rows within ``k`` of a query that the table owns are kept. Task ``t``
    handles queries ``t, t + n_tasks, ...`` and writes into its own output slice.

    Returns ``(query, slot, dist, counts)``.
    """
    n_q = q.shape[0]
    words = q.shape[1]
    m = tabs.shape[1]
    rb = np.uint64(row_bits)
    rmask = (_ONE << rb) - _ONE
    kk = np.uint64(k)
    out_q = np.empty(n_tasks * cap, dtype=np.int64)
    out_s = np.empty(n_tasks * cap, dtype=np.int64)
    out_d = np.empty(n_tasks * cap, dtype=np.uint8)
    counts = np.zeros(n_tasks, dtype=np.int64)
    for t in prange(n_tasks):
        base = t * cap
        c = 0
        for qi in range(t, n_q, n_tasks):
            for tb in range(tabs.shape[0]):
                kp = key_pieces[tb]
                ep = extra_pieces[tb]
                key, ev = row_key(q, qi, kp, ep, hashed[tb], key_bits[tb])
                low = np.uint64(extra_bits[tb] + row_bits)
                emask = ((_ONE << np.uint64(extra_bits[tb])) - _ONE) << rb
                qword = (key << low) | (ev << rb)
                row = tabs[tb]
                # first position whose key is >= the query key
                a = 0
                b = m
                while a < b:
                    mid = (a + b) >> 1
                    if (row[mid] >> low) < key:
                        a = mid + 1
                    else:
                        b = mid
                x = a
                while x < m and (row[x] >> low) == key:
                    word = row[x]
                    x += 1
                    if popcount64((word ^ qword) & emask) > kk:
                        continue
                    slot = lo + np.int64(word & rmask)
                    if not alive[slot]:
                        continue
                    d = np.uint64(0)
                    for w in range(words):
                        d += popcount64(q[qi, w] ^ fps[slot, w])
                    if d <= kk and is_owner(q, qi, fps, slot, sels[tb], block_masks):
                        if c < cap:
                            out_q[base + c] = qi
                            out_s[base + c] = slot
                            out_d[base + c] = d
                        c += 1
        counts[t] = c
    return out_q, out_s, out_d, counts


@njit(parallel=True, cache=True, nogil=True)
def lookup_ids(id_sorted, id_slot, alive, ids, out):
    """For each id, a live slot holding it (``out`` entries already >= 0 are kept)."""
    m = id_sorted.shape[0]
    for qi in prange(ids.shape[0]):
        if out[qi] >= 0:
            continue
        value = ids[qi]
        a = 0
        b = m
        while a < b:
            mid = (a + b) >> 1
            if id_sorted[mid] < value:
                a = mid + 1
            else:
                b = mid
        while a < m and id_sorted[a] == value:
            if alive[id_slot[a]]:
                out[qi] = id_slot[a]
                break
            a += 1
    return out
