"""Blocks of candidate pairs whose distinct documents fit a byte budget.

A block of pairs is verified from the documents it names, read from the shingle file
once each (one system call a document). Counting each document once, not once a pair,
lets a block hold as many pairs as its distinct documents allow: pairs sorted by their
first document share most of them, and each document read serves all its pairs there.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def block_ends(i, j, need_i, need_j, mark_i, mark_j, block, limit):
    """Cut pairs ``(i[p], j[p])``, in order, into blocks whose distinct documents need at
    most ``limit`` bytes together (a block holds at least one pair).

    ``need_i[p]``, ``need_j[p]``: the bytes of pair ``p``'s two documents.
    ``mark_i``, ``mark_j``: for each document, the last block that counted it (the same
    array when both sides are documents of one store), updated here; the blocks get the
    ids ``block, block + 1, ...``, which must exceed every id in the marks. Returns the
    blocks' ends (exclusive, ascending) and the id after the last block.
    """
    m = i.shape[0]
    ends = np.empty(m, dtype=np.int64)
    nb = 0
    used = 0
    for p in range(m):
        a = need_i[p] if mark_i[i[p]] != block else 0
        b = need_j[p] if mark_j[j[p]] != block else 0
        if used > 0 and used + a + b > limit:
            ends[nb] = p
            nb += 1
            block += 1
            used = 0
            a = need_i[p]
            b = need_j[p]
        mark_i[i[p]] = block
        mark_j[j[p]] = block
        used += a + b
    if m > 0:
        ends[nb] = m
        nb += 1
    return ends[:nb], block + 1
