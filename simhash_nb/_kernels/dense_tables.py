"""Table search whose entries carry the whole fingerprint ("dense" tables).

A table is defined by a *key mask* (``uint64[2]``; the second word is 0 for 64-bit
fingerprints): two fingerprints share the table's key when they agree on every bit of
the mask. Each table sorts *entries* ``(hash << 32 | row, fingerprint)`` by a
``sort_bits``-bit multiply-shift hash of the masked fingerprint (Dietzfelbinger's
universal hashing: equal keys always hash alike, distinct keys collide with probability
about ``2 / 2**sort_bits``): one partition pass on the top bits of the hash moves the
fingerprints along into cache-sized groups, and each group is sorted on the remaining
bits and scanned while it is in cache. Rows sharing a hash form a *run*; every pair of a
run is a candidate, verified by the popcount of the two carried fingerprints, so
verification streams through cache and vectorises (AVX2 / AVX-512 ``vpopcntq``) instead
of reading two random rows per candidate. That is what makes many tables with short keys
— the pigeonhole design at large ``k``, and bit-sampling LSH — affordable.

A pair found by several tables is reported once, by its *owner*:

- block rule (pigeonhole tables, ``block_masks`` given): the table whose selected
  blocks are the first ``b - k`` blocks on which the pair agrees (tables enumerate the
  block choices in lexicographic order), computed in ``O(b)``;
- mask rule (any family of tables, e.g. sampled bits): the first table, in order,
  whose mask the pair agrees on, found by an early-exit loop over the masks.

Either rule also rejects pairs that share a hash but not the key (hash collisions).
Rows are below ``2**32``; fingerprints arrive as ``uint64[n, words]``, words 1 or 2.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .popcount import popcount64

_S32 = np.uint64(32)
_ROW = np.uint64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def owner(d0, d1, t, masks, block_masks, sels):
    """Whether table ``t`` owns a pair whose fingerprints differ by ``(d0, d1)``."""
    if block_masks.shape[0] > 0:
        sel = sels[t]
        c = 0
        for blk in range(block_masks.shape[0]):
            if (d0 & block_masks[blk, 0]) == 0 and (d1 & block_masks[blk, 1]) == 0:
                if sel[c] != blk:
                    return False
                c += 1
                if c == sel.shape[0]:
                    return True
        return False
    for u in range(t + 1):
        if (d0 & masks[u, 0]) == 0 and (d1 & masks[u, 1]) == 0:
            return u == t
    return False


@njit(cache=True, nogil=True, inline="always")
def _hash(fps, i, words, m0, m1, a0, a1, shift):
    if words == 1:
        return ((fps[i, 0] & m0) * a0) >> shift
    return ((fps[i, 0] & m0) * a0 + (fps[i, 1] & m1) * a1) >> shift


@njit(cache=True, nogil=True)
def partition_entries(fps, mask, mult, sort_bits, top_bits, kr, fp, counts, bounds):
    """First (MSD) pass of one table: entries ``(hash << 32 | row, fingerprint)`` into
    ``kr``/``fp``, grouped by the top ``top_bits`` of the ``sort_bits``-bit hash of the
    masked fingerprint (rows ascending within a group). ``bounds[d]`` is where group
    ``d`` starts (``bounds[2**top_bits] = n``)."""
    n = fps.shape[0]
    words = fps.shape[1]
    shift = np.uint64(64 - sort_bits)
    low = np.uint64(sort_bits - top_bits)
    n_top = 1 << top_bits
    m0 = mask[0]
    m1 = mask[1]
    a0 = mult[0]
    a1 = mult[1]
    counts[:n_top] = 0
    for i in range(n):
        counts[_hash(fps, i, words, m0, m1, a0, a1, shift) >> low] += 1
    total = 0
    for d in range(n_top):
        bounds[d] = total
        c = counts[d]
        counts[d] = total
        total += c
    bounds[n_top] = total
    for i in range(n):
        h = _hash(fps, i, words, m0, m1, a0, a1, shift)
        d = h >> low
        p = counts[d]
        counts[d] = p + 1
        kr[p] = (h << _S32) | np.uint64(i)
        for x in range(words):
            fp[p, x] = fps[i, x]


@njit(cache=True, nogil=True)
def sort_group(kr, fp, s, e, low_bits, kr_tmp, fp_tmp, counts):
    """Sort entries ``[s, e)`` (one group, in cache) stably by the low ``low_bits`` of
    their hash: insertion sort when short, else a counting sort through the scratch."""
    words = fp.shape[1]
    m = e - s
    if m < 2 or low_bits == 0:
        return
    lmask = (np.uint64(1) << np.uint64(low_bits)) - np.uint64(1)
    if m <= 48:
        for x in range(s + 1, e):
            v = kr[x]
            kv = (v >> _S32) & lmask
            f0 = fp[x, 0]
            f1 = fp[x, words - 1]
            y = x - 1
            while y >= s and ((kr[y] >> _S32) & lmask) > kv:
                kr[y + 1] = kr[y]
                for w in range(words):
                    fp[y + 1, w] = fp[y, w]
                y -= 1
            kr[y + 1] = v
            fp[y + 1, 0] = f0
            fp[y + 1, words - 1] = f1
        return
    n_low = 1 << low_bits
    counts[:n_low] = 0
    for x in range(s, e):
        counts[(kr[x] >> _S32) & lmask] += 1
    total = s
    for d in range(n_low):
        c = counts[d]
        counts[d] = total
        total += c
    for x in range(s, e):
        v = kr[x]
        d = (v >> _S32) & lmask
        p = counts[d]
        counts[d] = p + 1
        kr_tmp[p] = v
        for w in range(words):
            fp_tmp[p, w] = fp[x, w]
    for x in range(s, e):
        kr[x] = kr_tmp[x]
        for w in range(words):
            fp[x, w] = fp_tmp[x, w]


@njit(cache=True, nogil=True)
def scan_entries(kr, fp, lo, hi, k, t, n_left, masks, block_masks, sels, wa, wb,
                 left, right, dist, base, room):
    """Verify every run of the sorted entries ``[lo, hi)`` of one table (runs do not
    cross ``hi``); write the pairs table ``t`` owns into
    ``left/right/dist[base : base + room]``.

    Self-join when ``n_left < 0``; otherwise rows below ``n_left`` are the left set and
    pairs join a left row to a right one (reported as ``row - n_left``). Counting goes
    on past ``room``. Returns ``(count, weighted)``: ``weighted`` sums
    ``wa[i] * wb[j]`` (an empty weight array counts 1 per row).
    """
    n = hi
    words = fp.shape[1]
    kk = np.uint64(k)
    weigh_a = wa.shape[0] > 0
    weigh_b = wb.shape[0] > 0
    zero = np.uint64(0)
    c = 0
    wsum = 0
    s = lo
    while s < n:
        key = kr[s] >> _S32
        e = s + 1
        while e < n and (kr[e] >> _S32) == key:
            e += 1
        if e - s > 1:
            m = s + 1
            if n_left >= 0:
                m = s
                while m < e and np.int64(kr[m] & _ROW) < n_left:
                    m += 1
                x_end = m
            else:
                x_end = e - 1
            for x in range(s, x_end):
                f0 = fp[x, 0]
                f1 = fp[x, words - 1]
                y0 = m if n_left >= 0 else x + 1
                hits = 0  # a branch-free count first: it vectorises, and hits are rare
                if words == 1:
                    for y in range(y0, e):
                        hits += popcount64(f0 ^ fp[y, 0]) <= kk
                else:
                    for y in range(y0, e):
                        hits += popcount64(f0 ^ fp[y, 0]) + popcount64(f1 ^ fp[y, 1]) <= kk
                if hits == 0:
                    continue
                rx = np.int64(kr[x] & _ROW)
                for y in range(y0, e):
                    d0 = f0 ^ fp[y, 0]
                    d1 = (f1 ^ fp[y, 1]) if words == 2 else zero
                    d = popcount64(d0) + popcount64(d1)
                    if d > kk or not owner(d0, d1, t, masks, block_masks, sels):
                        continue
                    ry = np.int64(kr[y] & _ROW)
                    if n_left >= 0:
                        ry -= n_left
                    if c < room:
                        left[base + c] = rx
                        right[base + c] = ry
                        dist[base + c] = d
                    c += 1
                    wsum += (wa[rx] if weigh_a else 1) * (wb[ry] if weigh_b else 1)
        s = e
    return c, wsum


@njit(parallel=True, cache=True, nogil=True)
def search_dense(fps, n_left, tables, masks, mults, sort_bits, block_masks, sels, k, wa, wb,
                 n_threads, cap, kr, fp, kr_tmp, fp_tmp, h_lo, h_hi):
    """Sort and scan ``tables`` (indices into ``masks``), thread ``th`` taking tables
    ``th, th + n_threads, ...`` with its own work arrays (``kr[th]``, ...).

    Thread ``th`` writes pairs into ``[th * cap, (th + 1) * cap)`` while they fit;
    from the first table whose pairs do not fit, it only counts. Returns
    ``(left, right, dist, table_counts, table_weighted, table_written, thread_used)``
    with one entry per listed table (``table_written[w]``: its pairs are in the output
    from ``table_start[w]``) — see the caller.
    """
    n_w = tables.shape[0]
    left = np.empty(n_threads * cap, dtype=np.int64)
    right = np.empty(n_threads * cap, dtype=np.int64)
    dist = np.empty(n_threads * cap, dtype=np.uint8)
    counts = np.zeros(n_w, dtype=np.int64)
    weighted = np.zeros(n_w, dtype=np.int64)
    start = np.full(n_w, -1, dtype=np.int64)
    top_bits = min(sort_bits, 11)
    low_bits = sort_bits - top_bits
    n_top = 1 << top_bits
    for th in prange(n_threads):
        used = 0
        full = False
        bounds = np.empty(n_top + 1, dtype=np.int64)
        for w in range(th, n_w, n_threads):
            t = tables[w]
            partition_entries(fps, masks[t], mults[t], sort_bits, top_bits, kr[th], fp[th],
                              h_hi[th], bounds)
            room = 0 if full else cap - used
            c = 0
            ws = 0
            for d in range(n_top):
                s0 = bounds[d]
                e0 = bounds[d + 1]
                if e0 - s0 < 2:
                    continue
                sort_group(kr[th], fp[th], s0, e0, low_bits, kr_tmp[th], fp_tmp[th], h_lo[th])
                cd, wd = scan_entries(kr[th], fp[th], s0, e0, k, t, n_left, masks, block_masks,
                                      sels, wa, wb, left, right, dist, th * cap + used + c,
                                      max(0, room - c))
                c += cd
                ws += wd
            counts[w] = c
            weighted[w] = ws
            if not full and c <= room:
                start[w] = th * cap + used
                used += c
            else:
                full = True
    return left, right, dist, counts, weighted, start
