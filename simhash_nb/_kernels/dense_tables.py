"""Table search whose entries carry the whole fingerprint ("dense" tables).

A table is defined by a *key mask* (``uint64[2]``; the second word is 0 for 64-bit
fingerprints): two fingerprints share the table's key when they agree on every bit of
the mask. Each table sorts *entries* ``(hash << 32 | row, fingerprint)`` by a
``sort_bits``-bit multiply-shift hash of the masked fingerprint (Dietzfelbinger's
universal hashing: equal keys always hash alike, distinct keys collide with
probability about ``2 / 2**sort_bits``), with a two-pass LSD radix sort that moves
the fingerprints along. Rows sharing a hash form a *run*; every pair of a run is a
candidate, verified by the popcount of the two carried fingerprints, so verification
streams through memory and vectorises (AVX2 / AVX-512 ``vpopcntq``) instead of reading
two random rows per candidate. That is what makes many tables with short keys — the
pigeonhole design at large ``k``, and bit-sampling LSH — affordable.

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


@njit(cache=True, nogil=True)
def sort_entries(fps, mask, mult, sort_bits, kr, fp, kr_tmp, fp_tmp, h_lo, h_hi):
    """Entries of one table into ``kr``/``fp``, sorted (stably, so rows ascend within a
    run) by the ``sort_bits``-bit hash of the masked fingerprint."""
    n = fps.shape[0]
    words = fps.shape[1]
    shift = np.uint64(64 - sort_bits)
    lo_bits = sort_bits // 2
    n_lo = 1 << lo_bits
    n_hi = 1 << (sort_bits - lo_bits)
    lo_mask = np.uint64(n_lo - 1)
    hi_shift = np.uint64(32 + lo_bits)
    h_lo[:n_lo] = 0
    h_hi[:n_hi] = 0
    m0 = mask[0]
    m1 = mask[1]
    a0 = mult[0]
    a1 = mult[1]
    if words == 1:
        for i in range(n):
            h = ((fps[i, 0] & m0) * a0) >> shift
            kr[i] = (h << _S32) | np.uint64(i)
            h_lo[h & lo_mask] += 1
            h_hi[h >> np.uint64(lo_bits)] += 1
    else:
        for i in range(n):
            h = ((fps[i, 0] & m0) * a0 + (fps[i, 1] & m1) * a1) >> shift
            kr[i] = (h << _S32) | np.uint64(i)
            h_lo[h & lo_mask] += 1
            h_hi[h >> np.uint64(lo_bits)] += 1
    total = 0
    for d in range(n_lo):
        c = h_lo[d]
        h_lo[d] = total
        total += c
    total = 0
    for d in range(n_hi):
        c = h_hi[d]
        h_hi[d] = total
        total += c
    for i in range(n):  # by the low digit; fingerprints gathered in row order
        w = kr[i]
        d = (w >> _S32) & lo_mask
        p = h_lo[d]
        h_lo[d] = p + 1
        kr_tmp[p] = w
        for x in range(words):
            fp_tmp[p, x] = fps[i, x]
    for i in range(n):  # by the high digit
        w = kr_tmp[i]
        d = w >> hi_shift
        p = h_hi[d]
        h_hi[d] = p + 1
        kr[p] = w
        for x in range(words):
            fp[p, x] = fp_tmp[i, x]


@njit(cache=True, nogil=True)
def scan_entries(kr, fp, k, t, n_left, masks, block_masks, sels, wa, wb,
                 left, right, dist, base, room):
    """Verify every run of one sorted table; write the pairs table ``t`` owns into
    ``left/right/dist[base : base + room]``.

    Self-join when ``n_left < 0``; otherwise rows below ``n_left`` are the left set and
    pairs join a left row to a right one (reported as ``row - n_left``). Counting goes
    on past ``room``. Returns ``(count, weighted)``: ``weighted`` sums
    ``wa[i] * wb[j]`` (an empty weight array counts 1 per row).
    """
    n = kr.shape[0]
    words = fp.shape[1]
    kk = np.uint64(k)
    weigh_a = wa.shape[0] > 0
    weigh_b = wb.shape[0] > 0
    zero = np.uint64(0)
    c = 0
    wsum = 0
    s = 0
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
    for th in prange(n_threads):
        used = 0
        full = False
        for w in range(th, n_w, n_threads):
            t = tables[w]
            sort_entries(fps, masks[t], mults[t], sort_bits, kr[th], fp[th], kr_tmp[th],
                         fp_tmp[th], h_lo[th], h_hi[th])
            room = 0 if full else cap - used
            c, ws = scan_entries(kr[th], fp[th], k, t, n_left, masks, block_masks, sels, wa,
                                 wb, left, right, dist, th * cap + used, room)
            counts[w] = c
            weighted[w] = ws
            if not full and c <= room:
                start[w] = th * cap + used
                used += c
            else:
                full = True
    return left, right, dist, counts, weighted, start
