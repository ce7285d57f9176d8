"""Binary features and fingerprints in one tokenising pass equal the two-step path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit, prange

import simhash_nb as sh
from simhash_nb._core.features import binary_features
from simhash_nb._core.fingerprint import features_and_fingerprints
from simhash_nb._core.parallel import balanced_chunks, threads
from simhash_nb._core.text import text_buffers
from simhash_nb._core.tokenizers import kernel_classes
from simhash_nb._core.unicode import word_classes
from simhash_nb._kernels import bitsums
from simhash_nb._kernels.bitsums import distinct, occurrences, sorted_distinct
from simhash_nb._kernels.shingles import MODE_CHAR, MODE_WORD, doc_hashes
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


def _distinct(values, table_bits, stamps=None, stamp=1):
    values = np.array(values, dtype=np.uint64)
    size = 1 << table_bits
    stamps = np.zeros(size, np.int64) if stamps is None else stamps
    k = distinct(values, values.shape[0], np.empty(size, np.uint64), stamps, stamp)
    return sorted(values[:k].tolist())


@given(st.lists(st.one_of(hash_st, clustered_st, st.integers(0, 300)), max_size=600))
def test_distinct_keeps_each_value_once(values):
    assert _distinct(values, 11) == sorted(set(values))


def test_chunk_scratch_holds_the_longest_document_of_its_chunks():
    # distinct allocates nothing: the table must hold 2m slots for the longest document
    offsets = np.array([0, 10, 300_000, 300_010, 300_020])
    chunks = np.array([0, 2, 4])
    for c0, c1, longest in ((0, 1, 299_990), (1, 2, 10), (0, 2, 299_990)):
        _, _, _, gram, table, stamps = bitsums.chunk_scratch(offsets, chunks, c0, c1, 5, True)
        assert table.shape[0] >= 2 * (longest + 1) and stamps.shape == table.shape
        assert not stamps.any() and gram.shape[0] == longest + 1 + 5
    assert bitsums.chunk_scratch(offsets, chunks, 0, 1, 5, False)[4].shape == (1,)


def test_fingerprint_of_a_document_longer_than_the_shared_table():
    rng = np.random.default_rng(3)  # over 2**16 distinct 5-grams: its own table
    text = "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), 80_000))
    assert len({text[i:i + 5] for i in range(len(text) - 4)}) > 2**16
    got = sh.fingerprint([text, "short text"], tokenizer="char", ngram=5, weights="binary",
                         bits=128, normalize=None)
    want = [naive.fingerprint_text(t, "char", 5, 128, "binary") for t in (text, "short text")]
    assert [naive.fingerprint_int(fp) for fp in got] == want


def test_features_do_not_hold_the_kernels_buffer_of_repeats():
    texts = ["a a a a a a a a a a " * 300, "b c d e f g"] * 50  # mostly repeated shingles
    fb = sh.features(texts, weights="binary")
    assert fb.hashes.flags.owndata  # a copy: the kernel's buffer of ~3,000 slots a text is freed
    assert fb.hashes.shape[0] == fb.indptr[-1] == 50 * (2 + 7)


# The parallel kernel binary_features used before it ran serial chunk kernels on threads
# (compiled here without parallel=True: prange is then range, and chunks are disjoint).
@njit(cache=False)
def _old_binary_features_fingerprints(data, offsets, chunks, n, seed, classes, words):
    ndocs = offsets.shape[0] - 1
    nchunks = chunks.shape[0] - 1
    seed = np.uint64(seed)
    region = np.zeros(nchunks + 1, dtype=np.int64)
    for c in prange(nchunks):
        total = 0
        for i in range(chunks[c], chunks[c + 1]):
            total += occurrences(data, offsets[i], offsets[i + 1], n, classes)
        region[c + 1] = total
    for c in range(nchunks):
        region[c + 1] += region[c]
    buf = np.empty(region[nchunks], dtype=np.uint64)
    out = np.zeros((ndocs, words), dtype=np.uint64)
    nfeat = np.zeros(ndocs, dtype=np.int64)
    for c in prange(nchunks):
        lo = chunks[c]
        hi = chunks[c + 1]
        hashes, wstart, wend, gram, table, stamps = bitsums._scratch(offsets, lo, hi, n, True,
                                                                     bitsums._SET_MAX)
        pos = region[c]
        for i in range(lo, hi):
            m = doc_hashes(data, offsets[i], offsets[i + 1], n, seed, classes,
                           wstart, wend, gram, hashes)
            k = sorted_distinct(hashes, m, table, stamps, i + 1)
            nfeat[i] = k
            bitsums.unit_fingerprint(hashes, 0, k, words, out[i])
            for t in range(k):
                buf[pos + t] = hashes[t]
            pos += k
    indptr = np.zeros(ndocs + 1, dtype=np.int64)
    for i in range(ndocs):
        indptr[i + 1] = indptr[i] + nfeat[i]
    for c in range(nchunks):
        src = region[c]
        dst = indptr[chunks[c]]
        for t in range(indptr[chunks[c + 1]] - dst):
            buf[dst + t] = buf[src + t]
    return buf, indptr, out


missing_st = st.one_of(st.text(alphabet=ALPHABET, max_size=200), st.none(),
                       st.just(float("nan")), st.just(""))


@pytest.mark.parametrize("tokenizer", ["char", "word"])
@given(texts=st.lists(missing_st, max_size=40), n=st.integers(1, 5), bits=st.sampled_from(
    [0, 64, 128]), n_jobs=st.sampled_from([1, 2]), normalize=st.sampled_from(
    [None, (), ("lower",), ("nfkc", "punct")]))
def test_chunk_kernels_on_threads_equal_the_parallel_kernel(texts, n, bits, n_jobs,
                                                            normalize, tokenizer):
    spec = sh.FingerprintSpec(tokenizer=tokenizer, ngram=n, normalize=normalize)
    fb, fps, valid = binary_features(texts, spec, bits, n_jobs)
    with threads(n_jobs) as n_threads:
        buf = text_buffers(texts, spec.normalize, n_threads)
        old, indptr, old_fps = _old_binary_features_fingerprints(
            buf.data, buf.offsets, balanced_chunks(buf.offsets), n, np.uint64(spec.seed),
            kernel_classes(spec), bits // 64)
    assert fb.indptr.dtype == indptr.dtype and np.array_equal(fb.indptr, indptr)
    assert fb.hashes.dtype == old.dtype and np.array_equal(fb.hashes, old[:indptr[-1]])
    assert fps.dtype == old_fps.dtype and fps.shape == old_fps.shape
    assert np.array_equal(fps, old_fps) and np.array_equal(valid, buf.valid)


def test_chunk_kernels_on_threads_equal_the_parallel_kernel_at_scale():
    rng = np.random.default_rng(2)
    vocab = np.array([f"w{i}" for i in range(500)] + ["中国", "é😀", ""])
    texts = [" ".join(rng.choice(vocab, rng.integers(0, 400))) for _ in range(3000)]
    texts[5] = None
    for tokenizer, n, bits in (("word", 3, 128), ("char", 4, 64)):
        spec = sh.FingerprintSpec(tokenizer=tokenizer, ngram=n)
        for n_jobs in (1, 2):
            fb, fps, _ = binary_features(texts, spec, bits, n_jobs)
            with threads(n_jobs):
                buf = text_buffers(texts, spec.normalize, n_jobs)
                old, indptr, old_fps = _old_binary_features_fingerprints(
                    buf.data, buf.offsets, balanced_chunks(buf.offsets), n,
                    np.uint64(spec.seed), kernel_classes(spec), bits // 64)
            assert np.array_equal(fb.indptr, indptr)
            assert np.array_equal(fb.hashes, old[:indptr[-1]])
            assert np.array_equal(fps, old_fps)
