"""The search engine, an internal API (index, clusters and distributed use it): tables,
the collector of pairs, brute force, and the search over distinct fingerprints."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from ..._kernels import table_scan as _ts
from ...config import config
from ..hamming import brute_pairs
from ..pairs import Pairs
from ..parallel import deferred_interrupt, timed_slices
from .collector import Collector
from .dense import dense_search
from .design import TableDesign, best_tables, check_count
from .families import pigeonhole, sampled
from .groups import weigh
from .layout import Layout, Plan, Work, mask_bits, sort_table, task_count, top_bits


class TooManyPairsError(ValueError):
    """A pair search would return more pairs than ``max_pairs``.

    A subclass of ``ValueError``; the message gives the count and points to
    :func:`~simhash_nb.clusters` and :func:`~simhash_nb.dedupe`, which group near
    duplicates without listing the pairs. Also raised before a search whose ``k`` is so
    large that random fingerprints alone would give far more than ``max_pairs`` pairs.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> try:
    ...     sh.near_duplicates(np.zeros(3, dtype=np.uint64), k=0, max_pairs=1)
    ... except sh.TooManyPairsError as e:
    ...     print(str(e)[:36])
    near_duplicates would return 3 pairs
    """

def table_search(
    fps, n_left: int, layout: Layout, k: int, wa, wb, limit: int, work,
    *, must_differ: np.ndarray | None = None, depth: int = 0, progress=None,
):
    """Pairs among the rows of ``fps`` (self-join when ``n_left < 0``; else rows below
    ``n_left`` against the rest) with ``sum wa[i] * wb[j]`` counted; pairs are
    materialised only while that sum stays within ``limit``.

    With at least as many tables as threads, whole tables run in parallel (one parallel
    region per wave of tables); otherwise each table is sorted and scanned in parallel.
    Runs with more than ``config["search_big_run_pairs"]`` candidate pairs (a big group
    of fingerprints sharing a key) are searched again on the bits outside the key
    (:func:`refine`) rather than pair by pair. ``must_differ`` and ``depth`` describe
    such a refinement. ``progress``, if given, is called with the number of tables done
    as they complete.
    """
    n = fps.shape[0]
    work = work or Work(n)
    if must_differ is None:
        must_differ = np.zeros((0, fps.shape[1]), dtype=np.uint64)
    plan = layout.plan(n)
    outside = int(layout.widths.sum()) - int(layout.key_widths.max())
    refine = depth < config["search_max_refinements"] and outside >= 2 * (k + 1)
    big_pairs = config["search_big_run_pairs"] if refine else 2**62
    ctx = Refinement(fps, n_left, layout, plan, k, wa, wb, must_differ, depth)
    n_threads = numba.get_num_threads()
    if layout.n_tables >= n_threads:
        width = min(n_threads, max(1, config["search_memory_bytes"] // (16 * max(n, 1))))
        return table_waves(ctx, limit, work, width, big_pairs, progress)
    cap = config["pairs_initial_capacity"]
    got = Collector(limit)
    for t in range(layout.n_tables):
        with deferred_interrupt():  # see parallel.deferred_interrupt: boxing must finish
            sorted_ = sort_table(fps, layout, t, plan, work.buf[:n], work.tmp[:n])
        args = (int(plan.extra_bits[t]), plan.row_bits, fps, k, n_left, layout.sels[t],
                layout.block_masks, must_differ, wa, wb)

        def scan(lo, hi, room, sorted_=sorted_, args=args):
            with deferred_interrupt():  # Ctrl-C between slices of the table
                return _ts.scan_runs(sorted_, lo, hi, *args, task_count(hi - lo), room,
                                     big_pairs, BIG_CAP)

        use = 0 if got.over else cap
        slices = scanned(scan, n, use)
        got.weighted += sum(o.weighted for _, _, outs in slices for o in outs)
        for x, (lo, hi, outs) in enumerate(slices):
            room = max(o.count for o in outs)
            if not got.over and room > use:  # the slice again, with room for its pairs
                slices[x] = (lo, hi, task_outputs(scan(lo, hi, room), room))
        for _, _, outs in slices:
            for o in outs:
                got.add_task(o.count, o.pairs)
        for _, _, outs in slices:
            for o in outs:
                ctx.refine_all(sorted_, t, o.big, o.n_big, got)
        if progress is not None:
            progress(1)
    return got


@dataclasses.dataclass
class TaskOutput:
    """What one task of a scan kernel found: its pair count (past its room), the weight
    of its pairs, the pairs it kept (copies), its big runs and how many."""

    count: int
    weighted: int
    pairs: tuple
    big: np.ndarray
    n_big: np.ndarray


def task_outputs(out, cap: int) -> list[TaskOutput]:
    """The per-task outputs ``(left, right, dist, counts, weighted, big, n_big)`` of a
    scan kernel, task ``t`` at ``[t * cap, ...)``, copied out of its buffers."""
    left, right, dist, counts, weighted, big, n_big = out
    outs = []
    for t in range(counts.shape[0]):
        s = slice(t * cap, t * cap + min(int(counts[t]), cap))
        outs.append(TaskOutput(int(counts[t]), int(weighted[t]),
                               (left[s].copy(), right[s].copy(), dist[s].copy()),
                               big[t * BIG_CAP:(t + 1) * BIG_CAP].copy(), n_big[t:t + 1].copy()))
    return outs


def scanned(scan, n: int, cap: int) -> list:
    """``scan(lo, hi, cap)`` over timed slices of the ``n`` rows of sorted tables:
    ``(lo, hi, task outputs)`` per slice."""
    return [(lo, hi, task_outputs(scan(lo, hi, cap), cap)) for lo, hi in timed_slices(n)]


BIG_CAP = 16  # big runs recorded per task (more are scanned pair by pair)


def table_waves(ctx: Refinement, limit: int, work, width: int, big_pairs: int,
                progress=None):
    """:func:`table_search` by waves of ``width`` tables sorted side by side, then scanned
    together a timed slice of rows at a time."""
    fps, layout, plan = ctx.fps, ctx.layout, ctx.plan
    n = fps.shape[0]
    bufs, tmps = work.rows(n, width)
    got = Collector(limit)
    cap = config["pairs_initial_capacity"] * 4
    sort_args = (layout.key_pieces, plan.extra_pieces, plan.hashed, plan.key_bits,
                 plan.extra_bits, plan.row_bits, top_bits(n), config["radix_local_bits"])
    scan_args = (plan.extra_bits, plan.row_bits, fps, ctx.k, ctx.n_left, layout.sels,
                 layout.block_masks, ctx.must_differ, ctx.wa, ctx.wb)
    for start in range(0, layout.n_tables, width):
        tables = np.arange(start, min(start + width, layout.n_tables), dtype=np.int64)
        m = tables.shape[0]
        with deferred_interrupt():  # see parallel.deferred_interrupt
            _ts.sort_tables(fps, tables, *sort_args, bufs[:m], tmps[:m])

        def scan(lo, hi, room, w=slice(0, m), tables=tables):
            with deferred_interrupt():  # Ctrl-C between slices of the wave
                return _ts.scan_tables(bufs[w], lo, hi, tables[w], *scan_args, room,
                                       big_pairs, BIG_CAP)

        use = 0 if got.over else cap
        slices = scanned(scan, n, use)
        got.weighted += sum(o.weighted for _, _, outs in slices for o in outs)
        for w in range(m):
            for lo, hi, outs in slices:
                if not got.over and outs[w].count > use:  # this table's slice, exact size
                    room = outs[w].count
                    outs[w] = task_outputs(scan(lo, hi, room, slice(w, w + 1)), room)[0]
                got.add_task(outs[w].count, outs[w].pairs)
            for _, _, outs in slices:
                ctx.refine_all(bufs[w], int(tables[w]), outs[w].big, outs[w].n_big, got)
        if progress is not None:
            progress(m)
    return got


@dataclasses.dataclass
class Refinement:
    """What :func:`refine` needs to search a big run of one table again."""

    fps: np.ndarray
    n_left: int
    layout: Layout
    plan: Plan
    k: int
    wa: np.ndarray
    wb: np.ndarray
    must_differ: np.ndarray
    depth: int

    def refine_all(self, sorted_, t: int, big: np.ndarray, n_big: np.ndarray, got) -> None:
        """Refine the big runs each task recorded (``n_big[task]`` from ``task * cap``)."""
        for task in np.flatnonzero(n_big):
            for r in range(int(n_big[task])):
                s, e = big[task * BIG_CAP + r]
                refine(self, sorted_[s:e], t, got)


def refine(ctx: Refinement, words: np.ndarray, t: int, got: Collector) -> None:
    """Search one big run of table ``t`` again, on the bits outside its key.

    The pairs of the run that table ``t`` owns agree on its key blocks and differ in
    every block before its last key block that is not a key block (``must_differ``).
    A nested pigeonhole search on the bits that vary inside the run finds them; runs
    whose ``must_differ`` blocks never vary are skipped (an earlier table owns them).
    """
    layout = ctx.layout
    rows = (words & np.uint64((1 << ctx.plan.row_bits) - 1)).astype(np.int64)
    sel = layout.sels[t].tolist()
    before = [x for x in range(layout.blocks) if x < max(sel) and x not in sel]
    must_differ = np.concatenate([ctx.must_differ, layout.block_masks[before]])
    key_mask = np.bitwise_or.reduce(layout.block_masks[sel], axis=0)
    keys = ctx.fps[rows] & key_mask
    if np.any(keys != keys[0]):  # hashed keys that collided: one group per true key
        _, group = np.unique(keys, axis=0, return_inverse=True)
        for g in range(int(group.max()) + 1):
            refine_group(ctx, rows[group.ravel() == g], t, must_differ, got)
    else:
        refine_group(ctx, rows, t, must_differ, got)


def refine_group(ctx: Refinement, rows, t: int, must_differ, got: Collector) -> None:
    layout, k = ctx.layout, ctx.k
    m = rows.shape[0]
    sub = ctx.fps[rows]
    varying = np.bitwise_or.reduce(sub ^ sub[0], axis=0)
    if m < 2 or np.any(~np.any(must_differ & varying, axis=1)):
        return  # some block that must differ is the same in every row
    if ctx.n_left >= 0:
        m_left = int(np.searchsorted(rows, ctx.n_left))
        if m_left in (0, m):
            return
        sub_left, n_pairs = m_left, float(m_left) * (m - m_left)
        wa = ctx.wa[rows[:m_left]] if ctx.wa.shape[0] else ctx.wa
        wb = ctx.wb[rows[m_left:] - ctx.n_left] if ctx.wb.shape[0] else ctx.wb
    else:
        m_left, sub_left, n_pairs = 0, -1, m * (m - 1) / 2
        wa = ctx.wa[rows] if ctx.wa.shape[0] else ctx.wa
        wb = ctx.wb[rows] if ctx.wb.shape[0] else ctx.wb
    rest = np.bitwise_or.reduce(layout.block_masks[layout.rests[t]], axis=0)
    positions = mask_bits(rest & varying)
    limit = got.limit - got.weighted
    if len(positions) <= k:  # every pair is within k: list them all
        sub_got = brute_search(sub[:m_left], sub[m_left:], k, wa, wb, limit, must_differ) \
            if ctx.n_left >= 0 else brute_search(sub, None, k, wa, wb, limit, must_differ)
    else:
        design = best_tables(m, n_pairs, k, len(positions))
        masks = np.zeros((design.blocks, layout.block_masks.shape[1]), dtype=np.uint64)
        for x, chunk in enumerate(np.array_split(np.array(positions), design.blocks)):
            for bit in chunk.tolist():
                masks[x, bit // 64] |= np.uint64(1) << np.uint64(bit % 64)
        sub_got = table_search(
            sub, sub_left, Layout.from_masks(layout.bits, k, masks), k, wa, wb, limit, None,
            must_differ=must_differ, depth=ctx.depth + 1,
        )
    got.weighted += sub_got.weighted
    got.total += sub_got.total
    if got.over:
        return
    u, v, d = sub_got.result()
    if ctx.n_left >= 0:
        got.parts.append((rows[u], rows[m_left + v] - ctx.n_left, d))
    else:
        got.parts.append((rows[u], rows[v], d))


def brute_search(a, b, k: int, wa, wb, limit: int, must_differ=None):
    """All-pairs search of distinct rows (``b`` None: self-join); pairs must differ in
    each ``must_differ`` mask."""
    self_join = b is None
    b = a if self_join else b
    got = Collector(limit)
    if a.shape[0] == 0 or b.shape[0] == 0:
        return got
    # weighted >= plain count: past the limit in pairs, past it in weight
    i, j, d, got.total = brute_pairs(a, b, k, self_join, limit if must_differ is None else 2**62)
    if got.total > limit and must_differ is None:
        got.weighted = got.total
        return got
    if must_differ is not None and must_differ.shape[0] and len(i):
        keep = np.all(np.any((a[i][:, None, :] ^ b[j][:, None, :]) & must_differ, axis=2), axis=1)
        i, j, d = i[keep], j[keep], d[keep]
        got.total = int(i.shape[0])
    got.parts = [(i, j, d)] if len(i) else []
    got.weighted = int(weigh(i, wa).dot(weigh(j, wb))) if len(i) else 0
    if got.over:
        got.parts = []
    return got


def search_distinct(a, b, k: int, design: TableDesign, wa, wb, limit: int, work=None, *,
                    random_state: int | None = 0, progress=None, keep=None):
    """Pairs between distinct fingerprints (2-D word arrays) as a :class:`Collector`.

    ``random_state`` seeds sampled tables; ``progress(tables_done)``, if given, is
    called as tables (packed, dense or sampled) complete. ``keep`` filters the pairs of dense and
    sampled tables as they come (:class:`Collector`); the other methods return theirs
    unfiltered, in ``parts``.
    """
    if design.method == "exact":
        return Collector(limit)
    if design.method == "brute":
        return brute_search(a, b, k, wa, wb, limit)
    if b is None:
        fps, n_left = a, -1
    else:
        fps, n_left = np.concatenate([a, b]), a.shape[0]
    if design.method in ("dense", "sampling"):
        return dense_search(np.ascontiguousarray(fps), n_left,
                            design_family(design, k, random_state), k, wa, wb, limit,
                            progress, keep=keep)
    layout = Layout.make(design.bits, k, design.blocks)
    work = (work or Work(fps.shape[0])).fit(fps.shape[0])
    return table_search(fps, n_left, layout, k, wa, wb, limit, work, progress=progress)


def design_family(design: TableDesign, k: int, random_state: int | None):
    """The tables of a dense (pigeonhole) or sampled design."""
    if design.method == "dense":
        return pigeonhole(design.bits, k, design.blocks)
    return sampled(design.bits, design.key_bits, design.tables, random_state)


def too_many(total: int, max_pairs: int, identical: int) -> TooManyPairsError:
    note = f", {identical:,} of them between identical fingerprints" if identical else ""
    return TooManyPairsError(
        f"near_duplicates would return {total:,} pairs{note}, more than "
        f"max_pairs={max_pairs:,}; to group near-duplicates without listing every pair use "
        "sh.clusters(fps, k) or sh.dedupe(fps, k) (identical fingerprints cost linear "
        "time there), or raise max_pairs"
    )

def pair_order(i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The order that sorts pairs by ``(i, j)``."""
    if i.shape[0] > 1 and i.max() < 2**32 and j.max() < 2**32:
        return np.argsort((i.astype(np.uint64) << np.uint64(32)) | j.astype(np.uint64))
    return np.lexsort((j, i))


_PACK_ROW_BITS = 28  # rows of pairs packed with their distance into one uint64 key


def sorted_pairs(i, j, d) -> Pairs:
    """:class:`Pairs` sorted by ``(i, j)``. Below ``2**28`` rows each pair is packed
    into one ``uint64`` (``i``, ``j``, then the distance) and the keys sorted in place,
    which numpy does with SIMD: 2-4x faster than an argsort and three gathers (11M
    pairs: 0.5-1.0 s against 2.1 s)."""
    if i.shape[0] < 2:
        return Pairs(i, j, d)
    if max(int(i.max()), int(j.max())) < 2**_PACK_ROW_BITS:
        rb = np.uint64(_PACK_ROW_BITS)
        key = i.astype(np.uint64) << (rb + np.uint64(8))
        key |= j.astype(np.uint64) << np.uint64(8)
        key |= d.astype(np.uint64)
        key.sort()
        low = np.uint64((1 << _PACK_ROW_BITS) - 1)
        return Pairs((key >> (rb + np.uint64(8))).astype(np.int64),
                     ((key >> np.uint64(8)) & low).astype(np.int64),
                     (key & np.uint64(255)).astype(np.uint8))
    order = pair_order(i, j)
    return Pairs(i[order], j[order], d[order])


def check_max_pairs(max_pairs) -> int:
    if max_pairs is None:
        return int(config["max_pairs"])
    return check_count(max_pairs, "max_pairs")
