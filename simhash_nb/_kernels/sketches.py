"""One-permutation MinHash sketches of shingle sets, 64 bits a document, and the count
of their agreeing bins.

A document's shingle hashes fall into 16 bins by their top four bits; bin ``b`` of its
sketch holds ``1 + (m % 15)`` for the smallest hash ``m`` in that bin, or 0 when the
bin is empty (one-permutation hashing, Li, Owen and Zhang 2012, with values cut to four
bits). For two sets with Jaccard ``J``, the smallest hash of a bin over both sets lies
in both with probability ``J`` (the hashes are uniform), and then the bin agrees: the
count of agreeing bins is at least a count of 16 such events. A bin empty in either
sketch counts as agreeing, so an unknown bin never turns a pair away.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .popcount import popcount64
from .prange import PRANGE_ONLY

BINS = 16
_NIBBLES = np.uint64(0x1111111111111111)


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def oph_sketches(indptr, hashes, out):
    """``out[d]``: the sketch of document ``d``'s hashes ``hashes[indptr[d]:indptr[d+1]]``."""
    for d in prange(indptr.shape[0] - 1):
        least = np.full(BINS, np.uint64(0xFFFFFFFFFFFFFFFF))
        seen = 0
        for p in range(indptr[d], indptr[d + 1]):
            h = hashes[p]
            b = np.int64(h >> np.uint64(60))
            seen |= 1 << b
            if h < least[b]:
                least[b] = h
        s = np.uint64(0)
        for b in range(BINS):
            if (seen >> b) & 1:
                s |= (np.uint64(1) + least[b] % np.uint64(15)) << np.uint64(4 * b)
        out[d] = s
    return out


@njit(cache=True, nogil=True, inline="always")
def _zero_nibbles(x):
    """Bit ``4 b`` set where nibble ``b`` of ``x`` is zero."""
    y = x | (x >> np.uint64(1))
    y |= y >> np.uint64(2)
    return ~y & _NIBBLES


@njit(cache=True, nogil=True, inline="always")
def agreeing_bins(a, b):
    """Bins of sketches ``a`` and ``b`` that hold the same value or are empty in either."""
    differ = ~_zero_nibbles(a ^ b) & _NIBBLES
    differ &= ~_zero_nibbles(a) & ~_zero_nibbles(b)
    return BINS - np.int64(popcount64(differ))


@njit(cache=True, nogil=True)
def sketches_agree(sketch_a, sketch_b, least, out):
    """``out[p]``: whether sketches ``sketch_a[p]`` and ``sketch_b[p]`` agree in at least
    ``least`` bins. Serial: a few ns a pair (a wave of a few thousand candidates took
    longer to hand to the threads, busy with the search, than to check)."""
    for p in range(sketch_a.shape[0]):
        out[p] = agreeing_bins(sketch_a[p], sketch_b[p]) >= least
    return out
