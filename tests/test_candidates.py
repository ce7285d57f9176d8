"""The verified path's candidate design: its promise, checked on simulated shingle sets."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import simhash_nb as sh
from simhash_nb._core.candidates import (
    candidate_design,
    candidate_threshold,
    distance_pmf,
    threshold_recall,
)
from simhash_nb._core.search.api import self_join
from simhash_nb._core.search.families import tables_for_recall
from simhash_nb._core.search.options import SearchOptions


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("n", [1_000, 1_000_000])
def test_design_keeps_its_promise_with_fewer_tables_than_the_worst_case(bits, n):
    d = candidate_design(n, 0.7, bits, 0.99)
    pmf = distance_pmf(0.7, bits)
    assert d.method == "sampling"
    assert threshold_recall(pmf, d.k, bits, d.key_bits, d.tables) >= 0.99
    assert threshold_recall(pmf, d.k, bits, d.key_bits, d.tables - 1) < 0.99  # the fewest
    assert sum(pmf[: d.k + 1]) >= 0.999  # the Hamming bound loses a tenth of the misses
    worst = tables_for_recall(bits, d.k, d.key_bits, 0.99)  # designing for d = k alone
    assert d.tables * (4 if n >= 1_000_000 else 1.5) < worst


def test_pmf_and_threshold():
    assert abs(sum(distance_pmf(0.7, 128)) - 1) < 1e-12
    assert candidate_threshold(1.0, 64, 0.99) == 0
    assert candidate_threshold(0.7, 128, 0.999) > candidate_threshold(0.7, 128, 0.9)


def _pairs_at(jaccard: float, size: int, n_pairs: int, seed: int):
    """Pairs of random equal-sized sets (rows 2p, 2p + 1) at the given Jaccard."""
    rng = np.random.default_rng(seed)
    shared = round(2 * size * jaccard / (1 + jaccard))
    docs = []
    for _ in range(n_pairs):
        h = rng.integers(0, 2**63, 2 * size - shared, dtype=np.int64).astype(np.uint64)
        docs += [h[:size], h[size - shared:]]
    return docs, shared / (2 * size - shared)


@pytest.mark.parametrize("bits", [64, 128])
def test_candidates_find_pairs_at_the_threshold_as_promised(bits):
    docs, j = _pairs_at(0.7, 200, 2_000, seed=bits)
    assert abs(j - 0.7) < 0.005
    fps = sh.fingerprint_features(sh.FeatureBatch.from_lists(docs), bits=bits)
    opts = SearchOptions.make(bits, 1, random_state=5)
    design = candidate_design(len(docs), j, bits, 0.99)
    opts = dataclasses.replace(opts, k=design.k, designer=lambda rows: design)
    got = self_join(fps.reshape(len(docs), -1), opts)
    found = np.sum((got.i % 2 == 0) & (got.j == got.i + 1))
    assert found >= 0.975 * 2_000  # promised 0.99; 2,000 pairs: a few standard deviations
