import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline

import simhash_nb as sh
from simhash_nb.sklearn import SimhashVectorizer, vocabulary_hashes
from tests import naive
from tests.conftest import fp_ints

ASCII_TEXTS = [
    "The quick brown fox jumps over the lazy dog",
    "the quick brown fox jumped over the lazy dog!",
    "A stitch in time saves nine; a stitch in time.",
    "x",
    "",
    "Numbers 42 and 7 and _under_scores_ count as words too",
]


@pytest.mark.parametrize("ngram", [1, 2, 3])
@pytest.mark.parametrize("bits", [64, 128])
def test_count_vectorizer_matches_the_word_tokenizer(ngram, bits):
    cv = CountVectorizer(token_pattern=r"(?u)\b\w+\b", ngram_range=(ngram, ngram))
    X = cv.fit_transform(ASCII_TEXTS)
    fps = sh.fingerprint_sparse(X, cv.vocabulary_, bits=bits)
    want = sh.fingerprint(ASCII_TEXTS, tokenizer="word", ngram=ngram, bits=bits,
                          weights="tf", normalize=("lower",))
    # texts shorter than n words: sklearn makes no n-gram, the built-in tokenizer one
    short = [len(naive.words(t.lower())) < ngram for t in ASCII_TEXTS]
    for i, s in enumerate(short):
        if not s:
            assert fp_ints(fps[i:i + 1]) == fp_ints(want[i:i + 1])
    # same through the names in column order, and through precomputed hashes
    names = cv.get_feature_names_out()
    assert fps.tolist() == sh.fingerprint_sparse(X, names, bits=bits).tolist()
    h = vocabulary_hashes(cv.vocabulary_)
    assert fps.tolist() == sh.fingerprint_sparse(X, h, bits=bits).tolist()


def test_fingerprint_sparse_reference_and_formats():
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.5], [0.0, 0.0, 0.0], [0.5, 3.0, 0.0]]))
    vocab = ["alpha", "beta gamma", "中文"]
    hs = [naive.xxh64(t.encode()) for t in vocab]
    fps = sh.fingerprint_sparse(X, vocab)
    want = [naive.simhash([hs[0], hs[2]], [1.0, 2.5]), 0, naive.simhash(hs[:2], [0.5, 3.0])]
    assert fp_ints(fps) == want
    assert sh.fingerprint_sparse(X.toarray(), vocab).tolist() == fps.tolist()
    assert sh.fingerprint_sparse(X.tocsc(), vocab).tolist() == fps.tolist()
    assert sh.fingerprint_sparse(sp.csr_array(X) * 7.0, vocab).tolist() == fps.tolist()
    seeded = sh.fingerprint_sparse(X, vocab, seed=5)
    assert fp_ints(seeded)[0] == naive.simhash(
        [naive.xxh64(b"alpha", 5), naive.xxh64("中文".encode(), 5)], [1.0, 2.5])


def test_fingerprint_sparse_bad_input():
    X = sp.csr_matrix(np.eye(2))
    with pytest.raises(ValueError, match="2 columns but the vocabulary has 3"):
        sh.fingerprint_sparse(X, ["a", "b", "c"])
    with pytest.raises(ValueError, match="columns 0..n-1"):
        sh.fingerprint_sparse(X, {"a": 0, "b": 5})
    with pytest.raises(ValueError, match="non-negative"):
        sh.fingerprint_sparse(sp.csr_matrix(-np.eye(2)), ["a", "b"])
    with pytest.raises(TypeError, match="vocabulary"):
        sh.fingerprint_sparse(X, "ab")
    with pytest.raises(TypeError, match="sparse matrix or a 2-D"):
        sh.fingerprint_sparse(np.array(["a", "b"]), ["a", "b"])


def test_vectorizer_equals_tfidf_then_fingerprint_sparse():
    vec = SimhashVectorizer(ngram_range=(1, 2)).fit(ASCII_TEXTS)
    tv = TfidfVectorizer(token_pattern=r"(?u)\b\w+\b", ngram_range=(1, 2), norm=None)
    X = tv.fit_transform(ASCII_TEXTS)
    want = sh.fingerprint_sparse(X, tv.vocabulary_)
    assert vec.transform(ASCII_TEXTS).tolist() == want.tolist()
    assert vec.fit_transform(ASCII_TEXTS).tolist() == want.tolist()
    np.testing.assert_array_equal(vec.idf_, tv.idf_)
    assert vec.vocabulary_ == tv.vocabulary_
    spec = vec.spec_
    assert spec.tokenizer == "sklearn" and spec.weights == "tfidf" and spec.ngram == 2
    assert dict(spec.params)["vocabulary"].startswith("sha1:")
    assert sh.FingerprintSpec.from_json(spec.to_json()) == spec
    other = SimhashVectorizer(ngram_range=(1, 2)).fit(ASCII_TEXTS[:3])
    with pytest.raises(sh.SpecMismatchError, match="params"):
        sh.check_compatible(spec, other.spec_)


def test_weights_tf_binary_and_bits_output():
    tf = SimhashVectorizer(weights="tf").fit(ASCII_TEXTS)
    assert tf.transform(ASCII_TEXTS).tolist() == sh.fingerprint(
        ASCII_TEXTS, tokenizer="word", weights="tf", normalize=("lower",)).tolist()
    binary = SimhashVectorizer(weights="binary").fit(ASCII_TEXTS)
    assert binary.transform(ASCII_TEXTS).tolist() == sh.fingerprint(
        ASCII_TEXTS, tokenizer="word", weights="binary", normalize=("lower",)).tolist()
    b = SimhashVectorizer(weights="tf", output="bits").fit(ASCII_TEXTS)
    bits = b.transform(ASCII_TEXTS)
    fps = tf.transform(ASCII_TEXTS)
    assert bits.shape == (len(ASCII_TEXTS), 64) and bits.dtype == np.float32
    back = (bits.astype(np.uint64) << np.arange(64, dtype=np.uint64)).sum(axis=1)
    assert back.tolist() == fps.tolist()
    wide = SimhashVectorizer(bits=128, output="bits").fit(ASCII_TEXTS)
    assert wide.transform(ASCII_TEXTS).shape == (len(ASCII_TEXTS), 128)
    assert list(b.get_feature_names_out()[:2]) == ["bit0", "bit1"]


def test_unseen_terms_are_ignored():
    vec = SimhashVectorizer(weights="tf").fit(["a b c"])
    assert vec.transform(["a b c zzz"])[0] == vec.transform(["a b c"])[0]
    assert vec.transform(["zzz"])[0] == 0


def test_clone_params_and_not_fitted():
    vec = SimhashVectorizer(bits=128, ngram_range=(1, 3), weights="binary")
    c = clone(vec)
    assert c.get_params() == vec.get_params()
    assert not hasattr(c, "vocabulary_")
    c.set_params(bits=64)
    assert c.bits == 64 and vec.bits == 128
    with pytest.raises(NotFittedError):
        vec.transform(["a"])
    with pytest.raises(ValueError, match="bits"):
        SimhashVectorizer(bits=32).fit(["a"])
    with pytest.raises(ValueError, match="weights"):
        SimhashVectorizer(weights="bm25").fit(["a"])
    with pytest.raises(ValueError, match="missing"):
        SimhashVectorizer().fit(["a", None])
    with pytest.raises(TypeError, match="single string"):
        SimhashVectorizer().fit("abc")


def test_pipeline_and_grid_search():
    df = sh.datasets.load_licences()
    keep = df["group"].isin(["GPL", "BSD", "CC"])
    texts = df.loc[keep, "text"].tolist()
    y = df.loc[keep, "group"].to_numpy()
    pipe = Pipeline([("sh", SimhashVectorizer(output="bits")),
                     ("knn", KNeighborsClassifier(n_neighbors=1, metric="hamming"))])
    grid = GridSearchCV(pipe, {"sh__ngram_range": [(1, 1), (2, 2)], "sh__weights": ["tf",
                                                                               "tfidf"]},
                        cv=3)
    grid.fit(texts, y)
    assert set(grid.best_params_) == {"sh__ngram_range", "sh__weights"}
    assert grid.best_score_ > 0.6  # chance is below 0.5
    assert grid.best_estimator_.named_steps["sh"].spec_.tokenizer == "sklearn"


def test_jieba_tokenizer():
    texts = ["我们在北京天安门广场看升旗。", "我们在北京天安门看升旗", "完全不同的句子"]
    vec = SimhashVectorizer(tokenizer="jieba", weights="tf").fit(texts)
    assert "的" not in vec.vocabulary_ and "北京" in vec.vocabulary_
    fps = vec.transform(texts)
    assert fps.tolist() == sh.fingerprint(texts, tokenizer="jieba", weights="tf").tolist()
    assert dict(vec.spec_.params)["analyzer"] == "jieba"
