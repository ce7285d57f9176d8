"""Issue 23, points 2 and 8: the CLI speaks its own flags and refuses what it would ignore;
it does what the library does (a saved spec, tf-idf with a fitted IDF file, a tokenizer
given as MODULE:FUNCTION)."""

import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import simhash_nb as sh
from simhash_nb import cli
from simhash_nb.cli.speak import flags_of, plain_numbers, speak
from simhash_nb.io import read_specs

SCRIPT = Path(sys.executable).parent / "simhash-nb"

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "The quick brown fox jumps over the lazy dogs!",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
    None,
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit sed",
    "A completely different sentence about tokenizers.",
]
PRESENT = [t for t in TEXTS if t is not None]
PYTHON_WORDS = re.compile(r"\b(max_k|max_pairs|memory_limit|n_jobs|text_column|id_column)\b"
                          r"|\b(k|recall|similarity|threshold|max_pairs)=|np\.\w+\(|sh\.\w+")


@pytest.fixture
def table(tmp_path) -> Path:
    path = tmp_path / "in.csv"
    pd.DataFrame({"id": [f"d{i}" for i in range(len(TEXTS))], "text": TEXTS,
                  "n": [1, 2, 1, 3, 4, 5], "f": [0.5, 0.5, 1.0, 2.0, 3.0, 4.0],
                  "group": ["a", "a", "b", "", "b", "c"]}).to_csv(path, index=False)
    return path


def _error(capsys, argv) -> str:
    """The one-line error of a refused run (exit status 2)."""
    try:
        rc = cli.main([str(a) for a in argv])
    except SystemExit as e:  # argparse
        rc = e.code
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _fps(path: Path) -> list[int]:
    df = pd.read_csv(path, dtype={"simhash": str}, keep_default_na=False)
    return [int(h, 16) for h in df["simhash"] if h]


# --- point 2: errors name the flags as typed ------------------------------------------


BAD = [
    (["pairs", "IN", "OUT", "-k", "200"], "error: -k must be in [0, 63] for 64-bit"),
    (["pairs", "IN", "OUT", "--k", "200"], "error: --k must be in [0, 63]"),
    (["dedupe", "IN", "OUT", "--similarity", "2"], "error: --similarity must be in (0, 1]"),
    (["clusters", "IN", "OUT", "-k", "3", "--similarity", "0.5"],
     "give -k or --similarity, not both (got -k 3, --similarity 0.5); --similarity 0.5 "
     "means -k 17 at 64 bits"),
    (["pairs", "IN", "OUT", "--recall", "2"], "error: --recall must be in (0, 1], got 2.0"),
    (["pairs", "IN", "OUT", "--threshold", "0.7", "--recall", "0"], "--recall must be"),
    (["dedupe", "IN", "OUT", "--threshold", "2"], "error: --threshold must be in (0, 1]"),
    (["pairs", "IN", "OUT", "--threshold", "0.7", "--memory-limit", "lots"],
     "error: --memory-limit must be a size such as '2GB'"),
    (["clusters", "IN", "OUT", "--threshold", "0.7", "--memory-limit", "1KB"],
     "error: --memory-limit 1 kB is too small"),
    (["pairs", "IN", "OUT", "--max-pairs", "-1"],
     "error: --max-pairs must be a non-negative integer, got -1"),
    (["pairs", "IN", "OUT", "--max-pairs", "0"],
     "more than --max-pairs 0; to group near-duplicates without listing every pair use the "
     "clusters or dedupe command"),
    (["pairs", "IN", "OUT", "--threshold", "0.5", "--max-pairs", "0"],
     "more than --max-pairs 0 pairs reach Jaccard >= 0.5; raise --max-pairs"),
    (["tune", "IN", "--labels", "group", "--max-k", "-1"], "error: --max-k must be in [0, 64]"),
    (["tune", "IN", "--labels", "group", "--bits", "128", "--max-k", "200"],
     "error: --max-k must be in [0, 128], got 200"),
    (["tune", "IN", "--labels", "group", "--target", "recall=2"],
     "error: --target recall=2: recall must be in (0, 1]"),
    (["fingerprint", "IN", "OUT", "--ngram", "0"], "error: --ngram must be an integer >= 1"),
    (["fingerprint", "IN", "OUT", "--seed", "-1"], "error: --seed must be in [0, 2^64)"),
    (["dedupe", "IN", "OUT", "--n-jobs", "0"],
     "error: --n-jobs must be a non-zero integer, got 0"),
    (["clusters", "IN", "OUT", "--normalize", "foo"],
     "error: --normalize: unknown step foo; choose among html,nfkc"),
    (["pairs", "IN", "OUT", "--id", "n"], "--id n: row 2 repeats the id 1 of row 0"),
    (["pairs", "IN", "OUT", "--id", "f"], "--id f: row 1 repeats the id 0.5 of row 0"),
    (["dedupe", "IN", "OUT", "--threshold", "0.5", "--id", "f"],
     "--id f: row 1 repeats the id 0.5 of row 0"),
    (["fingerprint", "IN", "OUT", "--bits", "32"], "argument --bits: invalid choice: 32"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a[3:]) for a, _ in BAD])
def test_errors_name_the_flags_as_typed(table, tmp_path, capsys, argv, message):
    argv = [table if a == "IN" else tmp_path / "out.csv" if a == "OUT" else a for a in argv]
    err = _error(capsys, argv)
    assert message in err
    said = err
    for token in argv:  # what the user typed may look like Python (--target recall=2)
        said = said.replace(str(token), "")
    assert not PYTHON_WORDS.search(said), err
    assert not (tmp_path / "out.csv").exists()


def test_speak_translates_only_this_commands_flags():
    parser = cli.build_parser()
    pairs = flags_of(parser.subcommands["pairs"], ["--k", "3"])
    assert pairs["k"] == "--k" and pairs["max_pairs"] == "--max-pairs"
    assert pairs["memory_limit"] == "--memory-limit" and pairs["id_column"] == "--id"
    assert flags_of(parser.subcommands["pairs"])["k"] == "-k"
    clusters = flags_of(parser.subcommands["clusters"])
    # clusters has no --max-pairs: the limit is named without it
    assert speak("would hold 5 pairs, more than max_pairs=1,000; raise max_pairs (about 17 "
                 "bytes per pair) or lower k", clusters) == \
        "would hold 5 pairs, more than the limit of 1,000 pairs; lower -k"
    assert speak("more than max_pairs=1,000,000; raise max_pairs", pairs) == \
        "more than --max-pairs 1,000,000; raise --max-pairs"
    # English words stay English; a name is translated as a parameter only
    assert speak("at 64 bits, or the threshold", pairs) == "at 64 bits, or the threshold"
    assert speak("weights='tfidf' needs it", pairs) == "--weights tfidf needs it"
    assert speak("tmp_dir x: no such folder", pairs) == "--tmp-dir x: no such folder"
    assert speak("id column 'a': row 3", pairs) == "--id a: row 3"
    demo = flags_of(parser.subcommands["demo"])
    assert speak("threshold must be in (0, 1], got 2.0", demo).startswith("--jaccard must")
    assert plain_numbers("got np.int64(3) and np.float64(0.25), np.uint64(7)") == \
        "got 3 and 0.25, 7"


def test_warnings_are_one_line_in_the_commands_words(table, tmp_path, capsys, monkeypatch):
    from simhash_nb import _frames

    original = _frames.cluster_positions

    def warned(*args, **kwargs):
        warnings.warn("sh.clusters: one cluster holds 90% of the rows, more than k=20; "
                      "use sh.cluster_texts(texts, threshold=0.7) or pass a smaller k",
                      UserWarning, stacklevel=2)
        return original(*args, **kwargs)

    monkeypatch.setattr(_frames, "cluster_positions", warned)
    assert cli.main(["clusters", str(table), str(tmp_path / "c.csv"), "-q"]) == 0
    err = capsys.readouterr().err.strip()
    assert err == ("simhash-nb clusters: warning: one cluster holds 90% of the rows, more "
                   "than -k 20; use --threshold 0.7 or pass a smaller -k")


# --- point 2: options a run would not use are refused ----------------------------------


def test_options_that_would_be_ignored_are_refused(table, tmp_path, capsys):
    out = tmp_path / "out.csv"
    fps = tmp_path / "fps.parquet"
    assert cli.main(["fingerprint", str(table), str(fps), "-q"]) == 0
    cases = [
        (["fingerprint", table, out, "-q", "--progress"], "-q and --progress contradict"),
        (["fingerprint", table, out, "--batch-rows", "0"], "--batch-rows must be at least 1"),
        (["pairs", table, out, "--batch-rows", "100"], "--batch-rows applies to parquet input"),
        (["pairs", fps, out, "--fingerprints", "simhash", "--column", "text"],
         "--column cannot be used with --fingerprints"),
        (["pairs", fps, out, "--fingerprints", "simhash", "--idf", "x.npz"],
         "--idf cannot be used with --fingerprints"),
        (["fingerprint", table, out, "--out-column", "text"],
         "--out-column text would overwrite the text column"),
        (["fingerprint", table, out, "--out-column", ""], "--out-column must name a column"),
        (["clusters", table, table, out, "--threshold", "0.7", "--cluster-column", "c"],
         "--cluster-column applies to one input file"),
        (["pairs", table, out, "--threshold", "0.7", "--idf", "x.npz"],
         "--idf cannot be used with --threshold"),
        (["fingerprint", table, out, "--idf", "x.npz"], "--idf applies to --weights tfidf"),
        (["fingerprint", table, out, "--weights", "tfidf"], "--weights tfidf needs --idf FILE"),
        (["pairs", fps, out, "--fingerprints", "simhash", "--params", "s.json"],
         "--params cannot be used with --fingerprints"),
        (["pairs", table, out, "--threshold", "0.7", "--against", tmp_path, "--params",
          "s.json"], "--params cannot be used with --against"),
    ]
    for argv, message in cases:
        assert message in _error(capsys, argv), argv
    assert not out.exists()
    # parquet input takes --batch-rows
    assert cli.main(["pairs", str(fps), str(out), "--fingerprints", "simhash",
                     "--batch-rows", "2", "-q"]) == 0


def test_tune_refuses_an_unknown_plot_type_before_any_work(table, tmp_path, capsys):
    err = _error(capsys, ["tune", table, "--labels", "group", "--plot", tmp_path / "p.xyz"])
    assert "--plot" in err and "unknown image type .xyz" in err and ".png" in err
    assert capsys.readouterr().out == ""


# --- point 8: --params FILE, a saved spec ---------------------------------------------


def test_params_file_is_the_spec_used(table, tmp_path, capsys):
    spec = sh.FingerprintSpec(tokenizer="word", ngram=2, weights="tf", seed=7, bits=128)
    params = tmp_path / "spec.json"
    params.write_text(spec.to_json())
    out = tmp_path / "fps.parquet"
    assert cli.main(["fingerprint", str(table), str(out), "--params", str(params), "-q",
                     "--ngram", "2", "--tokenizer", "word"]) == 0  # agreeing flags are fine
    assert read_specs(out)["simhash"] == spec
    want = sh.fingerprint(PRESENT, spec=spec)
    csv = tmp_path / "fps.csv"
    assert cli.main(["fingerprint", str(table), str(csv), "--params", str(params), "-q"]) == 0
    assert _fps(csv) == [int(lo) | int(hi) << 64 for lo, hi in want]
    err = _error(capsys, ["fingerprint", table, csv, "--params", params, "--ngram", "3",
                          "--seed", "1"])
    assert "--ngram 3, --seed 1 differ from the spec in --params" in err
    assert "word 2-grams" in err and "seed 7" in err
    # the verified road uses the saved shingles and width
    pairs = tmp_path / "pairs.csv"
    binary = tmp_path / "binary.json"
    binary.write_text(spec.replace(weights="binary", bits=64).to_json())
    assert cli.main(["pairs", str(table), str(pairs), "--threshold", "0.5", "--params",
                     str(binary), "-q"]) == 0
    want_pairs = sh.near_duplicate_texts(PRESENT, threshold=0.5, tokenizer="word", ngram=2,
                                         seed=7)
    assert len(pd.read_csv(pairs)) == len(want_pairs)
    assert "must have binary weights" in _error(
        capsys, ["pairs", table, pairs, "--threshold", "0.5", "--params", params])


def test_params_file_errors(table, tmp_path, capsys):
    out = tmp_path / "o.csv"
    bad = tmp_path / "bad.json"
    cases = [
        (tmp_path / "none.json", None, "--params {p}: no such file"),
        (bad, "not json", "--params {p}: not a JSON file"),
        (bad, '{"tokenizer": "char"}', "--params {p}: not a fingerprint spec"),
        (bad, '{"version": 1, "bits": 32}', "not a fingerprint spec (bits must be 64 or 128"),
        (bad, '{"version": 99}', "format version 99"),
    ]
    for path, text, message in cases:
        if text is not None:
            path.write_text(text)
        err = _error(capsys, ["fingerprint", table, out, "--params", path])
        assert message.format(p=path) in err, err


# --- point 8: tf-idf with an IDF file from fit-idf --------------------------------------


def test_idf_table_saves_and_loads_without_pickle(tmp_path):
    table = sh.fit_idf(PRESENT, tokenizer="word")
    path = tmp_path / "idf.npz"
    table.save(path)
    back = sh.IdfTable.load(path)
    assert back.tag == table.tag and back.n_docs == len(PRESENT) and back.spec is None
    assert np.array_equal(back.hashes, table.hashes) and back.default == table.default
    with np.load(path, allow_pickle=False) as z:  # plain arrays only
        assert {a.dtype.kind for a in z.values()} <= {"u", "f", "i", "U"}
    (tmp_path / "x.npz").write_text("not a table")
    with pytest.raises(ValueError, match="not an IDF table"):
        sh.IdfTable.load(tmp_path / "x.npz")
    with pytest.raises(FileNotFoundError):
        sh.IdfTable.load(tmp_path / "absent.npz")


def test_fit_idf_then_tfidf_fingerprints(table, tmp_path, capsys):
    idf = tmp_path / "idf.npz"
    assert cli.main(["fit-idf", str(table), str(idf), "--column", "text", "--tokenizer",
                     "word", "-q"]) == 0
    fitted = sh.IdfTable.load(idf)
    want = sh.fit_idf(PRESENT, tokenizer="word")  # rows with missing text are no documents
    assert fitted.tag == want.tag and fitted.n_docs == len(PRESENT)
    assert fitted.spec == sh.FingerprintSpec.from_options(tokenizer="word", weights="tf")
    out = tmp_path / "fps.csv"
    assert cli.main(["fingerprint", str(table), str(out), "--tokenizer", "word", "--weights",
                     "tfidf", "--idf", str(idf), "-q"]) == 0
    expected = sh.fingerprint(PRESENT, tokenizer="word", weights="tfidf",
                              params={"idf": want})
    assert _fps(out) == [int(x) for x in expected]
    # the spec records the table: --params with that spec needs the same file
    parquet = tmp_path / "fps.parquet"
    assert cli.main(["fingerprint", str(table), str(parquet), "--tokenizer", "word",
                     "--weights", "tfidf", "--idf", str(idf), "-q"]) == 0
    spec = read_specs(parquet)["simhash"]
    assert dict(spec.params)["idf"] == want.tag
    saved = tmp_path / "spec.json"
    saved.write_text(spec.to_json())
    again = tmp_path / "again.csv"
    assert "pass its file with --idf FILE" in _error(
        capsys, ["fingerprint", table, again, "--params", saved])
    assert cli.main(["fingerprint", str(table), str(again), "--params", str(saved), "--idf",
                     str(idf), "-q"]) == 0
    assert _fps(again) == _fps(out)
    other = tmp_path / "other.npz"
    assert cli.main(["fit-idf", str(table), str(other), "--tokenizer", "char", "-q"]) == 0
    err = _error(capsys, ["fingerprint", table, again, "--tokenizer", "word", "--weights",
                          "tfidf", "--idf", other])
    assert f"--idf {other} was fitted on char 5-grams" in err and "word 1-grams" in err
    assert "fit-idf" in err
    err = _error(capsys, ["fingerprint", table, again, "--weights", "tfidf", "--idf", table])
    assert "not an IDF table" in err
    assert ".npz" in _error(capsys, ["fit-idf", table, tmp_path / "idf.txt"])


# --- point 8: a tokenizer given as MODULE:FUNCTION --------------------------------------


def _tokenizer_module(folder: Path, name: str) -> None:
    (folder / f"{name}.py").write_text(
        "def split(text):\n    return text.lower().split()\n\nNOT_A_FUNCTION = 3\n")


def test_tokenizer_module_function(table, tmp_path, capsys, monkeypatch):
    _tokenizer_module(tmp_path, "cli_tok_a")
    monkeypatch.syspath_prepend(str(tmp_path))
    import cli_tok_a

    out = tmp_path / "fps.parquet"
    assert cli.main(["fingerprint", str(table), str(out), "--tokenizer", "cli_tok_a:split",
                     "-q"]) == 0
    spec = read_specs(out)["simhash"]
    assert spec.tokenizer == "callable" and dict(spec.params)["name"] == "cli_tok_a.split"
    assert spec == sh.FingerprintSpec.from_options(tokenizer=cli_tok_a.split)
    got = sh.read_parquet(out)["simhash"].dropna().astype("uint64").tolist()
    assert got == sh.fingerprint(PRESENT, tokenizer=cli_tok_a.split).tolist()
    # tf-idf with an IDF table fitted by the same tokenizer
    idf = tmp_path / "idf.npz"
    assert cli.main(["fit-idf", str(table), str(idf), "--tokenizer", "cli_tok_a:split",
                     "-q"]) == 0
    assert cli.main(["pairs", str(table), str(tmp_path / "p.csv"), "--tokenizer",
                     "cli_tok_a:split", "--weights", "tfidf", "--idf", str(idf), "-q"]) == 0
    # a saved callable spec needs the function again, and the same one
    saved = tmp_path / "spec.json"
    saved.write_text(spec.to_json())
    o = tmp_path / "o.csv"
    assert "made with the tokenizer cli_tok_a.split: pass it as --tokenizer" in _error(
        capsys, ["fingerprint", table, o, "--params", saved])
    assert cli.main(["fingerprint", str(table), str(o), "--params", str(saved),
                     "--tokenizer", "cli_tok_a:split", "-q"]) == 0
    _tokenizer_module(tmp_path, "cli_tok_b")
    assert "was made with cli_tok_a.split" in _error(
        capsys, ["fingerprint", table, o, "--params", saved, "--tokenizer", "cli_tok_b:split"])


def test_tokenizer_module_function_errors(table, tmp_path, capsys, monkeypatch):
    _tokenizer_module(tmp_path, "cli_tok_c")
    monkeypatch.syspath_prepend(str(tmp_path))
    o = tmp_path / "o.csv"
    cases = [
        ("no_such_module_xyz:split", "--tokenizer no_such_module_xyz:split: no module named "
         "'no_such_module_xyz'"),
        ("cli_tok_c:nope", "--tokenizer cli_tok_c:nope: module cli_tok_c has no function "
         "'nope'"),
        ("cli_tok_c:NOT_A_FUNCTION", "NOT_A_FUNCTION is not a function"),
        ("not a name", "argument --tokenizer: choose char, word, jieba or MODULE:FUNCTION"),
    ]
    for tokenizer, message in cases:
        assert message in _error(capsys, ["fingerprint", table, o, "--tokenizer", tokenizer])
    assert "cannot be used with --threshold" in _error(
        capsys, ["pairs", table, o, "--threshold", "0.7", "--tokenizer", "cli_tok_c:split"])


def test_tokenizer_module_in_the_working_folder(table, tmp_path):
    """The installed script finds a tokenizer module in the folder it runs in."""
    _tokenizer_module(tmp_path, "cli_tok_cwd")
    run = subprocess.run([str(SCRIPT), "fingerprint", str(table), "fps.csv", "--tokenizer",
                          "cli_tok_cwd:split", "-q"], capture_output=True, text=True,
                         cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr
    assert len(_fps(tmp_path / "fps.csv")) == len(PRESENT)
