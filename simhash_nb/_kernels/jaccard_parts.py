"""Exact Jaccard of document pairs whose shingles lie in separate parts.

A store that keeps its batches apart (each a CSR: local ``offsets``, ``hashes``) names
a document by its part and its row in it. One parallel pass over all pairs, whatever
parts they join, replaces a kernel launch per pair of parts (hundreds a wave with a
few dozen batches, each launch waking the thread pool for a handful of pairs).
"""

from __future__ import annotations

from numba import njit, prange
from numba.typed import List

from .jaccard import jaccard_between_at_least
from .prange import PRANGE_ONLY
from .signatures import read_only


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def parts_similarities_above(offsets, hashes, part_i, row_i, part_j, row_j, threshold, out):
    """``out[p]`` = Jaccard of row ``row_i[p]`` of part ``part_i[p]`` and row
    ``row_j[p]`` of part ``part_j[p]`` where it is ``>= threshold``, else -1
    (:func:`~simhash_nb._kernels.jaccard.jaccard_between_at_least`: the filters and
    value of ``jaccard_at_least``).
    ``offsets``, ``hashes``: typed lists of the parts' CSR arrays."""
    for p in prange(out.shape[0]):
        a = part_i[p]
        b = part_j[p]
        out[p] = jaccard_between_at_least(offsets[a], hashes[a], row_i[p], offsets[b],
                                          hashes[b], row_j[p], threshold)
    return out


@njit(cache=True, nogil=True)
def _first_part(a):
    parts = List()
    parts.append(a)
    return parts


@njit(cache=True, nogil=True)
def _next_part(parts, a):
    parts.append(a)


def typed_parts(arrays):
    """The arrays (one dtype, at least one) as a Numba typed list for
    :func:`parts_similarities_above`, built by cached kernels: ``numba.typed.List(...)``
    compiles its methods again in every process (about a second).

    Examples
    --------
    >>> import numpy as np
    >>> parts = typed_parts([np.arange(3), np.arange(2)])
    >>> [p.tolist() for p in parts]
    [[0, 1, 2], [0, 1]]
    """
    # read-only throughout (a spilled store's pages, a caller's arrays): one list type
    parts = _first_part(read_only(arrays[0]))
    for a in arrays[1:]:
        _next_part(parts, read_only(a))
    return parts
