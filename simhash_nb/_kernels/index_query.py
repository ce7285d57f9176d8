"""Index queries: probe a stored table with query fingerprints; id lookup."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .hamming import emit
from .jaccard import lower_bound
from .popcount import popcount64
from .prange import PRANGE_ONLY
from .table_keys import ONE, is_owner, row_key


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
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
    rmask = (ONE << rb) - ONE
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
                emask = ((ONE << np.uint64(extra_bits[tb])) - ONE) << rb
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
                        c = emit(out_q, out_s, out_d, base, cap, c, qi, slot, d)
        counts[t] = c
    return out_q, out_s, out_d, counts


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def lookup_ids(id_sorted, id_slot, alive, ids, out):
    """For each id, a live slot holding it (``out`` entries already >= 0 are kept)."""
    m = id_sorted.shape[0]
    for qi in prange(ids.shape[0]):
        if out[qi] >= 0:
            continue
        value = ids[qi]
        a = lower_bound(id_sorted, 0, m, value)
        while a < m and id_sorted[a] == value:
            if alive[id_slot[a]]:
                out[qi] = id_slot[a]
                break
            a += 1
    return out
