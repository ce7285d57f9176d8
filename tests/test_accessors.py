import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import simhash_nb as sh
from simhash_nb._frames import SPEC_ATTR
from tests.conftest import fp_ints

TEXT_DTYPES = [
    pytest.param(object, id="object"),
    pytest.param(pd.StringDtype("python"), id="string-python"),
    pytest.param("string[pyarrow]", id="string-pyarrow"),
    pytest.param("str", id="str"),
    pytest.param(pd.ArrowDtype(pa.large_string()), id="arrow-large-string"),
    pytest.param("category", id="category"),
]


def _corpus(n=60, seed=0):
    """Documents with planted near duplicates (one word changed) and exact copies."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(300)]
    docs = []
    while len(docs) < n:
        words = list(rng.choice(vocab, 40))
        docs.append(" ".join(words))
        words[int(rng.integers(40))] = "changed"
        docs.append(" ".join(words))
        if len(docs) % 6 == 0:
            docs.append(docs[-1])
    return docs[:n]


def _labels(n):
    return [f"doc{i:03d}" for i in range(n)][::-1]  # strings, not 0..n-1, not sorted


def _expected_pairs(fps, valid, labels, k):
    """Reference: brute force on the present rows, mapped to labels."""
    pos = np.flatnonzero(valid)
    p = sh.pairs_within(fps[pos], k)
    return sorted((labels[pos[i]], labels[pos[j]], int(d)) for i, j, d in zip(*p))


def _frame_pairs(df):
    return sorted(zip(df["left"].tolist(), df["right"].tolist(), df["distance"].tolist()))


@pytest.mark.parametrize("dtype", TEXT_DTYPES)
def test_fingerprint_matches_core_on_every_string_dtype(dtype):
    texts = _corpus(30)
    s = pd.Series(texts, index=_labels(30), name="body", dtype=dtype)
    got = s.simhash.fingerprint(tokenizer="word")
    assert str(got.dtype) == "UInt64"
    assert got.index.equals(s.index) and got.name == "body"
    assert got.tolist() == [int(x) for x in sh.fingerprint(texts, tokenizer="word")]
    want = sh.FingerprintSpec.from_options(tokenizer="word")
    assert sh.FingerprintSpec.from_json(got.attrs[SPEC_ATTR]) == want


@pytest.mark.parametrize("dtype", TEXT_DTYPES)
def test_missing_values_give_missing_fingerprints_and_stay_out_of_results(dtype):
    texts = ["", "a b c", None, "a b c", "", "x y"]
    if dtype is object:
        texts[1:1] = [np.nan]
        texts.append(pd.NA)
    s = pd.Series(texts, index=[f"r{i}" for i in range(len(texts))], dtype=dtype)
    fps = s.simhash.fingerprint(tokenizer="word")
    missing = s.isna().to_numpy()
    assert fps.isna().to_numpy().tolist() == missing.tolist()
    present = [t for t in texts if isinstance(t, str)]
    assert fps.dropna().tolist() == [int(x) for x in sh.fingerprint(present, tokenizer="word")]
    # the empty text has fingerprint 0, as the missing ones do in the core: never paired
    pairs = s.simhash.near_duplicates(k=0, tokenizer="word")
    missing_labels = set(s.index[missing])
    assert not missing_labels & (set(pairs["left"]) | set(pairs["right"]))
    expected = [("r0", "r4", 0), ("r1", "r3", 0)]
    if dtype is object:
        expected = [("r0", "r5", 0), ("r2", "r4", 0)]
    assert _frame_pairs(pairs) == expected
    labels = s.simhash.clusters(k=0, tokenizer="word")
    assert labels.isna().to_numpy().tolist() == missing.tolist()
    kept = s.simhash.dedupe(k=0, tokenizer="word")
    assert set(missing_labels) <= set(kept.index)  # missing texts are nobody's duplicate


def test_missing_text_is_not_the_text_nan():
    s = pd.Series([np.nan, "nan", None], dtype=object)
    fps = s.simhash.fingerprint()
    assert fps.isna().tolist() == [True, False, True]
    assert s.simhash.near_duplicates(k=0).empty


@pytest.mark.parametrize("bits", [64, 128])
def test_near_duplicates_return_index_labels_equal_to_brute_force(bits):
    texts = _corpus(60)
    texts[5] = None
    labels = _labels(60)
    s = pd.Series(texts, index=labels, dtype="str")
    fps = s.simhash.fingerprint(tokenizer="word", bits=bits)
    core, valid = fps.simhash.to_numpy(missing="zero"), fps.notna().to_numpy()
    for k in (0, 3, 12):
        got = fps.simhash.near_duplicates(k=k)
        assert list(got.columns) == ["left", "right", "distance"]
        assert _frame_pairs(got) == _expected_pairs(core, valid, labels, k)
        # text Series search directly with the same options
        assert _frame_pairs(s.simhash.near_duplicates(k=k, tokenizer="word", bits=bits)) == \
            _frame_pairs(got)
    assert len(fps.simhash.near_duplicates(k=12)) > 10  # the test has pairs to compare


def test_left_label_comes_first_in_series_order():
    s = pd.Series(["a b c d", "x", "a b c d"], index=[30, 20, 10])
    got = s.simhash.near_duplicates(k=0, tokenizer="word")
    assert _frame_pairs(got) == [(30, 10, 0)]
    assert got["left"].dtype == np.int64


def test_pairs_refuse_duplicate_index_but_clusters_and_dedupe_handle_it():
    s = pd.Series(["a b c", "a b c", "zz"], index=["x", "x", "y"])
    with pytest.raises(ValueError, match="duplicate labels"):
        s.simhash.near_duplicates(k=0, tokenizer="word")
    assert s.simhash.clusters(k=0, tokenizer="word").tolist() == [0, 0, 2]
    kept = s.simhash.dedupe(k=0, tokenizer="word")
    assert kept.tolist() == ["a b c", "zz"] and kept.index.tolist() == ["x", "y"]


@pytest.mark.parametrize("bits", [64, 128])
def test_clusters_and_dedupe_follow_the_core(bits):
    texts = _corpus(60, seed=1)
    labels = _labels(60)
    s = pd.Series(texts, index=labels)
    fps = s.simhash.fingerprint(tokenizer="word", bits=bits)
    core = fps.simhash.to_numpy()
    got = fps.simhash.clusters(k=8)
    assert got.index.equals(s.index) and str(got.dtype) == "Int64"
    # reference labels: union-find over brute-force pairs, smallest row as label
    parent = list(range(60))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for i, j, _ in zip(*sh.pairs_within(core, 8)):
        a, b = find(int(i)), find(int(j))
        parent[max(a, b)] = min(a, b)
    ref = [find(x) for x in range(60)]
    assert got.tolist() == ref
    assert len(set(ref)) < 50  # there are clusters
    first = fps.simhash.dedupe(k=8)
    assert first.index.tolist() == [labels[x] for x in range(60) if ref[x] == x]
    last = fps.simhash.dedupe(k=8, keep="last")
    last_rows = [max(y for y in range(60) if ref[y] == ref[x]) for x in range(60)]
    assert last.index.tolist() == [labels[x] for x in range(60) if last_rows[x] == x]


def test_128_bit_representation_is_big_endian_binary16():
    texts = ["alpha beta", None, "gamma"]
    s = pd.Series(texts, index=["a", "b", "c"])
    fps = s.simhash.fingerprint(bits=128)
    assert str(fps.dtype) == "fixed_size_binary[16][pyarrow]"
    core = sh.fingerprint(["alpha beta", "gamma"], bits=128)
    ints = fp_ints(core)
    assert fps["a"].hex() == f"{ints[0]:032x}" and fps["c"].hex() == f"{ints[1]:032x}"
    assert fps.isna().tolist() == [False, True, False]
    back = fps.simhash.to_numpy(missing="zero")
    np.testing.assert_array_equal(back[[0, 2]], core)
    assert back[1].tolist() == [0, 0]
    with pytest.raises(ValueError, match="missing"):
        fps.simhash.to_numpy()
    assert fps.simhash.bits == 128 and fps.simhash.is_fingerprint


@pytest.mark.parametrize("bits", [64, 128])
def test_hamming_aligns_on_index_and_accepts_scalars(bits):
    s = pd.Series(["a b c d e", "f g h", None, "a b c d"], index=list("pqrs"))
    fps = s.simhash.fingerprint(tokenizer="word", bits=bits)
    core = fps.simhash.to_numpy(missing="zero")
    shuffled = fps.iloc[[3, 0, 2, 1]]
    got = fps.simhash.hamming(shuffled)
    assert got.index.equals(fps.index) and got.iloc[:2].tolist() == [0, 0]
    assert got.isna().tolist() == [False, False, True, False]
    other = fps.reindex(list("spq"))  # label r missing from other
    d = fps.simhash.hamming(other)
    assert d.isna().tolist() == [False, False, True, False]
    ints = fp_ints(core)
    assert d["p"] == 0 and d["q"] == bin(ints[1] ^ ints[1]).count("1")
    scalar = ints[0] if bits == 64 else ints[0].to_bytes(16, "big")
    by_scalar = fps.simhash.hamming(scalar)
    assert by_scalar.tolist()[:2] == [0, bin(ints[1] ^ ints[0]).count("1")]
    assert by_scalar["s"] == bin(ints[3] ^ ints[0]).count("1") > 0
    with pytest.raises(ValueError):
        fps.simhash.hamming(2**bits)


def test_specs_travel_in_attrs_and_mixing_them_is_refused():
    s = pd.Series(["a b c", "d e f"], index=["x", "y"])
    a = s.simhash.fingerprint(tokenizer="word")
    b = s.simhash.fingerprint(tokenizer="char")
    assert a.simhash.spec.tokenizer == "word"
    with pytest.raises(sh.SpecMismatchError, match="tokenizer"):
        a.simhash.hamming(b)
    with pytest.raises(sh.SpecMismatchError):
        a.simhash.near_duplicates(k=3, against=b)
    # fingerprints without a known spec are accepted
    plain = pd.Series(a.tolist(), index=a.index, dtype="UInt64")
    assert plain.simhash.spec is None
    assert a.simhash.hamming(plain).tolist() == [0, 0]


def test_against_pairs_left_and_right_labels():
    left = pd.Series(["a b c d", "p q r", "zz yy"], index=["L0", "L1", "L2"])
    right = pd.Series(["p q r", "a b c d", None], index=[100, 200, 300])
    got = left.simhash.near_duplicates(k=0, against=right, tokenizer="word")
    assert _frame_pairs(got) == [("L0", 200, 0), ("L1", 100, 0)]
    fl = left.simhash.fingerprint(tokenizer="word")
    fr = right.simhash.fingerprint(tokenizer="word")
    assert _frame_pairs(fl.simhash.near_duplicates(k=0, against=fr)) == _frame_pairs(got)
    # fingerprints against text: the text is fingerprinted with the fingerprints' spec
    assert _frame_pairs(fl.simhash.near_duplicates(k=0, against=right)) == _frame_pairs(got)


def test_accessor_refuses_dtypes_that_do_not_fit():
    for s in (pd.Series([1.5, 2.0]), pd.Series([1, 2]), pd.Series([True]),
              pd.Series(pd.to_datetime(["2020-01-01"]))):
        with pytest.raises(AttributeError, match="text Series .* or a fingerprint Series"):
            s.simhash  # noqa: B018
        assert not hasattr(s, "simhash")
    text = pd.Series(["a"])
    with pytest.raises(TypeError, match=r"fingerprint\(\) first"):
        text.simhash.hamming(text)
    fps = text.simhash.fingerprint()
    with pytest.raises(TypeError, match="fingerprints already"):
        fps.simhash.fingerprint()
    with pytest.raises(TypeError, match="apply only to text"):
        fps.simhash.near_duplicates(k=1, tokenizer="word")
    with pytest.raises(TypeError, match="unexpected keyword"):
        text.simhash.near_duplicates(k=1, tokenizr="word")
    with pytest.raises(TypeError, match="not a string"):
        pd.Series(["a", 3], dtype=object).simhash.fingerprint()


@pytest.mark.parametrize("dtype", [object, "str", "string[pyarrow]"])
def test_empty_series_and_frames(dtype):
    s = pd.Series([], dtype=dtype)
    fps = s.simhash.fingerprint()
    assert len(fps) == 0 and str(fps.dtype) == "UInt64"
    assert list(s.simhash.near_duplicates().columns) == ["left", "right", "distance"]
    assert len(s.simhash.near_duplicates()) == 0
    assert len(s.simhash.clusters()) == 0 and len(s.simhash.dedupe()) == 0
    assert len(pd.Series([], dtype=dtype).simhash.fingerprint(bits=128)) == 0
    df = pd.DataFrame({"text": pd.Series([], dtype=dtype)})
    out = df.simhash.fingerprint()
    assert list(out.columns) == ["text", "simhash"] and len(out) == 0
    assert len(out.simhash.near_duplicates()) == 0 and len(out.simhash.dedupe()) == 0
    all_missing = pd.Series([None, None], dtype=dtype)
    assert all_missing.simhash.near_duplicates().empty
    assert all_missing.simhash.clusters().isna().all()


def test_dataframe_accessor():
    texts = _corpus(40, seed=2)
    texts[3] = None
    df = pd.DataFrame({"body": texts, "n": range(40)}, index=_labels(40))
    out = df.simhash.fingerprint(column="body", out="fp", tokenizer="word")
    assert "fp" not in df.columns  # a new frame, the caller's is untouched
    assert list(out.columns) == ["body", "n", "fp"]
    want = sh.FingerprintSpec.from_options(tokenizer="word")
    assert out.simhash._column("fp").simhash.spec == want
    assert sh.FingerprintSpec.from_json(out.attrs[SPEC_ATTR]["fp"]).tokenizer == "word"
    pairs = out.simhash.near_duplicates(column="fp", k=6)
    assert _frame_pairs(pairs) == _frame_pairs(out["fp"].simhash.near_duplicates(k=6))
    assert _frame_pairs(pairs) == _frame_pairs(
        df.simhash.near_duplicates(column="body", k=6, tokenizer="word"))
    kept = out.simhash.dedupe(column="fp", k=6)
    assert isinstance(kept, pd.DataFrame) and list(kept.columns) == list(out.columns)
    assert kept.index.tolist() == out["fp"].simhash.dedupe(k=6).index.tolist()
    assert len(kept) < 40
    labels = out.simhash.clusters(column="fp", k=6)
    assert labels.index.equals(df.index) and pd.isna(labels.iloc[3])
    # default column: "simhash" when it holds fingerprints, else "text"
    df2 = df.rename(columns={"body": "text"})
    assert _frame_pairs(df2.simhash.near_duplicates(k=6, tokenizer="word")) == \
        _frame_pairs(pairs)
    assert df2.simhash.fingerprint(tokenizer="word").simhash.dedupe(k=6).index.tolist() == \
        kept.index.tolist()


def test_dataframe_accessor_errors():
    df = pd.DataFrame({"text": ["a"], "x": [1.0]})
    with pytest.raises(KeyError, match="'body' is not in the DataFrame"):
        df.simhash.fingerprint(column="body")
    with pytest.raises(TypeError, match="neither text nor fingerprints"):
        df.simhash.near_duplicates(column="x")
    other = pd.DataFrame({"text": ["a"]}).simhash.fingerprint(tokenizer="word")
    mine = df.simhash.fingerprint()
    with pytest.raises(sh.SpecMismatchError):
        mine.simhash.near_duplicates(k=1, against=other)


def test_registration_does_not_import_pandas_and_happens_on_pandas_import():
    code = (
        "import sys, simhash_nb\n"
        "assert 'pandas' not in sys.modules, 'pandas imported by simhash_nb'\n"
        "import pandas as pd\n"
        "s = pd.Series(['a b', 'a b'])\n"
        "print(s.simhash.near_duplicates(k=0).values.tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[[0, 1, 0]]"


def test_dataframe_with_duplicate_index_and_128_bits():
    df = pd.DataFrame({"text": ["a b c", "zz", "a b c", None]}, index=["x", "x", "y", "y"])
    out = df.simhash.fingerprint(bits=128, tokenizer="word")
    assert out["simhash"].isna().tolist() == [False, False, False, True]
    assert out["simhash"].iloc[0] == out["simhash"].iloc[2] != out["simhash"].iloc[1]
    kept = out.simhash.dedupe(k=0)["text"]
    assert kept.iloc[:2].tolist() == ["a b c", "zz"] and pd.isna(kept.iloc[2])
    assert out.simhash.clusters(k=0).tolist() == [0, 1, 0, pd.NA]
    with pytest.raises(ValueError, match="duplicate labels"):
        out.simhash.near_duplicates(k=0)
    pairs = out.reset_index(drop=True).simhash.near_duplicates(k=0)
    assert _frame_pairs(pairs) == [(0, 2, 0)]


def test_callable_tokenizer_and_params_reach_the_core():
    texts = ["Alpha beta gamma", None, "alpha BETA delta"]
    s = pd.Series(texts, index=["a", "b", "c"], dtype="str")
    fps = s.simhash.fingerprint(tokenizer=str.split, params={"name": "split"})
    core = sh.fingerprint([texts[0], texts[2]], tokenizer=str.split, params={"name": "split"})
    assert fps.dropna().tolist() == [int(x) for x in core]
    assert fps.simhash.spec.tokenizer == "callable"
    assert fps.isna().tolist() == [False, True, False]
