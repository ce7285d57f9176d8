"""Near-duplicate search: permutation-table design and :func:`near_duplicates`.

The pigeonhole method (Manku, Jain and Das Sarma, "Detecting near-duplicates for web
crawling", WWW 2007): split the ``bits`` of a fingerprint into ``b > k`` blocks. Two
fingerprints within ``k`` bits differ in at most ``k`` blocks, so they agree exactly on
at least ``b - k``. Each choice of ``b - k`` blocks is one *table*; rows that share a
table's key (the chosen blocks) are its candidates, verified with popcount.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import numbers
from collections.abc import Iterator
from typing import Any

import numba
import numpy as np

from ._kernels import hamming as _hk
from ._kernels import tables as _tk
from ._parallel import threads
from ._validation import as_fingerprints, as_words, bits_of, check_k, same_width
from .config import config
from .pairs import Pairs

__all__ = ["TableDesign", "TooManyPairsError", "near_duplicates", "table_design"]


class TooManyPairsError(ValueError):
    """A pair search would return more pairs than ``max_pairs``.

    A subclass of ``ValueError``; the message gives the exact count and points to
    :func:`clusters`, which groups near duplicates without listing the pairs.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> try:
    ...     sh.near_duplicates(np.zeros(3, dtype=np.uint64), k=0, max_pairs=1)
    ... except sh.TooManyPairsError as e:
    ...     print(str(e)[:36])
    near_duplicates would return 3 pairs
    """


# --- table layout -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Blocks and tables for ``bits``-bit fingerprints at distance ``k``.

    Block ``x`` is the set of bits ``block_masks[x]`` (``uint64[words]``): for
    :meth:`make`, the contiguous range ``[starts[x], starts[x] + widths[x])``, the first
    ``bits % blocks`` blocks one bit wider; a refined search splits the bits outside a
    table's key (:meth:`from_masks`). ``sels[t]`` are the blocks of table ``t``
    (combinations in lexicographic order, as the ownership rule requires), ``rests[t]``
    the others; ``key_pieces[t]`` gathers table ``t``'s key (see
    :mod:`simhash_nb._kernels.tables`).
    """

    bits: int
    k: int
    blocks: int
    starts: np.ndarray
    widths: np.ndarray
    sels: np.ndarray
    rests: np.ndarray
    block_masks: np.ndarray
    key_widths: np.ndarray
    key_pieces: np.ndarray

    @classmethod
    def make(cls, bits: int, k: int, blocks: int) -> _Layout:
        key = (int(bits), int(k), int(blocks))
        layout = _LAYOUTS.get(key)
        if layout is None:
            base, extra = divmod(bits, blocks)
            masks = np.zeros((blocks, bits // 64), dtype=np.uint64)
            start = 0
            for x in range(blocks):
                for bit in range(start, start + base + (x < extra)):
                    masks[x, bit // 64] |= np.uint64(1) << np.uint64(bit % 64)
                start += base + (x < extra)
            layout = _LAYOUTS[key] = cls.from_masks(bits, k, masks)
        return layout

    @classmethod
    def from_masks(cls, bits: int, k: int, masks: np.ndarray) -> _Layout:
        blocks = masks.shape[0]
        positions = [_mask_bits(m) for m in masks]
        widths = np.array([len(p) for p in positions], dtype=np.int64)
        starts = np.array([p[0] if p else 0 for p in positions], dtype=np.int64)
        sels = np.array(list(itertools.combinations(range(blocks), blocks - k)), dtype=np.int64)
        sels = sels.reshape(-1, blocks - k)
        rests = np.array(
            [[x for x in range(blocks) if x not in sel] for sel in sels.tolist()],
            dtype=np.int64,
        ).reshape(sels.shape[0], k)
        key_pieces = _pad([_pieces(sel, positions) for sel in sels.tolist()])
        key_widths = widths[sels].sum(axis=1)
        return cls(bits, k, blocks, starts, widths, sels, rests, masks.astype(np.uint64),
                   key_widths, key_pieces)

    @property
    def n_tables(self) -> int:
        return int(self.sels.shape[0])

    def plan(self, n: int, out_bits: int | None = None) -> _Plan:
        """Word layout of the tables over ``n`` rows.

        Keys wider than ``out_bits`` (default :func:`_key_bits`) are hashed to that
        width; the bits left in a 64-bit word after key and row carry bits from outside
        the key (a free filter of candidates).
        """
        rb = _row_bits(n)
        out_bits = _key_bits(n) if out_bits is None else out_bits
        hashed = self.key_widths > out_bits
        key_bits = np.where(hashed, out_bits, self.key_widths).astype(np.int64)
        outside = int(self.widths.sum()) - self.key_widths
        extra = np.minimum(64 - key_bits - rb, outside).astype(np.int64)
        positions = [_mask_bits(m) for m in self.block_masks]
        extra_pieces = _pad(
            [_pieces(rest, positions, int(e)) for rest, e in zip(self.rests.tolist(), extra)]
        )
        return _Plan(rb, hashed, key_bits, extra, extra_pieces)


_LAYOUTS: dict[tuple[int, int, int], _Layout] = {}
"""Layouts made so far (they are immutable): index runs and searches reuse them."""


@dataclasses.dataclass(frozen=True)
class _Plan:
    row_bits: int
    hashed: np.ndarray
    key_bits: np.ndarray
    extra_bits: np.ndarray
    extra_pieces: np.ndarray


def _mask_bits(mask: np.ndarray) -> list[int]:
    """Positions of the set bits of a ``uint64[words]`` mask, ascending."""
    return [64 * w + b for w, m in enumerate(mask.tolist()) for b in range(64) if m >> b & 1]


def _pieces(blocks, positions, limit: int | None = None) -> list[tuple[int, ...]]:
    """``(word, shift, mask, pos)`` moves gathering the bits of ``blocks`` (bit positions
    ``positions[x]``; at most ``limit`` bits) into consecutive positions; no piece
    crosses a source or target word."""
    out = []
    pos = 0
    for x in blocks:
        bits = positions[x]
        if limit is not None:
            bits = bits[: max(0, limit - pos)]
        i = 0
        while i < len(bits):
            start = bits[i]
            take = 1
            while (
                i + take < len(bits)
                and bits[i + take] == start + take
                and (start + take) % 64
                and (pos + take) % 64
            ):
                take += 1
            out.append((start // 64, start % 64, (1 << take) - 1, pos))
            pos += take
            i += take
    # join pieces that continue each other (adjacent blocks) within one word
    merged: list[tuple[int, ...]] = []
    for word, shift, mask, at in out:
        if merged:
            w0, s0, m0, p0 = merged[-1]
            width = m0.bit_length()
            if (w0 == word and s0 + width == shift and p0 + width == at
                    and shift % 64 and at % 64 and width + mask.bit_length() <= 64):
                merged[-1] = (w0, s0, (1 << (width + mask.bit_length())) - 1, p0)
                continue
        merged.append((word, shift, mask, at))
    return merged


def _pad(rows: list[list[tuple[int, ...]]]) -> np.ndarray:
    """Ragged piece lists -> ``uint64[tables, pieces, 4]`` (padding pieces move nothing)."""
    out = np.zeros((len(rows), max((len(r) for r in rows), default=0), 4), dtype=np.uint64)
    for t, r in enumerate(rows):
        if r:
            out[t, : len(r)] = np.array(r, dtype=np.uint64)
    return out


def _top_bits(n: int) -> int:
    """Bits of the parallel first radix partition: partitions of ~2**10 rows."""
    return min(config["radix_bits"], max(0, _row_bits(n) - 10))


def _row_bits(n: int) -> int:
    return max(1, (n - 1).bit_length())


def _key_bits(n: int) -> int:
    """Width of hashed keys: enough that hash collisions add about n / 2^extra candidates."""
    return max(1, min(64 - _row_bits(n), _row_bits(n) + config["search_hash_extra_bits"]))


def _n_tables(blocks: int, k: int) -> int:
    return math.comb(blocks, k)


# --- cost model -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TableDesign:
    """How :func:`near_duplicates` searches: the method, blocks and tables, and the
    modelled cost.

    Attributes
    ----------
    method : {"tables", "brute", "exact"}
        ``"tables"``: the pigeonhole search; ``"brute"``: all pairs (cheaper for small
        inputs or large ``k``); ``"exact"``: ``k = 0`` in a self-join, where grouping
        identical fingerprints is the whole search.
    bits, k : int
        Fingerprint width and distance.
    blocks : int
        Number of blocks ``b`` (0 unless ``method == "tables"``).
    tables : int
        ``C(b, b - k)`` tables.
    key_bits : int
        Bits in the narrowest table key.
    candidates : float
        Expected candidate pairs checked over all tables, for uniformly random
        fingerprints.
    cost : float
        Modelled time in seconds (see :func:`table_design`).

    Examples
    --------
    >>> import simhash_nb as sh
    >>> d = sh.table_design(1_000_000, k=3)
    >>> d.method, d.blocks, d.tables
    ('tables', 4, 4)

    """

    method: str
    bits: int
    k: int
    blocks: int
    tables: int
    key_bits: int
    candidates: float
    cost: float


def _pair_count(n: int, n_against: int | None) -> float:
    return n * (n - 1) / 2 if n_against is None else float(n) * n_against


def _tables_cost(n_rows: int, n_pairs: float, layout_bits: int, k: int, blocks: int):
    """(cost, candidates, narrowest key) of the table search, without building tables."""
    base, extra = divmod(layout_bits, blocks)
    keep = blocks - k
    rb = _row_bits(max(n_rows, 2))
    out_bits = _key_bits(max(n_rows, 2))
    top = _top_bits(max(n_rows, 2))
    memory = _memory_factor(n_rows)
    candidates = 0.0
    cost = 0.0
    # tables with x wide blocks among the keep chosen ones: C(extra, x) * C(blocks-extra, keep-x)
    for x in range(max(0, keep - (blocks - extra)), min(extra, keep) + 1):
        count = math.comb(extra, x) * math.comb(blocks - extra, keep - x)
        width = keep * base + x
        key_bits = min(width, out_bits)
        local = math.ceil(max(0, key_bits - top) / config["radix_local_bits"])
        row = (config["search_cost_row"] + local * config["search_cost_pass"]) * memory
        cand = n_pairs * 2.0 ** (-width)
        # candidates whose extra bits (those outside the key left in the word) are within k
        extra_bits = max(0, min(64 - key_bits - rb, layout_bits - width))
        passing = _binom_cdf(k, extra_bits)
        cost += count * (
            config["search_cost_table"] + n_rows * row
            + cand * (config["search_cost_candidate"] + passing * config["search_cost_verify"])
        )
        candidates += count * cand
    narrowest = keep * base + max(0, keep - (blocks - extra))
    return cost, candidates, narrowest


def _memory_factor(n_rows: int) -> float:
    """Per-row costs grow with the data's size beyond the caches: +50% per tenfold above
    a million rows."""
    return 1.0 + 0.5 * max(0.0, math.log10(max(n_rows, 1) / 1e6))


def _binom_cdf(k: int, bits: int) -> float:
    """P(at most k of ``bits`` fair coin flips are heads)."""
    return sum(math.comb(bits, j) for j in range(min(k, bits) + 1)) / 2.0**bits


def table_design(
    n: int,
    k: int = 3,
    bits: int = 64,
    *,
    n_against: int | None = None,
    blocks: int | None = None,
) -> TableDesign:
    """Choose how to search ``n`` fingerprints for pairs within ``k`` bits.

    Parameters
    ----------
    n : int
        Number of (distinct) fingerprints in the self-join, or of query rows.
    k : int
        Largest Hamming distance reported.
    bits : {64, 128}
        Fingerprint width.
    n_against : int, optional
        Size of the other set in a two-set search.
    blocks : int, optional
        Force the table search with this many blocks (``k < blocks <= bits``).

    Returns
    -------
    TableDesign

    Raises
    ------
    ValueError
        If ``bits`` is not 64 or 128.

    Notes
    -----
    The cost model estimates seconds on one core of the reference machine (constants
    ``config["search_cost_*"]``). Each of the ``T = C(b, k)`` tables costs a start-up
    ``c_table`` plus ``N * (c_row + p * c_pass) * m(N)`` to make, partition, radix-sort
    (``p`` local passes over the key bits below the first partition) and scan the
    ``N`` rows, where ``m(N) = 1 + 0.5 * log10(N / 1e6)`` above a million rows accounts
    for cache misses. Its expected candidates are ``P / 2**key_bits`` for ``P`` pairs
    (``N (N - 1) / 2``, or ``N * M`` against a second set) of uniformly random
    fingerprints; each costs ``c_candidate``, plus ``c_verify`` for the fraction whose
    extra bits (bits outside the key stored beside it) do not already rule it out. The
    chosen ``b`` minimises the sum over tables; brute force (``c_brute * P * m(N)``) is
    used instead when cheaper. Near-duplicate-rich data adds candidates in proportion to
    the pairs found.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> d = sh.table_design(1_000_000, k=3)
    >>> d.method, d.blocks, d.tables
    ('tables', 4, 4)
    >>> sh.table_design(10_000_000, k=3).tables
    10
    >>> sh.table_design(100, k=3).method
    'brute'
    """
    if bits not in (64, 128):
        raise ValueError(f"bits must be 64 or 128, got {bits!r}")
    k = check_k(k, bits)
    n = _check_count(n, "n")
    if n_against is not None:
        n_against = _check_count(n_against, "n_against")
    n_rows = n + (n_against or 0)
    n_pairs = _pair_count(n, n_against)
    if blocks is not None:
        blocks = _check_blocks(blocks, k, bits)
        cost, cand, narrow = _tables_cost(n_rows, n_pairs, bits, k, blocks)
        return TableDesign("tables", bits, k, blocks, _n_tables(blocks, k), narrow, cand, cost)
    if k == 0 and n_against is None:
        return TableDesign("exact", bits, k, 0, 0, bits, 0.0, n * config["search_cost_row"])
    best = _best_tables(n_rows, n_pairs, k, bits)
    brute = config["search_cost_brute"] * bits / 64 * n_pairs * _memory_factor(n_rows)
    if brute < best.cost:
        return TableDesign("brute", bits, k, 0, 0, 0, n_pairs, brute)
    return best


def _best_tables(n_rows: int, n_pairs: float, k: int, bits: int) -> TableDesign:
    """The cheapest table design under the cost model."""
    best = None
    for b in range(max(k + 1, bits // 64), bits + 1):
        if _n_tables(b, k) > config["max_tables"]:
            break
        cost, cand, narrow = _tables_cost(n_rows, n_pairs, bits, k, b)
        if best is None or cost < best.cost:
            best = TableDesign("tables", bits, k, b, _n_tables(b, k), narrow, cand, cost)
        elif cost > 4 * best.cost and b > best.blocks + 2:
            break  # past the minimum: sorting cost only grows with more tables
    assert best is not None  # b = k + 1 gives k + 1 tables
    return best


def _check_count(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {n!r}")
    return int(n)


def _check_blocks(blocks, k: int, bits: int) -> int:
    if isinstance(blocks, bool) or not isinstance(blocks, numbers.Integral):
        raise TypeError(f"blocks must be an integer, got {type(blocks).__name__}")
    blocks = int(blocks)
    if blocks <= k:
        raise ValueError(
            f"blocks must be greater than k={k} (the pigeonhole needs more blocks than "
            f"differing bits), got blocks={blocks}"
        )
    if blocks > bits:
        raise ValueError(f"blocks must be at most bits={bits}, got blocks={blocks}")
    if bits // blocks > 64 or (bits // blocks == 64 and bits % blocks):
        raise ValueError(f"blocks must be at least {bits // 64} for {bits}-bit fingerprints")
    tables = _n_tables(blocks, k)
    if tables > config["max_tables"]:
        raise ValueError(
            f"blocks={blocks} with k={k} makes {tables:,} tables, more than "
            f"config['max_tables']={config['max_tables']:,}; use fewer blocks"
        )
    return blocks


# --- identical fingerprints -------------------------------------------------------------


@dataclasses.dataclass
class _Groups:
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
def _threads_for(rows: int) -> Iterator[None]:
    """One thread for small inputs, where starting parallel regions costs more than it
    saves (and much more on a machine whose cores are busy)."""
    if rows < config["parallel_min_rows"] and numba.get_num_threads() > 1:
        with threads(1):
            yield
    else:
        yield


def _chunks() -> int:
    return numba.get_num_threads()


def _tasks(n: int) -> int:
    return max(1, min(n, numba.get_num_threads() * config["chunks_per_thread"]))


def _whole_layout(bits: int) -> _Layout:
    """One table keyed by the whole fingerprint."""
    return _Layout.make(bits, 0, bits // 64)


def _group_identical(fps: np.ndarray, work: _Work | None = None) -> _Groups:
    """Merge identical rows of a ``uint64[n, words]`` array in linear time.

    Sorts a hash of each fingerprint (radix sort) and splits the runs of equal hashes.
    """
    n = fps.shape[0]
    if n < 2:
        return _Groups(n, n)
    layout = _whole_layout(fps.shape[1] * 64)
    work = (work or _Work(n)).fit(n)
    plan = layout.plan(n)
    sorted_ = _sort(fps, layout, 0, plan, work.buf[:n], work.tmp[:n])
    rb = plan.row_bits
    rep = np.empty(0, dtype=np.int64)
    n_distinct = int(_tk.group_identical(sorted_, rb, fps, _tasks(n), False, rep))
    if n_distinct == n:
        return _Groups(n, n)
    rep = np.empty(n, dtype=np.int64)
    _tk.group_identical(sorted_, rb, fps, _tasks(n), True, rep)
    is_first = rep == np.arange(n)
    first = np.flatnonzero(is_first)
    uid = np.cumsum(is_first, dtype=np.int64) - 1
    inverse = uid[rep]
    ptr, rows = _tk.group_members(inverse, n_distinct)
    return _Groups(n, n_distinct, first, inverse, ptr, rows, np.diff(ptr))


# --- the table search -------------------------------------------------------------------


class _Work:
    """uint64 work arrays reused by every table sort: ``width`` pairs of ``n`` words."""

    def __init__(self, n: int, width: int = 1):
        self._bufs = np.empty(width * n, dtype=np.uint64)
        self._tmps = np.empty(width * n, dtype=np.uint64)

    def fit(self, n: int, width: int = 1) -> _Work:
        """Grow (in place, releasing the old arrays) to hold ``width`` pairs of ``n``."""
        if self._bufs.shape[0] < width * n:
            self._bufs = self._tmps = None  # release before allocating
            self.__init__(n, width)
        return self

    def rows(self, n: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        """Contiguous ``(width, n)`` views."""
        self.fit(n, width)
        return (self._bufs[: width * n].reshape(width, n),
                self._tmps[: width * n].reshape(width, n))

    @property
    def buf(self) -> np.ndarray:
        return self._bufs

    @property
    def tmp(self) -> np.ndarray:
        return self._tmps


def _sort(fps, layout: _Layout, t: int, plan: _Plan, buf, tmp):
    """Sorted words of table ``t`` (one of the work arrays ``buf``, ``tmp``)."""
    return _tk.sort_table(
        fps, layout.key_pieces[t], plan.extra_pieces[t], bool(plan.hashed[t]),
        int(plan.key_bits[t]), int(plan.extra_bits[t]), plan.row_bits,
        _top_bits(fps.shape[0]), config["radix_local_bits"], _chunks(), buf, tmp,
    )


class _Collector:
    """Gathers per-task output slices; counts all pairs, materialises up to a limit."""

    def __init__(self, limit: int):
        self.limit = limit
        self.total = 0
        self.weighted = 0
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    @property
    def over(self) -> bool:
        return self.weighted > self.limit

    def add(self, left, right, dist, counts, cap: int) -> None:
        """Keep ``[t * cap, t * cap + counts[t])`` of each task ``t`` (unless over)."""
        self.total += int(counts.sum())
        if self.over:
            return
        for t in np.flatnonzero(counts):
            s = slice(t * cap, t * cap + int(min(counts[t], cap)))
            self.parts.append((left[s], right[s], dist[s]))

    def result(self):
        if not self.parts:
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
        return tuple(np.concatenate(p) for p in zip(*self.parts))


def _table_search(
    fps, n_left: int, layout: _Layout, k: int, wa, wb, limit: int, work,
    *, must_differ: np.ndarray | None = None, depth: int = 0,
):
    """Pairs among the rows of ``fps`` (self-join when ``n_left < 0``; else rows below
    ``n_left`` against the rest) with ``sum wa[i] * wb[j]`` counted; pairs are
    materialised only while that sum stays within ``limit``.

    With at least as many tables as threads, whole tables run in parallel (one parallel
    region per wave of tables); otherwise each table is sorted and scanned in parallel.
    Runs with more than ``config["search_big_run_pairs"]`` candidate pairs (a big group
    of fingerprints sharing a key) are searched again on the bits outside the key
    (:func:`_refine`) rather than pair by pair. ``must_differ`` and ``depth`` describe
    such a refinement.
    """
    n = fps.shape[0]
    work = work or _Work(n)
    if must_differ is None:
        must_differ = np.zeros((0, fps.shape[1]), dtype=np.uint64)
    plan = layout.plan(n)
    outside = int(layout.widths.sum()) - int(layout.key_widths.max())
    refine = depth < config["search_max_refinements"] and outside >= 2 * (k + 1)
    big_pairs = config["search_big_run_pairs"] if refine else 2**62
    ctx = _Refinement(fps, n_left, layout, plan, k, wa, wb, must_differ, depth)
    n_threads = numba.get_num_threads()
    if layout.n_tables >= n_threads:
        width = min(n_threads, max(1, config["search_memory_bytes"] // (16 * max(n, 1))))
        return _table_waves(ctx, limit, work, width, big_pairs)
    n_tasks = _tasks(n)
    cap = config["pairs_initial_capacity"]
    got = _Collector(limit)
    for t in range(layout.n_tables):
        sorted_ = _sort(fps, layout, t, plan, work.buf[:n], work.tmp[:n])
        args = (
            sorted_, int(plan.extra_bits[t]), plan.row_bits, fps, k, n_left, layout.sels[t],
            layout.block_masks, must_differ, wa, wb, n_tasks,
        )
        use = 0 if got.over else cap
        out = _tk.scan_runs(*args, use, big_pairs, _BIG_CAP)
        got.weighted += int(out[4].sum())
        if not got.over and out[3].max() > use:
            use = int(out[3].max())
            out = _tk.scan_runs(*args, use, big_pairs, _BIG_CAP)
        got.add(*out[:4], use)
        ctx.refine_all(sorted_, t, out[5], out[6], got)
    return got


_BIG_CAP = 16  # big runs recorded per task (more are scanned pair by pair)


def _table_waves(ctx: _Refinement, limit: int, work, width: int, big_pairs: int):
    fps, layout, plan = ctx.fps, ctx.layout, ctx.plan
    n = fps.shape[0]
    bufs, tmps = work.rows(n, width)
    got = _Collector(limit)
    cap = config["pairs_initial_capacity"] * 4
    args = (
        layout.key_pieces, plan.extra_pieces, plan.hashed, plan.key_bits, plan.extra_bits,
        plan.row_bits, _top_bits(n), config["radix_local_bits"], layout.sels,
        layout.block_masks, ctx.must_differ, ctx.k, ctx.wa, ctx.wb,
    )
    for start in range(0, layout.n_tables, width):
        tables = np.arange(start, min(start + width, layout.n_tables), dtype=np.int64)
        m = tables.shape[0]
        use = 0 if got.over else cap
        out = _tk.search_tables(
            fps, ctx.n_left, tables, *args, bufs[:m], tmps[:m], use, big_pairs, _BIG_CAP
        )
        got.weighted += int(out[4].sum())
        for w in range(m):
            counts, big = out[3][w : w + 1], out[5][w * _BIG_CAP : (w + 1) * _BIG_CAP]
            sorted_ = bufs[w]
            if not got.over and counts[0] > use:  # this table again, at the exact size
                redo = _tk.search_tables(
                    fps, ctx.n_left, tables[w : w + 1], *args, bufs[:1], tmps[:1],
                    int(counts[0]), big_pairs, _BIG_CAP,
                )
                got.add(*redo[:4], int(counts[0]))
                sorted_, big = bufs[0], redo[5]
            else:
                s = slice(w * use, (w + 1) * use)
                got.add(out[0][s], out[1][s], out[2][s], counts, use)
            ctx.refine_all(sorted_, int(tables[w]), big, out[6][w : w + 1], got)
    return got


@dataclasses.dataclass
class _Refinement:
    """What :func:`_refine` needs to search a big run of one table again."""

    fps: np.ndarray
    n_left: int
    layout: _Layout
    plan: _Plan
    k: int
    wa: np.ndarray
    wb: np.ndarray
    must_differ: np.ndarray
    depth: int

    def refine_all(self, sorted_, t: int, big: np.ndarray, n_big: np.ndarray, got) -> None:
        """Refine the big runs each task recorded (``n_big[task]`` from ``task * cap``)."""
        for task in np.flatnonzero(n_big):
            for r in range(int(n_big[task])):
                s, e = big[task * _BIG_CAP + r]
                _refine(self, sorted_[s:e], t, got)


def _refine(ctx: _Refinement, words: np.ndarray, t: int, got: _Collector) -> None:
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
            _refine_group(ctx, rows[group.ravel() == g], t, must_differ, got)
    else:
        _refine_group(ctx, rows, t, must_differ, got)


def _refine_group(ctx: _Refinement, rows, t: int, must_differ, got: _Collector) -> None:
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
    positions = _mask_bits(rest & varying)
    limit = got.limit - got.weighted
    if len(positions) <= k:  # every pair is within k: list them all
        sub_got = _brute_search(sub[:m_left], sub[m_left:], k, wa, wb, limit, must_differ) \
            if ctx.n_left >= 0 else _brute_search(sub, None, k, wa, wb, limit, must_differ)
    else:
        design = _best_tables(m, n_pairs, k, len(positions))
        masks = np.zeros((design.blocks, layout.block_masks.shape[1]), dtype=np.uint64)
        for x, chunk in enumerate(np.array_split(np.array(positions), design.blocks)):
            for bit in chunk.tolist():
                masks[x, bit // 64] |= np.uint64(1) << np.uint64(bit % 64)
        sub_got = _table_search(
            sub, sub_left, _Layout.from_masks(layout.bits, k, masks), k, wa, wb, limit, None,
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


def _brute_search(a, b, k: int, wa, wb, limit: int, must_differ=None):
    """All-pairs search of distinct rows (``b`` None: self-join); pairs must differ in
    each ``must_differ`` mask."""
    self_join = b is None
    b = a if self_join else b
    got = _Collector(limit)
    n_tasks = max(1, min(a.shape[0], numba.get_num_threads() * 8))
    cap = config["pairs_initial_capacity"]
    if a.shape[0] == 0 or b.shape[0] == 0:
        return got
    left, right, dist, counts = _hk.pairs_within(a, b, k, self_join, n_tasks, cap)
    got.total = int(counts.sum())
    if got.total > limit and must_differ is None:  # weighted >= plain count
        got.weighted = got.total
        return got
    if counts.max() > cap:
        cap = int(counts.max())
        left, right, dist, counts = _hk.pairs_within(a, b, k, self_join, n_tasks, cap)
    got.add(left, right, dist, counts, cap)
    i, j, d = got.result()
    if must_differ is not None and must_differ.shape[0] and len(i):
        keep = np.all(np.any((a[i][:, None, :] ^ b[j][:, None, :]) & must_differ, axis=2), axis=1)
        i, j, d = i[keep], j[keep], d[keep]
        got.parts = [(i, j, d)]
        got.total = int(i.shape[0])
    got.weighted = int(_weigh(i, wa).dot(_weigh(j, wb))) if len(i) else 0
    if got.over:
        got.parts = []
    return got


def _weigh(idx, w):
    return np.ones(idx.shape[0], dtype=np.int64) if w.shape[0] == 0 else w[idx]


def _search_distinct(a, b, k: int, design: TableDesign, wa, wb, limit: int, work=None):
    """Pairs between distinct fingerprints (2-D word arrays) as a :class:`_Collector`."""
    if design.method == "exact":
        return _Collector(limit)
    if design.method == "brute":
        return _brute_search(a, b, k, wa, wb, limit)
    layout = _Layout.make(design.bits, k, design.blocks)
    if b is None:
        fps, n_left = a, -1
    else:
        fps, n_left = np.concatenate([a, b]), a.shape[0]
    work = (work or _Work(fps.shape[0])).fit(fps.shape[0])
    return _table_search(fps, n_left, layout, k, wa, wb, limit, work)


def _too_many(total: int, max_pairs: int, identical: int) -> TooManyPairsError:
    note = f", {identical:,} of them between identical fingerprints" if identical else ""
    return TooManyPairsError(
        f"near_duplicates would return {total:,} pairs{note}, more than "
        f"max_pairs={max_pairs:,}; to group near-duplicates without listing every pair use "
        "sh.clusters(fps, k) or sh.dedupe(fps, k) (identical fingerprints cost linear "
        "time there), or raise max_pairs"
    )


def _expand(u, v, d, ga: _Groups, gb: _Groups, self_join: bool):
    """Pairs of distinct rows -> pairs of original rows."""
    if not ga.has_duplicates and not gb.has_duplicates:
        return u, v, d
    ca = _weigh(u, ga.weights())
    cb = _weigh(v, gb.weights())
    sizes = ca * cb
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    total = int(offsets[-1])
    out_i = np.empty(total, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    out_d = np.empty(total, dtype=np.uint8)
    pa = _csr(ga)
    pb = _csr(gb)
    _tk.expand_pairs(u, v, d, *pa, *pb, offsets[:-1], self_join, out_i, out_j, out_d)
    return out_i, out_j, out_d


def _csr(g: _Groups):
    if g.has_duplicates:
        return g.ptr, g.rows
    return np.arange(g.n + 1, dtype=np.int64), np.arange(g.n, dtype=np.int64)


def _identical(g: _Groups):
    """All pairs inside groups of identical rows (distance 0)."""
    if not g.has_duplicates:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
    big = np.flatnonzero(g.counts > 1)
    c = g.counts[big]
    offsets = np.concatenate(([0], np.cumsum(c * (c - 1) // 2))).astype(np.int64)
    total = int(offsets[-1])
    out = (np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.uint8))
    _tk.expand_groups(big, g.ptr, g.rows, offsets[:-1], *out)
    return out


def _sorted_pairs(i, j, d) -> Pairs:
    if i.shape[0] > 1:
        if i.max() < 2**32 and j.max() < 2**32:
            order = np.argsort((i.astype(np.uint64) << np.uint64(32)) | j.astype(np.uint64))
        else:
            order = np.lexsort((j, i))
        i, j, d = i[order], j[order], d[order]
    return Pairs(i, j, d)


def _check_max_pairs(max_pairs) -> int:
    if max_pairs is None:
        return int(config["max_pairs"])
    return _check_count(max_pairs, "max_pairs")


def near_duplicates(
    fps: Any,
    k: int = 3,
    *,
    blocks: int | None = None,
    against: Any = None,
    max_pairs: int | None = None,
    n_jobs: int | None = None,
) -> Pairs:
    """Every pair of fingerprints within Hamming distance ``k``.

    Identical fingerprints are merged first (in linear time); the distinct ones are
    searched with permutation tables (the pigeonhole method of Manku et al., 2007), or
    compared all against all when the cost model finds that cheaper. The result is
    complete and lists each pair exactly once, however many tables found it: a pair is
    reported only by the first table (in lexicographic order of block choices) whose
    key it matches, which is computed from the blocks the two fingerprints agree on (no
    global set of pairs seen).

    Parameters
    ----------
    fps : ndarray of uint64, shape (n,) or (n, 2)
        64-bit or 128-bit fingerprints (128-bit: low word first).
    k : int, default 3
        Largest Hamming distance reported (inclusive), ``0 <= k < bits``.
    blocks : int, optional
        Number of blocks ``b`` (``k < b <= bits``), giving ``C(b, k)`` tables. By default
        chosen by :func:`table_design` from the size, width and ``k``.
    against : ndarray of uint64, optional
        A second set: report pairs ``(i, j)`` with ``i`` a row of ``fps`` and ``j`` a
        row of ``against`` (no pairs inside either set).
    max_pairs : int, optional
        Refuse to return more pairs than this (default ``config["max_pairs"]``). The
        pairs are counted before any is materialised; a group of ``m`` identical
        fingerprints alone makes ``m (m - 1) / 2``.
    n_jobs : int, optional
        Threads (default: Numba's setting; -1 all).

    Returns
    -------
    Pairs
        ``i``, ``j`` (int64 rows; ``i < j`` in a self-join) and ``distance`` (uint8),
        sorted by ``(i, j)``.

    Raises
    ------
    TooManyPairsError
        If there would be more than ``max_pairs`` pairs (a ``ValueError``).
    ValueError
        If there are ``2**32`` fingerprints or more.

    Notes
    -----
    Each table is a parallel radix sort of 64-bit words holding the key, a few bits
    from outside the key (which reject most candidates without reading the
    fingerprints) and the row. Tables run side by side, one per thread. A *run* of rows
    sharing a key with more than ``config["search_big_run_pairs"]`` candidate pairs (a
    large group of near-identical fingerprints) is not compared pair by pair but
    searched again with tables over the bits that vary inside it, so such groups cost
    time near their output rather than their size squared. Extra memory is about
    16 bytes per fingerprint per concurrent table (``config["search_memory_bytes"]``
    caps it) plus 17 bytes per pair returned.

    See Also
    --------
    simhash_nb.pairs_within : brute-force join (the reference).
    simhash_nb.clusters, simhash_nb.dedupe : groups without listing pairs.
    simhash_nb.table_design : the automatic design and its cost model.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b0111, 0b1111_0000, 0b0001, 0b0000], dtype=np.uint64)
    >>> p = sh.near_duplicates(fps, k=1)
    >>> p.i, p.j, p.distance
    (array([0, 0, 3]), array([3, 4, 4]), array([1, 0, 1], dtype=uint8))
    >>> sh.near_duplicates(fps, k=1, against=np.array([0b0011], dtype=np.uint64)).i
    array([1, 3])
    """
    a = as_fingerprints(fps, "fps")
    bits = bits_of(a)
    k = check_k(k, bits)
    b = None
    if against is not None:
        b = as_fingerprints(against, "against")
        same_width(a, b, ("fps", "against"))
    if blocks is not None:
        blocks = _check_blocks(blocks, k, bits)
    max_pairs = _check_max_pairs(max_pairs)
    a2 = as_words(a)
    if b is None and a2.shape[0] >= 2**32 or b is not None and a2.shape[0] + b.shape[0] >= 2**32:
        raise ValueError("near_duplicates handles fewer than 2**32 fingerprints at a time")
    rows = a2.shape[0] + (0 if b is None else b.shape[0])
    with threads(n_jobs), _threads_for(rows):
        if b is None:
            return _self_join(a2, k, blocks, max_pairs)
        return _cross_join(a2, as_words(b), k, blocks, max_pairs)


def _self_join(a, k, blocks, max_pairs) -> Pairs:
    work = _Work(a.shape[0])
    ga = _group_identical(a, work)
    identical = ga.identical_pairs()
    if identical > max_pairs:
        raise _too_many(identical, max_pairs, identical)
    ua = ga.distinct(a)
    design = table_design(ua.shape[0], k, a.shape[1] * 64, blocks=blocks)
    w = ga.weights()
    got = _search_distinct(ua, None, k, design, w, w, max_pairs - identical, work)
    if got.over:
        raise _too_many(got.weighted + identical, max_pairs, identical)
    i, j, d = _expand(*got.result(), ga, ga, True)
    if identical:
        ii, jj, dd = _identical(ga)
        i, j, d = np.concatenate([i, ii]), np.concatenate([j, jj]), np.concatenate([d, dd])
    return _sorted_pairs(i, j, d)


def _cross_join(a, b, k, blocks, max_pairs) -> Pairs:
    work = _Work(a.shape[0] + b.shape[0])
    ga = _group_identical(a, work)
    gb = _group_identical(b, work)
    ua, ub = ga.distinct(a), gb.distinct(b)
    design = table_design(ua.shape[0], k, a.shape[1] * 64, n_against=ub.shape[0], blocks=blocks)
    got = _search_distinct(ua, ub, k, design, ga.weights(), gb.weights(), max_pairs, work)
    if got.over:
        raise _too_many(got.weighted, max_pairs, 0)
    return _sorted_pairs(*_expand(*got.result(), ga, gb, False))
