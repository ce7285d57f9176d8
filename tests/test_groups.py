"""Identical-fingerprint groups: numpy's path (small inputs) and the radix kernel agree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_nb._core.search import groups as groups_module
from simhash_nb._core.search.groups import expand_pairs, group_identical, identical_rows
from simhash_nb.config import config, reset_config


def _groups(fps, numpy_path):
    config["numpy_group_rows"] = 10**9 if numpy_path else 0
    try:
        return group_identical(fps)
    finally:
        reset_config()


def _fields(g):
    return (g.n, g.n_distinct,
            *(None if a is None else a.tolist()
              for a in (g.first, g.inverse, g.ptr, g.rows, g.counts)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2), st.lists(st.integers(0, 6), min_size=0, max_size=60),
       st.integers(0, 2**32))
def test_numpy_groups_match_kernel(words, draws, seed):
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 2**63, size=(7, words), dtype=np.uint64)
    pool[1, 0] = pool[0, 0]  # rows that differ only in their second word (or are equal)
    fps = np.ascontiguousarray(pool[np.array(draws, dtype=np.int64)]).reshape(-1, words)
    assert _fields(_groups(fps, True)) == _fields(_groups(fps, False))


def test_numpy_groups_numbered_by_first_occurrence():
    fps = np.array([[5], [3], [5], [3], [9], [5]], dtype=np.uint64)
    g = _groups(fps, True)
    assert g.n_distinct == 3
    assert g.first.tolist() == [0, 1, 4]
    assert g.inverse.tolist() == [0, 1, 0, 1, 2, 0]
    assert g.ptr.tolist() == [0, 3, 5, 6]
    assert g.rows.tolist() == [0, 2, 5, 1, 3, 4]
    assert g.counts.tolist() == [3, 2, 1]


def test_no_repeats_gives_no_groups():
    fps = np.arange(10, dtype=np.uint64).reshape(-1, 1)
    assert not _groups(fps, True).has_duplicates
    assert not _groups(fps, False).has_duplicates


# --- expanding pairs of groups: numpy's path (small totals) and the kernels agree --------


def _numpy_and_kernel(call):
    """``call()`` with numpy's expansion, with the kernels', and with the default."""
    out = []
    for threshold in (2**62, 0):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(groups_module, "NUMPY_EXPAND_PAIRS", threshold)
            out.append(call())
    out.append(call())
    return out


def _assert_same(outs):
    first = outs[0]
    for other in outs[1:]:
        assert len(other) == len(first) == 3
        for x, y in zip(first, other):
            assert x.dtype == y.dtype
            assert x.tolist() == y.tolist()


def _random_groups(rng, draws):
    pool = rng.integers(0, 2**63, size=9, dtype=np.uint64)
    return group_identical(pool[np.array(draws, dtype=np.int64)][:, None])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=1, max_size=50),
       st.lists(st.integers(0, 8), min_size=1, max_size=50),
       st.booleans(), st.integers(0, 60), st.integers(0, 2**32))
def test_numpy_expansion_matches_kernel(draws_a, draws_b, self_join, n_pairs, seed):
    rng = np.random.default_rng(seed)
    ga = _random_groups(rng, draws_a)
    gb = ga if self_join else _random_groups(rng, draws_b)
    u = rng.integers(0, ga.n_distinct, size=n_pairs).astype(np.int64)
    v = rng.integers(0, gb.n_distinct, size=n_pairs).astype(np.int64)
    d = rng.integers(0, 65, size=n_pairs).astype(np.uint8)
    _assert_same(_numpy_and_kernel(lambda: expand_pairs(u, v, d, ga, gb, self_join)))
    _assert_same(_numpy_and_kernel(lambda: identical_rows(ga)))


def _sized_groups(sizes):
    """Groups ``0, 1, ...`` of the given sizes, their rows interleaved after the first."""
    rest = np.repeat(np.arange(len(sizes)), np.array(sizes) - 1)
    rng = np.random.default_rng(len(sizes))
    labels = np.concatenate((np.arange(len(sizes)), rng.permutation(rest)))
    return group_identical(labels.astype(np.uint64)[:, None])


# totals 255 * 257 = 2**16 - 1 (numpy by default) and 256 * 256 = 2**16 (the kernel)
@pytest.mark.parametrize("na, nb", [(255, 257), (256, 256)])
def test_expand_pairs_at_the_threshold(na, nb):
    ga = _sized_groups([na, 3, 1])
    gb = _sized_groups([2, nb])
    u = np.array([0, 2], dtype=np.int64)
    v = np.array([1, 0], dtype=np.int64)
    d = np.array([7, 3], dtype=np.uint8)
    outs = _numpy_and_kernel(lambda: expand_pairs(u, v, d, ga, gb, False))
    assert outs[0][0].shape[0] == na * nb + 2
    _assert_same(outs)
    g = _sized_groups([na, nb])  # self join: rows of the two groups of one set, i < j
    one, zero = np.array([1], dtype=np.int64), np.array([0], dtype=np.int64)
    outs = _numpy_and_kernel(lambda: expand_pairs(one, zero, d[:1], g, g, True))
    assert outs[0][0].shape[0] == na * nb
    assert (outs[0][0] < outs[0][1]).all()
    _assert_same(outs)


# pairs inside groups: 65341 + 190 + 0 + 3 + 1 (+ 1) = 2**16 - 1 (numpy), 2**16 (kernel)
@pytest.mark.parametrize("sizes", [[362, 20, 1, 3, 2], [2, 362, 20, 1, 3, 2]])
def test_identical_rows_at_the_threshold(sizes):
    g = _sized_groups(sizes)
    outs = _numpy_and_kernel(lambda: identical_rows(g))
    assert outs[0][0].shape[0] == 2**16 - 6 + len(sizes)
    _assert_same(outs)


def test_numpy_expansion_order():
    g = _sized_groups([3, 1])  # group 0: rows with label 0, in ascending order
    i, j, d = identical_rows(g)
    rows = g.rows[g.ptr[0]:g.ptr[1]].tolist()
    assert list(zip(i.tolist(), j.tolist())) == [
        (rows[0], rows[1]), (rows[0], rows[2]), (rows[1], rows[2])]
    assert d.dtype == np.uint8 and d.tolist() == [0, 0, 0]
