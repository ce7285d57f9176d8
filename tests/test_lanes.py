"""The 8-lane Hamming tests of ``_kernels.lanes`` against numpy's popcount."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from simhash_nb._kernels.lanes import near_lanes, near_lanes2


@njit(cache=False)
def _masks(v0, v1, f0, f1, k, words):
    out = np.empty(v0.shape[0] - 7, dtype=np.uint8)
    for y in range(out.shape[0]):
        if words == 1:
            out[y] = near_lanes(v0, y, f0, k)
        else:
            out[y] = near_lanes2(v0, v1, y, f0, f1, k)
    return out


def _expected(v0, v1, f0, f1, k, words):
    d = np.bitwise_count(v0 ^ f0).astype(np.int64)
    if words == 2:
        d += np.bitwise_count(v1 ^ f1)
    near = d <= k
    return np.array([sum(int(near[y + j]) << j for j in range(8))
                     for y in range(v0.shape[0] - 7)], dtype=np.uint8)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 40), st.sampled_from([1, 2]),
       st.integers(0, 130))
def test_near_lanes_match_popcount(seed, n, words, k):
    rng = np.random.default_rng(seed)
    v0 = rng.integers(0, 2**64, n, dtype=np.uint64)
    v1 = rng.integers(0, 2**64, n, dtype=np.uint64)
    f0, f1 = v0[n // 2], v1[n // 2]
    flips = rng.integers(0, 64, size=(n, 3))  # near neighbours too, not only random words
    for row in range(0, n, 3):
        v0[row] = f0 ^ np.bitwise_or.reduce(np.uint64(1) << flips[row].astype(np.uint64))
    got = _masks(v0, v1, f0, f1, np.uint64(k), words)
    np.testing.assert_array_equal(got, _expected(v0, v1, f0, f1, k, words))
