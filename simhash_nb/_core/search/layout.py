"""Table layout of the pigeonhole search: blocks, keys, the sort plan, the sort itself,
and how many parallel tasks to cut a pass into."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numba
import numpy as np

from ..._kernels import tables as _tk
from ...config import config

# --- table layout -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Layout:
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
    def make(cls, bits: int, k: int, blocks: int) -> Layout:
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
    def from_masks(cls, bits: int, k: int, masks: np.ndarray) -> Layout:
        blocks = masks.shape[0]
        positions = [mask_bits(m) for m in masks]
        widths = np.array([len(p) for p in positions], dtype=np.int64)
        starts = np.array([p[0] if p else 0 for p in positions], dtype=np.int64)
        sels = np.array(list(itertools.combinations(range(blocks), blocks - k)), dtype=np.int64)
        sels = sels.reshape(-1, blocks - k)
        rests = np.array(
            [[x for x in range(blocks) if x not in sel] for sel in sels.tolist()],
            dtype=np.int64,
        ).reshape(sels.shape[0], k)
        key_pieces = pad([pieces(sel, positions) for sel in sels.tolist()])
        key_widths = widths[sels].sum(axis=1)
        return cls(bits, k, blocks, starts, widths, sels, rests, masks.astype(np.uint64),
                   key_widths, key_pieces)

    @property
    def n_tables(self) -> int:
        return int(self.sels.shape[0])

    def plan(self, n: int, out_bits: int | None = None) -> Plan:
        """Word layout of the tables over ``n`` rows.

        Keys wider than ``out_bits`` (default :func:`key_bits_for`) are hashed to that
        width; the bits left in a 64-bit word after key and row carry bits from outside
        the key (a free filter of candidates).
        """
        rb = row_bits_for(n)
        out_bits = key_bits_for(n) if out_bits is None else out_bits
        hashed = self.key_widths > out_bits
        key_bits = np.where(hashed, out_bits, self.key_widths).astype(np.int64)
        outside = int(self.widths.sum()) - self.key_widths
        extra = np.minimum(64 - key_bits - rb, outside).astype(np.int64)
        positions = [mask_bits(m) for m in self.block_masks]
        extra_pieces = pad(
            [pieces(rest, positions, int(e)) for rest, e in zip(self.rests.tolist(), extra)]
        )
        return Plan(rb, hashed, key_bits, extra, extra_pieces)


_LAYOUTS: dict[tuple[int, int, int], Layout] = {}
"""Layouts made so far (they are immutable): index runs and searches reuse them."""


@dataclasses.dataclass(frozen=True)
class Plan:
    row_bits: int
    hashed: np.ndarray
    key_bits: np.ndarray
    extra_bits: np.ndarray
    extra_pieces: np.ndarray


def mask_bits(mask: np.ndarray) -> list[int]:
    """Positions of the set bits of a ``uint64[words]`` mask, ascending."""
    return [64 * w + b for w, m in enumerate(mask.tolist()) for b in range(64) if m >> b & 1]


def pieces(blocks, positions, limit: int | None = None) -> list[tuple[int, ...]]:
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


def pad(rows: list[list[tuple[int, ...]]]) -> np.ndarray:
    """Ragged piece lists -> ``uint64[tables, pieces, 4]`` (padding pieces move nothing)."""
    out = np.zeros((len(rows), max((len(r) for r in rows), default=0), 4), dtype=np.uint64)
    for t, r in enumerate(rows):
        if r:
            out[t, : len(r)] = np.array(r, dtype=np.uint64)
    return out


def top_bits(n: int) -> int:
    """Bits of the parallel first radix partition: partitions of ~2**10 rows."""
    return min(config["radix_bits"], max(0, row_bits_for(n) - 10))


def row_bits_for(n: int) -> int:
    return max(1, (n - 1).bit_length())


def key_bits_for(n: int) -> int:
    """Width of hashed keys: enough that hash collisions add about n / 2^extra candidates."""
    return max(1, min(64 - row_bits_for(n), row_bits_for(n) + config["search_hash_extra_bits"]))


def table_count(blocks: int, k: int) -> int:
    return math.comb(blocks, k)

def chunk_count() -> int:
    return numba.get_num_threads()


def task_count(n: int) -> int:
    return max(1, min(n, numba.get_num_threads() * config["chunks_per_thread"]))

# --- the table search -------------------------------------------------------------------


class Work:
    """uint64 work arrays reused by every table sort: ``width`` pairs of ``n`` words."""

    def __init__(self, n: int, width: int = 1):
        self._bufs = np.empty(width * n, dtype=np.uint64)
        self._tmps = np.empty(width * n, dtype=np.uint64)

    def fit(self, n: int, width: int = 1) -> Work:
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


def sort_table(fps, layout: Layout, t: int, plan: Plan, buf, tmp):
    """Sorted words of table ``t`` (one of the work arrays ``buf``, ``tmp``)."""
    return _tk.sort_table(
        fps, layout.key_pieces[t], plan.extra_pieces[t], bool(plan.hashed[t]),
        int(plan.key_bits[t]), int(plan.extra_bits[t]), plan.row_bits,
        top_bits(fps.shape[0]), config["radix_local_bits"], chunk_count(), buf, tmp,
    )
