import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from tests import naive
from tests.conftest import fp_ints

ALPHABET = list("abc xyz,.") + list("中国人") + ["\u0301", "😀"]
texts_st = st.lists(st.one_of(st.none(), st.text(alphabet=ALPHABET, max_size=50)),
                    max_size=6)


@given(texts=texts_st, window=st.integers(1, 8), stride=st.integers(1, 8),
       n=st.integers(1, 3), tokenizer=st.sampled_from(["char", "word"]),
       bits=st.sampled_from([64, 128]))
def test_windows_match_reference(texts, window, stride, n, tokenizer, bits):
    w = sh.window_fingerprints(texts, window=window, stride=stride, tokenizer=tokenizer,
                               ngram=n, bits=bits, weights="tf", normalize=(), as_frame=False,
                               missing="skip")
    want_rows, want_fps = [], []
    for d, t in enumerate(texts):
        for j, (s, e, sub) in enumerate(naive.windows(t or "", tokenizer, window, stride)):
            want_rows.append((d, j, s, e))
            want_fps.append(naive.fingerprint_text(sub, tokenizer, n, bits))
    got_rows = list(zip(w.doc.tolist(), w.window.tolist(), w.start.tolist(), w.end.tolist(),
                        strict=True))
    assert got_rows == want_rows
    assert fp_ints(w.fingerprints) == want_fps


def test_window_positions_cover_every_token():
    text = " ".join(f"w{i}" for i in range(23))
    w = sh.window_fingerprints([text], window=10, stride=4)
    assert w["start"].tolist() == [0, 4, 8, 12, 13]
    assert w["end"].tolist() == [10, 14, 18, 22, 23]
    assert w["window"].tolist() == [0, 1, 2, 3, 4]
    assert (w["doc"] == 0).all()
    assert sh.FingerprintSpec.from_json(w.attrs["spec"]).tokenizer == "word"
    # default stride is half a window; a short text is one window of all of it
    w2 = sh.window_fingerprints([text, "just five words in here"], window=10)
    assert w2.loc[w2["doc"] == 0, "start"].tolist() == [0, 5, 10, 13]
    short = w2[w2["doc"] == 1]
    assert short[["start", "end"]].values.tolist() == [[0, 5]]
    assert short["fingerprint"].iloc[0] == sh.fingerprint(["just five words in here"],
                                                          tokenizer="word")[0]


def test_128_bit_frame_has_two_words():
    w = sh.window_fingerprints(["a b c d e f"], window=3, bits=128)
    whole = sh.window_fingerprints(["a b c d e f"], window=3, bits=128, as_frame=False)
    assert list(w.columns[-2:]) == ["fingerprint_lo", "fingerprint_hi"]
    assert w["fingerprint_hi"].tolist() == whole.fingerprints[:, 1].tolist()


def test_containment_of_arrays_is_the_share_of_matched_windows():
    a = np.array([0b0, 0b1111, 0xFF00], dtype=np.uint64)
    b = np.array([0b1, 0xFFFF0000], dtype=np.uint64)
    # window 0 is 1 bit from b[0]; window 1 is 3 bits from b[0]; window 2 is far
    assert sh.containment(a, b, k=0) == 0.0
    assert sh.containment(a, b, k=1) == pytest.approx(1 / 3)
    assert sh.containment(a, b, k=3) == pytest.approx(2 / 3)
    assert np.isnan(sh.containment(a[:0], b, k=3))
    assert sh.containment(a, b[:0], k=3) == 0.0


def test_quotation_is_contained_not_the_other_way_round():
    quote = ("it was the best of times it was the worst of times it was the age of "
             "wisdom it was the age of foolishness")
    essay = ("in his novel about two cities dickens opens with a famous line " + quote
             + " and the rest of the chapter tells of the year one thousand seven "
             "hundred and seventy five in england and in france")
    other = "a completely different text about gardening tomatoes and the summer rain " * 3
    w = sh.window_fingerprints([quote, essay, other], window=8, stride=4)
    c = sh.containment(w, k=3)
    got = {(r.a_doc, r.b_doc): r.containment for r in c.itertuples()}
    assert got[(0, 1)] == 1.0
    assert 0 < got[(1, 0)] < 0.5
    assert not any(2 in key for key in got)
    # the same through two frames
    wa = sh.window_fingerprints([quote], window=8, stride=4)
    wb = sh.window_fingerprints([other, essay], window=8, stride=4)
    c2 = sh.containment(wa, wb, k=3)
    assert c2[["a_doc", "b_doc"]].values.tolist() == [[0, 1]]
    assert c2["containment"].tolist() == [1.0]
    assert c2["windows"].tolist() == [int((w["doc"] == 0).sum())]


def test_bad_input():
    with pytest.raises(ValueError, match="window"):
        sh.window_fingerprints(["a b"], window=0)
    with pytest.raises(ValueError, match="stride"):
        sh.window_fingerprints(["a b"], window=2, stride=0)
    with pytest.raises(ValueError, match="char.*word"):
        sh.window_fingerprints(["a b"], tokenizer="jieba")
    a = np.zeros(2, np.uint64)
    with pytest.raises(ValueError, match="cannot be compared"):
        sh.containment(a, np.zeros((2, 2), np.uint64))
    with pytest.raises(TypeError, match="needs b_windows"):
        sh.containment(a)
    with pytest.raises(TypeError):
        sh.containment(a, pd.DataFrame({"doc": [0], "fingerprint": np.zeros(1, np.uint64)}))
    with pytest.raises(ValueError, match="k must be"):
        sh.containment(a, a, k=64)
    with pytest.raises(TypeError, match="uint64"):
        sh.containment(np.zeros(2, np.int64), a)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=30),
       st.lists(st.tuples(st.integers(0, 29), st.integers(0, 2**64 - 1),
                          st.integers(0, 8)), max_size=30),
       st.integers(0, 8))
def test_containment_matches_brute_force(a, edits, k):
    # b holds copies of some of a's windows with up to 8 bits flipped
    rng_bits = [(a[i % len(a)] ^ (mask & ((1 << nbits) - 1)) if a else mask)
                for i, mask, nbits in edits]
    a = np.array(a, dtype=np.uint64)
    b = np.array(rng_bits, dtype=np.uint64)
    got = sh.containment(a, b, k=k)
    if len(a) == 0:
        assert np.isnan(got)
        return
    matched = sum(1 for x in a if any(naive.hamming(x, y) <= k for y in b))
    assert got == matched / len(a)


def test_containment_is_robust_to_the_offset_with_stride_one():
    texts = sh.datasets.load_sample("fortunes")["text"].tolist()
    words = " ".join(texts[:400]).split()
    quote = " ".join(words[5000:5300])
    a = sh.window_fingerprints([quote], window=50, stride=25, as_frame=False)
    for off in (100, 101, 107, 112):
        essay = " ".join(words[:off]) + " " + quote + " " + " ".join(words[8000:8400])
        b = sh.window_fingerprints([essay], window=50, stride=1, as_frame=False)
        assert sh.containment(a.fingerprints, b.fingerprints) == 1.0
        assert sh.containment(b.fingerprints, a.fingerprints) < 0.5
