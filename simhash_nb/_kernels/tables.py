"""Permutation-table (pigeonhole) search kernels.

A *table* is a sorted list of ``key << row_bits | row`` words, where the key is made
of some blocks of a fingerprint (the table's *selection*) and ``row`` is the row's
position. Rows whose keys are equal form a *run*; only pairs inside a run are
candidates. Sorting is a parallel LSD radix sort on the key bits only: the row bits
start in increasing order and the sort is stable, so rows stay ascending in a run.

A pair within ``k`` bits agrees on at least ``b - k`` of the ``b`` blocks, so it shares
the key of at least one table. It is reported only by its *owner*: the table whose
selection is the first ``b - k`` agreeing blocks (tables are enumerated in
lexicographic order, so this is the first table whose key the pair matches). No
global hash set is needed to report each pair once.

Fingerprints arrive as ``uint64[n, words]`` (a 64-bit set has one word).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .hamming import row_distance

_ONE = np.uint64(1)
_SEED = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def mix64(z):
    """splitmix64 finaliser: a bijective scramble of a ``uint64``."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def block_value(fps, i, start, width):
    """Bits ``[start, start + width)`` of row ``i`` (``width <= 64``), low bit first."""
    w = start >> 6
    off = start & 63
    v = fps[i, w] >> np.uint64(off)
    if off + width > 64:
        v |= fps[i, w + 1] << np.uint64(64 - off)
    if width < 64:
        v &= (_ONE << np.uint64(width)) - _ONE
    return v


@njit(cache=True, inline="always")
def table_key(fps, i, sel, starts, widths, hashed, key_bits):
    """Key of row ``i`` in the table selecting blocks ``sel``.

    Exact keys concatenate the selected blocks (their total width is ``key_bits``);
    hashed keys are the top ``key_bits`` bits of a splitmix64 chain over the blocks.
    Equal blocks always give equal keys, so hashing only adds candidates.
    """
    if hashed:
        h = _SEED
        for s in range(sel.shape[0]):
            b = sel[s]
            h = mix64(h ^ block_value(fps, i, starts[b], widths[b]))
        return h >> np.uint64(64 - key_bits)
    key = np.uint64(0)
    for s in range(sel.shape[0]):
        b = sel[s]
        width = widths[b]
        v = block_value(fps, i, starts[b], width)
        if width >= 64:
            key = v
        else:
            key = (key << np.uint64(width)) | v
    return key


@njit(cache=True, inline="always")
def is_owner(a, i, b, j, sel, block_masks):
    """Whether the table selecting ``sel`` owns the pair (row i of a, row j of b).

    The owner is the table whose selection is the first ``len(sel)`` blocks on which
    the two rows agree.
    """
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


@njit(parallel=True, cache=True, nogil=True)
def sort_table(fps, sel, starts, widths, hashed, key_bits, row_bits, radix_bits, n_chunks, buf, tmp):
    """Sorted ``key << row_bits | row`` words of one table, by parallel LSD radix sort.

    ``buf`` and ``tmp`` are work arrays of length ``n``; the result is one of them (the
    returned array). Chunk ``c`` of the rows keeps its own histogram, so the scatter is
    stable and race-free. Digits on which every key agrees are skipped.
    """
    n = fps.shape[0]
    passes = (key_bits + radix_bits - 1) // radix_bits if key_bits > 0 else 0
    dbits = (key_bits + passes - 1) // passes if passes > 0 else 1
    n_buckets = 1 << dbits
    dmask = np.uint64(n_buckets - 1)
    rb = np.uint64(row_bits)
    hist = np.zeros((n_chunks, n_buckets), dtype=np.int64)
    for c in prange(n_chunks):
        lo = c * n // n_chunks
        hi = (c + 1) * n // n_chunks
        for i in range(lo, hi):
            key = table_key(fps, i, sel, starts, widths, hashed, key_bits)
            v = (key << rb) | np.uint64(i)
            buf[i] = v
            hist[c, (v >> rb) & dmask] += 1
    src = buf
    dst = tmp
    for p in range(passes):
        shift = np.uint64(row_bits + p * dbits)
        if p > 0:
            hist[:, :] = 0
            for c in prange(n_chunks):
                lo = c * n // n_chunks
                hi = (c + 1) * n // n_chunks
                for i in range(lo, hi):
                    hist[c, (src[i] >> shift) & dmask] += 1
        total = 0
        single = False
        for d in range(n_buckets):
            in_d = 0
            for c in range(n_chunks):
                cnt = hist[c, d]
                hist[c, d] = total
                total += cnt
                in_d += cnt
            if in_d == n:
                single = True
        if single:
            continue
        for c in prange(n_chunks):
            lo = c * n // n_chunks
            hi = (c + 1) * n // n_chunks
            for i in range(lo, hi):
                v = src[i]
                d = (v >> shift) & dmask
                pos = hist[c, d]
                hist[c, d] = pos + 1
                dst[pos] = v
        src, dst = dst, src
    return src


@njit(cache=True, inline="always")
def _weight(w, x):
    """Group size of distinct row ``x`` (1 when ``w`` is empty: no merged rows)."""
    return w[x] if w.shape[0] > 0 else np.int64(1)


@njit(cache=True, inline="always")
def _run_start(sorted_, rb, lo, hi):
    """First position in [lo, hi) that starts a run (runs begun before lo are skipped)."""
    s = lo
    if s > 0:
        prev = sorted_[s - 1] >> rb
        while s < hi and (sorted_[s] >> rb) == prev:
            s += 1
    return s


@njit(parallel=True, cache=True, nogil=True)
def scan_runs(sorted_, row_bits, fps, k, n_left, sel, block_masks, wa, wb, n_tasks, cap):
    """Verify the candidates of one sorted table and keep the pairs it owns.

    Self-join (``n_left < 0``): every pair ``x < y`` of a run. Cross join: rows below
    ``n_left`` are the left set, the others the right set (reported as
    ``row - n_left``); a run lists its left rows first. Task ``t`` handles the runs that
    start in its share of positions and writes at most ``cap`` pairs into its own slice;
    it keeps counting past ``cap`` so the caller can retry at the exact size.
    ``weighted[t]`` sums ``wa[i] * wb[j]`` over the task's pairs (group sizes when
    identical fingerprints were merged; an empty weight array counts 1 per row).

    Returns ``(left, right, dist, counts, weighted)``.
    """
    n = sorted_.shape[0]
    rb = np.uint64(row_bits)
    rmask = (_ONE << rb) - _ONE
    kk = np.uint64(k)
    left = np.empty(n_tasks * cap, dtype=np.int64)
    right = np.empty(n_tasks * cap, dtype=np.int64)
    dist = np.empty(n_tasks * cap, dtype=np.uint8)
    counts = np.zeros(n_tasks, dtype=np.int64)
    weighted = np.zeros(n_tasks, dtype=np.int64)
    for t in prange(n_tasks):
        lo = t * n // n_tasks
        hi = (t + 1) * n // n_tasks
        s = _run_start(sorted_, rb, lo, hi)
        base = t * cap
        c = 0
        wsum = 0
        while s < hi:
            key = sorted_[s] >> rb
            e = s + 1
            while e < n and (sorted_[e] >> rb) == key:
                e += 1
            if e - s > 1:
                if n_left < 0:
                    for x in range(s, e - 1):
                        rx = np.int64(sorted_[x] & rmask)
                        for y in range(x + 1, e):
                            ry = np.int64(sorted_[y] & rmask)
                            d = row_distance(fps, rx, fps, ry)
                            if d <= kk and is_owner(fps, rx, fps, ry, sel, block_masks):
                                if c < cap:
                                    left[base + c] = rx
                                    right[base + c] = ry
                                    dist[base + c] = d
                                c += 1
                                wsum += _weight(wa, rx) * _weight(wb, ry)
                else:
                    m = s
                    while m < e and np.int64(sorted_[m] & rmask) < n_left:
                        m += 1
                    for x in range(s, m):
                        rx = np.int64(sorted_[x] & rmask)
                        for y in range(m, e):
                            ry = np.int64(sorted_[y] & rmask)
                            d = row_distance(fps, rx, fps, ry)
                            if d <= kk and is_owner(fps, rx, fps, ry, sel, block_masks):
                                if c < cap:
                                    left[base + c] = rx
                                    right[base + c] = ry - n_left
                                    dist[base + c] = d
                                c += 1
                                wsum += _weight(wa, rx) * _weight(wb, ry - n_left)
            s = e
        counts[t] = c
        weighted[t] = wsum
    return left, right, dist, counts, weighted


@njit(cache=True, inline="always")
def _rows_equal(fps, a, b):
    for w in range(fps.shape[1]):
        if fps[a, w] != fps[b, w]:
            return False
    return True


@njit(parallel=True, cache=True, nogil=True)
def group_identical(sorted_, row_bits, fps, n_tasks, rep):
    """``rep[row]`` = smallest row with the same fingerprint, from a table sorted by a
    hash of the whole fingerprint (equal rows share a run; rows ascend in a run).

    Returns the number of distinct fingerprints. Linear in the size of a run of
    identical rows; a run mixing ``g`` distinct fingerprints (a hash collision) costs
    ``O(run * g)``.
    """
    n = sorted_.shape[0]
    rb = np.uint64(row_bits)
    rmask = (_ONE << rb) - _ONE
    groups = np.zeros(n_tasks, dtype=np.int64)
    for t in prange(n_tasks):
        lo = t * n // n_tasks
        hi = (t + 1) * n // n_tasks
        s = _run_start(sorted_, rb, lo, hi)
        g = 0
        while s < hi:
            key = sorted_[s] >> rb
            e = s + 1
            while e < n and (sorted_[e] >> rb) == key:
                e += 1
            r0 = np.int64(sorted_[s] & rmask)
            same = True
            for x in range(s + 1, e):
                if not _rows_equal(fps, r0, np.int64(sorted_[x] & rmask)):
                    same = False
                    break
            if same:
                for x in range(s, e):
                    rep[np.int64(sorted_[x] & rmask)] = r0
                g += 1
            else:
                for x in range(s, e):
                    rep[np.int64(sorted_[x] & rmask)] = -1
                for x in range(s, e):
                    rx = np.int64(sorted_[x] & rmask)
                    if rep[rx] == -1:
                        rep[rx] = rx
                        g += 1
                        for y in range(x + 1, e):
                            ry = np.int64(sorted_[y] & rmask)
                            if rep[ry] == -1 and _rows_equal(fps, rx, ry):
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


@njit(cache=True, inline="always")
def _search_left(a, value):
    lo = 0
    hi = a.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(parallel=True, cache=True, nogil=True)
def query_run(
    q, k, fps, lo, alive, tabs, row_bits, sels, starts, widths, hashed, key_bits, block_masks,
    n_tasks, cap,
):
    """Probe every table of one index run (``tabs[t]`` sorted words over rows
    ``lo + offset``) with every query row; keep live rows within ``k`` that the table
    owns. Task ``t`` handles queries ``t, t + n_tasks, ...`` into its own output slice.

    Returns ``(query, slot, dist, counts)``.
    """
    n_q = q.shape[0]
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
                sel = sels[tb]
                key = table_key(q, qi, sel, starts, widths, hashed[tb], key_bits[tb])
                row = tabs[tb]
                x = _search_left(row, key << rb)
                while x < m and (row[x] >> rb) == key:
                    slot = lo + np.int64(row[x] & rmask)
                    x += 1
                    if not alive[slot]:
                        continue
                    d = row_distance(q, qi, fps, slot)
                    if d <= kk and is_owner(q, qi, fps, slot, sel, block_masks):
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
        x = _search_left(id_sorted, ids[qi])
        while x < m and id_sorted[x] == ids[qi]:
            if alive[id_slot[x]]:
                out[qi] = id_slot[x]
                break
            x += 1
    return out
