"""Identical fingerprints: merge equal rows before the search, expand pairs after."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

import numba
import numpy as np

from ..._kernels import tables as _tk
from ...config import config
from ..parallel import deferred_interrupt, threads
from .layout import Layout, Work, sort_table, task_count

# Totals of output pairs below which :func:`expand_pairs` and :func:`identical_rows`
# expand with numpy (the same arrays, in the same order): a small first call on a cold
# cache compiles no parallel kernel for them (not a config key: config.py is shared).
NUMPY_EXPAND_PAIRS = 2**16

# --- identical fingerprints -------------------------------------------------------------


@dataclasses.dataclass
class Groups:
    """Identical rows merged: distinct row ``u`` stands for ``rows[ptr[u]:ptr[u+1]]``.

    Distinct rows are numbered in order of their first occurrence. When no row repeats,
    ``first`` is None and distinct rows are the rows themselves.
    """

    n: int
    n_distinct: int
    first: np.ndarray | None = None
    inverse: np.ndarray | None = None
    ptr: np.ndarray | None = None
    rows: np.ndarray | None = None
    counts: np.ndarray | None = None

    @property
    def has_duplicates(self) -> bool:
        return self.first is not None

    def distinct(self, fps: np.ndarray) -> np.ndarray:
        return fps if self.first is None else fps[self.first]

    def weights(self) -> np.ndarray:
        return np.empty(0, dtype=np.int64) if self.counts is None else self.counts

    def identical_pairs(self) -> int:
        if self.counts is None:
            return 0
        c = self.counts
        return int((c * (c - 1) // 2).sum())


@contextlib.contextmanager
def threads_for(rows: int) -> Iterator[None]:
    """One thread for small inputs, where starting parallel regions costs more than it
    saves (and much more on a machine whose cores are busy)."""
    if rows < config["parallel_min_rows"] and numba.get_num_threads() > 1:
        with threads(1):
            yield
    else:
        yield

def whole_layout(bits: int) -> Layout:
    """One table keyed by the whole fingerprint."""
    return Layout.make(bits, 0, bits // 64)


def group_identical(fps: np.ndarray, work: Work | None = None) -> Groups:
    """Merge identical rows of a ``uint64[n, words]`` array in linear time (Ctrl-C is
    held until it returns, see :func:`~simhash_nb._core.parallel.deferred_interrupt`)."""
    with deferred_interrupt():
        return _group_identical(fps, work)


def _group_identical(fps: np.ndarray, work: Work | None = None) -> Groups:
    """Merge identical rows of a ``uint64[n, words]`` array in linear time.

    Sorts a hash of each fingerprint (radix sort) and splits the runs of equal hashes.
    """
    n = fps.shape[0]
    if n < 2:
        return Groups(n, n)
    if n < config["numpy_group_rows"]:
        return _group_identical_numpy(fps)
    layout = whole_layout(fps.shape[1] * 64)
    work = (work or Work(n)).fit(n)
    plan = layout.plan(n)
    sorted_ = sort_table(fps, layout, 0, plan, work.buf[:n], work.tmp[:n])
    rb = plan.row_bits
    rep = np.empty(0, dtype=np.int64)
    n_distinct = int(_tk.group_identical(sorted_, rb, fps, task_count(n), False, rep))
    if n_distinct == n:
        return Groups(n, n)
    rep = np.empty(n, dtype=np.int64)
    _tk.group_identical(sorted_, rb, fps, task_count(n), True, rep)
    return _from_representatives(rep, n_distinct, _tk.group_members)


def _from_representatives(rep: np.ndarray, n_distinct: int, members) -> Groups:
    """Groups from each row's representative (the first row equal to it); ``members``
    makes the CSR of the rows of each group from ``(inverse, n_distinct)``."""
    n = rep.shape[0]
    is_first = rep == np.arange(n)
    first = np.flatnonzero(is_first)
    uid = np.cumsum(is_first, dtype=np.int64) - 1
    inverse = uid[rep]
    ptr, rows = members(inverse, n_distinct)
    return Groups(n, n_distinct, first, inverse, ptr, rows, np.diff(ptr))

def _group_identical_numpy(fps: np.ndarray) -> Groups:
    """:func:`_group_identical` with numpy's stable sort: the same groups, numbered the
    same way, and no kernel to compile (small inputs, a first call on a cold cache)."""
    n = fps.shape[0]
    order = np.lexsort(fps.T[::-1])  # stable: equal rows keep their order
    ordered = fps[order]
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=starts[1:])
    n_distinct = int(starts.sum())
    if n_distinct == n:
        return Groups(n, n)
    rep = np.empty(n, dtype=np.int64)
    rep[order] = order[np.flatnonzero(starts)][np.cumsum(starts) - 1]
    return _from_representatives(rep, n_distinct, _members_numpy)


def _members_numpy(inverse: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """``_tk.group_members`` with numpy: rows of each group, ascending, as CSR."""
    ptr = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(inverse, minlength=n_groups), out=ptr[1:])
    return ptr, np.argsort(inverse, kind="stable").astype(np.int64)


def weigh(idx, w):
    return np.ones(idx.shape[0], dtype=np.int64) if w.shape[0] == 0 else w[idx]

def expand_pairs(u, v, d, ga: Groups, gb: Groups, self_join: bool):
    """Pairs of distinct rows -> pairs of original rows."""
    if not ga.has_duplicates and not gb.has_duplicates:
        return u, v, d
    ca = weigh(u, ga.weights())
    cb = weigh(v, gb.weights())
    sizes = ca * cb
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    total = int(offsets[-1])
    pa = group_csr(ga)
    pb = group_csr(gb)
    if total < NUMPY_EXPAND_PAIRS:
        return _expand_pairs_numpy(u, v, d, pa, pb, cb, sizes, self_join)
    out_i = np.empty(total, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    out_d = np.empty(total, dtype=np.uint8)
    with deferred_interrupt():  # see deferred_interrupt: a kernel call must finish
        _tk.expand_pairs(u, v, d, *pa, *pb, offsets[:-1], self_join, out_i, out_j, out_d)
    return out_i, out_j, out_d


def group_csr(g: Groups):
    if g.has_duplicates:
        return g.ptr, g.rows
    return np.arange(g.n + 1, dtype=np.int64), np.arange(g.n, dtype=np.int64)


def identical_rows(g: Groups):
    """All pairs inside groups of identical rows (distance 0)."""
    if not g.has_duplicates:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
    big = np.flatnonzero(g.counts > 1)
    c = g.counts[big]
    offsets = np.concatenate(([0], np.cumsum(c * (c - 1) // 2))).astype(np.int64)
    total = int(offsets[-1])
    if total < NUMPY_EXPAND_PAIRS:
        return _expand_groups_numpy(big, g.ptr, g.rows, c, total)
    out = (np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.uint8))
    with deferred_interrupt():  # see deferred_interrupt: a kernel call must finish
        _tk.expand_groups(big, g.ptr, g.rows, offsets[:-1], *out)
    return out


def _segments(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segments of ``sizes`` laid end to end: each slot's segment and place in it."""
    sizes = sizes.astype(np.int64, copy=False)
    p = np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
    return p, np.arange(p.shape[0], dtype=np.int64) - (np.cumsum(sizes) - sizes)[p]


def _expand_pairs_numpy(u, v, d, pa, pb, cb, sizes, self_join: bool):
    """``_tk.expand_pairs`` with numpy: for each pair ``p`` of groups, rows of group
    ``u[p]`` (outer) x rows of group ``v[p]`` (inner); ``i < j`` when ``self_join``."""
    p, w = _segments(sizes)
    a = pa[1][pa[0][u[p]] + w // cb[p]]
    b = pb[1][pb[0][v[p]] + w % cb[p]]
    if self_join:
        a, b = np.minimum(a, b), np.maximum(a, b)
    return a.astype(np.int64, copy=False), b.astype(np.int64, copy=False), d[p].astype(np.uint8)


def _expand_groups_numpy(big, ptr, rows, c, total: int):
    """``_tk.expand_groups`` with numpy: the pairs ``x < y`` of places in each group,
    ``x`` (outer) then ``y`` ascending, as rows; distance 0."""
    g, k = _segments(c)
    x = ptr[big[g]] + k  # each place, followed by c - k - 1 partners in its group
    q, m = _segments(c[g] - k - 1)
    return rows[x[q]], rows[x[q] + 1 + m], np.zeros(total, dtype=np.uint8)
