"""tokenizer=callable: a user's segmenter on the slow path, same hashing and kernels."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core.tokenizers import prepare
from tests import naive
from tests.conftest import fp_ints

ALPHABET = list("abcXYZ019 ,.!-_") + list("中国人") + ["\u0301", "😀"]
texts_st = st.lists(st.text(alphabet=ALPHABET, max_size=40), max_size=8)


def split_tokens(text):
    return text.split()


@given(texts=texts_st, n=st.integers(1, 3), bits=st.sampled_from([64, 128]),
       weights=st.sampled_from(["tf", "binary"]))
def test_callable_words_equal_the_builtin_word_tokenizer(texts, n, bits, weights):
    fast = sh.fingerprint(texts, tokenizer="word", ngram=n, bits=bits, weights=weights,
                          normalize=())
    slow = sh.fingerprint(texts, tokenizer=naive.words, ngram=n, bits=bits, weights=weights,
                          normalize=())
    assert fp_ints(slow) == fp_ints(fast)
    fb_fast = sh.features(texts, tokenizer="word", ngram=n, weights=weights, normalize=())
    fb_slow = sh.features(texts, tokenizer=naive.words, ngram=n, weights=weights, normalize=())
    assert fb_slow.indptr.tolist() == fb_fast.indptr.tolist()
    assert fb_slow.hashes.tolist() == fb_fast.hashes.tolist()
    assert fb_slow.weights.tolist() == fb_fast.weights.tolist()


def weighted(text):
    return [(w, float(len(w))) for w in text.split()]


def mixed(text):
    return ["a"] if text == "x" else [("b", 1.0)]


def test_weighted_tokens():
    fb = sh.features(["aa b aa", ""], tokenizer=weighted, weights="given")
    got = dict(zip(fb.hashes.tolist(), fb.weights.tolist(), strict=True))
    assert got == {naive.xxh64(b"aa"): 4.0, naive.xxh64(b"b"): 1.0}
    assert fb.n_features.tolist() == [2, 0]
    fps = sh.fingerprint(["aa b aa"], tokenizer=weighted, weights="given")
    assert fp_ints(fps) == [naive.simhash([naive.xxh64(b"aa"), naive.xxh64(b"b")], [4.0, 1.0])]
    with pytest.raises(ValueError, match="weights='given'"):
        sh.fingerprint(["a"], tokenizer=weighted)
    with pytest.raises(ValueError, match="returns \\(token, weight\\) pairs"):
        sh.fingerprint(["a"], tokenizer=split_tokens, weights="given")
    with pytest.raises(ValueError, match="finite and >= 0"):
        sh.fingerprint(["a"], tokenizer=lambda t: [(t, -1.0)], weights="given",
                       params={"name": "neg"})


def test_spec_records_a_name():
    spec, _ = prepare(tokenizer=split_tokens)
    assert spec.tokenizer == "callable"
    assert dict(spec.params) == {"name": "tests.test_callable.split_tokens"}
    spec2, _ = prepare(tokenizer=split_tokens, params={"name": "ws-split-v1"})
    assert dict(spec2.params)["name"] == "ws-split-v1"
    assert sh.FingerprintSpec.from_json(spec2.to_json()) == spec2
    with pytest.raises(ValueError, match="lambda"):
        sh.fingerprint(["a"], tokenizer=lambda t: t.split())
    # a spec cannot rebuild the callable: pass it again
    with pytest.raises(ValueError, match="pass the function again"):
        sh.fingerprint(["a b"], spec=spec)
    again = sh.fingerprint(["a b"], spec=spec, tokenizer=split_tokens)
    assert again[0] == sh.fingerprint(["a b"], tokenizer=split_tokens)[0]
    # with a spec, the spec's name stands: the caller vouches for the function
    assert prepare(spec=spec2, tokenizer=split_tokens)[0] == spec2
    with pytest.raises(sh.SpecMismatchError, match="name"):
        sh.fingerprint(["a b"], spec=spec2, tokenizer=split_tokens, params={"name": "other"})


def test_normalisation_runs_before_the_callable():
    seen = []

    def spy(text):
        seen.append(text)
        return text.split()

    sh.fingerprint(["ＡＢＣ Def"], tokenizer=spy, params={"name": "spy"})
    sh.fingerprint(["ＡＢＣ Def"], tokenizer=spy, params={"name": "spy"}, normalize=())
    assert seen == ["abc def", "ＡＢＣ Def"]


def test_missing_and_bad_outputs():
    with pytest.raises(ValueError, match=r"texts\[1\] is missing"):
        sh.fingerprint(["a", None], tokenizer=split_tokens)
    fps = sh.fingerprint(["a", None], tokenizer=split_tokens, missing="zero")
    assert fps[1] == 0 and fps[0] != 0
    with pytest.raises(TypeError, match="returned str"):
        sh.fingerprint(["a"], tokenizer=lambda t: t, params={"name": "x"})
    with pytest.raises(TypeError, match="neither a list of tokens"):
        sh.fingerprint(["a"], tokenizer=lambda t: [1, 2], params={"name": "x"})
    with pytest.raises(TypeError, match="tokens must be strings"):
        sh.fingerprint(["a"], tokenizer=lambda t: [("a", 1.0), (2, 1.0)], weights="given",
                       params={"name": "x"})

    with pytest.raises(TypeError, match="one kind"):
        sh.fingerprint(["x", "y"], tokenizer=mixed, weights="given")
    with pytest.raises(TypeError, match="name or a callable"):
        sh.fingerprint(["a"], tokenizer=3)


def test_tfidf_with_a_fitted_table():
    texts = ["a b c", "a b d", "a e f"]
    table = sh.fit_idf(texts, tokenizer=split_tokens)
    fb = sh.features(texts, tokenizer=split_tokens, weights="tfidf", params={"idf": table})
    a = naive.xxh64(b"a")
    w = dict(zip(fb.hashes[:3].tolist(), fb.weights[:3].tolist(), strict=True))
    assert w[a] == pytest.approx(1.0)  # in every document: ln(4/4) + 1
    assert w[naive.xxh64(b"c")] == pytest.approx(np.log(4 / 2) + 1)
    with pytest.raises(ValueError, match="needs params"):
        sh.fingerprint(texts, tokenizer=split_tokens, weights="tfidf")
    # the same table weighs the built-in word tokenizer's features identically
    fw = sh.features(texts, tokenizer="word", weights="tfidf", params={"idf": table})
    assert fw.weights.tolist() == fb.weights.tolist()


def seg(text):
    import jieba

    return jieba.lcut(text)


def test_jieba_idf_table_with_a_users_segmenter():
    fb_tf = sh.features(["北京北京天安门"], tokenizer=seg, normalize=())
    fb = sh.features(["北京北京天安门"], tokenizer=seg, weights="tfidf", normalize=(),
                     params={"idf": "jieba"})
    table = sh.IdfTable.from_jieba()
    np.testing.assert_allclose(fb.weights, fb_tf.weights * table.lookup(fb_tf.hashes))
    assert dict(prepare(tokenizer=seg, weights="tfidf", params={"idf": "jieba"})[0].params)[
        "idf"] == "jieba"
