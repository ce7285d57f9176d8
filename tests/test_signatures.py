"""The corpus store's search by byte MinHash signatures (``_kernels/minhash_bytes``,
``_core/pipeline/signatures``): the kernels against their naive twins, the values'
agreement at a known Jaccard, the band design, and the signature file."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_nb._core.pipeline.signatures import (
    SALTS,
    WIDTH,
    BandDesign,
    SignatureColumn,
    band_design,
    band_pairs,
    signatures,
)
from tests import naive

hash_sets = st.lists(st.integers(0, 2**64 - 1), max_size=30)


def _csr(docs):
    indptr = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    return indptr, np.array([h for d in docs for h in d], dtype=np.uint64)


@settings(max_examples=40, deadline=None)
@given(st.lists(hash_sets, min_size=1, max_size=6))
def test_signatures_equal_the_naive_twin(docs):
    got = signatures(*_csr(docs))
    assert got.shape == (len(docs), WIDTH)
    assert [row.tolist() for row in got] == [naive.byte_signature(d, SALTS) for d in docs]


def test_the_salts_are_pinned():
    """The salts are part of the stored format (minhash.u8): a change is a new format."""
    assert SALTS.dtype == np.uint32 and len(set(SALTS.tolist())) == WIDTH
    assert SALTS[:3].tolist() == [1567174164, 1194116455, 1422795614]
    sig = signatures(np.array([0, 3]), np.array([1, 2**40 + 7, 2**63 + 5], dtype=np.uint64))
    assert sig[0, :8].tolist() == [25, 23, 37, 211, 102, 197, 212, 74]


@pytest.mark.parametrize("jaccard", [0.3, 0.7])
def test_values_agree_about_as_often_as_the_jaccard(jaccard):
    """2,000 pairs of sets of 100 hashes at a known Jaccard: the share of agreeing
    values is the Jaccard plus chance agreements (1 in 256), within a few standard
    errors (one value: a Bernoulli of that rate)."""
    rng = np.random.default_rng(1)
    shared = int(round(200 * jaccard / (1 + jaccard)))
    docs = []
    for _ in range(2000):
        pool = rng.integers(0, 2**63, size=200 - shared, dtype=np.uint64)
        common, rest = pool[:shared], pool[shared:]
        docs += [np.concatenate([common, rest[:100 - shared]]),
                 np.concatenate([common, rest[100 - shared:]])]
    sig = signatures(*_csr(docs))
    agree = (sig[0::2] == sig[1::2]).mean()
    expect = jaccard + (1 - jaccard) / 256
    assert abs(agree - expect) < 4 * np.sqrt(expect * (1 - expect) / sig[0::2].size) + 0.005


small_sigs = st.lists(st.lists(st.integers(0, 2), min_size=WIDTH, max_size=WIDTH),
                      min_size=1, max_size=7)


@settings(max_examples=60, deadline=None)
@given(small_sigs, small_sigs, st.sampled_from([(21, 3), (8, 8), (64, 1), (16, 4)]),
       st.integers(0, WIDTH))
def test_band_pairs_equal_the_naive_twin(new, stored, shape, least):
    """Values from three symbols, so that bands meet often: each pair that shares a band
    and agrees in ``least`` values, once, whatever the slice the stored rows come in."""
    bands, rows = shape
    a = np.array(new, dtype=np.uint8)
    b = np.array(stored, dtype=np.uint8)
    design = BandDesign(bands, rows, 0.99, least)
    got = [(int(i), int(j)) for x, y in band_pairs(a, lambda lo, hi: b[lo:hi], len(b), design)
           for i, j in zip(x, y, strict=True)]
    assert sorted(got) == naive.band_pairs(new, stored, bands, rows, least)
    assert len(got) == len(set(got))


def test_band_pairs_of_many_rows_need_a_second_run_of_a_full_task(monkeypatch):
    """More pairs in a task than its first room: the task runs again, nothing lost."""
    from simhash_nb.config import config

    monkeypatch.setitem(config, "pairs_initial_capacity", 3)
    sig = np.zeros((50, WIDTH), dtype=np.uint8)  # all alike: every pair
    got = list(band_pairs(sig[:4], lambda lo, hi: sig[lo:hi], 50, BandDesign(2, 8, 1, 64)))
    pairs = {(int(i), int(j)) for x, y in got for i, j in zip(x, y, strict=True)}
    assert pairs == {(i, j) for i in range(4) for j in range(50)}


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7, 0.8, 0.9, 0.95])
@pytest.mark.parametrize("recall", [0.9, 0.99, 0.999])
def test_the_band_design_reaches_the_recall_with_the_longest_bands(threshold, recall):
    d = band_design(threshold, recall)
    if d is None:  # no bands of 3 to 8 of the 64 values do it: only at low thresholds
        assert threshold <= 0.6
        assert all(1 - (1 - threshold**r) ** (WIDTH // r) < recall for r in range(3, 9))
        return
    assert d.bands * d.rows <= WIDTH and 3 <= d.rows <= 8
    assert d.recall == pytest.approx(1 - (1 - threshold**d.rows) ** d.bands)
    assert d.recall >= recall
    assert 1 - (1 - threshold**d.rows) ** (d.bands - 1) < recall  # the fewest bands
    if d.rows < 8:  # longer bands would not reach it
        longer = d.rows + 1
        assert 1 - (1 - threshold**longer) ** (WIDTH // longer) < recall


def test_signature_files_round_trip_and_refuse_a_wrong_size(tmp_path):
    path = str(tmp_path / "minhash.u8")
    col = SignatureColumn(path)
    indptr, hashes = _csr([[1, 2, 3], [4], [], [1, 2, 3]])
    col.append(indptr[:3], hashes)
    col.append(indptr[2:] - indptr[2], hashes[indptr[2]:])
    col.seal()
    again = SignatureColumn.open(path, 4)
    assert np.array_equal(again.read(0, 4), signatures(indptr, hashes))
    assert np.array_equal(again.read(1, 3), signatures(indptr, hashes)[1:3])
    with pytest.raises(ValueError, match="not the 320 of 5 signatures"):
        SignatureColumn.open(path, 5)
