"""Large-k search: dense pigeonhole tables (exact) and sampled tables (stated recall)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core.search import families
from simhash_nb._core.search.dense import dense_search

from . import naive
from .test_search import assert_each_pair_once, assert_pairs_equal, planted


def _brute(fps, k, against=None):
    return sh.pairs_within(fps, k, against)


def _as_int(row) -> int:
    row = np.atleast_1d(row)
    return sum(int(w) << (64 * x) for x, w in enumerate(row.tolist()))


def _mask_int(mask) -> int:
    return int(mask[0]) | int(mask[1]) << 64


@pytest.mark.parametrize("bits,k", [(64, 8), (64, 12), (64, 16), (128, 20), (128, 30)])
def test_dense_is_complete_at_every_distance(bits, k):
    rng = np.random.default_rng(bits + k)
    fps = planted(rng, 3000, bits, k, per_distance=8)
    fps = np.concatenate([fps, fps[:40]])  # identical fingerprints too
    got = sh.near_duplicates(fps, k, method="dense")
    assert_each_pair_once(got)
    want = _brute(fps, k)
    assert_pairs_equal(got, want)
    assert set(np.unique(want.distance).tolist()) == set(range(k + 1))


@pytest.mark.parametrize("bits,k,blocks", [(64, 12, 13), (64, 12, 15), (64, 5, 7), (128, 24, 26)])
def test_dense_cross_join_and_forced_blocks(bits, k, blocks):
    rng = np.random.default_rng(blocks)
    a = planted(rng, 1500, bits, k, per_distance=5)
    b = np.concatenate([planted(rng, 1200, bits, k, per_distance=5), a[:30]])
    got = sh.near_duplicates(a, k, against=b, method="dense", blocks=blocks)
    assert_pairs_equal(got, _brute(a, k, b))


@pytest.mark.parametrize("bits", [64, 128])
def test_dense_adversarial_near_identical_groups(bits):
    rng = np.random.default_rng(7)
    words = bits // 64
    base = rng.integers(0, 2**64, size=(1, words), dtype=np.uint64)
    # 600 rows within 2 bits of one fingerprint, 600 identical, plus random rows: runs
    # whose near steps overflow the kernel's list of hits many times over
    near = np.repeat(base, 600, axis=0)
    for x, b in enumerate(rng.integers(0, bits, 600).tolist()):
        near[x, b // 64] ^= np.uint64(1) << np.uint64(b % 64)
    fps = np.concatenate([near, np.repeat(base, 600, axis=0),
                          rng.integers(0, 2**64, size=(2000, words), dtype=np.uint64)])
    fps = fps[:, 0].copy() if words == 1 else fps
    k = 12 if bits == 64 else 30
    got = sh.near_duplicates(fps, k, method="dense", max_pairs=10**7)
    assert len(got) >= 1200 * 1199 // 2  # the 1,200 rows within 4 bits of each other
    assert_pairs_equal(got, _brute(fps, k))


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_dense_kernel_matches_naive_twin(data):
    bits = data.draw(st.sampled_from([64, 128]))
    n = data.draw(st.integers(2, 60))
    k = data.draw(st.integers(0, 20 if bits == 64 else 40))
    seed = data.draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    words = bits // 64
    fps = rng.integers(0, 2**64, size=(n, words), dtype=np.uint64)
    for x in range(1, n):  # neighbours, so that pairs exist
        if rng.random() < 0.5:
            src = fps[rng.integers(x)].copy()
            for b in rng.choice(bits, rng.integers(0, k + 2), replace=False):
                src[b // 64] ^= np.uint64(1) << np.uint64(b % 64)
            fps[x] = src
    fps = np.unique(fps, axis=0)  # the kernel sees distinct rows
    if data.draw(st.booleans()):
        fam = families.sampled(bits, data.draw(st.integers(1, 24)), data.draw(st.integers(1, 12)),
                               seed)
    else:
        fam = families.pigeonhole(bits, k, data.draw(st.integers(k + 1, min(bits, k + 4))))
    n_left = data.draw(st.sampled_from([-1, fps.shape[0] // 2]))
    e = np.empty(0, dtype=np.int64)
    res = dense_search(fps, n_left, fam, k, e, e, 10**9)
    i, j, d = res.result()
    ints = [_as_int(r) for r in fps]
    want = naive.table_pairs(ints, [_mask_int(m) for m in fam.masks], k, n_left)
    assert len(i) == len(want)  # each pair once
    assert {(int(a), int(b)): int(c) for a, b, c in zip(i, j, d)} == {
        key: v[0] for key, v in want.items()}


def test_dense_output_that_does_not_fit_is_redone(monkeypatch):
    from simhash_nb.config import config, reset_config

    rng = np.random.default_rng(3)
    fps = planted(rng, 2000, 64, 12, per_distance=40)
    want = _brute(fps, 12)
    try:
        config["pairs_initial_capacity"] = 3
        config["dense_tables_per_wave"] = 2
        got = sh.near_duplicates(fps, 12, method="dense")
    finally:
        reset_config()
    assert_pairs_equal(got, want)


@pytest.mark.parametrize("bits,k", [(64, 12), (128, 30)])
def test_sampling_recall_matches_the_design(bits, k):
    # many planted pairs at every distance 0..k: the measured recall at each distance
    # must match the design's promise (binomial tolerance)
    rng = np.random.default_rng(11)
    n_base = 20000
    base = rng.integers(0, 2**64, size=(n_base, bits // 64), dtype=np.uint64)
    per = 150
    src = rng.choice(n_base, size=(k + 1) * per, replace=False)
    near = base[src].copy()
    dist = np.repeat(np.arange(k + 1), per)
    for x, d in enumerate(dist):
        for b in rng.choice(bits, d, replace=False):
            near[x, b // 64] ^= np.uint64(1) << np.uint64(b % 64)
    fps = np.concatenate([base, near])
    f = fps[:, 0] if bits == 64 else fps
    design = sh.table_design(len(fps), k, bits, recall=0.99, method="sampling")
    got = sh.near_duplicates(f, k, recall=0.99, method="sampling")
    assert np.all(got.distance <= k)  # never a pair beyond k
    found = set(zip(got.i.tolist(), got.j.tolist()))
    for d in range(k + 1):
        rows = np.flatnonzero(dist == d)
        hits = sum((int(src[x]), n_base + int(x)) in found for x in rows)
        p = design.recall_at(d)
        sd = math.sqrt(max(p * (1 - p), 1e-4) / len(rows))
        assert hits / len(rows) >= p - 4 * sd - 0.01, (d, hits, p)
    assert design.recall_at(k) >= 0.99
    # the promise is honest overall too: at least 0.99 of the planted pairs (distance <= k)
    planted_found = sum((int(s), n_base + x) in found for x, s in enumerate(src))
    assert planted_found / len(src) >= 0.985


def test_sampling_is_seeded_and_never_beyond_k():
    rng = np.random.default_rng(5)
    fps = planted(rng, 5000, 64, 12, per_distance=30)
    a = sh.near_duplicates(fps, 12, recall=0.9)
    b = sh.near_duplicates(fps, 12, recall=0.9)
    c = sh.near_duplicates(fps, 12, recall=0.9, random_state=1)
    assert_pairs_equal(a, b)
    assert_each_pair_once(a)
    assert len(c) > 0 and np.all(c.distance <= 12)
    exact = _brute(fps, 12)
    exact_set = set(zip(exact.i.tolist(), exact.j.tolist()))
    assert set(zip(a.i.tolist(), a.j.tolist())) <= exact_set


def test_recall_on_clusters_and_dedupe():
    rng = np.random.default_rng(8)
    fps = planted(rng, 4000, 64, 12, per_distance=20)
    exact = sh.clusters(fps, 12)
    approx = sh.clusters(fps, 12, recall=0.999)
    # components can only split (an edge missed), never merge
    for lab in np.unique(approx):
        assert np.unique(exact[approx == lab]).shape[0] == 1
    assert sh.dedupe(fps, 12, recall=0.999).sum() >= sh.dedupe(fps, 12).sum()


def test_defaults_follow_the_similarity():
    assert sh.k_for_similarity(0.7) == 12 and sh.k_for_similarity(0.7, 128) == 25
    assert sh.k_for_similarity(0.9) < sh.k_for_similarity(0.5)
    assert abs(sh.similarity_for_k(sh.k_for_similarity(0.6)) - 0.6) < 0.05
    rng = np.random.default_rng(2)
    fps = planted(rng, 2000, 64, 14, per_distance=5)
    assert_pairs_equal(sh.near_duplicates(fps), _brute(fps, 12))
    assert_pairs_equal(sh.near_duplicates(fps, similarity=0.8), _brute(fps, 10))
    assert sh.table_design(10**6).k == 12 and sh.table_design(10**6, bits=128).k == 25


@pytest.mark.parametrize("kwargs,err,match", [
    ({"recall": 0}, ValueError, "recall must be in"),
    ({"recall": 1.5}, ValueError, "recall must be in"),
    ({"recall": "high"}, TypeError, "recall must be"),
    ({"similarity": 0}, ValueError, "similarity must be in"),
    ({"similarity": 1.2}, ValueError, "similarity must be in"),
    ({"k": 3, "similarity": 0.7}, ValueError, "not both"),
    ({"method": "magic"}, ValueError, "method must be one of"),
    ({"method": "sampling"}, ValueError, "needs recall < 1"),
    ({"random_state": 1.5}, TypeError, "random_state"),
])
def test_bad_search_options(kwargs, err, match):
    fps = np.arange(10, dtype=np.uint64)
    with pytest.raises(err, match=match):
        sh.near_duplicates(fps, **kwargs)


def test_k_too_large_for_max_pairs_is_refused_before_searching():
    fps = np.random.default_rng(0).integers(0, 2**64, size=30000, dtype=np.uint64)
    with pytest.raises(sh.TooManyPairsError, match="too large for 64-bit"):
        sh.near_duplicates(fps, 40, max_pairs=1000)


def test_costly_search_warns_with_an_alternative(monkeypatch):
    from simhash_nb.config import config, reset_config

    fps = np.random.default_rng(0).integers(0, 2**64, size=3000, dtype=np.uint64)
    try:
        config["search_warn_seconds"] = 0.0
        with pytest.warns(sh.SearchCostWarning, match="recall=0.99 would take"):
            sh.near_duplicates(fps, 12)
    finally:
        reset_config()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sh.near_duplicates(fps, 12)


def test_families_promise():
    assert families.collision_probability(64, 0, 10) == 1.0
    assert families.collision_probability(64, 60, 10) == 0.0
    p = families.collision_probability(64, 12, 16)
    assert math.isclose(p, math.comb(52, 16) / math.comb(64, 16))
    L = families.tables_for_recall(64, 12, 16, 0.99)
    assert families.sampled_recall(64, 12, 16, L) >= 0.99 > families.sampled_recall(64, 12, 16,
                                                                                    L - 1)
    fam = families.pigeonhole(64, 12, 15)
    assert fam.n_tables == math.comb(15, 12)
    assert np.all(np.bitwise_or.reduce(fam.block_masks, axis=0) == [2**64 - 1, 0])
    s1, s2 = families.sampled(128, 20, 5, 3), families.sampled(128, 20, 5, 3)
    assert np.array_equal(s1.masks, s2.masks)
    assert all(bin(_mask_int(m)).count("1") == 20 for m in s1.masks)
    s3 = families.sampled(128, 20, 5, 4)  # another seed, other tables
    assert not np.array_equal(s1.masks, s3.masks)


@pytest.mark.parametrize("bits,k", [(64, 12), (128, 30)])
def test_index_with_recall(tmp_path, bits, k):
    rng = np.random.default_rng(21)
    f = planted(rng, 6000, bits, k, per_distance=40)
    index = sh.SimhashIndex(k=k, bits=bits, recall=0.99)
    index.add(f[:4000])
    index.add(f[4000:])
    m = index.query(f[:1500])
    exact = sh.near_duplicates(f[:1500], k, against=f)
    got = list(zip(m.query.tolist(), m.id.tolist()))
    want = set(zip(exact.i.tolist(), exact.j.tolist()))
    assert len(set(got)) == len(got)  # each match once, however many tables found it
    assert set(got) <= want and np.all(m.distance <= k)
    assert len(got) >= 0.98 * len(want)
    index.save(tmp_path / "i.simhash")
    back = sh.SimhashIndex.load(tmp_path / "i.simhash")
    assert back.recall == 0.99 and "recall=0.99" in repr(back)
    assert len(back.query(f[:1500])) == len(m)
    with pytest.raises(ValueError, match="recall must be in"):
        sh.SimhashIndex(k=3, recall=2)
    with pytest.raises(ValueError, match="pass one of them"):
        sh.SimhashIndex(k=3, recall=0.9, blocks=5)


def test_designs_with_vanishing_collision_probability_terminate():
    # p(d) below 1e-16 (1 - p == 1 in floating point) must not loop forever
    assert families.tables_for_recall(128, 60, 60, 0.995) >= 2**40
    assert 0 < families.sampled_recall(128, 60, 60, 10**6) < 1e-6
    d = sh.table_design(3, 47, 128, recall=0.995)
    assert d.recall_at(47) >= 0.995
