import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simhash_nb as sh
from simhash_nb._kernels import hamming as hk
from tests import naive

u64 = hnp.arrays(np.uint64, st.integers(0, 40), elements=st.integers(0, 2**64 - 1))
u128 = hnp.arrays(np.uint64, st.tuples(st.integers(0, 30), st.just(2)),
                  elements=st.integers(0, 2**64 - 1))


@pytest.fixture(autouse=True, scope="module", params=["numpy", "kernel"])
def brute_path(request):
    """Every test here twice: small joins and matrices in numpy (the default up to
    ``config["numpy_brute_pairs"]``), and all of them in the parallel kernels."""
    from simhash_nb.config import config, reset_config

    config["numpy_brute_pairs"] = 1 << 24 if request.param == "numpy" else 0
    yield request.param
    reset_config()


def _clustered(rng, n, words, flips=3):
    """Fingerprints with many close neighbours (flip a few bits of a few seeds)."""
    base = rng.integers(0, 2**64 - 1, (max(1, n // 4), words), dtype=np.uint64, endpoint=True)
    rows = base[rng.integers(0, base.shape[0], n)]
    for _ in range(flips):
        bit = rng.integers(0, 64, (n, words)).astype(np.uint64)
        rows ^= (rng.random((n, words)) < 0.5).astype(np.uint64) << bit
    rows[-10:] = rows[:10]  # some exact duplicates
    return rows[:, 0].copy() if words == 1 else rows


@given(u64, u64)
def test_elementwise_matches_reference(a, b):
    m = min(len(a), len(b))
    d = sh.hamming(a[:m], b[:m], bits=64)  # without bits, two of length 2 are ambiguous
    assert d.dtype == np.uint8
    assert d.tolist() == [naive.hamming(x, y) for x, y in zip(a[:m], b[:m], strict=True)]


def test_elementwise_broadcasting_and_128_bits():
    a = np.array([[1, 0], [3, 1]], dtype=np.uint64)
    b = np.array([0, 0], dtype=np.uint64)
    assert sh.hamming(a, b).tolist() == [1, 3]
    assert sh.hamming(a, b, bits=64).tolist() == [[1, 0], [2, 1]]
    assert sh.hamming(a[0], a[1], bits=128) == naive.hamming(a[0], a[1]) == 2
    with pytest.raises(ValueError, match="bits"):
        sh.hamming(a, b, bits=32)
    assert sh.hamming(np.uint64(7), np.arange(3, dtype=np.uint64)).tolist() == [3, 2, 2]


@given(u64)
def test_matrix_matches_reference_64(a):
    m = sh.hamming_matrix(a)
    assert m.shape == (len(a), len(a))
    assert m.tolist() == [[naive.hamming(x, y) for y in a] for x in a]


@given(u128, u128)
def test_matrix_matches_reference_128(a, b):
    m = sh.hamming_matrix(a, b)
    assert m.tolist() == [[naive.hamming(x, y) for y in b] for x in a]


@given(u64, st.integers(0, 63))
def test_pairs_within_self_join_64(a, k):
    p = sh.pairs_within(a, k)
    assert list(zip(p.i.tolist(), p.j.tolist(), p.distance.tolist(), strict=True)) == \
        naive.pairs_within(list(a), k)


@pytest.mark.parametrize("words, k", [(1, 0), (1, 3), (1, 10), (2, 0), (2, 5), (2, 20)])
def test_pairs_within_on_clustered_data(words, k):
    rng = np.random.default_rng(k + 10 * words)
    a = _clustered(rng, 300, words)
    b = _clustered(rng, 120, words)
    b[:5] = a[:5]
    for other in (None, b):
        p = sh.pairs_within(a, k, b=other)
        want = naive.pairs_within(list(a), k, None if other is None else list(other))
        assert list(zip(p.i.tolist(), p.j.tolist(), p.distance.tolist(), strict=True)) == want
        assert len(want) > 0


def test_pairs_within_retries_when_the_first_capacity_overflows():
    from simhash_nb.config import config

    a = np.zeros(200, dtype=np.uint64)  # all identical: 19,900 pairs at distance 0
    before = config["pairs_initial_capacity"], config["numpy_brute_pairs"]
    config["pairs_initial_capacity"] = 16
    config["numpy_brute_pairs"] = 0  # the kernel's retry, whichever path the module runs
    try:
        p = sh.pairs_within(a, 0)
    finally:
        config["pairs_initial_capacity"], config["numpy_brute_pairs"] = before
    assert len(p) == 200 * 199 // 2
    assert (p.i < p.j).all() and not p.distance.any()
    assert len(set(zip(p.i.tolist(), p.j.tolist(), strict=True))) == len(p)


def test_pairs_unpack_and_frame():
    i, j, d = sh.pairs_within(np.array([0, 1], dtype=np.uint64), 1)
    assert (i.tolist(), j.tolist(), d.tolist()) == ([0], [1], [1])
    assert sh.pairs_within(np.array([0, 1], dtype=np.uint64), 1).to_frame().shape == (1, 3)
    assert len(sh.pairs_within(np.empty(0, np.uint64), 3)) == 0


def test_matrix_size_limit():
    a = np.zeros(1000, dtype=np.uint64)
    with pytest.raises(MemoryError, match="max_bytes"):
        sh.hamming_matrix(a, max_bytes=10_000)
    assert sh.hamming_matrix(a, max_bytes=1_000_000).shape == (1000, 1000)


@pytest.mark.parametrize(
    "bad, exc",
    [
        (np.array([1, 2], dtype=np.int64), TypeError),
        (np.array([1.0, 2.0]), TypeError),
        (np.zeros((3, 3), dtype=np.uint64), ValueError),
        (np.zeros((2, 2, 2), dtype=np.uint64), ValueError),
    ],
)
def test_refuses_non_fingerprint_arrays(bad, exc):
    with pytest.raises(exc):
        sh.pairs_within(bad, 1)
    with pytest.raises(exc):
        sh.hamming_matrix(bad)


def test_refuses_bad_k_and_mixed_widths():
    a = np.zeros(3, dtype=np.uint64)
    for k, exc in ((-1, ValueError), (64, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(exc):
            sh.pairs_within(a, k)
    assert len(sh.pairs_within(np.zeros((3, 2), np.uint64), 127)) == 3
    with pytest.raises(ValueError, match="64-bit"):
        sh.pairs_within(a, 1, b=np.zeros((3, 2), dtype=np.uint64))
    with pytest.raises(TypeError):
        sh.hamming(np.array([1], dtype=np.int64), np.array([1], dtype=np.uint64))


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="inspects assembly: no compiled code "
                    "under NUMBA_DISABLE_JIT")
def test_popcount_compiles_to_the_hardware_instruction():
    # cached code cannot be inspected: compile the kernel's source afresh
    from numba import njit

    fresh = njit(parallel=True, cache=False)(hk.pairs_within.py_func)
    a = np.zeros(4, dtype=np.uint64)
    fresh(a, a, 0, 4, 1, True, 1, 4)
    asm = "\n".join(fresh.inspect_asm().values())
    assert "popcnt" in asm  # popcntq, or vpopcntq where the loop vectorises
