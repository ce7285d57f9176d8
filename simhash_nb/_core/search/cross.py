"""The cross search of a few new fingerprints against many stored ones, table by table,
without sorting the stored rows (see :mod:`simhash_nb._kernels.cross_tables`)."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from ..._kernels import cross_tables as _ck
from ...config import config
from ..parallel import SLICE_SECONDS, check_cancelled, deferred_interrupt
from .families import TableFamily
from .pace import Pace

_MIN_CHUNK = 1 << 13  # stored rows a task scans, at least
_FIRST_ROWS = 1 << 16  # stored rows of the first slice of a search
_MAX_HASH_BITS = 22


def hash_bits_for(m: int, key_bits: int) -> int:
    """Bits of the hash that indexes the new rows: two more than ``log2(m)`` and four
    more than the key's own bits, whichever is fewer (hash collisions between distinct
    keys then add under a quarter of a row to each stored row's run), at most 22."""
    rows_bits = (max(m, 2) - 1).bit_length() + 2
    return int(max(1, min(_MAX_HASH_BITS, key_bits + 4, rows_bits)))


def steps_for(m: int, key_bits: int, hash_bits: int) -> int:
    """Steps of eight new rows a stored row tests without a branch: 4 where its run of
    new rows (``m`` over the keys or hashes, whichever are fewer) is a dozen rows or
    more, else 1."""
    return 4 if m >= 12 * 2 ** min(key_bits, hash_bits) else 1


def wave_width(m: int, words: int, hash_bits: int, n_tables: int,
               memory_bytes: int | None = None) -> int:
    """Tables indexed side by side: as many as threads, within ``memory_bytes``
    (default ``config["search_memory_bytes"]``)."""
    per_table = (m + _ck.PAD) * (4 + 8 * words) + 4 * ((1 << hash_bits) + 1)
    if memory_bytes is None:
        memory_bytes = int(config["search_memory_bytes"])
    fit = max(1, int(memory_bytes) // per_table)
    return max(1, min(numba.get_num_threads(), n_tables, fit))


def cross_waves(new_words: np.ndarray, stored_words: np.ndarray, family: TableFamily, k: int,
                progress=None, memory_bytes: int | None = None):
    """Pairs ``(i, j)`` of a row ``i`` of ``new_words`` and a row ``j`` of
    ``stored_words`` within Hamming distance ``k`` that share the key of a table of
    ``family``, yielded table by table as ``(i, j, d)``.

    Per table only the new rows are ordered (by a hash of their key); the stored rows
    are scanned in place, in parallel chunks, each looking up the new rows with its
    key: the cost is linear in the stored rows, with no sort of them. Each pair comes
    once over all tables, from its owner: the first table of the family whose key it
    matches (the block rule for pigeonhole families). The pairs are exactly the key
    matches within ``k``: the set of :func:`~simhash_nb._core.search.dense.dense_waves`
    over the concatenated rows with ``n_left = len(new_words)``, and of
    ``candidate_waves(new, opts, against=stored)`` for the same family.

    Parameters
    ----------
    new_words : ndarray of uint64, shape (m, words)
        The new fingerprints, ``words`` 1 (64-bit) or 2 (128-bit, low word first).
    stored_words : ndarray of uint64, shape (n, words)
        The stored fingerprints, as wide.
    family : TableFamily
        The tables (e.g. :func:`~simhash_nb._core.search.families.sampled`).
    k : int
        Largest distance kept (inclusive).
    progress : callable, optional
        Called with the number of tables done after each wave of tables.
    memory_bytes : int, optional
        Memory for the new rows' tables held side by side (default
        ``config["search_memory_bytes"]``).

    Yields
    ------
    i, j, d : ndarray of int64, int64, uint8
        Rows of ``new_words``, rows of ``stored_words``, their distances. Tables
        without pairs yield nothing.

    Notes
    -----
    Cost per table: one pass over the stored rows (a hash, an in-cache ordering of
    batches of 16k rows by hash, a lookup) plus the tests of their candidates, about
    ``m / 2**key_bits`` new rows each, eight a step. Measured at 1.6M stored and 200k
    new 128-bit rows on one thread: 11 ns a stored row and table without candidates,
    about 0.3 ns more per candidate (see :func:`~simhash_nb._core.candidates.cross_design`,
    which weighs the two).

    Examples
    --------
    >>> import numpy as np
    >>> from simhash_nb._core.search.families import pigeonhole
    >>> new = np.array([[0], [2**40 - 1]], dtype=np.uint64)
    >>> stored = np.array([[1], [0], [2**63]], dtype=np.uint64)
    >>> waves = cross_waves(new, stored, pigeonhole(64, 2, 4), 2)
    >>> sorted((int(i), int(j), int(d)) for w in waves for i, j, d in zip(*w))
    [(0, 0, 1), (0, 1, 0), (0, 2, 1)]
    """
    new, stored = _checked_rows(new_words, stored_words)
    m, n = new.shape[0], stored.shape[0]
    if m == 0 or n == 0 or family.n_tables == 0:
        return
    plan = _CrossPlan.make(new, family, k, memory_bytes)
    cap = int(config["pairs_initial_capacity"])
    pace = Pace(_FIRST_ROWS, SLICE_SECONDS)  # stored rows a call, sized by time
    for start in range(0, family.n_tables, plan.width):
        tables = np.arange(start, min(start + plan.width, family.n_tables), dtype=np.int64)
        with deferred_interrupt():  # see parallel.deferred_interrupt
            _ck.index_new(new, tables, plan.masks, plan.mults, plan.hash_bits, plan.rows,
                          plan.v, plan.starts)
        held: list[list] = [[] for _ in range(tables.shape[0])]
        for lo, hi in pace.ranges(n):  # Ctrl-C is answered between two slices of rows
            check_cancelled()  # a run_ahead producer whose caller stopped ends here
            cap = _scan_rows(plan, stored, lo, hi, tables, cap, held)
        for got in held:
            if got:
                yield tuple(np.concatenate(x) for x in zip(*got, strict=True))
        if progress is not None:
            progress(tables.shape[0])


def _scan_rows(plan: _CrossPlan, stored, lo: int, hi: int, tables, cap: int, held) -> int:
    """Scan stored rows ``[lo, hi)`` under ``tables`` (indexed), in parallel chunks: four
    tasks a thread over the wave, of at least ``_MIN_CHUNK`` rows; append each table's
    pairs to ``held[w]`` (stored rows as rows of ``stored``). Returns the room for a
    task of the next slice."""
    w_n = tables.shape[0]
    threads = numba.get_num_threads()
    chunks = int(max(1, min(-(-4 * threads // w_n), (hi - lo) // _MIN_CHUNK)))
    parts = _scan(plan, stored[lo:hi], tables, chunks, cap)
    for w in range(w_n):
        got = [(i, j + lo, d) for i, j, d in parts[w * chunks:(w + 1) * chunks] if i.shape[0]]
        held[w].extend(got)
        cap = max(cap, int(1.25 * max((p[0].shape[0] for p in got), default=0)))
    return cap


def _checked_rows(new_words, stored_words) -> tuple[np.ndarray, np.ndarray]:
    """Both sides as contiguous ``uint64[rows, words]`` of one width; refused otherwise."""
    new = np.ascontiguousarray(new_words, dtype=np.uint64)
    stored = np.ascontiguousarray(stored_words, dtype=np.uint64)
    if new.ndim != 2 or stored.ndim != 2 or new.shape[1] != stored.shape[1] or (
            new.shape[1] not in (1, 2)):
        raise ValueError("new_words and stored_words must be uint64[n, words] alike, words 1 or 2")
    if max(new.shape[0], stored.shape[0]) >= 2**31:
        raise ValueError("cross_waves handles fewer than 2**31 rows a side")
    return new, stored


@dataclasses.dataclass
class _CrossPlan:
    """The tables of a family as the kernels take them, and the buffers of one wave."""

    masks: np.ndarray
    mults: np.ndarray
    hash_bits: int
    steps: int
    width: int
    k: int
    mw0: np.ndarray  # the masks word-major, padded (owner rule)
    mw1: np.ndarray
    block_masks: np.ndarray
    sels: np.ndarray
    rows: np.ndarray
    v: np.ndarray
    starts: np.ndarray

    @classmethod
    def make(cls, new: np.ndarray, family: TableFamily, k: int, memory_bytes) -> _CrossPlan:
        m, words = new.shape
        n_tables = family.n_tables
        masks = np.ascontiguousarray(family.masks, dtype=np.uint64)
        key_bits = int(max(bin(int(a)).count("1") + bin(int(b)).count("1") for a, b in masks))
        hash_bits = hash_bits_for(m, key_bits)
        width = wave_width(m, words, hash_bits, n_tables, memory_bytes)
        mw0 = np.zeros(n_tables + _ck.PAD, dtype=np.uint64)
        mw1 = np.zeros(n_tables + _ck.PAD, dtype=np.uint64)
        mw0[:n_tables] = masks[:, 0]
        mw1[:n_tables] = masks[:, 1]
        return cls(
            masks, np.ascontiguousarray(family.mults, dtype=np.uint64), hash_bits,
            steps_for(m, key_bits, hash_bits), width, k, mw0, mw1,
            np.ascontiguousarray(family.block_masks, dtype=np.uint64),
            np.ascontiguousarray(family.sels, dtype=np.int64),
            np.empty((width, m), dtype=np.uint32),
            np.zeros((width, words, m + _ck.PAD), dtype=np.uint64),
            np.empty((width, (1 << hash_bits) + 1), dtype=np.int32),
        )


def _scan(plan: _CrossPlan, stored, tables, chunks, cap):
    """Run every (table, chunk) task of a wave; tasks over ``cap`` pairs run again with
    room for all of theirs. Returns each task's ``(i, j, d)``, in task order."""
    n_tasks = tables.shape[0] * chunks
    tasks = np.arange(n_tasks, dtype=np.int64)
    base = tasks * cap
    room = np.full(n_tasks, cap, dtype=np.int64)
    left, right, dist, counts = _run(plan, stored, tables, chunks, tasks, base, room)
    parts = [(left[s:s + c], right[s:s + c], dist[s:s + c])
             for s, c in zip(base.tolist(), np.minimum(counts, cap).tolist(), strict=True)]
    redo = np.flatnonzero(counts > cap)
    if redo.size:
        r_room = counts[redo]
        r_base = np.concatenate([[0], np.cumsum(r_room)[:-1]]).astype(np.int64)
        again = _run(plan, stored, tables, chunks, redo.astype(np.int64), r_base, r_room)
        for q, s, c in zip(redo.tolist(), r_base.tolist(), r_room.tolist(), strict=True):
            parts[q] = (again[0][s:s + c], again[1][s:s + c], again[2][s:s + c])
    return parts


def _run(plan: _CrossPlan, stored, tables, chunks, tasks, base, room):
    size = int((base + room).max(initial=0))
    left = np.empty(size, dtype=np.int64)
    right = np.empty(size, dtype=np.int64)
    dist = np.empty(size, dtype=np.uint8)
    counts = np.zeros(tasks.shape[0], dtype=np.int64)
    with deferred_interrupt():  # Ctrl-C waits for the wave (see parallel.deferred_interrupt)
        _ck.scan_stored(stored, tables, plan.masks, plan.mults, plan.hash_bits, plan.rows,
                        plan.v, plan.starts, plan.k, plan.steps, plan.mw0, plan.mw1,
                        plan.block_masks, plan.sels, chunks, tasks, base, room, left, right,
                        dist, counts)
    return left, right, dist, counts
