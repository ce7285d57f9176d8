import functools
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import simhash_nb as sh
from simhash_nb import cli
from simhash_nb.io import TableReader, read_specs

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "simhash-nb"

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "The quick brown fox jumps over the lazy dogs!",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
    None,
    "12345",  # looks like a number in CSV
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit sed",
    "中文文本的例子，用于测试。",
    "The quick brown fox jumps over the lazy dog.",
]
IDS = [f"id{i}" for i in range(len(TEXTS))]


def _frame():
    return pd.DataFrame({"id": IDS, "text": TEXTS, "n": range(len(TEXTS))})


def _write(folder: Path, fmt: str) -> Path:
    df = _frame()
    path = folder / f"in.{fmt}"
    if fmt.startswith("csv"):
        df.to_csv(path, index=False)  # gzipped for .csv.gz
    elif fmt == "jsonl":
        df.to_json(path, orient="records", lines=True, force_ascii=False)
    elif fmt == "jsonl.gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(df.to_json(orient="records", lines=True, force_ascii=False))
    else:
        df.to_parquet(path, index=False)
    return path


def _read(path: Path) -> pd.DataFrame:
    with TableReader(path, text_columns=["text", "simhash"]) as r:
        import pyarrow as pa

        return pa.Table.from_batches(list(r), schema=r.schema).to_pandas()


def _run(*args, cwd=None):
    """The installed entry point, as a user runs it."""
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, check=False)


def _one_line_error(out):
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr
    return lines[0]


@pytest.mark.parametrize("fmt", ["csv", "csv.gz", "jsonl", "jsonl.gz", "parquet"])
def test_fingerprint_reads_every_format(tmp_path, fmt, capsys):
    src = _write(tmp_path, fmt)
    out = tmp_path / "out.parquet"
    assert cli.main(["fingerprint", str(src), str(out), "--column", "text"]) == 0
    df = sh.read_parquet(out)
    assert df["id"].tolist() == IDS and list(df.columns) == ["id", "text", "n", "simhash"]
    present = [t for t in TEXTS if t is not None]
    expected = sh.fingerprint(present)
    # CSV has no null: the empty text cell reads as missing, as in the other formats
    assert df["simhash"].isna().tolist() == [t is None for t in TEXTS]
    assert df["simhash"].dropna().tolist() == [int(x) for x in expected]
    assert read_specs(out) == {"simhash": sh.FingerprintSpec.from_options()}
    assert "fingerprinted 8 rows" in capsys.readouterr().err


@pytest.mark.parametrize("out_name", ["out.csv", "out.jsonl", "out.jsonl.gz", "out.csv.gz"])
def test_text_outputs_hold_hex_fingerprints_that_pairs_can_read(tmp_path, out_name):
    src = _write(tmp_path, "jsonl")
    out = tmp_path / out_name
    assert cli.main(["fingerprint", str(src), str(out), "--bits", "128", "-q"]) == 0
    df = _read(out)
    ints = [int(h, 16) for h in df["simhash"] if isinstance(h, str) and h]  # CSV: "" is null
    core = sh.fingerprint([t for t in TEXTS if t is not None], bits=128)
    assert ints == [int(r[0]) | int(r[1]) << 64 for r in core]
    pairs = tmp_path / "pairs.csv"
    assert cli.main(["pairs", str(out), str(pairs), "--fingerprints", "simhash", "-k", "0",
                     "--id", "id", "-q"]) == 0
    got = pd.read_csv(pairs)
    assert got.values.tolist() == [["id0", "id7", 0]]


def test_pairs_dedupe_clusters_match_the_accessors(tmp_path):
    src = _write(tmp_path, "parquet")
    df = _frame().set_index("id", drop=False)
    opts = ["--tokenizer", "word", "--normalize", "nfkc,lower,punct", "-k", "7", "-q"]
    kw = dict(tokenizer="word", normalize=("nfkc", "lower", "punct"))

    assert cli.main(["pairs", str(src), str(tmp_path / "p.jsonl"), "--id", "id", *opts]) == 0
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    got = [tuple(json.loads(x).values()) for x in lines]
    ref = df.simhash.near_duplicates(k=7, **kw)
    assert got == [tuple(r) for r in ref.itertuples(index=False)] and len(got) >= 3

    assert cli.main(["pairs", str(src), str(tmp_path / "p.csv"), *opts]) == 0
    rows = pd.read_csv(tmp_path / "p.csv")  # row numbers without --id
    assert [(IDS[a], IDS[b]) for a, b in zip(rows["left"], rows["right"])] == \
        list(zip(ref["left"], ref["right"]))

    assert cli.main(["dedupe", str(src), str(tmp_path / "d.parquet"), *opts]) == 0
    kept = pd.read_parquet(tmp_path / "d.parquet")
    assert kept["id"].tolist() == df.simhash.dedupe(k=7, **kw)["id"].tolist()
    assert "id3" in kept["id"].tolist()  # the missing text stays

    assert cli.main(["dedupe", str(src), str(tmp_path / "dl.csv"), "--keep", "last",
                     *opts]) == 0
    assert pd.read_csv(tmp_path / "dl.csv")["id"].tolist() == \
        df.simhash.dedupe(k=7, keep="last", **kw)["id"].tolist()

    assert cli.main(["clusters", str(src), str(tmp_path / "c.parquet"), *opts]) == 0
    labels = pd.read_parquet(tmp_path / "c.parquet")["cluster"]
    assert labels.fillna(-1).tolist() == df.simhash.clusters(k=7, **kw).fillna(-1).tolist()
    assert pd.isna(labels[3])


def test_progress_bar_on_stderr(tmp_path, capsys):
    src = _write(tmp_path, "csv")
    assert cli.main(["fingerprint", str(src), str(tmp_path / "o.csv"), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "fingerprinting" in err and "B/s" in err
    assert cli.main(["pairs", str(src), str(tmp_path / "o.csv"), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_streams_in_batches_and_leaves_no_partial_file_on_a_late_error(tmp_path, monkeypatch):
    rows = [json.dumps({"text": f"document number {i} " * 5}) for i in range(400)]
    src = tmp_path / "big.jsonl"
    src.write_text("\n".join(rows) + "\n")
    seen = []
    from simhash_nb.cli import commands, steps  # imported when their command runs

    original = steps.fingerprint_batch

    def counting(batch, *args):
        seen.append(batch.num_rows)
        return original(batch, *args)

    monkeypatch.setattr(commands, "fingerprint_batch", counting)
    small = functools.partial(TableReader, block_bytes=4096)
    monkeypatch.setattr(steps, "TableReader", small)
    out = tmp_path / "out.parquet"
    assert cli.main(["fingerprint", str(src), str(out), "-q"]) == 0
    assert seen[0] == 0  # the empty batch that gives the output schema
    assert len(seen) > 4 and sum(seen) == 400  # streamed in several batches
    before = out.read_bytes()
    src.write_text("\n".join(rows) + "\n{broken json\n")
    assert cli.main(["fingerprint", str(src), str(out), "-q"]) == 2
    assert out.read_bytes() == before  # the old output is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl", "out.parquet"]


def test_user_mistakes_exit_2_with_one_line(tmp_path, capsys):
    src = _write(tmp_path, "csv")
    pq = _write(tmp_path, "parquet")
    cases = [
        (["pairs", str(src), str(tmp_path / "o.csv"), "--column", "body"], "no column 'body'"),
        (["pairs", str(src), str(tmp_path / "o.txt")], "unknown file type"),
        (["pairs", str(tmp_path / "nope.csv"), str(tmp_path / "o.csv")], "no such file"),
        (["pairs", str(src), str(tmp_path / "o.csv"), "--id", "nope"], "no column 'nope'"),
        (["pairs", str(pq), str(tmp_path / "o.csv"), "--column", "n"], "holds int64, not text"),
        (["pairs", str(src), str(tmp_path / "o.csv"), "-k", "64"], "k must be in [0, 63]"),
        (["pairs", str(src), str(tmp_path / "o.csv"), "--ngram", "0"], "ngram must be"),
        (["pairs", str(src), str(tmp_path / "o.csv"), "--fingerprints", "text"],
         "16 or 32 hexadecimal"),
        (["pairs", str(src), str(tmp_path / "o.csv"), "--fingerprints", "x", "--seed", "1"],
         "cannot be used with --fingerprints"),
        (["pairs", str(src), str(src)], "must not be the same file"),
        (["pairs", str(src), str(tmp_path / "no" / "o.csv")], "does not exist"),
        (["pairs", str(src), str(tmp_path / "o.csv"), "--max-pairs", "0"], "pairs"),
        (["dedupe", str(src), str(tmp_path / "o.csv"), "--keep", "middle"], "invalid choice"),
        (["pairs", str(src)], "required: OUT"),
        (["frobnicate"], "invalid choice"),
        ([], "choose a command"),
    ]
    for argv, message in cases:
        code = _exit_code(argv)
        err = capsys.readouterr().err
        assert code == 2, (argv[3:], err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (argv, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "in.parquet"]


def _exit_code(argv):
    try:
        return cli.main(argv)
    except SystemExit as e:  # argparse's usage errors
        return e.code


def test_help_on_every_command(capsys):
    parser = cli.build_parser()
    for command in [None, *parser.commands]:
        argv = ["--help"] if command is None else [command, "--help"]
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith("usage: simhash-nb") and len(out.splitlines()) > 5


def test_entry_point_end_to_end(tmp_path):
    src = _write(tmp_path, "jsonl.gz")
    out = _run("fingerprint", src, tmp_path / "f.parquet")
    assert out.returncode == 0, out.stderr
    assert sh.read_parquet(tmp_path / "f.parquet")["simhash"].notna().sum() == 7
    pairs = subprocess.run(
        [sys.executable, "-m", "simhash_nb", "pairs", str(tmp_path / "f.parquet"),
         str(tmp_path / "p.csv"), "--fingerprints", "simhash", "--id", "id", "-k", "0"],
        capture_output=True, text=True, check=False, cwd=ROOT)
    assert pairs.returncode == 0, pairs.stderr
    assert pd.read_csv(tmp_path / "p.csv").values.tolist() == [["id0", "id7", 0]]


def test_entry_point_malformed_file_and_missing_column(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text\n1,fine\n2,too,many,fields\n")
    line = _one_line_error(_run("dedupe", bad, tmp_path / "out.csv"))  # the installed script
    assert line.startswith("simhash-nb dedupe: error: cannot read") and "bad.csv" in line

    def in_process(*argv):  # the same main() as the script runs, without a process start
        code = _exit_code([str(a) for a in argv])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        return lines[0]

    notgz = tmp_path / "x.jsonl.gz"
    notgz.write_text('{"text": "not gzipped"}\n')
    assert "cannot read" in in_process("pairs", notgz, tmp_path / "out.csv")
    good = _write(tmp_path, "parquet")
    line = in_process("clusters", good, tmp_path / "out.csv", "--column", "body")
    assert "has no column 'body' (columns: id, text, n)" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "in.parquet", "x.jsonl.gz"]
    assert "required: OUT" in in_process("pairs", good)


def test_demo(tmp_path, capsys):
    assert cli.main(["demo", "--out", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "licences: 104 texts" in out and "fortunes: 3,000 texts" in out
    assert " | " in out  # pairs side by side
    files = sorted(os.listdir(tmp_path / "demo"))
    assert files == ["clusters.csv", "fingerprints.parquet", "nearest_neighbour_distance.png",
                     "pairs.csv", "threshold_curves.png"]
    # k is tuned per corpus against exact Jaccard >= 0.7, and every pair respects it
    ks = {m[0]: int(m[1]) for m in re.findall(r"^(\w+): k=(\d+) \(", out, re.M)}
    assert set(ks) == {"licences", "fortunes"} and all(3 < k < 20 for k in ks.values())
    assert re.search(r"fortunes: k=\d+ .*F1 0\.9\d", out)
    pairs = pd.read_csv(tmp_path / "demo" / "pairs.csv")
    assert set(pairs["corpus"]) == {"licences", "fortunes"}
    assert (pairs["distance"] <= pairs["corpus"].map(ks)).all()
    assert (pairs.groupby("corpus")["distance"].max() > 3).all()
    clusters = pd.read_csv(tmp_path / "demo" / "clusters.csv")
    assert (clusters["cluster_size"] >= 2).all()
    for png in ["nearest_neighbour_distance.png", "threshold_curves.png"]:
        assert (tmp_path / "demo" / png).read_bytes()[:4] == b"\x89PNG"
    assert "threshold_curves.png" in out
    fps = sh.read_parquet(tmp_path / "demo" / "fingerprints.parquet")
    assert fps["simhash"].simhash.spec.normalize == cli.DEMO_NORMALIZE
    # one tokenising pass makes features and fingerprints: these are sh.fingerprint's
    texts = pd.concat([sh.datasets.load_licences()["text"], sh.datasets.load_fortunes()["text"]])
    want = sh.fingerprint(texts.tolist(), spec=fps["simhash"].simhash.spec)
    assert np.array_equal(fps["simhash"].simhash.to_numpy(), want)


def test_demo_with_a_fixed_k(tmp_path, capsys):
    assert cli.main(["demo", "--out", str(tmp_path), "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "within k=3 bits" in out and " k=3 (" not in out  # no tuning
    assert (pd.read_csv(tmp_path / "pairs.csv")["distance"] <= 3).all()
    assert not (tmp_path / "threshold_curves.png").exists()  # nothing tuned, no curves


def test_tune(tmp_path, capsys):
    if "tune" not in cli.build_parser().commands:
        pytest.skip("simhash_nb.evaluate not available")
    rng = np.random.default_rng(0)
    base = [" ".join(rng.choice([f"w{i}" for i in range(500)], 30)) for _ in range(30)]
    texts, groups = [], []
    for g, t in enumerate(base):
        texts += [t, t + " extra", t.replace("w1", "zz", 1)]
        groups += [g, g, g]
    src = tmp_path / "t.csv"
    pd.DataFrame({"text": texts, "group": groups}).to_csv(src, index=False)
    code = cli.main(["tune", str(src), "--labels", "group", "--tokenizer", "word",
                     "--plot", str(tmp_path / "pr.png"), "--table", str(tmp_path / "t.jsonl"),
                     "-q"])
    assert code == 0
    out = capsys.readouterr().out
    assert "recommended k = " in out and "precision" in out
    table = pd.read_json(tmp_path / "t.jsonl", lines=True)
    assert table["k"].tolist() == list(range(65))
    assert (tmp_path / "pr.png").read_bytes()[:4] == b"\x89PNG"
    assert cli.main(["tune", str(src), "--labels", "nope"]) == 2
    assert cli.main(["tune", str(src), "--labels", "group", "--target", "best"]) == 2


def test_fingerprint_columns_pass_through_with_spec_or_as_hex(tmp_path):
    src = _write(tmp_path, "jsonl")
    fps = tmp_path / "f.parquet"
    assert cli.main(["fingerprint", str(src), str(fps), "--bits", "128", "-q"]) == 0
    spec = read_specs(fps)["simhash"]
    assert spec.bits == 128
    assert cli.main(["clusters", str(fps), str(tmp_path / "c.parquet"), "--fingerprints",
                     "simhash", "-k", "0", "-q"]) == 0
    assert read_specs(tmp_path / "c.parquet") == {"simhash": spec}
    assert cli.main(["dedupe", str(fps), str(tmp_path / "d.jsonl"), "--fingerprints",
                     "simhash", "-k", "0", "-q"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [i for i in IDS if i != "id7"]  # id7 repeats id0
    expected = sh.read_parquet(fps)["simhash"]
    assert [r["simhash"] for r in rows] == [None if pd.isna(v) else v.hex()
                                            for v in expected.iloc[:-1]]


def test_console_main_freezes_only_when_no_other_thread_runs():
    """Frozen objects skip the final garbage collection at exit (0.4-0.5 s after a
    verified run); with a reader thread still running (after Ctrl-C) that collection
    is what stops it, so nothing is frozen then."""
    import subprocess

    code = ("import gc, sys, threading, time; from simhash_nb.cli.main import console_main; "
            "sys.argv = ['simhash-nb']; {start} console_main(); "
            "print(gc.get_freeze_count() > 0)")
    alone = code.format(start="")
    busy = code.format(start="threading.Thread(target=time.sleep, args=(2,), daemon=True).start();")
    for source, want in ((alone, "True"), (busy, "False")):
        out = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
        assert out.stdout.strip() == want, out.stderr
