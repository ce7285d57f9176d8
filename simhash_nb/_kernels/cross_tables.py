"""Cross search of key-mask tables without sorting the stored rows.

A few NEW fingerprints are checked against many STORED ones over the tables of a
family (see :mod:`simhash_nb._core.search.families`). Per table, only the new rows are
ordered: a counting sort on a ``hash_bits``-bit multiply-shift hash of their masked
fingerprint (:func:`index_new`, ``O(m + 2**hash_bits)``) gives, for each hash, the run
of new rows that carry it, with their fingerprints word-major and padded as in
:mod:`simhash_nb._kernels.dense_tables`. Each stored row then hashes its own masked
fingerprint and tests the run of that hash eight rows at a step
(:func:`~simhash_nb._kernels.lanes.near_lanes`, :func:`scan_stored`), in parallel
chunks: the stored rows are read once per table and never sorted as a whole (only
batches of ``BATCH`` rows, in cache, by the top bits of their hash, so that
consecutive lookups stay in cache). The cost per table is linear in the stored rows;
with short keys (e.g. 12 sampled bits against 100k new rows, about 24 new rows a key)
it is dominated by testing those candidates, which the dense search does as cheaply
in its sorted runs (see :func:`simhash_nb._core.search.cross.cross_waves`).

A pair is kept when its distance is within ``k`` and the table owns it, by the same
rule as the dense search (:func:`simhash_nb._kernels.dense_tables.owner`: the first
table of the family whose mask the pair agrees on; the block rule for pigeonhole
families). The owner test also rejects the pairs that share a hash but not the key,
so the pairs are exactly the true key matches within ``k``, each reported by one table.

Rows of both sets are below ``2**31``; fingerprints arrive as ``uint64[n, words]``,
words 1 or 2.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .dense_tables import owner
from .lanes import near_lanes, near_lanes2
from .popcount import popcount64
from .prange import PRANGE_ONLY

PAD = 32  # slots after the last new row: a block of four steps reads 32 rows


@njit(cache=True, nogil=True, inline="always")
def _hash(fps, i, words, m0, m1, a0, a1, shift):
    """``hash_bits``-bit multiply-shift hash of row ``i``'s masked fingerprint (as the
    dense search's): equal keys always hash alike."""
    if words == 1:
        return ((fps[i, 0] & m0) * a0) >> shift
    return ((fps[i, 0] & m0) * a0 + (fps[i, 1] & m1) * a1) >> shift


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def index_new(new, tables, masks, mults, hash_bits, rows, v, starts):
    """Counting-sort the rows of ``new`` by their hash under each table of ``tables``
    (one table a thread): for wave slot ``w``, the rows of hash ``h`` are
    ``rows[w, starts[w, h]:starts[w, h + 1]]`` (ascending), their fingerprint words in
    ``v[w, word, ...]`` at the same positions (``v``: ``uint64[W, words, m + PAD]``)."""
    m = new.shape[0]
    words = new.shape[1]
    shift = np.uint64(64 - hash_bits)
    n_h = 1 << hash_bits
    for w in prange(tables.shape[0]):
        t = tables[w]
        m0 = masks[t, 0]
        m1 = masks[t, 1]
        a0 = mults[t, 0]
        a1 = mults[t, 1]
        st = starts[w]
        st[:] = 0
        for i in range(m):
            st[_hash(new, i, words, m0, m1, a0, a1, shift) + np.uint64(1)] += 1
        for h in range(n_h):
            st[h + 1] += st[h]
        for i in range(m):  # st[h] walks to the end of run h, which is st[h + 1] before
            h = _hash(new, i, words, m0, m1, a0, a1, shift)
            p = st[h]
            st[h] = p + 1
            rows[w, p] = np.uint32(i)
            for x in range(words):
                v[w, x, p] = new[i, x]
        for h in range(n_h, 0, -1):  # back to the starts
            st[h] = st[h - 1]
        st[0] = 0


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def scan_stored(stored, tables, masks, mults, hash_bits, rows, v, starts, k, steps, mw0, mw1,
                block_masks, sels, n_chunks, tasks, base, room, left, right, dist, counts):
    """Scan the stored rows against the indexed new rows (:func:`index_new`).

    Task ``q`` (``tasks[q] = w * n_chunks + c``) scans chunk ``c`` of ``n_chunks`` of
    the stored rows under table ``tables[w]``, and writes the pairs that table owns
    (new row, stored row, distance) into ``left/right/dist[base[q] : base[q] + room[q]]``
    while they fit; ``counts[q]`` gets all of them (a task over its room runs again).
    ``steps`` (1 or 4): steps of eight new rows a stored row tests at once (see
    :func:`_batch_pairs`; ``v`` holds ``PAD`` slots after the last row). ``mw0``,
    ``mw1``: the family's masks word-major, padded by 8 (see
    :func:`~simhash_nb._kernels.dense_tables.owner`).

    A task takes its rows ``BATCH`` at a time, in the order of the top ``ORDER_BITS``
    bits of their hash (:func:`_batch_order`), so that consecutive rows look up nearby
    runs of new rows, which stay in cache (in row order each lookup is a cache miss:
    measured 1.5-2x slower at 100k new rows).
    """
    n = stored.shape[0]
    words = stored.shape[1]
    shift = np.uint64(64 - hash_bits)
    order_bits = min(ORDER_BITS, hash_bits)
    kk = np.uint64(k)
    for q in prange(tasks.shape[0]):
        w = tasks[q] // n_chunks
        c = tasks[q] % n_chunks
        t = tables[w]
        hh = np.empty(BATCH, dtype=np.uint32)
        hs = np.empty(BATCH, dtype=np.uint32)
        sj = np.empty(BATCH, dtype=np.int32)
        sw = np.empty((words, BATCH), dtype=np.uint64)
        hist = np.empty((1 << order_bits) + 1, dtype=np.int32)
        hits = np.empty((HITS, 3), dtype=np.int64)
        got = 0
        j1 = (c + 1) * n // n_chunks
        for j0 in range(c * n // n_chunks, j1, BATCH):
            size = min(BATCH, j1 - j0)
            _batch_order(stored, j0, size, masks[t], mults[t], shift, order_bits, hh, hs, sj,
                         sw, hist)
            got = _batch_pairs(j0, size, hs, sj, sw[0], sw[words - 1], starts[w], rows[w],
                               v[w, 0], v[w, words - 1], words, kk, steps, t, mw0, mw1,
                               block_masks, sels, left, right, dist, base[q], room[q], got, hits)
        counts[q] = got


BATCH = 1 << 14  # stored rows ordered together (with their hashes: 384 KiB at 128 bits)
ORDER_BITS = 12  # hash bits they are ordered on
HITS = 256  # blocks with a lane within k listed before their pairs are kept


@njit(cache=True, nogil=True)
def _batch_order(stored, j0, size, mask, mult, shift, order_bits, hh, hs, sj, sw, hist):
    """Order rows ``j0 .. j0 + size`` by the top ``order_bits`` bits of their hash (a
    counting sort, in cache): position ``p`` gets the hash ``hs[p]``, the offset
    ``sj[p]`` and the words ``sw[:, p]`` of a row (``hh``: scratch)."""
    words = stored.shape[1]
    m0 = mask[0]
    m1 = mask[1]
    a0 = mult[0]
    a1 = mult[1]
    low = np.uint32(shift_bits(shift) - order_bits)
    hist[:] = 0
    for x in range(size):
        h = np.uint32(_hash(stored, j0 + x, words, m0, m1, a0, a1, shift))
        hh[x] = h
        hist[(h >> low) + np.uint32(1)] += 1
    for d in range(hist.shape[0] - 1):
        hist[d + 1] += hist[d]
    for x in range(size):
        h = hh[x]
        d = h >> low
        p = hist[d]
        hist[d] = p + 1
        hs[p] = h
        sj[p] = x
        for i in range(words):
            sw[i, p] = stored[j0 + x, i]


@njit(cache=True, nogil=True, inline="always")
def shift_bits(shift):
    """The hash's bits, from the shift that makes it (``64 - shift``)."""
    return np.int64(64) - np.int64(shift)


@njit(cache=True, nogil=True, inline="always")
def _lanes(v0, v1, y, f0, f1, kk, words, steps):
    """Lanes ``i < 8 * steps`` (bit ``i``): new row ``y + i`` within ``kk`` of ``(f0, f1)``."""
    if words == 1:
        lanes = np.uint64(near_lanes(v0, y, f0, kk))
        if steps == 4:
            lanes |= (np.uint64(near_lanes(v0, y + 8, f0, kk)) << np.uint64(8)
                      | np.uint64(near_lanes(v0, y + 16, f0, kk)) << np.uint64(16)
                      | np.uint64(near_lanes(v0, y + 24, f0, kk)) << np.uint64(24))
        return lanes
    lanes = np.uint64(near_lanes2(v0, v1, y, f0, f1, kk))
    if steps == 4:
        lanes |= (np.uint64(near_lanes2(v0, v1, y + 8, f0, f1, kk)) << np.uint64(8)
                  | np.uint64(near_lanes2(v0, v1, y + 16, f0, f1, kk)) << np.uint64(16)
                  | np.uint64(near_lanes2(v0, v1, y + 24, f0, f1, kk)) << np.uint64(24))
    return lanes


@njit(cache=True, nogil=True)
def _batch_pairs(j0, size, hs, sj, s0, s1, st, rw, v0, v1, words, kk, steps, t, mw0, mw1,
                 block_masks, sels, left, right, dist, out, cap, got, hits):
    """Test the rows of a batch, as :func:`_batch_order` lists them (hash ``hs``, offset
    ``sj``, words ``s0``, ``s1``), against the new rows of their hash, ``8 * steps`` new
    rows a block; write the pairs table ``t`` owns from ``out + got`` while below
    ``cap``. Returns the new ``got``.

    :func:`_scan_batch` lists the rare blocks with a lane within ``k`` in ``hits``
    (``int64[HITS, 3]``), a few hundred at a time, and :func:`_keep_hits` writes their
    pairs: kept apart, the block loop makes no call and stays in registers (as the
    dense search's :func:`~simhash_nb._kernels.dense_tables.run_pairs`). Against one
    loop doing both, which called out for every row: 42 -> 25 ns a stored row and table
    on one thread (200k new rows, 12-bit keys), 1.9x faster on two threads."""
    p = 0
    y = np.int64(-1)
    while p < size:
        nh, p, y = _scan_batch(hs, s0, s1, st, v0, v1, words, kk, steps, p, y, size, hits)
        if nh:
            got = _keep_hits(nh, hits, j0, hs, sj, s0, s1, st, rw, v0, v1, words, t, mw0,
                             mw1, block_masks, sels, left, right, dist, out, cap, got)
    return got


@njit(cache=True, nogil=True, inline="always")
def _scan_batch(hs, s0, s1, st, v0, v1, words, kk, steps, p, y, size, hits):
    """From batch position ``p`` (block ``y`` of its run; ``y < 0``: its first), test
    each row against the new rows of its hash, ``8 * steps`` a block (``steps`` 1 or 4:
    four steps without a branch between them, for runs of a few dozen rows, where a
    loop of single steps mispredicts its exit for nearly every stored row); list each
    block with a lane within ``kk`` as ``(p, y, lanes)`` in ``hits`` until it is full.
    Returns ``(listed, p, y)``: where to go on (``p == size``: done)."""
    one = np.uint32(1)
    block = np.int64(8 * steps)
    nh = 0
    cap = hits.shape[0]
    while p < size:
        h = hs[p]
        e = np.int64(st[h + one])
        if y < 0:
            y = np.int64(st[h])
        f0 = s0[p]
        f1 = s1[p]
        while y < e:
            lanes = _lanes(v0, v1, y, f0, f1, kk, words, steps)
            if lanes:
                hits[nh, 0] = p
                hits[nh, 1] = y
                hits[nh, 2] = np.int64(lanes)
                nh += 1
                if nh == cap:
                    return nh, p, y + block
            y += block
        p += 1
        y = np.int64(-1)
    return nh, p, y


@njit(cache=True, nogil=True)
def _keep_hits(nh, hits, j0, hs, sj, s0, s1, st, rw, v0, v1, words, t, mw0, mw1, block_masks,
               sels, left, right, dist, out, cap, got):
    """The pairs of the ``nh`` listed blocks (:func:`_scan_batch`) that table ``t`` owns,
    written from ``out + got`` while below ``cap``; returns the new ``got``."""
    one = np.uint32(1)
    for x in range(nh):
        p = hits[x, 0]
        e = np.int64(st[hs[p] + one])
        got = _keep(np.uint64(hits[x, 2]), hits[x, 1], e, j0 + np.int64(sj[p]), s0[p], s1[p],
                    rw, v0, v1, words, t, mw0, mw1, block_masks, sels, left, right, dist,
                    out, cap, got)
    return got


@njit(cache=True, nogil=True)
def _keep(lanes, y, e, j, f0, f1, rw, v0, v1, words, t, mw0, mw1, block_masks, sels, left,
          right, dist, out, cap, got):
    """The pairs of stored row ``j`` (words ``f0``, ``f1``) and the new rows ``y + i``
    (lanes ``i`` set, ``y + i < e``) that table ``t`` owns, written from ``out + got``
    while below ``cap``; returns the new ``got``."""
    one = np.uint64(1)
    zero = np.uint64(0)
    lanes &= (one << np.uint64(min(e - y, 32))) - one  # none past the run
    while lanes:
        yy = y + np.int64(popcount64((lanes & (~lanes + one)) - one))
        lanes &= lanes - one
        d0 = f0 ^ v0[yy]
        d1 = (f1 ^ v1[yy]) if words == 2 else zero
        if not owner(d0, d1, t, mw0, mw1, block_masks, sels):
            continue
        if got < cap:
            left[out + got] = np.int64(rw[yy])
            right[out + got] = j
            dist[out + got] = popcount64(d0) + popcount64(d1)
        got += 1
    return got
