"""The numpy twins that stand in for the LLVM intrinsics under ``NUMBA_DISABLE_JIT=1``.

The coverage run (``make coverage``) runs the kernels as plain Python; an intrinsic
cannot run there, so each has a twin. These tests hold every twin to its compiled
intrinsic's results, bit for bit.
"""

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from simhash_nb._kernels import hamming, lanes, popcount, signsums

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT,
                                reason="compares with compiled intrinsics")


@njit(cache=False)
def _sums(h, w, lo, hi, mixed):
    return signsums.signed_bit_sums(h, w, lo, hi, mixed)


@njit(cache=False)
def _majority(h, lo, hi, mixed):
    return signsums.bit_majority(h, lo, hi, mixed)


@njit(cache=False)
def _ctpop(x):
    return popcount._ctpop_u64(x)


@njit(cache=False)
def _lanes(v0, v1, y, f0, f1, k, words):
    if words == 1:
        return lanes.near_lanes(v0, y, f0, k)
    return lanes.near_lanes2(v0, v1, y, f0, f1, k)


@njit(cache=False)
def _row_distance(a, i, b, j):
    return hamming.row_distance(a, i, b, j)


def _hashes(rng, n):
    h = rng.integers(0, 2**64, n, dtype=np.uint64)
    if n > 2:  # repeats, so that some bit sums tie at zero
        h[rng.integers(0, n, n // 2)] = h[0]
    return h


@given(st.integers(0, 2**32 - 1), st.integers(0, 40), st.booleans(),
       st.sampled_from(["real", "small ints", "signed", "nan", "inf", "float32"]))
def test_signed_bit_sums_twin(seed, n, mixed, kind):
    rng = np.random.default_rng(seed)
    h = _hashes(rng, n)
    w = {"real": rng.random(n), "small ints": rng.integers(0, 3, n).astype(np.float64),
         "signed": rng.normal(size=n), "nan": np.full(n, np.nan),
         "inf": np.full(n, np.inf), "float32": rng.random(n).astype(np.float32)}[kind]
    lo, hi = sorted(rng.integers(0, n + 1, 2).tolist())
    got, valid = _sums(h, w, lo, hi, mixed)
    twin, twin_valid = signsums._signed_bit_sums_py(h, w, lo, hi, mixed)
    assert int(twin) == int(got) and twin_valid is bool(valid)


@given(st.integers(0, 2**32 - 1), st.integers(0, 40), st.booleans())
def test_bit_majority_twin(seed, n, mixed):
    rng = np.random.default_rng(seed)
    h = _hashes(rng, n)
    lo, hi = sorted(rng.integers(0, n + 1, 2).tolist())
    assert int(signsums._bit_majority_py(h, lo, hi, mixed)) == int(_majority(h, lo, hi, mixed))


def test_popcount_twin():
    for x in (0, 1, 2**63, 2**64 - 1, 0x5555_5555_5555_5555, 12345678901234567):
        assert int(popcount._ctpop_u64_py(x)) == int(_ctpop(np.uint64(x)))


@given(st.integers(0, 2**32 - 1), st.integers(8, 24), st.sampled_from([1, 2]),
       st.integers(0, 130))
def test_near_lanes_twins(seed, n, words, k):
    rng = np.random.default_rng(seed)
    v0 = rng.integers(0, 2**64, n, dtype=np.uint64)
    v1 = rng.integers(0, 2**64, n, dtype=np.uint64)
    v0[::2] = v0[0] ^ np.uint64(3)  # near neighbours, not only random words
    f0, f1, kk = v0[0], v1[0], np.uint64(k)
    for y in range(n - 7):
        twin = (lanes._near_lanes_py(v0, y, f0, kk) if words == 1
                else lanes._near_lanes2_py(v0, v1, y, f0, f1, kk))
        assert int(twin) == int(_lanes(v0, v1, y, f0, f1, kk, words))


@pytest.mark.parametrize("words", [1, 2])
def test_row_distance_body(words):
    rng = np.random.default_rng(words)
    shape = (5,) if words == 1 else (5, words)
    a = rng.integers(0, 2**64, shape, dtype=np.uint64)
    b = rng.integers(0, 2**64, shape, dtype=np.uint64)
    for i in range(5):
        for j in range(5):
            assert int(hamming.row_distance(a, i, b, j)) == int(_row_distance(a, i, b, j))
