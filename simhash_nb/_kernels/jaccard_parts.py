"""Exact Jaccard of document pairs whose shingles lie in separate parts.

A store that keeps its batches apart (each a CSR: local ``offsets``, ``hashes``) names
a document by its part and its row in it. One parallel pass over all pairs, whatever
parts they join, replaces a kernel launch per pair of parts (hundreds a wave with a
few dozen batches, each launch waking the thread pool for a handful of pairs).
"""

from __future__ import annotations

from numba import njit, prange

from .jaccard import count_between_at_least

_SLACK = 1e-9  # rounding tolerance of the size and count filters (as in jaccard.py)


@njit(inline="always", cache=True)
def run_jaccard_above(ha, a0, a1, hb, b0, b1, threshold):
    """Jaccard of the sorted distinct runs ``ha[a0:a1]`` and ``hb[b0:b1]`` where it is
    ``>= threshold``, else -1: the size filter, then a merge that stops once the
    intersection cannot reach ``t (|A| + |B|) / (1 + t)``. Two empty runs are alike."""
    sa = a1 - a0
    sb = b1 - b0
    total = sa + sb
    if total == 0:
        return 1.0
    if min(sa, sb) < threshold * max(sa, sb) * (1.0 - _SLACK):
        return -1.0
    need = int(threshold * total / (1.0 + threshold) * (1.0 - _SLACK))
    inter = count_between_at_least(ha, a0, a1, hb, b0, b1, need)
    if inter < 0:
        return -1.0
    sim = inter / (total - inter)
    return sim if sim >= threshold else -1.0


@njit(parallel=True, cache=True, nogil=True)
def parts_similarities_above(offsets, hashes, part_i, row_i, part_j, row_j, threshold, out):
    """``out[p]`` = Jaccard of row ``row_i[p]`` of part ``part_i[p]`` and row
    ``row_j[p]`` of part ``part_j[p]`` where it is ``>= threshold``, else -1.
    ``offsets``, ``hashes``: typed lists of the parts' CSR arrays."""
    for p in prange(out.shape[0]):
        oa = offsets[part_i[p]]
        ob = offsets[part_j[p]]
        x = row_i[p]
        y = row_j[p]
        out[p] = run_jaccard_above(hashes[part_i[p]], oa[x], oa[x + 1],
                                   hashes[part_j[p]], ob[y], ob[y + 1], threshold)
    return out
