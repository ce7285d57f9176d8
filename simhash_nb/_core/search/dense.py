"""The dense-table search: waves of tables whose entries carry the fingerprint (see
:mod:`simhash_nb._kernels.dense_tables`), for pigeonhole tables at large ``k`` and for
sampled (recall-controlled) tables."""

from __future__ import annotations

import time

import numba
import numpy as np

from ..._kernels import dense_tables as _dk
from ...config import config
from ..parallel import SLICE_SECONDS, check_cancelled, deferred_interrupt
from .collector import Collector
from .families import TableFamily
from .pace import Pace

_HIST = 1 << 11  # radix digits of at most 11 bits: sort keys of at most 22 bits


def sort_bits_for(n_rows: int, key_bits: int = 64) -> int:
    """Bits of the hashed sort key: a few more than log2(rows) and than the key's own
    bits (4: hash collisions between distinct keys add a few percent of candidates; 3
    measured 5-15% slower at 10M rows and 16-bit keys, 5 slower again for its wider
    partition), at most 22 (a partition on at most 11 bits, then an in-cache sort of
    each group on at most 11 more)."""
    rows_bits = (max(n_rows, 2) - 1).bit_length() + 2
    cap = 19 if n_rows < 1 << 22 else 22  # 19: an 8-bit partition (see top_bits_for)
    return int(min(cap, key_bits + 4, max(2, rows_bits)))


def top_bits_for(sort_bits: int) -> int:
    """Bits of the partition pass: 8 (256 groups, few enough write streams for the
    caches; measured faster than 11), more only where the groups' sort would need over
    11 bits."""
    return max(sort_bits - 11, min(sort_bits, 8))


class DenseWork:
    """Per-lane work arrays: entries, fingerprints, scratch; histograms for each lane
    or each thread (``slots``, when threads share a lane's table)."""

    def __init__(self, n: int, words: int, lanes: int, slots: int | None = None):
        slots = max(lanes, slots or 0)
        self.kr = np.empty((lanes, n), dtype=np.uint32)
        self.fp = np.zeros((lanes, words, n + _dk.PAD), dtype=np.uint64)
        self.kr_tmp = np.empty((lanes, n), dtype=np.uint32)
        self.fp_tmp = np.zeros((lanes, words, n + _dk.PAD), dtype=np.uint64)
        self.h_lo = np.empty((slots, _HIST), dtype=np.int64)
        self.h_hi = np.empty((slots, _HIST), dtype=np.int64)

    def args(self):
        return self.kr, self.fp, self.kr_tmp, self.fp_tmp, self.h_lo, self.h_hi


def lanes_for(n: int, words: int, n_tables: int, memory_bytes: int | None = None) -> int:
    """Tables sorted side by side: one per thread, within ``memory_bytes`` (default
    ``config["search_memory_bytes"]``)."""
    per_lane = (max(1, n) + _dk.PAD) * (8 + 16 * words)
    if memory_bytes is None:
        memory_bytes = int(config["search_memory_bytes"])
    fit = max(1, int(memory_bytes) // per_lane)
    return max(1, min(numba.get_num_threads(), n_tables, fit))


def dense_search(fps: np.ndarray, n_left: int, family: TableFamily, k: int, wa, wb,
                 limit: int, progress=None, tables: np.ndarray | None = None,
                 keep=None) -> Collector:
    """Pairs among the rows of ``fps`` (``uint64[n, words]``; self-join when
    ``n_left < 0``, else rows below ``n_left`` against the rest) found by the tables of
    ``family``, each once; ``sum wa[i] * wb[j]`` counted, pairs kept while it stays
    within ``limit`` (as :class:`~simhash_nb._core.search.engine.Collector`).

    ``tables`` (default: all) lists the tables to run; pairs are still owned by the
    family's rule over all its tables. Tables run in waves
    (``config["dense_tables_per_wave"]`` per thread); ``progress``, if given, is called
    with the number of tables done after each wave. ``keep``, if given, filters each
    wave's pairs as they come (see :class:`Collector`).
    """
    got = Collector(limit, keep)
    for part in _parts(fps, n_left, family, k, wa, wb, got, progress, tables,
                       filtered=keep is not None):
        got.take(part)
    return got


def dense_waves(fps: np.ndarray, n_left: int, family: TableFamily, k: int,
                progress=None, tables: np.ndarray | None = None,
                memory_bytes: int | None = None):
    """The pairs of :func:`dense_search` (unweighted, no limit), yielded table by table
    as ``(u, v, d)`` as the search finds them: a consumer that filters them holds only
    one table's candidates at a time. The tables sorted side by side fit
    ``memory_bytes`` (see :func:`lanes_for`).

    Examples
    --------
    >>> import numpy as np
    >>> from simhash_nb._core.search.families import pigeonhole
    >>> fps = np.array([[0], [1], [2**40 - 1]], dtype=np.uint64)
    >>> [(u.tolist(), v.tolist()) for u, v, _ in dense_waves(fps, -1, pigeonhole(64, 2, 4), 2)]
    [([0], [1])]
    """
    none = np.empty(0, dtype=np.int64)
    got = Collector(2**62)
    yield from _parts(fps, n_left, family, k, none, none, got, progress, tables,
                      filtered=True, memory_bytes=memory_bytes)


def _parts(fps, n_left, family: TableFamily, k: int, wa, wb, got: Collector, progress,
           tables, *, filtered: bool, memory_bytes: int | None = None):
    """The wave loop of the dense search: yields each table's pairs ``(u, v, d)`` while
    ``got`` (which counts them) is not over its limit."""
    n, words = fps.shape
    todo = np.arange(family.n_tables, dtype=np.int64) if tables is None else np.asarray(
        tables, dtype=np.int64)
    if n < 2 or todo.shape[0] == 0:
        return
    lanes = lanes_for(n, words, todo.shape[0], memory_bytes)
    key_bits = int(max(bin(int(a)).count("1") + bin(int(b)).count("1") for a, b in family.masks))
    s = _Search(fps, n_left, family, sort_bits_for(n, key_bits), k, wa, wb, lanes)
    cap = int(config["pairs_initial_capacity"])
    # a filtered search holds its candidates until they are filtered: one table a lane.
    # The first wave runs one table a lane too, to size the output of the next waves
    # from the pairs a table found (a wave whose pairs do not fit runs again).
    # Waves also stay short (SLICE_SECONDS, from the time a table took) for Ctrl-C; a
    # wave of one table a lane runs its tables' groups a timed slice a call (a table
    # alone can take seconds).
    per_lane = 1 if filtered else int(config["dense_tables_per_wave"])
    start, fit = 0, per_lane
    while start < todo.shape[0]:
        many = min(per_lane, fit) if start else 1
        tables = todo[start:start + lanes * many]
        start += tables.shape[0]
        began = time.perf_counter()
        if many == 1:
            counts, weighted, parts = _sliced_wave(s, tables, cap, got)
        else:
            counts, weighted, parts = _whole_wave(s, tables, 0 if got.over else cap, got)
        per_table = (time.perf_counter() - began) * lanes / tables.shape[0]
        fit = max(1, int(SLICE_SECONDS / max(per_table, 1e-6)))
        got.weighted += int(weighted.sum())
        got.total += int(counts.sum())
        if not got.over:
            yield from parts
            # room for a wave of tables like the largest so far, and a quarter more
            cap = max(cap, int(1.25 * per_lane * int(counts.max(initial=0))))
        if progress is not None:
            progress(int(tables.shape[0]))


class _Search:
    """What every wave of one dense search takes: the rows, the tables' family, the
    sort's bits, the work arrays, and the pace of the sliced waves."""

    def __init__(self, fps, n_left, family: TableFamily, sort_bits: int, k: int, wa, wb,
                 lanes: int):
        self.fps, self.n_left, self.family, self.k = fps, n_left, family, k
        self.wa, self.wb, self.lanes = wa, wb, lanes
        self.threads = numba.get_num_threads()
        self.sort_bits, self.top_bits = sort_bits, top_bits_for(sort_bits)
        self.work = DenseWork(fps.shape[0], fps.shape[1], lanes, self.threads)
        self.n_groups = 1 << self.top_bits
        self.bounds = np.empty((lanes, self.n_groups + 1), dtype=np.int64)
        self.pace = Pace(max(1, fps.shape[0] * _dk.ROW_WORK // 32))  # work a lane a call
        self.density = 0.0  # most pairs a lane found per unit of work, so far

    def partition(self, tables) -> None:
        """Each table into its lane's arrays: a table a thread, or, in a wave of fewer
        tables than threads, every thread on each table in turn."""
        f, w = self.family, self.work
        with deferred_interrupt():  # see parallel.deferred_interrupt
            if tables.shape[0] >= self.threads:
                _dk.partition_lanes(self.fps, tables, f.masks, f.mults, self.sort_bits,
                                    self.top_bits, w.kr, w.fp, w.h_hi, self.bounds)
                return
            for lane, t in enumerate(tables):
                _dk.partition_chunks(self.fps, f.masks[t], f.mults[t], self.sort_bits,
                                     self.top_bits, w.kr[lane], w.fp[lane],
                                     w.h_hi[:self.threads], self.bounds[lane])

    def slots(self, n_tables: int):
        """``(lane_of, pos, stop)``: the scan's slots, a lane each, or, in a wave of
        fewer tables than threads, each lane's groups cut into ``threads // n_tables``
        ranges of about equal rows (see :func:`~simhash_nb._kernels.dense_tables.scan_groups`)."""
        per = max(1, self.threads // n_tables)
        lane_of = np.repeat(np.arange(n_tables, dtype=np.int64), per)
        n = self.fps.shape[0]
        cuts = [np.searchsorted(self.bounds[lane], n * np.arange(1, per) / per)
                for lane in range(n_tables)]
        pos = np.concatenate([np.concatenate([[0], c]) for c in cuts]).astype(np.int64)
        stop = np.concatenate([np.concatenate([c, [self.n_groups]]) for c in cuts])
        return lane_of, pos, stop.astype(np.int64)

    def scan(self, tables, slots, room: int):
        f, w = self.family, self.work
        lane_of, pos, stop = slots
        with deferred_interrupt():  # see parallel.deferred_interrupt
            return _dk.scan_groups(lane_of, pos, stop, self.budget, self.n_left, tables,
                                   f.masks, f.mults, self.sort_bits, self.top_bits,
                                   f.block_masks, f.sels, self.k, self.wa, self.wb, room,
                                   w.kr, w.fp, w.kr_tmp, w.fp_tmp, w.h_lo, self.bounds)

    @property
    def budget(self) -> int:
        """Work a lane does a call (a row counts ``ROW_WORK``, a candidate 1)."""
        return self.pace.size

    def paced(self, work: int, seconds: float) -> None:
        """The next call's budget, from the work a lane did in ``seconds``."""
        self.pace.record(work, seconds)


def _sliced_wave(s: _Search, tables, cap: int, got: Collector):
    """One table a lane, each lane's groups scanned by its slots (see
    :meth:`_Search.slots`) for a timed budget of work a call (Ctrl-C is answered between
    calls); the same pairs, in the same order, as one call. Returns ``(counts, weighted,
    parts)``: each table's count and weight, and its pairs (one array triple a table
    with pairs), kept only while ``got`` with this wave stays within its limit."""
    s.partition(tables)
    slots = s.slots(tables.shape[0])
    lane_of, pos, stop = slots
    counts = np.zeros(lane_of.shape[0], dtype=np.int64)
    weighted = np.zeros(lane_of.shape[0], dtype=np.int64)
    held: list[list] = [[] for _ in lane_of]
    while (pos < stop).any():
        check_cancelled()  # a run_ahead producer whose caller stopped ends here
        keep = got.weighted + int(weighted.sum()) <= got.limit
        room = max(cap, int(1.25 * s.density * s.budget) + 1) if keep else 0
        began, was = time.perf_counter(), pos.copy()
        left, right, dist, c, w, work = s.scan(tables, slots, room)
        most = int(c.max(initial=0))
        if keep and most > room:  # a slot's pairs did not fit: the call again, room for all
            pos[:], room = was, most
            left, right, dist, c, w, work = s.scan(tables, slots, room)
        s.paced(int(work.max()), time.perf_counter() - began)
        s.density = max(s.density, float((c / np.maximum(work, 1)).max()))
        counts += c
        weighted += w
        for slot in (np.flatnonzero(c) if keep else ()):
            b, e = slot * room, slot * room + int(c[slot])
            # copies: a view would hold the whole call's output buffer
            held[slot].append((left[b:e].copy(), right[b:e].copy(), dist[b:e].copy()))
    table_counts = np.zeros(tables.shape[0], dtype=np.int64)
    table_weighted = np.zeros(tables.shape[0], dtype=np.int64)
    np.add.at(table_counts, lane_of, counts)
    np.add.at(table_weighted, lane_of, weighted)
    if got.weighted + int(weighted.sum()) > got.limit:
        return table_counts, table_weighted, []
    parts = []
    for lane in range(tables.shape[0]):  # a lane's slots in order: its groups in order
        h = [x for slot in np.flatnonzero(lane_of == lane) for x in held[slot]]
        if h:
            parts.append(h[0] if len(h) == 1
                         else tuple(np.concatenate(x) for x in zip(*h, strict=True)))
    return table_counts, table_weighted, parts


def _whole_wave(s: _Search, tables, cap: int, got: Collector):
    """Several tables a lane, each sorted and scanned whole in one call (tables that take
    well under a second); tables whose pairs did not fit run again. Returns as
    :func:`_sliced_wave`."""
    left, right, dist, counts, weighted, where = _run(s, tables, cap)
    if cap == 0 or got.weighted + int(weighted.sum()) > got.limit:
        return counts, weighted, []
    parts = list(_slices(left, right, dist, counts, where))
    redo = tables[(where < 0) & (counts > 0)]
    if redo.size:  # those tables again, with room for all their pairs
        room = int(counts[(where < 0) & (counts > 0)].sum())
        again = _run(s, redo, room)
        parts += list(_slices(again[0], again[1], again[2], again[3], again[5]))
    return counts, weighted, parts


def _run(s: _Search, tables, cap):
    f = s.family
    with deferred_interrupt():  # Ctrl-C waits for the wave (see parallel.deferred_interrupt)
        return _dk.search_dense(
            s.fps, s.n_left, tables, f.masks, f.mults, s.sort_bits, s.top_bits,
            f.block_masks, f.sels, s.k, s.wa, s.wb, s.lanes, cap, *s.work.args(),
        )


def _slices(left, right, dist, counts, where):
    for w in np.flatnonzero((where >= 0) & (counts > 0)):
        s = int(where[w])
        e = s + int(counts[w])
        # copies: a view would hold the whole wave's output buffer
        yield left[s:e].copy(), right[s:e].copy(), dist[s:e].copy()
