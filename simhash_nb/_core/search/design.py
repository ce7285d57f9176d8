"""Cost model: how many blocks and tables, or brute force (:class:`TableDesign`)."""

from __future__ import annotations

import dataclasses
import math
import numbers

from ...config import config
from ..docstrings import shared_docs
from ..similarity import resolve_k
from ..validation import check_fraction
from .dense import sort_bits_for
from .families import sampled_recall, tables_for_recall
from .layout import key_bits_for, row_bits_for, table_count, top_bits

# --- cost model -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TableDesign:
    """How :func:`near_duplicates` searches: the method, its tables, the recall it
    promises and the modelled cost.

    Attributes
    ----------
    method : {"tables", "dense", "sampling", "brute", "exact"}
        ``"tables"``: the pigeonhole search over packed table words (rows read back
        only for candidates that pass the bits stored beside the key: best for small
        ``k``); ``"dense"``: the same pigeonhole tables, each entry carrying its whole
        fingerprint so candidates are verified by streaming, vectorised popcounts
        (best for large ``k``, where tables are many and keys short); ``"sampling"``:
        bit-sampling LSH tables, found with probability ``recall`` at distance ``k``
        (only with ``recall < 1``); ``"brute"``: all pairs; ``"exact"``: ``k = 0`` in a
        self-join, where grouping identical fingerprints is the whole search.
    bits, k : int
        Fingerprint width and distance.
    blocks : int
        Pigeonhole blocks ``b`` (0 unless ``method`` is "tables" or "dense").
    tables : int
        Number of tables: ``C(b, k)`` for the pigeonhole, ``L`` for sampling.
    key_bits : int
        Bits in the narrowest table key (sampling: the sampled bits ``r``).
    candidates : float
        Expected candidate pairs checked over all tables, for uniformly random
        fingerprints.
    cost : float
        Modelled time in seconds on one core (see :func:`table_design`).
    recall : float
        Probability that a pair at distance exactly ``k`` is found: 1 for the exact
        methods, ``1 - (1 - p)**L`` with ``p = C(bits - k, r) / C(bits, r)`` for
        sampling (:meth:`recall_at` gives it at any distance).

    Examples
    --------
    >>> import simhash_nb as sh
    >>> d = sh.table_design(1_000_000, k=3)
    >>> d.method, d.blocks, d.tables
    ('tables', 4, 4)
    >>> d.recall, d.recall_at(3), d.recall_at(4)
    (1.0, 1.0, 0.0)
    """

    method: str
    bits: int
    k: int
    blocks: int
    tables: int
    key_bits: int
    candidates: float
    cost: float
    recall: float = 1.0

    def recall_at(self, d: int) -> float:
        """Probability that a pair at distance ``d`` is found (0 beyond ``k``).

        Parameters
        ----------
        d : int
            Hamming distance of the pair.

        Returns
        -------
        float
            1 for the exact methods at ``0 <= d <= k``; for sampling,
            ``1 - (1 - p)**L`` with ``p = C(bits - d, r) / C(bits, r)``; 0 when ``d`` is
            negative or beyond ``k``.

        Examples
        --------
        >>> import simhash_nb as sh
        >>> d = sh.table_design(1_000_000, k=12, recall=0.99)
        >>> d.recall_at(12) >= 0.99, d.recall_at(2) > d.recall_at(12), d.recall_at(13)
        (True, True, 0.0)
        """
        if d > self.k or d < 0:
            return 0.0
        if self.method != "sampling":
            return 1.0
        return sampled_recall(self.bits, d, self.key_bits, self.tables)


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


def dense_rows_cost(n_rows: int, bits: int = 64) -> float:
    """Modelled seconds to hash, sort and scan the rows of one dense table (measured
    the same per row at 1M and 10M rows: the partition keeps its writes in cache)."""
    extra = bits // 64 - 1
    return config["search_cost_table"] + n_rows * config["search_cost_dense_row"] * (
        1.0 + config["search_cost_dense_word"] * extra)


def dense_candidate_cost(bits: int = 64) -> float:
    """Modelled seconds to test one candidate pair of a dense table's run."""
    return config["search_cost_dense_candidate"] * (
        1.0 + config["search_cost_dense_candidate_word"] * (bits // 64 - 1))


def dense_cost(n_rows: int, n_pairs: float, bits: int, k: int, blocks: int):
    """(cost, candidates, narrowest key) of the dense pigeonhole search."""
    base, extra = divmod(bits, blocks)
    keep = blocks - k
    collide = 2.0 ** -sort_bits_for(n_rows, keep * base + min(extra, keep))
    candidates = 0.0
    for x in range(max(0, keep - (blocks - extra)), min(extra, keep) + 1):
        count = math.comb(extra, x) * math.comb(blocks - extra, keep - x)
        candidates += count * n_pairs * (2.0 ** -(keep * base + x) + collide)
    tables = table_count(blocks, k)
    cost = tables * dense_rows_cost(n_rows, bits) + candidates * dense_candidate_cost(bits)
    return cost, candidates, keep * base + max(0, keep - (blocks - extra))


def best_dense(n_rows: int, n_pairs: float, k: int, bits: int) -> TableDesign | None:
    """The cheapest dense pigeonhole design within ``config["max_tables"]``."""
    return _cheapest_blocks("dense", dense_cost, k + 1, n_rows, n_pairs, k, bits)


def _cheapest_blocks(method: str, cost_of, first: int, n_rows: int, n_pairs: float, k: int,
                     bits: int) -> TableDesign | None:
    """The pigeonhole design of ``method`` with the fewest modelled seconds
    (``cost_of(n_rows, n_pairs, bits, k, blocks)``), from ``first`` blocks up while the
    tables stay within ``config["max_tables"]``."""
    best = None
    for b in range(first, bits + 1):
        if table_count(b, k) > config["max_tables"]:
            break
        cost, cand, narrow = cost_of(n_rows, n_pairs, bits, k, b)
        if best is None or cost < best.cost:
            best = TableDesign(method, bits, k, b, table_count(b, k), narrow, cand, cost)
        elif cost > 4 * best.cost and b > best.blocks + 2:
            break  # past the minimum: sorting cost only grows with more tables
    return best


def best_sampling(n_rows: int, n_pairs: float, k: int, bits: int,
                  recall: float) -> TableDesign | None:
    """The cheapest bit-sampling design that finds pairs at distance ``k`` with
    probability ``>= recall``: over the sampled bits ``r``, ``L`` from
    :func:`~simhash_nb._core.search.families.tables_for_recall`."""
    best = None
    for r in range(1, min(bits - k, 48) + 1):
        collide = 2.0 ** -sort_bits_for(n_rows, r)
        tables = tables_for_recall(bits, k, r, recall)
        if tables > config["max_tables"]:
            continue
        cand = tables * n_pairs * (2.0**-r + collide)
        cost = tables * dense_rows_cost(n_rows, bits) + cand * dense_candidate_cost(bits)
        if best is None or cost < best.cost:
            got = sampled_recall(bits, k, r, tables)
            best = TableDesign("sampling", bits, k, 0, tables, r, cand, cost, got)
    return best


METHODS = ("auto", "tables", "dense", "sampling", "brute")

_COST_MODEL = """
    The cost model estimates seconds on one core of the reference machine (constants
    ``config["search_cost_*"]``). Each of the ``T = C(b, k)`` pigeonhole tables costs a
    start-up ``c_table`` plus ``N * (c_row + p * c_pass) * m(N)`` to make, partition,
    radix-sort (``p`` local passes) and scan the ``N`` rows, where
    ``m(N) = 1 + 0.5 * log10(N / 1e6)`` above a million rows accounts for cache misses.
    Its expected candidates are ``P / 2**key_bits`` for ``P`` pairs (``N (N - 1) / 2``,
    or ``N * M`` against a second set) of uniformly random fingerprints; each costs
    ``c_candidate``, plus ``c_verify`` for the fraction whose extra bits do not already
    rule it out. Dense tables cost ``c_dense_row`` per row and ``c_dense_candidate``
    per candidate (verified from the entries, no random reads). Sampling needs
    ``L = ceil(log(1 - recall) / log(1 - p))`` tables of ``r`` sampled bits, with
    ``p = C(bits - k, r) / C(bits, r)``; ``r`` minimises the cost. Brute force costs
    ``c_brute * P * m(N)``. The cheapest design wins; dense tables must be modelled
    ``config["search_dense_preference"]`` times cheaper than packed ones, which also
    refine big runs of near-identical fingerprints.
"""



@shared_docs(cost_model=_COST_MODEL)
def table_design(
    n: int,
    k: int | None = None,
    bits: int = 64,
    *,
    similarity: float | None = None,
    recall: float | None = None,
    n_against: int | None = None,
    blocks: int | None = None,
    method: str = "auto",
) -> TableDesign:
    """Choose how to search ``n`` fingerprints for pairs within ``k`` bits.

    Parameters
    ----------
    n : int
        Number of (distinct) fingerprints in the self-join, or of query rows.
    k : int, optional
        Largest Hamming distance reported; by default derived from ``similarity``
        (see :func:`~simhash_nb.k_for_similarity`).
    bits : {64, 128}
        Fingerprint width.
    similarity : float, optional
        Jaccard similarity to derive ``k`` from instead (default
        ``config["default_similarity"]``, 0.7: k = 12 at 64 bits, 25 at 128).
    recall : float, optional
        Accept an approximate search that finds each pair at distance ``k`` with at
        least this probability (``0 < recall <= 1``; 1 or None: exact). Smaller
        distances are found more often; no pair beyond ``k`` is ever reported.
    n_against : int, optional
        Size of the other set in a two-set search.
    blocks : int, optional
        Force the pigeonhole search with this many blocks (``k < blocks <= bits``).
    method : {"auto", "tables", "dense", "sampling", "brute"}, default "auto"
        Force a method (see :class:`TableDesign`); "sampling" needs ``recall < 1``.

    Returns
    -------
    TableDesign

    Raises
    ------
    ValueError
        On a bad argument (each names its limit).

    Notes
    -----
    {{cost_model}}

    Examples
    --------
    >>> import simhash_nb as sh
    >>> sh.table_design(10_000_000, k=3).tables  # C(5, 3) tables of 2 blocks
    10
    >>> sh.table_design(100, k=3).method
    'brute'
    >>> sh.table_design(1_000_000).k          # k from similarity 0.7
    12
    >>> d = sh.table_design(1_000_000, k=12, recall=0.99)
    >>> d.method, d.recall >= 0.99
    ('sampling', True)
    """
    k, n, n_against, recall = _check_request(n, k, bits, similarity, recall, n_against,
                                             method)
    n_rows = n + (n_against or 0)
    n_pairs = pair_count(n, n_against)
    if blocks is not None:
        return _forced_blocks(n_rows, n_pairs, bits, k, check_blocks(blocks, k, bits), method)
    brute = TableDesign("brute", bits, k, 0, 0, 0, n_pairs,
                        config["search_cost_brute"] * bits / 64 * n_pairs * memory_factor(n_rows))
    if method == "brute":
        return brute
    if k == 0 and n_against is None and method == "auto":
        return TableDesign("exact", bits, k, 0, 0, bits, 0.0, n * config["search_cost_row"])
    if method == "auto" and brute.cost <= config["search_brute_seconds"]:
        return brute  # a few milliseconds whatever the method; the tables' kernels would
        # cost seconds of compilation on a cold cache
    return _chosen(brute, method, n_rows, n_pairs, k, bits, recall)


def _chosen(brute: TableDesign, method: str, n_rows: int, n_pairs: float, k: int, bits: int,
            recall: float) -> TableDesign:
    """The best design of ``method``, or for ``"auto"`` the cheapest of them all."""
    options = {
        "tables": best_tables(n_rows, n_pairs, k, bits),
        "dense": best_dense(n_rows, n_pairs, k, bits),
        "sampling": best_sampling(n_rows, n_pairs, k, bits, recall) if recall < 1 else None,
    }
    if method != "auto":
        if options[method] is None:
            raise ValueError(f"no {method} design for k={k} at {bits} bits within "
                             f"config['max_tables']={config['max_tables']:,} tables")
        return options[method]
    return _cheapest(brute, options)


def _check_request(n, k, bits, similarity, recall, n_against, method):
    """Validation of :func:`table_design`: ``(k, n, n_against, recall)`` checked."""
    if bits not in (64, 128):
        raise ValueError(f"bits must be 64 or 128, got {bits!r}")
    k = resolve_k(k, similarity, bits)
    n = check_count(n, "n")
    if n_against is not None:
        n_against = check_count(n_against, "n_against")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    recall = check_recall(recall)
    if method == "sampling" and recall >= 1.0:
        raise ValueError("method='sampling' needs recall < 1 (it finds pairs with a stated "
                         "probability); pass recall=0.99, say")
    return k, n, n_against, recall


def _forced_blocks(n_rows, n_pairs, bits, k, blocks, method) -> TableDesign:
    """The pigeonhole design with the blocks the caller chose (dense or packed tables)."""
    name, model = ("dense", dense_cost) if method == "dense" else ("tables", tables_cost)
    cost, cand, narrow = model(n_rows, n_pairs, bits, k, blocks)
    return TableDesign(name, bits, k, blocks, table_count(blocks, k), narrow, cand, cost)


def _cheapest(brute: TableDesign, options: dict) -> TableDesign:
    """The design of least modelled cost; packed tables also refine big runs of
    near-identical rows, so dense ones must be clearly cheaper to be chosen."""
    scale = {"dense": config["search_dense_preference"]}
    best, best_cost = brute, brute.cost
    for name, d in options.items():
        if d is not None and d.cost * scale.get(name, 1.0) < best_cost:
            best, best_cost = d, d.cost * scale.get(name, 1.0)
    return best


def check_recall(recall) -> float:
    """A recall in (0, 1]; None means exact (1)."""
    return 1.0 if recall is None else check_fraction(recall, "recall")


def best_tables(n_rows: int, n_pairs: float, k: int, bits: int) -> TableDesign:
    """The cheapest packed-word pigeonhole design under the cost model."""
    best = _cheapest_blocks("tables", tables_cost, max(k + 1, bits // 64), n_rows, n_pairs,
                            k, bits)
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
