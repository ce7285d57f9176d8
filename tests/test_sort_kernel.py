"""The kernels' own uint64 sort against Python's ``sorted``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_nb._kernels.shingles import sort_u64, sort_unique

u64 = st.integers(0, 2**64 - 1)


@settings(max_examples=150, deadline=None)
@given(st.lists(u64, max_size=300), st.integers(0, 40), st.booleans())
def test_sort_u64_matches_sorted(values, tail, narrow):
    if narrow:  # values that share most of their bytes: passes are skipped
        values = [(v & 0xFF0) | 0xABCD000000000000 for v in values]
    arr = np.array(values + [7] * tail, dtype=np.uint64)
    m = len(values)
    sort_u64(arr, m, np.empty(max(m, 1), dtype=np.uint64))
    assert arr[:m].tolist() == sorted(values)
    assert arr[m:].tolist() == [7] * tail  # past m: untouched


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=200))
def test_sort_unique_matches_sorted_set(values):
    arr = np.array(values, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    expect = sorted(set(arr.tolist()))
    k = sort_unique(arr, len(values))
    assert arr[:k].tolist() == expect
