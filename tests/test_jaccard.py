"""Jaccard kernels and sh.jaccard against the pure-Python references in tests/naive.py."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._kernels import jaccard as jk
from simhash_nb.config import config, reset_config
from tests import naive

# small hash ranges make overlaps likely; extremes check unsigned comparisons
_hash = st.one_of(
    st.integers(0, 40),
    st.sampled_from([0, 1, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]),
)
_doc = st.lists(_hash, max_size=30)
_docs = st.lists(_doc, min_size=1, max_size=8)


def _batch(docs) -> sh.FeatureBatch:
    return sh.FeatureBatch.from_lists([np.array(d, dtype=np.uint64) for d in docs])


@given(_docs)
def test_all_pairs_match_naive(docs):
    got = sh.jaccard(_batch(docs))
    n = len(docs)
    want = [naive.jaccard(docs[i], docs[j]) for i, j in itertools.combinations(range(n), 2)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


@given(_docs, st.data())
def test_given_pairs_match_naive(docs, data):
    n = len(docs)
    idx = st.integers(0, n - 1)
    pairs = data.draw(st.lists(st.tuples(idx, idx), max_size=20))
    arr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    got = sh.jaccard(_batch(docs), arr)
    want = [naive.jaccard(docs[i], docs[j]) for i, j in pairs]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


@given(st.lists(st.integers(0, 2**64 - 1), min_size=0, max_size=3, unique=True),
       st.lists(st.integers(0, 2**64 - 1), min_size=120, max_size=200, unique=True))
def test_gallop_path_for_very_different_sizes(small, large):
    # shares some of large's elements so that hits happen on the binary-search path
    small = sorted(set(small) | set(large[::60]))
    docs = [small, large]
    assert len(small) * 16 < len(large)
    got = sh.jaccard(_batch(docs), [(0, 1), (1, 0)])
    want = naive.jaccard(small, large)
    np.testing.assert_allclose(got, [want, want], rtol=0, atol=1e-15)


@given(_docs, st.sampled_from([0.05, 0.25, 1 / 3, 0.5, 0.75, 1.0]))
def test_pruned_all_pairs_above_threshold_match_naive(docs, threshold):
    got = sh.jaccard_pairs(_batch(docs), threshold=threshold, candidates="all")
    want = [
        (i, j, naive.jaccard(docs[i], docs[j]))
        for i, j in itertools.combinations(range(len(docs)), 2)
        if naive.jaccard(docs[i], docs[j]) >= threshold
    ]
    assert [tuple(r) for r in got[["i", "j"]].itertuples(index=False)] == [w[:2] for w in want]
    np.testing.assert_array_equal(got["jaccard"], [w[2] for w in want])


def test_empty_sets_are_identical():
    fb = _batch([[], [], [5]])
    np.testing.assert_array_equal(sh.jaccard(fb), [1.0, 0.0, 0.0])


def test_condensed_order_is_triu():
    rng = np.random.default_rng(1)
    docs = [rng.integers(0, 30, size=rng.integers(0, 20)) for _ in range(13)]
    fb = _batch(docs)
    all_pairs = sh.jaccard(fb)
    i, j = np.triu_indices(13, 1)
    np.testing.assert_array_equal(all_pairs, sh.jaccard(fb, (i, j)))


def test_unsorted_and_repeated_hashes_are_sets():
    fb = sh.FeatureBatch(
        np.array([0, 4, 7]), np.array([9, 3, 9, 1, 3, 3, 2], dtype=np.uint64), np.ones(7)
    )
    assert sh.jaccard(fb)[0] == pytest.approx(naive.jaccard([9, 3, 1], [3, 2]))
    assert sh.jaccard([np.array([2, 1, 2], dtype=np.uint64), [1, 5]])[0] == pytest.approx(1 / 3)


def test_texts_use_the_features_of_sh_features():
    texts = ["the quick brown fox", "the quick brown fax", "", "lorem ipsum dolor"]
    sets = [naive.feature_hashes(t, "char", 4) for t in texts]
    want = [naive.jaccard(sets[i], sets[j]) for i, j in itertools.combinations(range(4), 2)]
    np.testing.assert_allclose(sh.jaccard(texts, ngram=4), want)
    words = [naive.feature_hashes(t, "word", 2, seed=7) for t in texts]
    want = naive.jaccard(words[0], words[1])
    got = sh.jaccard(texts, [(0, 1)], tokenizer="word", ngram=2, seed=7)
    assert got[0] == pytest.approx(want)
    spec = sh.FingerprintSpec.from_options(tokenizer="word", ngram=2, seed=7)
    assert sh.jaccard(texts, [(0, 1)], spec=spec)[0] == pytest.approx(want)


def test_pairs_forms_and_ids():
    texts = ["aaaa bbbb", "aaaa bbbc", "zzzz"]
    ids = ["x", "y", "z"]
    ref = sh.jaccard(texts, [(0, 1), (1, 2)])
    import pandas as pd

    df = pd.DataFrame({"i": ["x", "y"], "j": ["y", "z"]})
    np.testing.assert_array_equal(sh.jaccard(texts, df, ids=ids), ref)
    p = sh.Pairs(np.array([0, 1]), np.array([1, 2]), np.zeros(2, np.uint8))
    np.testing.assert_array_equal(sh.jaccard(texts, p), ref)
    assert sh.jaccard(texts, np.empty((0, 2), dtype=np.int64)).shape == (0,)


def test_bad_input():
    texts = ["abcd", "abce"]
    with pytest.raises(TypeError, match="not fingerprints"):
        sh.jaccard(sh.fingerprint(texts))
    with pytest.raises(ValueError, match="missing"):
        sh.jaccard(["abcd", None])
    with pytest.raises(ValueError, match="not a row position"):
        sh.jaccard(texts, [(0, 2)])
    with pytest.raises(ValueError, match="not a row position"):
        sh.jaccard(texts, [(-1, 0)])
    with pytest.raises(TypeError, match="ids="):
        sh.jaccard(texts, [("a", "b")])
    with pytest.raises(ValueError, match="not among the ids"):
        sh.jaccard(texts, [("a", "q")], ids=["a", "b"])
    with pytest.raises(ValueError, match="ids has 3 entries"):
        sh.jaccard(texts, [("a", "b")], ids=["a", "b", "c"])
    with pytest.raises(ValueError, match="unique"):
        sh.jaccard(texts, [("a", "a")], ids=["a", "a"])
    with pytest.raises(TypeError, match="pairs must be"):
        sh.jaccard(texts, np.zeros((2, 5), dtype=np.int64))
    try:
        config["jaccard_max_all_pairs"] = 2
        with pytest.raises(ValueError, match="jaccard_pairs"):
            sh.jaccard(["a", "b", "c"])
    finally:
        reset_config()


# --- MinHash kernels ------------------------------------------------------------------


@given(_docs, st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=6))
def test_minhash_matches_naive(docs, salts):
    fb = _batch(docs)
    s = np.array(salts, dtype=np.uint64)
    got = jk.minhash(fb.indptr, fb.hashes, s, np.empty((len(docs), len(salts)), np.uint64))
    for d, doc in enumerate(docs):
        assert [int(x) for x in got[d]] == naive.minhash(doc, salts)


@given(st.lists(st.lists(st.integers(0, 3), min_size=6, max_size=6), min_size=1, max_size=10),
       st.sampled_from([(1, 6), (2, 3), (3, 2), (6, 1), (2, 2)]))
def test_band_keys_and_buckets_match_naive(sigs, design):
    bands, rows = design
    sig = np.array(sigs, dtype=np.uint64)
    keys = jk.band_keys(sig, bands, rows, np.empty((len(sigs), bands), np.uint64))
    for d in range(len(sigs)):
        assert [int(x) for x in keys[d]] == naive.band_keys(sigs[d], bands, rows)
    for b in range(bands):
        col = np.ascontiguousarray(keys[:, b])
        packed, total = jk.bucket_pairs(col, np.argsort(col, kind="stable"), 10**6)
        got = {(int(p) >> 32, int(p) & 0xFFFFFFFF) for p in packed}
        want = naive.bucket_pairs([int(x) for x in col])
        assert got == want and total == len(want) == packed.shape[0]


def test_bucket_pairs_refuses_over_limit():
    keys = np.zeros(10, dtype=np.uint64)
    packed, total = jk.bucket_pairs(keys, np.arange(10), 44)
    assert total == 45 and packed.shape[0] == 0
