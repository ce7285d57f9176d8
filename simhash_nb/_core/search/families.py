"""Table families as key masks: pigeonhole block choices and sampled bits, and the
recall each family promises.

A table of a family is a *key mask* (``uint64[2]``, low word first; the high word is
0 for 64-bit fingerprints): fingerprints that agree on every bit of the mask share
the table's key. Two families:

- **pigeonhole** (Manku, Jain and Das Sarma, WWW 2007): the ``bits`` split into
  ``b > k`` contiguous blocks; each choice of ``b - k`` blocks is a table. A pair within
  ``k`` bits differs in at most ``k`` blocks, so it shares the key of at least one
  table: the search is exact.
- **sampling** (bit-sampling LSH; Indyk and Motwani, STOC 1998; Gionis, Indyk and
  Motwani, VLDB 1999): each of ``L`` tables keys on ``r`` bit positions drawn without
  replacement (seeded, so searches repeat). A pair at distance ``d`` agrees on all
  ``r`` sampled bits of one table with probability ``p(d) = C(bits - d, r) / C(bits, r)``
  and is found by at least one of the ``L`` independent tables with probability
  ``1 - (1 - p(d))**L`` — exactly, over the draw of the tables, for every pair. ``L``
  is the least number that gives the requested recall at ``d = k`` (smaller distances
  are found more often).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

_ONE = np.uint64(1)


@dataclasses.dataclass(frozen=True)
class TableFamily:
    """Key masks of a family of tables, and what the dense-table kernel needs.

    Attributes
    ----------
    masks : ndarray of uint64, shape (tables, 2)
        Key mask of each table.
    mults : ndarray of uint64, shape (tables, 2)
        Odd multipliers of the multiply-shift hash of each table's masked key.
    block_masks : ndarray of uint64, shape (blocks, 2)
        Pigeonhole blocks (empty for sampled tables): pairs are then owned by the
        block rule, otherwise by the first table whose mask they agree on.
    sels : ndarray of int64, shape (tables, b - k)
        Blocks of each pigeonhole table, in lexicographic order.
    """

    masks: np.ndarray
    mults: np.ndarray
    block_masks: np.ndarray
    sels: np.ndarray

    @property
    def n_tables(self) -> int:
        return int(self.masks.shape[0])


def _bit(mask: np.ndarray, b: int) -> None:
    mask[b // 64] |= _ONE << np.uint64(b % 64)


def block_masks(bits: int, blocks: int) -> np.ndarray:
    """``uint64[blocks, 2]``: contiguous blocks, the first ``bits % blocks`` one bit wider."""
    base, extra = divmod(bits, blocks)
    out = np.zeros((blocks, 2), dtype=np.uint64)
    start = 0
    for x in range(blocks):
        width = base + (x < extra)
        for b in range(start, start + width):
            _bit(out[x], b)
        start += width
    return out


def multipliers(tables: int, seed: int) -> np.ndarray:
    """Odd 64-bit multipliers, two per table, from ``seed``."""
    rng = np.random.default_rng([0x5EED, seed])
    odd = rng.integers(0, 2**63, size=(tables, 2), dtype=np.uint64)
    return odd * np.uint64(2) + _ONE


def pigeonhole(bits: int, k: int, blocks: int) -> TableFamily:
    """The ``C(blocks, k)`` tables of the pigeonhole design, in lexicographic order."""
    bm = block_masks(bits, blocks)
    sels = np.array(list(itertools.combinations(range(blocks), blocks - k)), dtype=np.int64)
    sels = sels.reshape(-1, blocks - k)
    masks = np.zeros((sels.shape[0], 2), dtype=np.uint64)
    for t, sel in enumerate(sels):
        masks[t] = np.bitwise_or.reduce(bm[sel], axis=0)
    return TableFamily(masks, multipliers(masks.shape[0], blocks), bm, sels)


def sampled(bits: int, sample_bits: int, tables: int, random_state: int | None) -> TableFamily:
    """``tables`` tables keyed on ``sample_bits`` positions drawn without replacement."""
    rng = np.random.default_rng(random_state)
    masks = np.zeros((tables, 2), dtype=np.uint64)
    for t in range(tables):
        for b in rng.choice(bits, sample_bits, replace=False).tolist():
            _bit(masks[t], b)
    seed = int(rng.integers(0, 2**31))
    return TableFamily(masks, multipliers(tables, seed), np.zeros((0, 2), dtype=np.uint64),
                       np.zeros((tables, 1), dtype=np.int64))


def collision_probability(bits: int, d: int, sample_bits: int) -> float:
    """P(a pair at distance ``d`` agrees on ``sample_bits`` positions drawn without
    replacement): ``C(bits - d, r) / C(bits, r)``."""
    if sample_bits > bits - d:
        return 0.0
    return math.comb(bits - d, sample_bits) / math.comb(bits, sample_bits)


def sampled_recall(bits: int, d: int, sample_bits: int, tables: int) -> float:
    """P(a pair at distance ``d`` shares a key in at least one of ``tables`` tables)."""
    p = collision_probability(bits, d, sample_bits)
    if p >= 1.0:
        return 1.0
    return -math.expm1(tables * math.log1p(-p))  # exact for tiny p, where 1 - p == 1


def tables_for_recall(bits: int, k: int, sample_bits: int, recall: float) -> int:
    """Fewest sampled tables that find a pair at distance ``k`` with probability
    ``>= recall`` (a huge number when the bits cannot be sampled)."""
    p = collision_probability(bits, k, sample_bits)
    if p <= 0.0:
        return 2**62
    if p >= 1.0 or recall <= 0.0:
        return 1
    if recall >= 1.0:
        return 2**62
    tables = max(1, math.ceil(math.log1p(-recall) / math.log1p(-p)))
    if tables >= 2**62:
        return 2**62
    for _ in range(4):  # rounding: at most a table or two short
        if sampled_recall(bits, k, sample_bits, tables) >= recall:
            break
        tables += 1
    return tables
