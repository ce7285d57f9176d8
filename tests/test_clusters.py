"""clusters and dedupe: union-find labels against the pure-Python reference."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._kernels import unionfind

from . import naive
from .test_search import flip_bits, planted, random_fps


def reference_labels(fps, k):
    p = sh.pairs_within(fps, k)
    return np.array(naive.clusters(len(fps), zip(p.i, p.j)), dtype=np.int64)


@pytest.mark.parametrize("bits, k, blocks", [(64, 3, None), (64, 3, 5), (64, 0, None),
                                             (64, 8, None), (128, 3, None), (128, 12, 14)])
def test_clusters_match_union_find(bits, k, blocks):
    rng = np.random.default_rng(40 + k)
    fps = planted(rng, 600, bits, k, per_distance=30)
    fps = np.concatenate([fps, fps[:50], fps[10:12]])  # identical rows too
    fps = fps[rng.permutation(len(fps))]
    labels = sh.clusters(fps, k, blocks=blocks)
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, reference_labels(fps, k))
    assert np.all(labels <= np.arange(len(fps)))
    assert np.all(labels[labels] == labels)  # a label is its cluster's first row


def test_chains_join_clusters():
    # 0 ~ 1 ~ 2 ~ 3 one bit at a time: one cluster at k=1, though 0 and 3 differ by 3
    fps = np.array([0b0000, 0b0001, 0b0011, 0b0111, 0b1111_0000_0000], dtype=np.uint64)
    np.testing.assert_array_equal(sh.clusters(fps, 1), [0, 0, 0, 0, 4])
    np.testing.assert_array_equal(sh.clusters(fps[::-1].copy(), 1), [0, 1, 1, 1, 1])


def test_clusters_from_pairs():
    rng = np.random.default_rng(41)
    fps = planted(rng, 300, 64, 3, per_distance=20)
    p = sh.near_duplicates(fps, 3)
    near = p.distance <= 2
    filtered = sh.Pairs(p.i[near], p.j[near], p.distance[near])
    want = np.array(naive.clusters(len(fps), zip(filtered.i, filtered.j)))
    np.testing.assert_array_equal(sh.clusters(fps, pairs=filtered), want)
    np.testing.assert_array_equal(sh.clusters(fps, pairs=(filtered.i, filtered.j)), want)
    np.testing.assert_array_equal(sh.clusters(fps, 3, pairs=p), reference_labels(fps, 3))
    with pytest.raises(ValueError, match=f"in \\[0, {len(fps)}\\)"):
        sh.clusters(fps, pairs=([0], [len(fps)]))
    with pytest.raises(ValueError, match="equal length"):
        sh.clusters(fps, pairs=([0, 1], [2]))
    with pytest.raises(TypeError, match="integers"):
        sh.clusters(fps, pairs=([0.0], [1.0]))
    with pytest.raises(TypeError, match="Pairs object"):
        sh.clusters(fps, pairs=5)


def test_huge_identical_groups_are_linear():
    rng = np.random.default_rng(42)
    groups = random_fps(rng, 3, 64)
    n = 300_000
    fps = np.concatenate([np.repeat(groups, n // 3), random_fps(rng, 1000, 64)])
    fps[5] = flip_bits(groups[0], [3])  # near the first group
    order = rng.permutation(len(fps))
    fps = fps[order]
    sh.clusters(fps[:100], 3)  # compiled
    start = time.perf_counter()
    labels = sh.clusters(fps, 3)
    took = time.perf_counter() - start
    # 3 groups of 100k identical rows: 1.5e10 pairs if listed; linear time is well under a
    # second here (the bound is loose for busy machines)
    assert took < 20
    # reference: union-find over the distinct fingerprints, labelled by first row
    uniq, first, inverse = np.unique(fps, return_index=True, return_inverse=True)
    ulabels = np.array(naive.clusters(len(uniq), zip(*tuple(sh.pairs_within(uniq, 3))[:2])))
    comp_first = np.full(len(uniq), len(fps))
    np.minimum.at(comp_first, ulabels, first)
    np.testing.assert_array_equal(labels, comp_first[ulabels[inverse]])
    keep = sh.dedupe(fps, 3)
    assert keep.sum() == len(np.unique(labels))
    with pytest.raises(sh.TooManyPairsError):
        sh.near_duplicates(fps, 3)


def test_near_identical_groups():
    rng = np.random.default_rng(43)
    center = random_fps(rng, 1, 128)[0]
    fps = np.array(
        [flip_bits(center, rng.choice(128, size=rng.integers(0, 3), replace=False))
         for _ in range(400)] + list(random_fps(rng, 100, 128)),
        dtype=np.uint64,
    )
    np.testing.assert_array_equal(sh.clusters(fps, 3), reference_labels(fps, 3))


@pytest.mark.parametrize("keep", ["first", "last", False])
def test_dedupe_matches_reference(keep):
    rng = np.random.default_rng(44)
    fps = planted(rng, 400, 64, 3, per_distance=25)
    fps = np.concatenate([fps, fps[:30]])
    mask = sh.dedupe(fps, 3, keep=keep)
    assert mask.dtype == np.bool_ and mask.shape == (len(fps),)
    want = naive.dedupe(reference_labels(fps, 3).tolist(), keep)
    assert mask.tolist() == want
    if keep:
        # one row per cluster, and no two kept rows within k of each other
        kept = fps[mask]
        assert len(sh.near_duplicates(kept, 3)) == 0
        assert mask.sum() == len(np.unique(sh.clusters(fps, 3)))


def test_dedupe_docstring_and_errors():
    fps = np.array([0b0000, 0b1111_0000, 0b0001, 0b0011], dtype=np.uint64)
    assert sh.dedupe(fps, k=1).tolist() == [True, True, False, False]
    assert sh.dedupe(fps, k=1, keep="last").tolist() == [False, True, False, True]
    assert sh.dedupe(fps, k=1, keep=False).tolist() == [False, True, False, False]
    for bad in ("middle", True, None, 0):
        with pytest.raises(ValueError, match="keep must be"):
            sh.dedupe(fps, 1, keep=bad)
    with pytest.raises(TypeError, match="uint64"):
        sh.clusters(np.arange(4), 1)
    with pytest.raises(ValueError, match="k must be in"):
        sh.clusters(fps, -1)
    with pytest.raises(ValueError, match="greater than k"):
        sh.clusters(fps, 3, blocks=2)
    with pytest.raises(sh.TooManyPairsError, match="clusters would hold"):
        sh.clusters(planted(np.random.default_rng(0), 50, 64, 3), 3, max_pairs=0)


def test_empty_and_single():
    assert sh.clusters(np.empty(0, np.uint64), 3).tolist() == []
    assert sh.dedupe(np.empty((0, 2), np.uint64), 3).tolist() == []
    assert sh.clusters(np.ones(1, np.uint64), 3).tolist() == [0]


def test_union_find_kernel_against_reference():
    rng = np.random.default_rng(45)
    for n in (1, 10, 500):
        m = rng.integers(0, 2 * n)
        i, j = rng.integers(0, n, m), rng.integers(0, n, m)
        got = unionfind.components(n, i.astype(np.int64), j.astype(np.int64))
        assert got.tolist() == naive.clusters(n, zip(i, j))
        last = unionfind.last_of_component(got)
        assert last.tolist() == naive.dedupe(got.tolist(), "last")


@given(n=st.integers(0, 60), k=st.integers(0, 10), seed=st.integers(0, 2**32 - 1),
       bits=st.sampled_from([64, 128]))
def test_random_small(n, k, seed, bits):
    rng = np.random.default_rng(seed)
    fps = planted(rng, n, bits, k, per_distance=2) if n else random_fps(rng, 0, bits)
    labels = sh.clusters(fps, k)
    want = naive.clusters(len(fps), naive.pairs_within(fps.tolist(), k))
    assert labels.tolist() == want


# --- chaining ----------------------------------------------------------------------------


def test_large_k_chaining_warns():
    # at k = 22 of 64 bits each of 5,000 unrelated fingerprints has ~40 chance neighbours:
    # single linkage puts every row into one cluster
    fps = np.random.default_rng(46).integers(0, 2**64, 5_000, dtype=np.uint64)
    with pytest.warns(sh.ChainingWarning, match=r"sh\.clusters: one cluster holds 100\.0% "
                      r"of the rows \(5,000 of 5,000\).*more than k=22") as got:
        labels = sh.clusters(fps, k=22)
    assert (labels == 0).all()
    assert got[0].filename == __file__  # points at the caller's line
    assert "sh.cluster_texts" in str(got[0].message)
    with pytest.warns(sh.ChainingWarning, match=r"sh\.dedupe: one cluster") as got:
        keep = sh.dedupe(fps, k=22)
    assert keep.sum() == 1 and got[0].filename == __file__
    assert issubclass(sh.ChainingWarning, UserWarning)


@pytest.mark.filterwarnings("error::simhash_nb.ChainingWarning")
def test_no_chaining_warning_on_a_normal_corpus():
    fps = sh.fingerprint(sh.datasets.load_fortunes()["text"])
    assert np.bincount(sh.clusters(fps)).max() < 0.1 * len(fps)  # the default k = 12
    sh.dedupe(fps, k=12)
    # a big cluster of close rows (identical, or a few bits apart) is not a chain
    rng = np.random.default_rng(47)
    center = random_fps(rng, 1, 64)[0]
    near = [flip_bits(center, rng.choice(64, size=rng.integers(0, 3), replace=False))
            for _ in range(300)]
    fps = np.concatenate([np.array(near, dtype=np.uint64), random_fps(rng, 300, 64),
                          np.repeat(random_fps(rng, 1, 64), 200)])
    labels = sh.clusters(fps, k=3)
    assert np.bincount(labels).max() == 300
    # too few rows to judge; edges given by the caller are not checked
    sh.clusters(fps[:50], k=30)
    sh.clusters(fps, pairs=(np.arange(len(fps) - 1), np.arange(1, len(fps))))
