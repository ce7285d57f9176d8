"""Table search whose entries carry the whole fingerprint ("dense" tables).

A table is defined by a *key mask* (``uint64[2]``; the second word is 0 for 64-bit
fingerprints): two fingerprints share the table's key when they agree on every bit of
the mask. Each table orders its rows by a ``sort_bits``-bit multiply-shift hash of the
masked fingerprint (Dietzfelbinger's universal hashing: equal keys always hash alike,
distinct keys collide with probability about ``2 / 2**sort_bits``): one partition pass
on the top bits of the hash moves rows and fingerprints into cache-sized groups; each
group is then counting-sorted on the remaining bits — the buckets it fills are the runs
of rows sharing a hash — and scanned while it is in cache. Every pair of a run is a
candidate, verified by the popcount of the two carried fingerprints, eight at a time
(:func:`~simhash_nb._kernels.lanes.near_lanes`), so verification streams through cache
instead of reading two random rows per candidate. That is what makes many tables with
short keys — the pigeonhole design at large ``k``, and bit-sampling LSH — affordable.

Fingerprints are carried word-major, ``fp[word, position]``, with 8 slots of padding
after the last position, so that each word is a contiguous array the 8-lane tests can
load from.

A pair found by several tables is reported once, by its *owner*:

- block rule (pigeonhole tables, ``block_masks`` given): the table whose selected
  blocks are the first ``b - k`` blocks on which the pair agrees (tables enumerate the
  block choices in lexicographic order), computed in ``O(b)``;
- mask rule (any family of tables, e.g. sampled bits): the first table, in order,
  whose mask the pair agrees on, found by testing the masks eight at a time.

Either rule also rejects pairs that share a hash but not the key (hash collisions).
Rows are below ``2**32``; fingerprints arrive as ``uint64[n, words]``, words 1 or 2.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .lanes import clear_lanes2, near_lanes, near_lanes2
from .popcount import popcount64
from .prange import PRANGE_ONLY

PAD = 8  # slots after the last position of each word of the carried fingerprints
HITS = 256  # steps with a near lane listed before their pairs are written (run_pairs)


@njit(cache=True, nogil=True)
def owner(d0, d1, t, mw0, mw1, block_masks, sels):
    """Whether table ``t`` owns a pair whose fingerprints differ by ``(d0, d1)``.

    ``mw0``, ``mw1``: the low and high words of the tables' key masks, padded by 8
    (the mask rule tests eight tables a step, :func:`~simhash_nb._kernels.lanes.clear_lanes2`).
    """
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
    u = 0
    while u <= t:
        z = np.uint32(clear_lanes2(mw0, mw1, u, d0, d1))
        if z:  # the first table the pair agrees on (table t does: one is <= t)
            return u + np.int64(popcount64(np.uint64((z & (~z + np.uint32(1))) - 1))) == t
        u += 8
    return False


@njit(cache=True, nogil=True, inline="always")
def _hash(fps, i, words, m0, m1, a0, a1, shift):
    if words == 1:
        return ((fps[i, 0] & m0) * a0) >> shift
    return ((fps[i, 0] & m0) * a0 + (fps[i, 1] & m1) * a1) >> shift


@njit(cache=True, nogil=True, inline="always")
def _hash_carried(fp, i, words, m0, m1, a0, a1, shift):
    if words == 1:
        return ((fp[0, i] & m0) * a0) >> shift
    return ((fp[0, i] & m0) * a0 + (fp[1, i] & m1) * a1) >> shift


@njit(cache=True, nogil=True)
def partition_rows(fps, mask, mult, sort_bits, top_bits, rows, fp, counts, bounds):
    """First (MSD) pass of one table: rows and their fingerprints into ``rows`` and
    ``fp[word]``, grouped by the top ``top_bits`` of the ``sort_bits``-bit hash of the
    masked fingerprint (rows ascending within a group). ``bounds[d]`` is where group
    ``d`` starts (``bounds[2**top_bits] = n``)."""
    n = fps.shape[0]
    words = fps.shape[1]
    shift = np.uint64(64 - sort_bits)
    low = np.uint64(sort_bits - top_bits)
    n_top = 1 << top_bits
    # the key's mask and multipliers in locals (registers) for the hot loops; this
    # repeats group_pairs' lines on purpose: read through the arrays, the stores to
    # ``counts`` could alias them and the loads would stay in the loop
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
        d = _hash(fps, i, words, m0, m1, a0, a1, shift) >> low
        p = counts[d]
        counts[d] = p + 1
        rows[p] = np.uint32(i)
        for x in range(words):
            fp[x, p] = fps[i, x]


@njit(cache=True, nogil=True)
def group_pairs(rows, fp, s, e, mask, mult, sort_bits, low_bits, rows_t, fp_t, counts, k, t,
                n_left, mw0, mw1, block_masks, sels, wa, wb, left, right, dist, base, room,
                hits):
    """Sort the entries ``[s, e)`` of one group (in cache) by the low ``low_bits`` of
    their hash into ``rows_t``/``fp_t`` (a counting sort: the buckets it fills are the
    runs of equal hash), then verify every pair of every run; write the pairs table
    ``t`` owns into ``left/right/dist[base : base + room]``.

    Self-join when ``n_left < 0``; otherwise rows below ``n_left`` are the left set and
    pairs join a left row to a right one (reported as ``row - n_left``). Counting goes
    on past ``room``. Returns ``(count, weighted)``: ``weighted`` sums
    ``wa[i] * wb[j]`` (an empty weight array counts 1 per row).
    """
    words = fp.shape[0]
    shift = np.uint64(64 - sort_bits)
    lmask = (np.uint64(1) << np.uint64(low_bits)) - np.uint64(1)
    n_low = 1 << low_bits
    m0 = mask[0]
    m1 = mask[1]
    a0 = mult[0]
    a1 = mult[1]
    counts[:n_low] = 0
    for x in range(s, e):
        counts[_hash_carried(fp, x, words, m0, m1, a0, a1, shift) & lmask] += 1
    total = s
    for d in range(n_low):
        c = counts[d]
        counts[d] = total
        total += c
    for x in range(s, e):
        d = _hash_carried(fp, x, words, m0, m1, a0, a1, shift) & lmask
        p = counts[d]
        counts[d] = p + 1
        rows_t[p] = rows[x]
        for w in range(words):
            fp_t[w, p] = fp[w, x]
    c = 0
    wsum = 0
    bs = s
    for d in range(n_low):  # bucket d is [counts[d - 1], counts[d]) now
        be = counts[d]
        if be - bs > 1:
            cr, wr = run_pairs(rows_t, fp_t[0], fp_t[words - 1], words, bs, be, k, t, n_left,
                               mw0, mw1, block_masks, sels, wa, wb, left, right, dist, base + c,
                               room - c, hits)
            c += cr
            wsum += wr
        bs = be
    return c, wsum


@njit(cache=True, nogil=True, inline="always")
def run_pairs(rows, v0, v1, words, s, e, k, t, n_left, mw0, mw1, block_masks, sels, wa, wb,
              left, right, dist, base, room, hits):
    """Verify the pairs of one run ``[s, e)`` (entries sharing a hash, rows ascending;
    fingerprint words ``v0[x]``, ``v1[x]``), eight candidates per step.

    :func:`scan_run` finds the steps with a lane within ``k`` and lists them in
    ``hits`` (``int64[HITS, 3]``), a few hundred at a time; :func:`keep_hits` then
    writes the pairs they hold. Keeping the two apart keeps the step loop in
    registers (measured 1.4x faster on runs of 150 rows than one loop doing both)."""
    kk = np.uint64(k)
    c = 0
    wsum = 0
    if n_left >= 0:
        m = s
        while m < e and np.int64(rows[m]) < n_left:
            m += 1
        x_end = m
        y_from = m
    else:
        x_end = e - 1
        y_from = -1
    x = s
    y = m if n_left >= 0 else s + 1
    while x < x_end:
        nh, x, y = scan_run(v0, v1, words, x, y, x_end, e, y_from, kk, hits)
        if nh:
            cr, wr = keep_hits(nh, hits, e, rows, v0, v1, words, t, n_left, mw0, mw1,
                               block_masks, sels, wa, wb, left, right, dist, base + c, room - c)
            c += cr
            wsum += wr
    return c, wsum


@njit(cache=True, nogil=True, inline="always")
def scan_run(v0, v1, words, x, y, x_end, e, y_from, kk, hits):
    """Test row ``x`` against rows ``y, y + 8, ...`` below ``e``, then each next row
    (against ``y_from`` on, or the rows after it when ``y_from < 0``) while below
    ``x_end``; list each step with a lane within ``kk`` as ``(x, y, lanes)`` in ``hits``
    until it is full. Returns ``(listed, x, y)``: where to go on (``x == x_end``: done).
    Lanes past ``e`` (the next run, or padding) are left for :func:`keep_hits` to drop."""
    nh = 0
    cap = hits.shape[0]
    while x < x_end:
        f0 = v0[x]
        if words == 1:
            while y < e:
                near = near_lanes(v0, y, f0, kk)
                if near:
                    nh = _listed(hits, nh, x, y, near)
                    if nh == cap:
                        return nh, x, y + 8
                y += 8
        else:
            f1 = v1[x]
            while y < e:
                near = near_lanes2(v0, v1, y, f0, f1, kk)
                if near:
                    nh = _listed(hits, nh, x, y, near)
                    if nh == cap:
                        return nh, x, y + 8
                y += 8
        x += 1
        y = y_from if y_from >= 0 else x + 1
    return nh, x, y


@njit(cache=True, nogil=True, inline="always")
def _listed(hits, nh, x, y, near):
    """List step ``(x, y, lanes)`` as entry ``nh`` of ``hits``; returns ``nh + 1``."""
    hits[nh, 0] = x
    hits[nh, 1] = y
    hits[nh, 2] = near
    return nh + 1


@njit(cache=True, nogil=True)
def keep_hits(nh, hits, e, rows, v0, v1, words, t, n_left, mw0, mw1, block_masks, sels, wa,
              wb, left, right, dist, base, room):
    """The pairs ``(x, y + j)`` of the listed steps ``(x, y, lanes)`` of a run ending at
    ``e`` (lanes ``j`` with ``y + j < e``) that table ``t`` owns, written from ``base``
    while within ``room``. Returns ``(count, weighted)`` as :func:`group_pairs`."""
    one = np.uint32(1)
    zero = np.uint64(0)
    weigh_a = wa.shape[0] > 0
    weigh_b = wb.shape[0] > 0
    c = 0
    wsum = 0
    for h in range(nh):
        x = hits[h, 0]
        y = hits[h, 1]
        lanes = np.uint32(hits[h, 2])
        if e - y < 8:
            lanes &= (one << np.uint32(e - y)) - one
        f0 = v0[x]
        f1 = v1[x] if words == 2 else zero
        while lanes:
            yy = y + np.int64(popcount64(np.uint64((lanes & (~lanes + one)) - one)))
            lanes &= lanes - one
            d0 = f0 ^ v0[yy]
            d1 = (f1 ^ v1[yy]) if words == 2 else zero
            if not owner(d0, d1, t, mw0, mw1, block_masks, sels):
                continue
            rx = np.int64(rows[x])
            ry = np.int64(rows[yy])
            if n_left >= 0:
                ry -= n_left
            if c < room:
                left[base + c] = rx
                right[base + c] = ry
                dist[base + c] = popcount64(d0) + popcount64(d1)
            c += 1
            wsum += (wa[rx] if weigh_a else 1) * (wb[ry] if weigh_b else 1)
    return c, wsum


@njit(cache=True, nogil=True)
def word_major(masks):
    """The low and high words of the tables' key masks, each padded by ``PAD`` (the mask
    rule of :func:`owner` tests eight tables a step)."""
    mw0 = np.zeros(masks.shape[0] + PAD, dtype=np.uint64)
    mw1 = np.zeros(masks.shape[0] + PAD, dtype=np.uint64)
    for u in range(masks.shape[0]):
        mw0[u] = masks[u, 0]
        mw1[u] = masks[u, 1]
    return mw0, mw1


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def search_dense(fps, n_left, tables, masks, mults, sort_bits, top_bits, block_masks, sels, k,
                 wa, wb, n_threads, cap, rows, fp, rows_t, fp_t, h_lo, h_hi):
    """Sort and scan ``tables`` (indices into ``masks``), thread ``th`` taking tables
    ``th, th + n_threads, ...`` with its own work arrays (``rows[th]``, ...;
    ``fp[th]`` is ``uint64[words, n + PAD]``).

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
    low_bits = sort_bits - top_bits
    n_top = 1 << top_bits
    mw0, mw1 = word_major(masks)
    for th in prange(n_threads):
        used = 0
        full = False
        bounds = np.empty(n_top + 1, dtype=np.int64)
        hits = np.empty((HITS, 3), dtype=np.int64)
        for w in range(th, n_w, n_threads):
            t = tables[w]
            partition_rows(fps, masks[t], mults[t], sort_bits, top_bits, rows[th], fp[th],
                           h_hi[th], bounds)
            room = 0 if full else cap - used
            c = 0
            ws = 0
            for d in range(n_top):
                s0 = bounds[d]
                e0 = bounds[d + 1]
                if e0 - s0 < 2:
                    continue
                cd, wd = group_pairs(rows[th], fp[th], s0, e0, masks[t], mults[t], sort_bits,
                                     low_bits, rows_t[th], fp_t[th], h_lo[th], k, t, n_left,
                                     mw0, mw1, block_masks, sels, wa, wb, left, right, dist,
                                     th * cap + used + c, max(0, room - c), hits)
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


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def partition_lanes(fps, tables, masks, mults, sort_bits, top_bits, rows, fp, h_hi, bounds):
    """:func:`partition_rows` of ``tables[th]`` into lane ``th``'s work arrays, one table
    a thread; ``bounds[th]`` gets its groups' starts. :func:`scan_groups` then scans
    the groups a range at a time."""
    for th in prange(tables.shape[0]):
        t = tables[th]
        partition_rows(fps, masks[t], mults[t], sort_bits, top_bits, rows[th], fp[th],
                       h_hi[th], bounds[th])


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def partition_chunks(fps, mask, mult, sort_bits, top_bits, rows, fp, hist, bounds):
    """:func:`partition_rows` of one table by ``hist.shape[0]`` threads, each counting
    then placing a chunk of consecutive rows (``hist``: ``int64[chunks, 2**top_bits]``);
    the same ``rows``, ``fp`` and ``bounds`` (rows ascending within a group: chunk
    ``c``'s rows of a group come before chunk ``c + 1``'s). For waves of fewer tables
    than threads, where a table a thread would leave threads idle. Its loops repeat
    :func:`partition_rows`' on purpose: that one runs inside the per-lane ``prange`` of
    :func:`partition_lanes` and :func:`search_dense`, where a parallel kernel cannot."""
    n = fps.shape[0]
    words = fps.shape[1]
    n_chunks = hist.shape[0]
    step = (n + n_chunks - 1) // n_chunks
    shift = np.uint64(64 - sort_bits)
    low = np.uint64(sort_bits - top_bits)
    n_top = 1 << top_bits
    m0 = mask[0]
    m1 = mask[1]
    a0 = mult[0]
    a1 = mult[1]
    for c in prange(n_chunks):
        hist[c, :n_top] = 0
        for i in range(c * step, min(n, (c + 1) * step)):
            hist[c, _hash(fps, i, words, m0, m1, a0, a1, shift) >> low] += 1
    total = 0
    for d in range(n_top):
        bounds[d] = total
        for c in range(n_chunks):
            x = hist[c, d]
            hist[c, d] = total
            total += x
    bounds[n_top] = total
    for c in prange(n_chunks):
        for i in range(c * step, min(n, (c + 1) * step)):
            d = _hash(fps, i, words, m0, m1, a0, a1, shift) >> low
            p = hist[c, d]
            hist[c, d] = p + 1
            rows[p] = np.uint32(i)
            for x in range(words):
                fp[x, p] = fps[i, x]


ROW_WORK = 128  # a row's sorting costs about what 128 candidates do (34 ns, 0.24 ns)


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def scan_groups(lane_of, pos, stop, budget, n_left, tables, masks, mults, sort_bits, top_bits,
                block_masks, sels, k, wa, wb, cap, rows, fp, rows_t, fp_t, h_lo, bounds):
    """Scan the groups of the tables that :func:`partition_lanes` (or
    :func:`partition_chunks`) partitioned, a *slot* a thread: slot ``sl`` scans lane
    ``lane_of[sl]`` (table ``tables[lane_of[sl]]``) from group ``pos[sl]`` up to group
    ``stop[sl]``, group after group while the work it did stays below ``budget`` (a row
    counts ``ROW_WORK``, a candidate 1; one group at least), then ``pos[sl]`` is where
    it stopped. Slots of one lane cover disjoint group ranges (each sorts its groups
    into its own part of ``rows_t``/``fp_t``) and have their own ``h_lo[sl]``. Slot
    ``sl``'s pairs go into ``[sl * cap, sl * cap + cap)`` while they fit (counting past
    ``cap``), as in :func:`search_dense`.

    Slots do about the same work a call, so they end together; a lane's pairs over
    consecutive calls, slot after slot, concatenated, are those of one call over all
    its groups, in the same order: a caller runs a table in timed calls and answers
    Ctrl-C between them. Returns ``(left, right, dist, counts, weighted, work)``, one
    entry a slot.
    """
    slots = lane_of.shape[0]
    left = np.empty(slots * cap, dtype=np.int64)
    right = np.empty(slots * cap, dtype=np.int64)
    dist = np.empty(slots * cap, dtype=np.uint8)
    counts = np.zeros(slots, dtype=np.int64)
    weighted = np.zeros(slots, dtype=np.int64)
    work = np.zeros(slots, dtype=np.int64)
    low_bits = sort_bits - top_bits
    mw0, mw1 = word_major(masks)
    for sl in prange(slots):
        th = lane_of[sl]
        t = tables[th]
        hits = np.empty((HITS, 3), dtype=np.int64)
        c = 0
        ws = 0
        done = 0
        d = pos[sl]
        while d < stop[sl] and done < budget:
            s0 = bounds[th, d]
            e0 = bounds[th, d + 1]
            done += 1 + ROW_WORK * (e0 - s0)
            if e0 - s0 >= 2:
                cd, wd = group_pairs(rows[th], fp[th], s0, e0, masks[t], mults[t], sort_bits,
                                     low_bits, rows_t[th], fp_t[th], h_lo[sl], k, t, n_left,
                                     mw0, mw1, block_masks, sels, wa, wb, left, right, dist,
                                     sl * cap + c, max(0, cap - c), hits)
                c += cd
                ws += wd
                done += _candidates(h_lo[sl], s0, 1 << low_bits)
            d += 1
        pos[sl] = d
        counts[sl] = c
        weighted[sl] = ws
        work[sl] = done
    return left, right, dist, counts, weighted, work


@njit(cache=True, nogil=True)
def _candidates(ends, s, n_low):
    """Candidates of a group sorted by :func:`group_pairs` from ``s`` (``ends[d]``: the
    end of its run ``d``)."""
    total = 0
    prev = s
    for d in range(n_low):
        m = ends[d] - prev
        total += m * (m - 1) // 2
        prev = ends[d]
    return total
