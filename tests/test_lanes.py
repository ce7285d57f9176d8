"""The 8-lane Hamming tests of ``_kernels.lanes`` against numpy's popcount."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from simhash_nb._kernels.lanes import clear_lanes2, near_lanes, near_lanes2


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


@njit(cache=False)
def _clear(m0, m1, d0, d1):
    out = np.empty(m0.shape[0] - 7, dtype=np.uint8)
    for u in range(out.shape[0]):
        out[u] = clear_lanes2(m0, m1, u, d0, d1)
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 40), st.integers(1, 40))
def test_clear_lanes_match_the_mask_test(seed, n, r):
    """Lane j says whether a pair differing by (d0, d1) agrees on every bit of mask u + j."""
    rng = np.random.default_rng(seed)
    m0 = np.zeros(n, dtype=np.uint64)
    m1 = np.zeros(n, dtype=np.uint64)
    for u in range(n):  # sampled masks of r bits over 128
        for b in rng.choice(128, r, replace=False):
            if b < 64:
                m0[u] |= np.uint64(1) << np.uint64(b)
            else:
                m1[u] |= np.uint64(1) << np.uint64(b - 64)
    d0, d1 = (np.bitwise_or.reduce(np.uint64(1) << rng.integers(0, 64, 3).astype(np.uint64))
              for _ in range(2))
    got = _clear(m0, m1, d0, d1)
    clear = ((m0 & d0) | (m1 & d1)) == 0
    want = np.array([sum(int(clear[u + j]) << j for j in range(8)) for u in range(n - 7)],
                    dtype=np.uint8)
    np.testing.assert_array_equal(got, want)
    assert clear.any() or not got.any()
