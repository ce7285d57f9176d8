"""Cost model: how many blocks and tables, or brute force (:class:`TableDesign`)."""

from __future__ import annotations

import dataclasses
import math
import numbers

from ...config import config
from ..validation import check_k
from .layout import key_bits_for, row_bits_for, table_count, top_bits

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
    """

    method: str
    bits: int
    k: int
    blocks: int
    tables: int
    key_bits: int
    candidates: float
    cost: float


def pair_count(n: int, n_against: int | None) -> float:
    return n * (n - 1) / 2 if n_against is None else float(n) * n_against


def tables_cost(n_rows: int, n_pairs: float, layout_bits: int, k: int, blocks: int):
    """(cost, candidates, narrowest key) of the table search, without building tables."""
    base, extra = divmod(layout_bits, blocks)
    keep = blocks - k
    rb = row_bits_for(max(n_rows, 2))
    out_bits = key_bits_for(max(n_rows, 2))
    top = top_bits(max(n_rows, 2))
    memory = memory_factor(n_rows)
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
        passing = binom_cdf(k, extra_bits)
        cost += count * (
            config["search_cost_table"] + n_rows * row
            + cand * (config["search_cost_candidate"] + passing * config["search_cost_verify"])
        )
        candidates += count * cand
    narrowest = keep * base + max(0, keep - (blocks - extra))
    return cost, candidates, narrowest


def memory_factor(n_rows: int) -> float:
    """Per-row costs grow with the data's size beyond the caches: +50% per tenfold above
    a million rows."""
    return 1.0 + 0.5 * max(0.0, math.log10(max(n_rows, 1) / 1e6))


def binom_cdf(k: int, bits: int) -> float:
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
    n = check_count(n, "n")
    if n_against is not None:
        n_against = check_count(n_against, "n_against")
    n_rows = n + (n_against or 0)
    n_pairs = pair_count(n, n_against)
    if blocks is not None:
        blocks = check_blocks(blocks, k, bits)
        cost, cand, narrow = tables_cost(n_rows, n_pairs, bits, k, blocks)
        return TableDesign("tables", bits, k, blocks, table_count(blocks, k), narrow, cand, cost)
    if k == 0 and n_against is None:
        return TableDesign("exact", bits, k, 0, 0, bits, 0.0, n * config["search_cost_row"])
    best = best_tables(n_rows, n_pairs, k, bits)
    brute = config["search_cost_brute"] * bits / 64 * n_pairs * memory_factor(n_rows)
    if brute < best.cost:
        return TableDesign("brute", bits, k, 0, 0, 0, n_pairs, brute)
    return best


def best_tables(n_rows: int, n_pairs: float, k: int, bits: int) -> TableDesign:
    """The cheapest table design under the cost model."""
    best = None
    for b in range(max(k + 1, bits // 64), bits + 1):
        if table_count(b, k) > config["max_tables"]:
            break
        cost, cand, narrow = tables_cost(n_rows, n_pairs, bits, k, b)
        if best is None or cost < best.cost:
            best = TableDesign("tables", bits, k, b, table_count(b, k), narrow, cand, cost)
        elif cost > 4 * best.cost and b > best.blocks + 2:
            break  # past the minimum: sorting cost only grows with more tables
    assert best is not None  # b = k + 1 gives k + 1 tables
    return best


def check_count(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {n!r}")
    return int(n)


def check_blocks(blocks, k: int, bits: int) -> int:
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
    tables = table_count(blocks, k)
    if tables > config["max_tables"]:
        raise ValueError(
            f"blocks={blocks} with k={k} makes {tables:,} tables, more than "
            f"config['max_tables']={config['max_tables']:,}; use fewer blocks"
        )
    return blocks
