"""Binary features and fingerprints in one tokenising pass equal the two-step path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core.fingerprint import features_and_fingerprints
from simhash_nb._core.text import text_buffers
from simhash_nb._core.unicode import word_classes
from simhash_nb._kernels.bitsums import occurrences, sorted_distinct
from simhash_nb._kernels.shingles import MODE_CHAR, MODE_WORD
from tests import naive

# Letters, digits, punctuation, runs of spaces, CJK, kana, combining marks, emoji.
ALPHABET = list("abcXYZ019 ,.!-_\t\n  ") + list("中国人民的é")
ALPHABET += ["\u0301", "\u3042", "😀", "\U00020000", "\u00a0"]
texts_st = st.lists(st.text(alphabet=ALPHABET, max_size=80), min_size=0, max_size=12)


def two_step(texts, bits, **opts):
    """Binary features from the tf kernels (two hashing passes, another sort), then the CSR
    fingerprint kernel: no code shared with the fused kernel past the tokenisers."""
    tf = sh.features(texts, weights="tf", **opts)
    fb = sh.FeatureBatch(tf.indptr, tf.hashes, np.ones(tf.hashes.shape[0]))
    return fb, sh.fingerprint_features(fb, bits=bits)


def assert_same(got, want):
    (fb, fps), (fb0, fps0) = got, want
    for name in ("indptr", "hashes", "weights"):
        a, b = getattr(fb, name), getattr(fb0, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert fps.dtype == fps0.dtype and fps.shape == fps0.shape and np.array_equal(fps, fps0)


@pytest.mark.parametrize("tokenizer", ["char", "word"])
@pytest.mark.parametrize("bits", [64, 128])
@given(texts=texts_st, n=st.integers(1, 5), raw=st.booleans())
def test_equals_features_then_fingerprint_features(texts, n, raw, tokenizer, bits):
    opts = {"tokenizer": tokenizer, "ngram": n, "normalize": () if raw else None}
    assert_same(features_and_fingerprints(texts, bits, **opts), two_step(texts, bits, **opts))


@pytest.mark.parametrize("tokenizer,n", [("char", 5), ("word", 3), ("word", 1)])
def test_long_documents_and_repeats(tokenizer, n):
    rng = np.random.default_rng(0)
    vocab = np.array([f"w{i}" for i in range(3000)])
    texts = [" ".join(rng.choice(vocab, 150_000)),  # past the hash set: sorted instead
             " ".join(rng.choice(vocab[:5], 2000)),  # few distinct features, many repeats
             "", "x", "a a a a a a", "\u4e2d\u56fd\u4eba " * 50]
    for bits in (64, 128):
        assert_same(features_and_fingerprints(texts, bits, tokenizer=tokenizer, ngram=n),
                    two_step(texts, bits, tokenizer=tokenizer, ngram=n))


def test_missing_texts_callable_tokenizers_and_specs():
    texts = ["a b c d", None, "a b c e", ""]
    with pytest.raises(ValueError, match=r"texts\[1\] is missing"):
        features_and_fingerprints(texts, tokenizer="word")
    assert_same(features_and_fingerprints(texts, 64, tokenizer="word", missing="zero"),
                two_step(texts, 64, tokenizer="word", missing="zero"))
    words = ["a b c d", "a b c e", ""]
    opts = {"tokenizer": str.split, "params": {"name": "split"}}
    assert_same(features_and_fingerprints(words, 128, **opts), two_step(words, 128, **opts))
    spec = sh.FingerprintSpec(tokenizer="word", ngram=2)
    assert_same(features_and_fingerprints(words, 128, spec=spec),
                two_step(words, 128, tokenizer="word", ngram=2))
    with pytest.raises(ValueError, match="binary"):
        features_and_fingerprints(words, spec=spec.replace(weights="tf"))
    with pytest.raises(ValueError, match="bits"):
        features_and_fingerprints(words, 32)


def test_binary_weights_take_no_memory():
    """The verified path holds only hashes: the weights are one shared read-only 1.0."""
    fb, _ = features_and_fingerprints(["the cat sat on the mat", "a dog"], 128)
    assert fb.weights.shape == fb.hashes.shape and fb.weights.strides == (0,)
    assert (fb.weights == 1.0).all() and not fb.weights.flags.writeable


def test_empty_batch():
    fb, fps = features_and_fingerprints([], 128)
    assert len(fb) == 0 and fb.indptr.tolist() == [0] and fps.shape == (0, 2)


@pytest.mark.parametrize("tokenizer,mode", [("char", MODE_CHAR), ("word", MODE_WORD)])
@given(texts=texts_st, n=st.integers(1, 4))
def test_occurrences_count_the_features_without_hashing(texts, n, tokenizer, mode):
    buf = text_buffers(texts)
    classes = word_classes() if mode == MODE_WORD else None
    got = [occurrences(buf.data, buf.offsets[i], buf.offsets[i + 1], n, classes)
           for i in range(len(texts))]
    assert got == [len(naive.feature_hashes(t, tokenizer, n)) for t in texts]


def _sorted_distinct(values, table_bits=10):
    values = np.array(values, dtype=np.uint64)
    size = (1 << table_bits) * 3 // 2
    k = sorted_distinct(values, values.shape[0], np.empty(size, np.uint64),
                        np.zeros(size, np.int64), 1)
    return values[:k].tolist()


hash_st = st.integers(0, 2**64 - 1)
clustered_st = st.integers(0, 2**10).map(lambda x: x << 50)  # few top bits: long probes


@given(st.lists(st.one_of(hash_st, clustered_st, st.integers(0, 300)), max_size=600))
def test_sorted_distinct_sorts_the_distinct_values(values):
    assert _sorted_distinct(values) == sorted(set(values))


def test_sorted_distinct_falls_back_to_sorting():
    rng = np.random.default_rng(1)
    big = rng.integers(0, 2**63, 2000, dtype=np.uint64).tolist()  # table too small
    assert _sorted_distinct(big + big[:100]) == sorted(set(big))
    small = list(range(400, 0, -1)) * 2  # one cluster at slot 0: a probe past the limit
    assert _sorted_distinct(small) == sorted(set(small))


def test_features_do_not_hold_the_kernels_buffer_of_repeats():
    texts = ["a a a a a a a a a a " * 300, "b c d e f g"] * 50  # mostly repeated shingles
    fb = sh.features(texts, weights="binary")
    assert fb.hashes.flags.owndata  # a copy: the kernel's buffer of ~3,000 slots a text is freed
    assert fb.hashes.shape[0] == fb.indptr[-1] == 50 * (2 + 7)
