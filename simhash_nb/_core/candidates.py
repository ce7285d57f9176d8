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

import dataclasses
import math

import numpy as np

from ..config import config
from .hamming import distance_matrix
from .search.dense import sort_bits_for
from .search.design import TableDesign, dense_candidate_cost, dense_rows_cost, pair_count
from .search.families import collision_probability, sampled_recall

__all__ = ["background_pmf", "candidate_design", "candidate_threshold", "distance_pmf",
           "threshold_recall"]


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


def background_pmf(fps: np.ndarray, sample: int = 3000, seed: int | None = 0) -> np.ndarray:
    """Share of pairs at each distance ``0..bits`` among ``sample`` rows of ``fps``
    (``uint64[n, words]``) drawn with ``seed``: how far apart this corpus's documents'
    fingerprints are, all pairs of the sample compared.

    Related documents (one language, one kind of text) lie much closer than random
    fingerprints; this is what the candidates at a threshold ``k`` cost to verify.

    Examples
    --------
    >>> import numpy as np
    >>> fps = np.random.default_rng(0).integers(0, 2**63, size=(500, 1), dtype=np.uint64)
    >>> pmf = background_pmf(fps)
    >>> pmf.shape, round(float(pmf.sum()), 6), int(np.argmax(pmf)) in (31, 32, 33)
    ((65,), 1.0, True)
    """
    n, words = fps.shape
    rows = np.random.default_rng(seed).choice(n, min(n, sample), replace=False)
    s = fps[np.sort(rows)]
    m = s.shape[0]
    hist = np.zeros(64 * words + 1, dtype=np.int64)
    for a in range(0, m - 1, 256):  # rows a..b against the rows after a
        b = min(a + 256, m)
        d = distance_matrix(s[a:b], s[a + 1:], numpy=True)
        upper = np.arange(a + 1, m)[None, :] > np.arange(a, b)[:, None]
        hist += np.bincount(d[upper], minlength=hist.shape[0])
    return hist / max(int(hist.sum()), 1)


def candidate_design(n_rows: int, threshold: float, bits: int, recall: float, *,
                     background: np.ndarray | None = None, verify_cost: float = 0.0,
                     k: int | None = None) -> TableDesign:
    """The cheapest sampled design whose candidates include a pair at Jaccard
    ``threshold`` with probability ``>= recall`` (see the module docstring).

    Without ``background`` (or with ``k``), ``k`` spends a tenth of the misses allowed.
    With the corpus's ``background`` (:func:`background_pmf`) and the modelled cost of
    verifying a candidate, ``k`` may be smaller, down to where it spends nine tenths:
    fewer candidates to verify (related documents crowd just inside ``k``) against more
    tables for the recall that is left; the cheapest total wins.

    Examples
    --------
    >>> from simhash_nb._core.candidates import candidate_design
    >>> d = candidate_design(1_000_000, 0.7, 128, 0.99)
    >>> d.method, d.k, d.key_bits, d.tables
    ('sampling', 39, 12, 113)
    """
    aware = background is not None and verify_cost > 0.0
    k_hi = candidate_threshold(threshold, bits, 1.0 - (1.0 - recall) / 10.0)
    if k is not None:
        ks = [k]
    elif aware:
        k_lo = candidate_threshold(threshold, bits, 1.0 - 0.9 * (1.0 - recall))
        ks = list(range(min(k_lo, k_hi), k_hi + 1))
    else:
        ks = [k_hi]
    pmf = distance_pmf(threshold, bits)
    pairs = pair_count(n_rows, None)
    best = None
    for kk in ks:
        d = _design_at(n_rows, pairs, pmf, kk, bits, recall)
        if d is None:
            continue
        if aware:
            found = sum(float(background[x]) * sampled_recall(bits, x, d.key_bits, d.tables)
                        for x in range(kk + 1))
            d = dataclasses.replace(d, cost=float(d.cost + pairs * found * verify_cost))
        if best is None or d.cost < best.cost:
            best = d
    if best is None:
        raise ValueError(f"no sampled design within config['max_tables'] reaches recall "
                         f"{recall} at threshold {threshold} with {bits}-bit fingerprints")
    return best


# A candidate of the cross scan costs what the dense model says, against a stored row
# scanned: measured at 1.6M stored and 200k new 128-bit rows, k = 36 (2 threads, 2 runs):
# 10 key bits / 70 tables 3.1-3.7 s, 11 / 96 2.9-3.1 s, 12 / 132 3.2-3.3 s, 13 / 183
# 3.4-4.1 s, 14 / 254 4.8-5.5 s; at 20k new rows 8 / 38 0.9 s, 9 / 52 1.0 s, 10 / 70 1.0-1.1 s.


def cross_design(n_stored: int, n_new: int, threshold: float, bits: int, recall: float, *,
                 k: int) -> TableDesign:
    """The cheapest sampled design for searching ``n_new`` rows against ``n_stored``
    others at threshold ``k``, with the recall of :func:`candidate_design`.

    The same search as one over both sets, but only the ``n_stored * n_new`` pairs
    across them are candidates: with a few new rows, shorter keys in fewer tables
    cost less (each stored row is scanned once a table).

    Examples
    --------
    >>> from simhash_nb._core.candidates import candidate_design, cross_design
    >>> cross = cross_design(900_000, 100_000, 0.7, 128, 0.99, k=39)
    >>> cross.tables < candidate_design(1_000_000, 0.7, 128, 0.99, k=39).tables
    True
    """
    pmf = distance_pmf(threshold, bits)
    pairs = float(n_stored) * float(n_new) + pair_count(n_new, None)
    d = _design_at(n_stored + n_new, pairs, pmf, k, bits, recall)
    if d is None:
        raise ValueError(f"no sampled design reaches recall {recall} at k={k}")
    return d


def _design_at(n_rows: int, pairs: float, pmf: list[float], k: int, bits: int,
               recall: float) -> TableDesign | None:
    """The cheapest sampled tables (search cost only) for ``recall`` at threshold ``k``."""
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
        cost = lo * dense_rows_cost(n_rows, bits) + cand * dense_candidate_cost(bits)
        if best is None or cost < best.cost:
            best = TableDesign("sampling", bits, k, 0, lo, r, cand, cost,
                               sampled_recall(bits, k, r, lo))
    return best
