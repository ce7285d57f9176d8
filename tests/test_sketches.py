"""The verified path's sketches (``_kernels/sketches``, ``_core/pipeline/sketches``):
the kernels against their naive twins, the check's miss rate at the threshold, its use
in the verified path and the corpus store."""

from __future__ import annotations

import json
import os
from math import comb

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core.pipeline import stages
from simhash_nb._core.pipeline.sketches import least_agreeing, sketch, sketches_agree
from simhash_nb._kernels import sketches as _sk
from tests import naive

WORD3 = {"tokenizer": "word", "ngram": 3}
hash_sets = st.lists(st.integers(0, 2**64 - 1), max_size=40)


def _nibbles(x: int) -> list[int]:
    return [(x >> (4 * b)) & 15 for b in range(16)]


@given(st.lists(hash_sets, min_size=1, max_size=8))
def test_sketches_equal_the_naive_twin(docs):
    indptr = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    hashes = np.array([h for d in docs for h in d], dtype=np.uint64)
    got = sketch(indptr, hashes)
    assert [_nibbles(int(x)) for x in got] == [naive.oph_sketch(d) for d in docs]


@given(st.lists(st.integers(0, 15), min_size=16, max_size=16),
       st.lists(st.integers(0, 15), min_size=16, max_size=16))
def test_agreeing_bins_equal_the_naive_twin(a, b):
    pack = lambda v: np.uint64(sum(x << (4 * i) for i, x in enumerate(v)))  # noqa: E731
    assert _sk.agreeing_bins(pack(a), pack(b)) == naive.agreeing_bins(a, b)


def _pair_at(rng, jaccard: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Two sets of ``size`` random hashes with Jaccard exactly ``shared / (2 size - shared)``,
    the shared count the least that reaches ``jaccard``."""
    shared = next(c for c in range(size + 1) if c / (2 * size - c) >= jaccard)
    pool = rng.integers(0, 2**64, 2 * size - shared, dtype=np.uint64)
    return pool[:size], np.concatenate([pool[:shared], pool[size:]])


@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.9])
def test_pairs_at_the_threshold_pass_and_unrelated_ones_do_not(threshold):
    """20,000 pairs just at the threshold: the check turns away at most a few (its
    modelled miss is 1e-4: 2 expected); of 20,000 unrelated pairs it keeps few at 0.7
    and above (random bins agree one time in 15)."""
    rng = np.random.default_rng(int(threshold * 10))
    n, size = 20_000, 120
    left, right = zip(*(_pair_at(rng, threshold, size) for _ in range(n)), strict=True)
    indptr = np.arange(0, 2 * n * size + 1, size, dtype=np.int64)
    sk = sketch(indptr, np.concatenate(left + right))
    kept = sketches_agree(sk[:n], sk[n:], threshold)
    assert (~kept).sum() <= 10
    unrelated = sketches_agree(sk[:n], np.roll(sk[n:], 1), threshold)
    if threshold >= 0.7:
        assert unrelated.mean() < {0.7: 0.04, 0.9: 0.001}[threshold]


def test_least_agreeing_follows_the_binomial_tail():
    for t in (0.3, 0.5, 0.7, 0.8, 0.9, 0.99):
        least = least_agreeing(t, 1e-4)
        below = sum(comb(16, x) * t**x * (1 - t) ** (16 - x) for x in range(least))
        at = below + comb(16, least) * t**least * (1 - t) ** (16 - least)
        assert below <= 1e-4 and (least == 16 or at > 1e-4)
    assert least_agreeing(0.7, 0) == 0


def test_the_check_keeps_the_verified_pairs(monkeypatch):
    """On near duplicates of real sentences, the check changes nothing that is reported:
    the same pairs as with every candidate verified (miss 0)."""
    base = sh.datasets.load_sample("fortunes")["text"].tolist()[:1500]
    texts = list(sh.datasets.make_near_duplicates(base, n=800, edit_rate=0.05,
                                                   random_state=2).texts)
    turned = []
    real = stages.sketches_agree
    monkeypatch.setattr(stages, "sketches_agree",
                        lambda a, b, t: turned.append(int((~(ok := real(a, b, t))).sum())) or ok)
    checked = sh.near_duplicate_texts(texts, 0.6, **WORD3)
    assert sum(turned) > 0  # the check did turn candidates away
    monkeypatch.setitem(sh.config, "verify_sketch_miss", 0)
    every = sh.near_duplicate_texts(texts, 0.6, **WORD3)
    assert len(every.i) > 300
    assert every.i.tolist() == checked.i.tolist() and every.j.tolist() == checked.j.tolist()


def test_store_segments_keep_sketches_and_old_segments_still_answer(tmp_path):
    """A segment saves its documents' sketches (checked like the other files); a segment
    written before them (no sketches in its manifest entry) answers the same pairs."""
    base = sh.datasets.load_sample("fortunes")["text"].tolist()[:600]
    texts = list(sh.datasets.make_near_duplicates(base, n=300, edit_rate=0.05,
                                                   random_state=3).texts)
    old, new = pd.DataFrame({"text": texts[:700]}), pd.DataFrame({"text": texts[700:]})
    store = sh.CorpusStore.create(tmp_path / "s", **WORD3)
    store.add(old)
    seg = store.manifest["segments"][0]
    assert np.load(tmp_path / "s" / seg["name"] / "sketches.npy").shape == (700,)
    want = store.query(new, 0.7)
    assert len(want) > 20
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    for key in ("sizes", "crc32"):
        del manifest["segments"][0][key]["sketches.npy"]
    (tmp_path / "s" / "manifest.json").write_text(json.dumps(manifest))
    os.remove(tmp_path / "s" / seg["name"] / "sketches.npy")
    got = sh.CorpusStore.open(tmp_path / "s").query(new, 0.7)
    pd.testing.assert_frame_equal(got, want)
