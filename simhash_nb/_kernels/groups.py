"""Identical fingerprints: group equal rows of a sorted table, expand pairs of groups."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .prange import PRANGE_ONLY
from .table_keys import ONE
from .table_scan import first_run_at, run_end


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
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
    rmask = (ONE << rb) - ONE
    groups = np.zeros(n_tasks, dtype=np.int64)
    for t in prange(n_tasks):
        lo = t * n // n_tasks
        hi = (t + 1) * n // n_tasks
        s = first_run_at(sorted_, lo, hi, rb)
        g = 0
        while s < hi:
            e = run_end(sorted_, s, rb)
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


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
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


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
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
