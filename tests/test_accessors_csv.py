"""Fingerprints written by the command line to CSV, read back with pandas (issue 13, item 3).

The hexadecimal ``simhash`` column must be read as fingerprints, not fingerprinted again
as text; a column that only resembles it must stay text, or be refused clearly.
"""

import numpy as np
import pandas as pd
import pytest

import simhash_nb as sh
from simhash_nb import cli

WORDS = [f"w{i}" for i in range(40)]


def _texts() -> list[str | None]:
    rng = np.random.default_rng(13)
    base = [" ".join(rng.choice(WORDS, 24)) for _ in range(30)]
    near = [t.replace(t.split()[0], "zz", 1) for t in base[:15]]  # one word changed
    return base + near + [None, base[3]]


def _pair_set(df) -> set[tuple[int, int, int]]:
    return {(int(a), int(b), int(d)) for a, b, d in
            zip(df["left"], df["right"], df["distance"], strict=True)}


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    path = tmp_path_factory.mktemp("csv") / "docs.csv"
    pd.DataFrame({"text": _texts()}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("bits", [64, 128])
def test_cli_csv_read_by_pandas_gives_the_cli_pairs(docs, bits):
    k = 3 if bits == 64 else 8
    fps, pairs = docs.with_name(f"fps{bits}.csv"), docs.with_name(f"pairs{bits}.csv")
    assert cli.main(["fingerprint", str(docs), str(fps), "--bits", str(bits), "-q"]) == 0
    assert cli.main(["pairs", str(docs), str(pairs), "--bits", str(bits), "-k", str(k),
                     "-q"]) == 0
    want = _pair_set(pd.read_csv(pairs))
    assert want  # the data has near duplicates

    df = pd.read_csv(fps)
    assert df["simhash"].dropna().str.len().eq(bits // 4).all()  # hex, as the CLI writes
    got = df.simhash.near_duplicates(k=k)
    assert _pair_set(got) == want
    s = df["simhash"]
    assert s.simhash.is_fingerprint and s.simhash.bits == bits
    assert _pair_set(s.simhash.near_duplicates(k=k)) == want
    # the same fingerprints as the core's, with the missing text missing
    core = sh.fingerprint(_texts(), bits=bits, missing="zero")
    present = df["text"].notna().to_numpy()
    np.testing.assert_array_equal(s.simhash.to_numpy(missing="zero")[present], core[present])
    assert s.simhash.from_hex().isna().tolist() == (~present).tolist()
    # other readers of the same file: object dtype, and the Arrow-backed strings
    obj = pd.read_csv(fps, dtype={"simhash": object})
    assert _pair_set(obj.simhash.near_duplicates(k=k)) == want
    arrow = pd.read_csv(fps, dtype_backend="pyarrow")
    assert _pair_set(arrow.simhash.near_duplicates(k=k)) == want
    # fingerprint options apply only to text: refused, not silently ignored
    with pytest.raises(TypeError, match="fingerprints already"):
        df.simhash.near_duplicates(k=k, tokenizer="word")


def test_hex_column_clusters_dedupe_and_against(docs):
    fps = docs.with_name("fps_ops.csv")
    assert cli.main(["fingerprint", str(docs), str(fps), "-q"]) == 0
    df = pd.read_csv(fps)
    parsed = df.assign(simhash=df["simhash"].simhash.from_hex())
    assert str(parsed["simhash"].dtype) == "UInt64"
    assert df.simhash.clusters(k=3).tolist() == parsed.simhash.clusters(k=3).tolist()
    assert df.simhash.dedupe(k=3).index.tolist() == parsed.simhash.dedupe(k=3).index.tolist()
    pd.testing.assert_frame_equal(df.simhash.near_duplicates(k=3, against=df.iloc[:10]),
                                  parsed.simhash.near_duplicates(k=3, against=parsed.iloc[:10]))
    assert df["simhash"].simhash.hamming(parsed["simhash"]).dropna().eq(0).all()


def test_text_that_merely_looks_hex_is_text():
    words = ["cafe", "deadbeef", "face", "bad", "c0ffee", "deadbeef"]
    for name in ("simhash", "text", None):
        s = pd.Series(words, name=name)
        assert not s.simhash.is_fingerprint
        got = s.simhash.near_duplicates(k=0, tokenizer="word")
        assert got[["left", "right"]].values.tolist() == [[1, 5]]
    # a "simhash" column of ordinary text is not the frame's fingerprint column
    df = pd.DataFrame({"simhash": words, "text": ["a b"] * 6})
    assert len(df.simhash.near_duplicates(k=0)) == 15  # the "text" column's pairs
    # 16 characters, not all hexadecimal
    s = pd.Series(["0123456789abcdeg", "the cat sat down"], name="simhash")
    assert not s.simhash.is_fingerprint


def test_a_partly_hex_simhash_column_is_refused():
    good = sh.fingerprint(["a b c", "d e f", "g h i"])
    hexes = [f"{int(v):016x}" for v in good]
    df = pd.DataFrame({"simhash": [*hexes, "not a fingerprint"], "text": list("abcd")})
    with pytest.raises(ValueError, match=r"column 'simhash' holds 3 hexadecimal .*"
                                         r"'not a fingerprint'"):
        df.simhash.near_duplicates(k=3)
    mixed = pd.DataFrame({"simhash": [*hexes, hexes[0] * 2]})
    with pytest.raises(ValueError, match="mixes 16- and 32-digit"):
        mixed.simhash.near_duplicates(k=3)
    with pytest.raises(ValueError, match="mixes 16- and 32-digit"):
        mixed["simhash"].simhash.clusters(k=3)


def test_hex_strings_in_another_column_are_refused_not_guessed():
    hexes = [f"{int(v):016x}" for v in sh.fingerprint(["a b c", "a b c", "x y z"])]
    df = pd.DataFrame({"fp": hexes})
    with pytest.raises(ValueError, match=r"'fp' holds only 16-digit hexadecimal.*from_hex"):
        df.simhash.near_duplicates(column="fp", k=3)
    with pytest.raises(ValueError, match="from_hex"):
        df["fp"].simhash.dedupe(k=3)
    with pytest.raises(TypeError, match="from_hex"):
        df["fp"].simhash.to_numpy()
    fps = df["fp"].simhash.from_hex()
    assert fps.simhash.near_duplicates(k=0)[["left", "right"]].values.tolist() == [[0, 1]]
    # asked explicitly, the strings are fingerprinted as text
    assert str(df["fp"].simhash.fingerprint().dtype) == "UInt64"
    against = pd.Series(hexes, name="fp")
    with pytest.raises(ValueError, match="against Series 'fp'"):
        fps.simhash.near_duplicates(k=3, against=against)


def test_from_hex_errors():
    with pytest.raises(ValueError, match="16 or 32 hexadecimal digits"):
        pd.Series(["00ff", "0000000000000000"]).simhash.from_hex()
    with pytest.raises(ValueError, match="hexadecimal"):
        pd.Series(["zzzzzzzzzzzzzzzz"]).simhash.from_hex()
    with pytest.raises(TypeError, match="strings"):
        pd.Series([1, 2], dtype="UInt64").simhash.from_hex()
    both = pd.Series(["0" * 31 + "1", None, ""]).simhash.from_hex()
    assert str(both.dtype) == "fixed_size_binary[16][pyarrow]"
    assert both.isna().tolist() == [False, True, True]
    assert both.simhash.to_numpy(missing="zero")[0].tolist() == [1, 0]
    for bad in (["0000 0000 000000"], ["é" * 16], ["000000000000000f\n"[:16] + "\n"]):
        with pytest.raises(ValueError, match="hexadecimal|16 or 32"):
            pd.Series(bad).simhash.from_hex()
    assert not pd.Series(["000000000000000f\n"], name="simhash").simhash.is_fingerprint
