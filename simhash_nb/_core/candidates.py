"""The candidate search of the verified path, designed for a recall at a Jaccard
threshold.

Binary-weight SimHash estimates the angle between shingle sets: a pair at Jaccard ``t``
(equal-sized sets, the worst case) differs in ``d ~ Binomial(bits, q)`` bits with
``q = arccos(2 t / (1 + t)) / pi`` (:mod:`simhash_nb._core.similarity`). Bit-sampling
tables of ``r`` bits find a pair at distance ``d`` in one of ``L`` tables with
probability ``1 - (1 - p_r(d))**L``, ``p_r(d) = C(bits - d, r) / C(bits, r)``
(:mod:`simhash_nb._core.search.families`). So a pair at the threshold is a candidate
with probability

    sum over d <= k of  P(Binomial(bits, q) = d) * (1 - (1 - p_r(d))**L),

where ``k`` is the Hamming threshold that bounds what is verified. Designing for this
average, rather than for the worst distance ``k`` alone, needs several times fewer
tables: most pairs at the threshold are much closer than ``k``. ``k`` is set so that
it costs a tenth of the misses allowed, and ``(r, L)`` are the cheapest in the search
cost model that reach the recall.
"""

from __future__ import annotations

import math

from ..config import config
from .search.dense import sort_bits_for
from .search.design import TableDesign, dense_rows_cost, pair_count
from .search.families import collision_probability, sampled_recall

__all__ = ["candidate_design", "candidate_threshold", "distance_pmf", "threshold_recall"]


def distance_pmf(threshold: float, bits: int) -> list[float]:
    """``P(d = x)``, ``x = 0..bits``, for a pair at Jaccard ``threshold`` (equal sizes)."""
    q = math.acos(min(1.0, 2.0 * threshold / (1.0 + threshold))) / math.pi
    return [math.comb(bits, x) * q**x * (1.0 - q) ** (bits - x) for x in range(bits + 1)]


def candidate_threshold(threshold: float, bits: int, recall: float) -> int:
    """Smallest ``k`` with ``P(Binomial(bits, q) <= k) >= recall`` for a pair at Jaccard
    ``threshold`` (equal-sized sets: ``q = arccos(2 t / (1 + t)) / pi``)."""
    cdf = 0.0
    for k, p in enumerate(distance_pmf(threshold, bits)):
        cdf += p
        if cdf >= recall:
            return min(k, bits - 1)
    return bits - 1


def threshold_recall(pmf: list[float], k: int, bits: int, sample_bits: int,
                     tables: int) -> float:
    """Probability that a pair whose distance follows ``pmf`` is within ``k`` and found
    by ``tables`` sampled tables of ``sample_bits`` bits."""
    total = 0.0
    for d in range(min(k, bits) + 1):
        p = collision_probability(bits, d, sample_bits)
        found = 1.0 if p >= 1.0 else -math.expm1(tables * math.log1p(-p)) if p > 0 else 0.0
        total += pmf[d] * found
    return total


def candidate_design(n_rows: int, threshold: float, bits: int, recall: float) -> TableDesign:
    """The cheapest sampled design whose candidates include a pair at Jaccard
    ``threshold`` with probability ``>= recall`` (see the module docstring).

    Examples
    --------
    >>> from simhash_nb._core.candidates import candidate_design
    >>> d = candidate_design(1_000_000, 0.7, 128, 0.99)
    >>> d.method, d.k, d.key_bits, d.tables
    ('sampling', 39, 12, 113)
    """
    k = candidate_threshold(threshold, bits, 1.0 - (1.0 - recall) / 10.0)
    pmf = distance_pmf(threshold, bits)
    pairs = pair_count(n_rows, None)
    best = None
    for r in range(4, min(bits - k, 48) + 1):
        if threshold_recall(pmf, k, bits, r, config["max_tables"]) < recall:
            break  # more bits only lower the recall
        lo, hi = 1, int(config["max_tables"])
        while lo < hi:  # the fewest tables: recall grows with them
            mid = (lo + hi) // 2
            if threshold_recall(pmf, k, bits, r, mid) >= recall:
                hi = mid
            else:
                lo = mid + 1
        collide = 2.0 ** -sort_bits_for(n_rows, r)
        cand = lo * pairs * (2.0**-r + collide)
        cost = lo * dense_rows_cost(n_rows) + cand * config["search_cost_dense_candidate"]
        if best is None or cost < best.cost:
            best = TableDesign("sampling", bits, k, 0, lo, r, cand, cost,
                               sampled_recall(bits, k, r, lo))
    if best is None:
        raise ValueError(f"no sampled design within config['max_tables'] reaches recall "
                         f"{recall} at threshold {threshold} with {bits}-bit fingerprints")
    return best
