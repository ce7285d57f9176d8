"""Identical-fingerprint groups: numpy's path (small inputs) and the radix kernel agree."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_nb._core.search.groups import group_identical
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
