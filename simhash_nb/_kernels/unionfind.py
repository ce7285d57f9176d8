"""Union-find (disjoint sets) over pair lists.

The root of every set is its smallest element (a union links the larger root under
the smaller), so a component's label is deterministic: its smallest row.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .prange import PRANGE_ONLY


@njit(cache=True, inline="always")
def _find(parent, x):
    # path halving
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(cache=True, inline="always")
def _union(parent, x, y):
    """Join the sets of ``x`` and ``y``: the larger root goes under the smaller."""
    a = _find(parent, x)
    b = _find(parent, y)
    if a < b:
        parent[b] = a
    elif b < a:
        parent[a] = b


@njit(cache=True, nogil=True)
def components(n, i, j):
    """Label of each of ``n`` elements = smallest element of its connected component,
    for the edges ``(i[e], j[e])``."""
    parent = np.arange(n, dtype=np.int64)
    for e in range(i.shape[0]):
        _union(parent, i[e], j[e])
    # parents point to smaller elements, so one forward pass resolves every root
    for x in range(n):
        parent[x] = parent[parent[x]]
    return parent


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def last_of_component(labels):
    """``keep[x]`` is True for the largest element of each component."""
    n = labels.shape[0]
    last = np.full(n, -1, dtype=np.int64)
    for x in range(n):
        last[labels[x]] = x
    keep = np.zeros(n, dtype=np.bool_)
    for x in prange(n):
        keep[x] = last[labels[x]] == x
    return keep


@njit(cache=True, nogil=True)
def unjoined(parent, i, j, lo, hi, out):
    """Write the positions ``e`` in ``[lo, hi)`` whose ``i[e]``, ``j[e]`` are in
    different sets into ``out``; returns their count."""
    c = 0
    for e in range(lo, hi):
        if _find(parent, i[e]) != _find(parent, j[e]):
            out[c] = e
            c += 1
    return c


@njit(cache=True, nogil=True)
def join_where(parent, i, j, todo, ok):
    """Union ``i[e]``, ``j[e]`` for ``e = todo[t]`` where ``ok[t]``; the smaller root
    stays root (as in :func:`components`)."""
    for t in range(todo.shape[0]):
        if ok[t]:
            _union(parent, i[todo[t]], j[todo[t]])


@njit(cache=True, nogil=True)
def resolve(parent):
    """Point every element at its root (parents always point to smaller elements)."""
    for x in range(parent.shape[0]):
        parent[x] = parent[parent[x]]
    return parent
