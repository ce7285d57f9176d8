import gzip
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import simhash_nb as sh
from simhash_nb.io import (
    SPEC_KEY,
    InputError,
    TableReader,
    TableWriter,
    fingerprints_from_arrow,
    fingerprints_to_arrow,
    read_specs,
    table_format,
)
from tests.conftest import fp_ints

TEXTS = ["the cat sat", "the cat sat!", None, "a dog", ""]


def _frame(bits=64, **spec):
    df = pd.DataFrame({"text": TEXTS, "n": range(5)}, index=["e", "d", "c", "b", "a"])
    return df.simhash.fingerprint(bits=bits, **spec)


@pytest.mark.parametrize("bits", [64, 128])
def test_parquet_round_trip_keeps_spec_dtype_index_and_missing(tmp_path, bits):
    df = _frame(bits, tokenizer="word")
    path = tmp_path / "fps.parquet"
    sh.write_parquet(df, path)
    meta = pq.read_schema(path).metadata
    assert SPEC_KEY in meta
    want = sh.FingerprintSpec.from_options(bits=bits, tokenizer="word")
    assert read_specs(path) == {"simhash": want}
    back = sh.read_parquet(path)
    assert back.index.tolist() == df.index.tolist()
    assert back["simhash"].dtype == df["simhash"].dtype
    assert back["simhash"].isna().tolist() == [False, False, True, False, False]
    np.testing.assert_array_equal(back["simhash"].simhash.to_numpy(missing="zero"),
                                  df["simhash"].simhash.to_numpy(missing="zero"))
    assert back["simhash"].simhash.spec == want
    pd.testing.assert_frame_equal(back.simhash.near_duplicates(k=20),
                                  df.simhash.near_duplicates(k=20))


def test_read_several_files_with_equal_specs_concatenates(tmp_path):
    df = _frame()
    sh.write_parquet(df.iloc[:2], tmp_path / "a.parquet")
    sh.write_parquet(df.iloc[2:], tmp_path / "b.parquet")
    both = sh.read_parquet([tmp_path / "a.parquet", tmp_path / "b.parquet"])
    assert both.index.tolist() == df.index.tolist()
    assert both["simhash"].simhash.spec == df["simhash"].simhash.spec
    assert len(sh.read_parquet(tmp_path)) == 5  # a folder
    assert list(sh.read_parquet(tmp_path / "a.parquet", columns=["simhash"]).columns) == \
        ["simhash"]


def test_read_files_with_different_specs_is_refused(tmp_path):
    sh.write_parquet(_frame(), tmp_path / "a.parquet")
    sh.write_parquet(_frame(seed=7), tmp_path / "b.parquet")
    with pytest.raises(sh.SpecMismatchError, match="seed: 0 != 7"):
        sh.read_parquet([tmp_path / "a.parquet", tmp_path / "b.parquet"])
    plain = _frame()
    plain.attrs = {}
    sh.write_parquet(plain, tmp_path / "c.parquet", spec={})  # explicitly without a spec
    assert read_specs(tmp_path / "c.parquet") == {}
    with pytest.raises(sh.SpecMismatchError, match="none in"):
        sh.read_parquet([tmp_path / "a.parquet", tmp_path / "c.parquet"])


def test_write_parquet_spec_argument(tmp_path):
    df = _frame()
    df.attrs = {}
    spec = sh.FingerprintSpec.from_options()
    sh.write_parquet(df, tmp_path / "x.parquet", spec=spec)
    assert read_specs(tmp_path / "x.parquet") == {"simhash": spec}
    with pytest.raises(ValueError, match="does not hold 128-bit"):
        sh.write_parquet(df, tmp_path / "y.parquet", spec=sh.FingerprintSpec.from_options(bits=128))
    with pytest.raises(ValueError, match="no fingerprint column"):
        sh.write_parquet(df[["text"]], tmp_path / "y.parquet", spec=spec)
    with pytest.raises(KeyError):
        sh.write_parquet(df, tmp_path / "y.parquet", spec={"nope": spec})
    assert not (tmp_path / "y.parquet").exists()
    sh.write_parquet(df["simhash"], tmp_path / "s.parquet", spec=spec)  # a Series
    assert sh.read_parquet(tmp_path / "s.parquet")["simhash"].simhash.spec == spec


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "x.parquet"
    sh.write_parquet(_frame(), path)
    before = path.read_bytes()
    bad = pd.DataFrame({"text": ["a", 1, object()]})
    with pytest.raises((pa.ArrowException, TypeError, ValueError)):
        sh.write_parquet(bad, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["x.parquet"]


@pytest.mark.parametrize("bits", [64, 128])
def test_fingerprints_arrow_and_hex_round_trip(bits):
    fps = sh.fingerprint(["a", "b", "c", "d"], bits=bits)
    valid = np.array([True, False, True, True])
    for as_hex in (False, True):
        arr = fingerprints_to_arrow(fps, valid, hex=as_hex)
        assert arr.null_count == 1
        back, v = fingerprints_from_arrow(arr)
        assert v.tolist() == valid.tolist()
        np.testing.assert_array_equal(back[valid], fps[valid])
    hexes = fingerprints_to_arrow(fps, hex=True).to_pylist()
    assert hexes == [f"{x:0{bits // 4}x}" for x in fp_ints(fps)]


def test_fingerprints_from_bad_text_are_refused():
    with pytest.raises(InputError, match="16 or 32"):
        fingerprints_from_arrow(pa.array(["00ff", "0" * 16]))
    with pytest.raises(InputError, match="hexadecimal"):
        fingerprints_from_arrow(pa.array(["zz" * 8]))
    with pytest.raises(InputError, match="type double"):
        fingerprints_from_arrow(pa.array([1.5]))


def test_table_format():
    assert table_format("a/b.CSV") == ("csv", None)
    assert table_format("x.ndjson.gz") == ("jsonl", "gzip")
    assert table_format("x.pq") == ("parquet", None)
    for bad in ("x.txt", "x.parquet.gz", "noext"):
        with pytest.raises(InputError, match="unknown file type"):
            table_format(bad)


def _write_inputs(folder, rows):
    df = pd.DataFrame(rows)
    paths = {}
    paths["csv"] = folder / "in.csv"
    df.to_csv(paths["csv"], index=False)
    paths["csv.gz"] = folder / "in.csv.gz"
    df.to_csv(paths["csv.gz"], index=False, compression="gzip")
    paths["jsonl"] = folder / "in.jsonl"
    df.to_json(paths["jsonl"], orient="records", lines=True, force_ascii=False)
    paths["jsonl.gz"] = folder / "in.jsonl.gz"
    with gzip.open(paths["jsonl.gz"], "wt", encoding="utf-8") as f:
        f.write(df.to_json(orient="records", lines=True, force_ascii=False))
    paths["parquet"] = folder / "in.parquet"
    df.to_parquet(paths["parquet"], index=False)
    return paths


def test_reader_reads_every_format_in_batches(tmp_path):
    rows = [{"id": i, "text": t} for i, t in
            enumerate(["12", "héllo, \"world\"\nsecond line", "x" * 500, "中文"] * 50)]
    for name, path in _write_inputs(tmp_path, rows).items():
        with TableReader(path, text_columns=["text"], batch_rows=64, block_bytes=4096) as r:
            r.require("text", "id")
            batches = list(r)
            assert r.progress() > 0 and r.total > 0
        assert len(batches) > 1, name  # several batches
        table = pa.Table.from_batches(batches)
        assert table.column("text").to_pylist() == [x["text"] for x in rows], name
        assert table.column("id").to_pylist() == list(range(200)), name


def test_reader_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a"}\n{"text": \n')
    with pytest.raises(InputError, match="cannot read .*bad.jsonl as jsonl"):
        with TableReader(bad) as r:
            list(r)
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="cannot read"):
        TableReader(junk).__enter__()
    good = tmp_path / "ok.csv"
    good.write_text("id,body\n1,x\n")
    with TableReader(good) as r, pytest.raises(InputError, match="no column 'text'.*id, body"):
        r.require("text")
    with pytest.raises(InputError, match="no such file"):
        TableReader(tmp_path / "missing.csv").__enter__()


@pytest.mark.parametrize("name", ["out.csv", "out.csv.gz", "out.jsonl", "out.jsonl.gz",
                                  "out.parquet"])
def test_writer_round_trip_and_atomicity(tmp_path, name):
    batch = pa.record_batch({"a": pa.array([1, None, 3]), "s": pa.array(["x", "é\n,", None])})
    path = tmp_path / name
    spec = sh.FingerprintSpec.from_options()
    with TableWriter(path, batch.schema, specs={"a": spec}) as w:
        w.write(batch)
        w.write(batch)
    with TableReader(path, text_columns=["s"]) as r:
        table = pa.Table.from_batches(list(r))
    assert table.column("a").to_pylist() == [1, None, 3] * 2
    expected = ["x", "é\n,", None] * 2  # CSV: an empty text cell reads as missing
    assert table.column("s").to_pylist() == expected
    if name.endswith("parquet"):
        assert read_specs(path) == {"a": spec}
    before = path.read_bytes()
    with pytest.raises(RuntimeError), TableWriter(path, batch.schema) as w:
        w.write(batch)
        raise RuntimeError("boom")
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == [name]


def test_read_columns_keeps_the_index(tmp_path):
    sh.write_parquet(_frame(), tmp_path / "x.parquet")
    got = sh.read_parquet(tmp_path / "x.parquet", columns=["simhash"])
    assert got.index.tolist() == ["e", "d", "c", "b", "a"]
    assert got["simhash"].simhash.spec == sh.FingerprintSpec.from_options()


def test_outputs_get_ordinary_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        sh.write_parquet(_frame(), tmp_path / "x.parquet")
        with TableWriter(tmp_path / "y.csv", pa.schema([("a", pa.int64())])):
            pass
    finally:
        os.umask(umask)
    for name in ("x.parquet", "y.csv"):
        assert os.stat(tmp_path / name).st_mode & 0o777 == 0o644
    assert (tmp_path / "y.csv").read_text().strip() == '"a"'  # header even with no rows
