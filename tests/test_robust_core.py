"""Bad input and edge cases of the core API (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_nb as sh
from simhash_nb import SpecMismatchError

# --- SimhashIndex without a spec ---------------------------------------------------------


def test_index_without_spec_adopts_the_first_spec(tmp_path):
    word = sh.FingerprintSpec.from_options(tokenizer="word")
    char = sh.FingerprintSpec.from_options(tokenizer="char")
    fps = sh.fingerprint(["a b c", "d e f"], spec=word)
    index = sh.SimhashIndex(k=3)
    index.add(fps[:1])  # no spec: nothing adopted yet
    assert index.spec is None
    index.add(fps[1:], spec=word)
    assert index.spec == word
    with pytest.raises(SpecMismatchError):
        index.add(fps[:1], spec=char)
    with pytest.raises(SpecMismatchError):
        index.query(fps[:1], spec=char)
    assert len(index) == 2
    index.save(tmp_path / "i.npz")
    loaded = sh.SimhashIndex.load(tmp_path / "i.npz")
    assert loaded.spec == word
    with pytest.raises(SpecMismatchError):
        loaded.add(fps[:1], spec=char)


def test_index_refuses_a_spec_of_another_width():
    index = sh.SimhashIndex(k=3)
    with pytest.raises(SpecMismatchError, match="128-bit"):
        index.add(np.zeros(1, np.uint64), spec=sh.FingerprintSpec.from_options(bits=128))
    assert index.spec is None and len(index) == 0


# --- bits must be the integer 64 or 128 --------------------------------------------------


@pytest.mark.parametrize("bad", [64.0, 128.0, True, "64"])
def test_bits_must_be_an_int(bad):
    with pytest.raises(TypeError, match="bits"):
        sh.FingerprintSpec.from_options(bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.FingerprintSpec(bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.fingerprint(["abc"], bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.fingerprint_features([np.array([1], np.uint64)], bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.window_fingerprints(["a b c d"], window=2, bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.SimhashIndex(k=3, bits=bad)


def test_bits_as_numpy_int_is_stored_as_int():
    spec = sh.FingerprintSpec.from_options(bits=np.int64(128))
    assert type(spec.bits) is int and '"bits":128' in spec.to_json()
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        sh.FingerprintSpec.from_options(bits=32)


def test_bits_float_refused_by_the_faces():
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match="bits"):
        pd.Series(["abc"]).simhash.fingerprint(bits=64.0)
    pytest.importorskip("sklearn")
    from simhash_nb.sklearn import SimhashVectorizer

    with pytest.raises(TypeError, match="bits"):
        SimhashVectorizer(bits=64.0).fit_transform(["abc def"])


# --- hamming: the width is never guessed from a confusable shape -------------------------


def test_hamming_broadcasting_idiom_is_64_bit_whatever_the_length():
    rng = np.random.default_rng(6)
    a = rng.integers(0, 2**64, 5, dtype=np.uint64)
    for m in (1, 2, 3):
        b = rng.integers(0, 2**64, m, dtype=np.uint64)
        d = sh.hamming(a[:, None], b[None, :])
        assert d.shape == (5, m)
        assert d.tolist() == [[bin(int(x) ^ int(y)).count("1") for y in b] for x in a]


def test_hamming_128_bit_rows_need_bits():
    fps = sh.fingerprint(["one two three", "one two four", "else"], bits=128)
    with pytest.raises(ValueError, match="pass bits=64 or bits=128"):
        sh.hamming(fps[0], fps[1])
    whole = [int(r[0]) | (int(r[1]) << 64) for r in fps]
    want = bin(whole[0] ^ whole[1]).count("1")
    assert int(sh.hamming(fps[0], fps[1], bits=128)) == want
    assert sh.hamming(fps, fps[0]).tolist() == [bin(w ^ whole[0]).count("1") for w in whole]
    grid = sh.hamming(fps[:, None, :], fps[None, :, :])
    assert grid.shape == (3, 3) and int(grid[0, 1]) == want
    with pytest.raises(ValueError, match="pass bits"):
        sh.hamming(fps, np.uint64(0))
    with pytest.raises(ValueError, match="last axis of length 2"):
        sh.hamming(fps, np.uint64(0), bits=128)
    assert sh.hamming(fps[0], fps[1], bits=64).shape == (2,)


# --- Python ints are fingerprints --------------------------------------------------------


def test_hamming_accepts_python_ints():
    assert int(sh.hamming(0xDEADBEEF, 0xDEADBEAD)) == 2
    assert int(sh.hamming(2**64 - 1, 0)) == 64
    assert sh.hamming([2**63, 1, 3], 0).tolist() == [1, 1, 2]  # exact, not float64
    with pytest.raises(ValueError, match=r"a\[1\] is -1"):
        sh.hamming([1, -1], 0)
    with pytest.raises(ValueError, match=r"b is 18446744073709551616"):
        sh.hamming(1, 2**64)
    with pytest.raises(TypeError, match=r"a\[0\] is a float"):
        sh.hamming([1.0], 0)
    with pytest.raises(TypeError, match="bool"):
        sh.hamming(True, 0)
    with pytest.raises(TypeError, match="view"):  # signed numpy arrays stay refused
        sh.hamming(np.array([1], dtype=np.int64), 0)


def test_index_and_search_accept_lists_of_ints():
    index = sh.SimhashIndex(k=2)
    index.add([1, 2, 2**64 - 1])
    assert index.fingerprints.tolist() == [1, 2, 2**64 - 1]
    m = index.query([3, 2**64 - 2])
    assert sorted(zip(m.query.tolist(), m.id.tolist())) == [(0, 0), (0, 1), (1, 2)]
    pairs = sh.near_duplicates([1, 3, 2**63], k=1)
    assert (pairs.i.tolist(), pairs.j.tolist()) == ([0], [1])
    with pytest.raises(ValueError, match=r"fps\[1\] is -3"):
        index.add([5, -3])
    with pytest.raises(TypeError, match=r"fps\[0\] is a float"):
        sh.near_duplicates([1.5, 2], k=1)
    assert len(index) == 3


# --- text input: bad UTF-8, lone surrogates, unordered containers, missing texts ---------


def _bad_utf8(large=False):
    import pyarrow as pa

    offsets = np.array([0, 3, 5, 8], np.int64 if large else np.int32)
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), 3,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"abc\xff\xfexyz")])


@pytest.mark.parametrize("normalize", [None, (), ("punct",), ("whitespace",), ("html",),
                                       ("lower",), ("nfkc",)])
def test_invalid_utf8_in_arrow_strings_is_refused_with_its_position(normalize):
    with pytest.raises(ValueError, match=r"texts\[1\] is not valid UTF-8: b'\\xff\\xfe'"):
        sh.fingerprint(_bad_utf8(), normalize=normalize)
    with pytest.raises(ValueError, match=r"texts\[1\] is not valid UTF-8"):
        sh.features(_bad_utf8(large=True), normalize=normalize)


def test_invalid_utf8_from_parquet_and_pandas(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pd = pytest.importorskip("pandas")
    pq.write_table(pa.table({"text": _bad_utf8()}), tmp_path / "t.parquet")
    col = pq.read_table(tmp_path / "t.parquet")["text"]
    with pytest.raises(ValueError, match=r"texts\[1\] is not valid UTF-8"):
        sh.fingerprint(col)
    series = pd.Series(pd.arrays.ArrowExtensionArray(col))
    with pytest.raises(ValueError, match=r"texts\[1\] is not valid UTF-8"):
        sh.fingerprint(series)
    with pytest.raises(ValueError, match=r"texts\[1\] is not valid UTF-8"):
        sh.window_fingerprints(col, window=2)
    good = pa.array(["abc", "de", "xyz"])
    assert np.array_equal(sh.fingerprint(good), sh.fingerprint(["abc", "de", "xyz"]))


def test_lone_surrogate_names_its_position():
    for f in (sh.fingerprint, sh.features, lambda t: sh.window_fingerprints(t, window=2)):
        with pytest.raises(ValueError, match=r"texts\[1\] .*lone surrogate"):
            f(["ok", "a\ud800"])


@pytest.mark.parametrize("texts, kind", [({"a": "x"}, "dict"), ({"a", "b"}, "set"),
                                         (frozenset({"a"}), "frozenset"),
                                         (b"abc", "byte string"), ("abc", "string")])
def test_unordered_or_single_texts_are_refused(texts, kind):
    for f in (sh.fingerprint, sh.features, lambda t: sh.window_fingerprints(t, window=2)):
        with pytest.raises(TypeError, match=kind):
            f(texts)


def test_missing_texts_are_handled_alike():
    texts = ["a b c", None, "d e f"]
    for f, ok in ((sh.fingerprint, "zero"), (sh.features, "zero"),
                  (lambda t, **kw: sh.window_fingerprints(t, window=2, **kw), "skip")):
        with pytest.raises(ValueError, match=r"texts\[1\] is missing"):
            f(texts)
        f(texts, missing=ok)
        with pytest.raises(ValueError, match="missing must be"):
            f(texts, missing="ignore")
    fb = sh.features(texts, missing="zero")
    assert fb.n_features.tolist()[1] == 0
    assert np.array_equal(sh.fingerprint_features(fb), sh.fingerprint(texts, missing="zero"))
    w = sh.window_fingerprints(texts, window=2, missing="skip")
    assert sorted(set(w["doc"])) == [0, 2]


# --- jaccard_pairs: MinHash signature length ----------------------------------------------


def test_jaccard_minhash_num_perm_is_validated():
    texts = ["the cat sat on the mat", "the cat sat on a mat", "dogs bark", "dogs bark!"]
    for bad in (0, -5, 1):
        with pytest.raises(ValueError, match="num_perm must be >= 2"):
            sh.jaccard_pairs(texts, 0.4, candidates="minhash", num_perm=bad)
    for bad in (1.5, True, "8"):
        with pytest.raises(TypeError, match="num_perm"):
            sh.jaccard_pairs(texts, 0.4, candidates="minhash", num_perm=bad)
    with pytest.warns(RuntimeWarning, match="pairs will be missed"):
        sh.jaccard_pairs(texts, 0.4, candidates="minhash", num_perm=2)
    got = sh.jaccard_pairs(texts, 0.4, candidates="minhash", num_perm=np.int64(128))
    assert got[["i", "j"]].values.tolist() == [[0, 1], [2, 3]]
