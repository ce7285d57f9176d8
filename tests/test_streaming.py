"""The streaming verified path: shards in, the in-memory path's pairs out, within a
memory limit, temporary files gone whatever happens; the corpus store."""

from __future__ import annotations

import errno
import gzip
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.typed import List

import simhash_nb as sh
from simhash_nb._core.pipeline import MemoryBudget, parse_size
from simhash_nb._core.pipeline import run as pipeline_run
from simhash_nb._core.pipeline import store as pipeline_store
from simhash_nb._kernels.jaccard_parts import parts_similarities_above
from simhash_nb.cli import main
from simhash_nb.io import InputError
from simhash_nb.streaming import run as shard_run

from . import naive

WORD3 = dict(tokenizer="word", ngram=3)


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    base = sh.datasets.load_sample("fortunes")["text"].tolist()[:1500]
    nd = sh.datasets.make_near_duplicates(base, n=600, edit_rate=0.04, random_state=1)
    texts = list(nd.texts)
    texts[5] = ""  # an empty text: in no pair
    rng = np.random.default_rng(0)
    ids = rng.permutation(len(texts)) * 3 + 11  # ids that are not row numbers
    return pd.DataFrame({"id": ids.astype(np.int64), "text": texts})


def _write_shards(df: pd.DataFrame, folder) -> list[str]:
    """Four shards: parquet, parquet, JSON Lines gzipped, CSV."""
    os.makedirs(folder, exist_ok=True)
    parts = np.array_split(np.arange(len(df)), 4)
    paths = []
    for s, rows in enumerate(parts):
        part = df.iloc[rows]
        if s < 2:
            path = os.path.join(folder, f"part-{s}.parquet")
            part.to_parquet(path, index=False)
        elif s == 2:
            path = os.path.join(folder, f"part-{s}.jsonl.gz")
            with gzip.open(path, "wt", encoding="utf-8") as f:
                for r in part.itertuples():
                    f.write(json.dumps({"id": int(r.id), "text": r.text}) + "\n")
        else:
            path = os.path.join(folder, f"part-{s}.csv")
            part.to_csv(path, index=False)
        paths.append(path)
    return paths


@pytest.fixture()
def spill(monkeypatch):
    """Every shingle goes to the temporary file (the path of corpora past memory)."""
    monkeypatch.setattr(MemoryBudget, "shingle_bytes", property(lambda self: 0))
    monkeypatch.setattr(MemoryBudget, "verify_bytes", property(lambda self: 1 << 16))


def _pair_set(df, left="left", right="right"):
    return set(zip(df[left].tolist(), df[right].tolist()))


def _expected(corpus):
    got = sh.near_duplicate_texts(corpus["text"].tolist(), 0.7, **WORD3)
    ids = corpus["id"].to_numpy()
    return {(int(ids[i]), int(ids[j])): s for i, j, s in zip(got.i, got.j, got.jaccard)}


def test_shards_give_the_in_memory_pairs(corpus, tmp_path, spill):
    paths = _write_shards(corpus, tmp_path / "in")
    got = sh.near_duplicate_shards(tmp_path / "in", 0.7, id_column="id", tmp_dir=tmp_path,
                                   **WORD3)
    want = _expected(corpus)
    assert len(want) > 500
    assert {(a, b): s for a, b, s in zip(got.left, got.right, got.jaccard)} == want
    # a glob and an explicit list read the same rows in the same order
    again = sh.near_duplicate_shards([paths[0], str(tmp_path / "in" / "part-[123]*")], 0.7,
                                     id_column="id", **WORD3)
    assert _pair_set(again) == _pair_set(got)
    assert os.listdir(tmp_path) == ["in"]  # the temporary folder is gone


def test_spilled_and_in_memory_runs_agree(corpus, tmp_path, monkeypatch):
    frames = [corpus.iloc[:1000], corpus.iloc[1000:]]
    held = sh.near_duplicate_shards(frames, 0.7, **WORD3)
    monkeypatch.setattr(MemoryBudget, "shingle_bytes", property(lambda self: 0))
    monkeypatch.setattr(MemoryBudget, "verify_bytes", property(lambda self: 1 << 12))
    spilled = sh.near_duplicate_shards(frames, 0.7, tmp_dir=tmp_path, **WORD3)
    pd.testing.assert_frame_equal(held, spilled)
    assert len(held) > 500 and os.listdir(tmp_path) == []
    texts = corpus["text"].tolist()
    for got in (sh.near_duplicate_texts(texts, 0.7, memory_limit="64GB", **WORD3),):
        assert set(zip(got.i.tolist(), got.j.tolist())) == _pair_set(held)


def test_clusters_and_dedupe_follow_cluster_texts(corpus, tmp_path, spill):
    labels = sh.cluster_texts(corpus["text"].tolist(), 0.7, **WORD3)
    got = sh.cluster_shards(corpus, 0.7, id_column="id", **WORD3)
    ids = corpus["id"].to_numpy()
    assert got["id"].tolist() == ids.tolist()
    assert got["cluster"].tolist() == ids[labels].tolist()
    keep = sh.dedupe_shards([corpus.iloc[:900], corpus.iloc[900:]], None, 0.7, **WORD3)
    assert keep.tolist() == sh.dedupe_texts(corpus["text"].tolist(), 0.7, **WORD3).tolist()


def test_dedupe_writes_shards_with_the_input_schema(corpus, tmp_path):
    paths = _write_shards(corpus, tmp_path / "in")
    out = tmp_path / "out"
    keep = sh.dedupe_shards(paths, out, 0.7, id_column="id", **WORD3)
    names = sorted(os.listdir(out))
    assert names == sorted(os.path.basename(p) for p in paths)
    first = pq.read_table(out / "part-0.parquet")
    assert first.schema.names == ["id", "text"]
    rows = len(pq.read_table(paths[0]))
    assert first.num_rows == int(keep[:rows].sum()) < rows
    with pytest.raises(InputError, match="exists already"):
        sh.dedupe_shards(paths, out, 0.7, id_column="id", **WORD3)


def test_missing_texts_are_in_no_pair_and_stay(tmp_path):
    df = pd.DataFrame({"text": ["the cat sat on the mat", None, "the cat sat on the mat!"]})
    got = sh.cluster_shards(df, 0.7)
    assert got["cluster"].tolist()[0] == 0 and pd.isna(got["cluster"][1])
    assert sh.dedupe_shards(df).tolist() == [True, True, False]


# --- bad input ---------------------------------------------------------------------------


def test_bad_shards_are_named(corpus, tmp_path):
    paths = _write_shards(corpus.iloc[:200], tmp_path / "in")
    other = tmp_path / "other.parquet"
    pd.DataFrame({"id": [1], "body": ["x"]}).to_parquet(other)
    with pytest.raises(InputError, match="other.parquet has no column 'text'"):
        sh.near_duplicate_shards([paths[0], other])
    pd.DataFrame({"id": ["x"], "text": ["a"]}).to_parquet(tmp_path / "in" / "part-9.parquet")
    with pytest.raises(InputError, match="part-9.parquet: column 'id' holds large_string, while"):
        sh.near_duplicate_shards(tmp_path / "in", id_column="id")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(open(paths[0], "rb").read()[:300])
    for progress in (False, True):  # a bar reads the footers first: the same error
        with pytest.raises(InputError, match="broken.parquet"):
            sh.near_duplicate_shards([paths[0], broken], progress=progress)
    with pytest.raises(InputError, match="no such file or folder"):
        sh.near_duplicate_shards(tmp_path / "nothing.parquet")
    with pytest.raises(InputError, match="no table files match"):
        sh.near_duplicate_shards(str(tmp_path / "*.csv.gz"))


def test_repeated_ids_are_refused(tmp_path):
    df = pd.DataFrame({"id": [1, 2, 1], "text": ["a b", "c d", "e f"]})
    with pytest.raises(InputError, match="row 2 repeats the id 1 of row 0"):
        sh.near_duplicate_shards(df, id_column="id")


def test_a_file_changed_between_the_passes_is_refused(corpus, tmp_path):
    paths = _write_shards(corpus.iloc[:300], tmp_path / "in")
    run = shard_run.run_shards(paths, 0.7, what="labels", **WORD3)
    os.utime(paths[1], ns=(0, 10**18))
    with pytest.raises(InputError, match="part-1.parquet changed since it was read"):
        shard_run.write_kept(run.source, np.ones(run.n, bool), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p for p in os.listdir(tmp_path) if p.startswith(".simhash")] == []


def test_memory_limit_too_small_says_the_least(corpus):
    base = sh._core.pipeline.budget.resident_memory()
    with pytest.raises(sh.MemoryLimitError, match="give at least"):
        sh.near_duplicate_shards(corpus, memory_limit=base + 1000, **WORD3)
    for bad, err in (("2 parsecs", ValueError), (-1, ValueError), (True, TypeError)):
        with pytest.raises(err, match="memory_limit"):
            sh.near_duplicate_shards(corpus, memory_limit=bad)
    assert parse_size("1.5GiB") == 1610612736 and parse_size("2GB") == 2 * 10**9


@pytest.mark.parametrize("where", ["shingling", "verifying"])
def test_interrupts_leave_no_temporary_files(corpus, tmp_path, spill, monkeypatch, where):
    target = (pipeline_run, "verify_wave") if where == "verifying" else (
        sh._core.pipeline.stages.Shingler, "__call__")
    calls = []
    real = getattr(*target)

    def interrupt(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(*target, interrupt)
    monkeypatch.setattr(MemoryBudget, "batch_text_bytes", property(lambda self: 50_000))
    with pytest.raises(KeyboardInterrupt):
        sh.near_duplicate_shards(corpus, tmp_dir=tmp_path, **WORD3)
    assert len(calls) == 2 and os.listdir(tmp_path) == []


def test_a_full_temporary_disk_is_named_and_cleaned(corpus, tmp_path, spill, monkeypatch):
    class FullDisk:
        def __init__(self, path):
            self.name = path
            open(path, "wb").close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            pass

    monkeypatch.setattr(pipeline_store, "open_spill", FullDisk)
    with pytest.raises(OSError, match="No space left on device; give a temporary folder"):
        sh.near_duplicate_shards(corpus, tmp_dir=tmp_path, **WORD3)
    assert os.listdir(tmp_path) == []


def test_cli_streams_several_inputs(corpus, tmp_path, capsys):
    paths = _write_shards(corpus, tmp_path / "in")
    out = tmp_path / "pairs.parquet"
    rc = main(["pairs", *paths, str(out), "--threshold", "0.7", "--memory-limit", "8GB",
               "--id", "id", "--tokenizer", "word", "--ngram", "3", "--tmp-dir",
               str(tmp_path), "-q"])
    assert rc == 0
    got = pq.read_table(out).to_pandas()
    assert {(a, b): s for a, b, s in zip(got.left, got.right, got.jaccard)} == \
        _expected(corpus)
    rc = main(["dedupe", *paths, str(tmp_path / "kept"), "--threshold", "0.7", "--id", "id",
               "--tokenizer", "word", "--ngram", "3", "-q"])
    assert rc == 0 and len(os.listdir(tmp_path / "kept")) == 4
    rc = main(["clusters", *paths, str(tmp_path / "c.csv"), "--threshold", "0.7", "--id",
               "id", "--tokenizer", "word", "--ngram", "3", "-q"])
    labels = pd.read_csv(tmp_path / "c.csv")
    assert rc == 0 and labels.columns.tolist() == ["id", "cluster"] and len(labels) == len(corpus)
    assert sorted(os.listdir(tmp_path)) == ["c.csv", "in", "kept", "pairs.parquet"]


@pytest.mark.parametrize("argv, message", [
    (["-k", "5"], "-k cannot be used with --threshold"),
    (["--similarity", "0.8"], "--similarity cannot be used with --threshold"),
    (["--memory-limit", "lots"], "--memory-limit must be a size"),
    (["--tmp-dir", "/no/such/dir"], "--tmp-dir /no/such/dir: no such folder"),
])
def test_cli_refuses_what_it_would_ignore(corpus, tmp_path, capsys, argv, message):
    paths = _write_shards(corpus.iloc[:100], tmp_path / "in")
    rc = main(["pairs", paths[0], str(tmp_path / "o.parquet"), "--threshold", "0.7", *argv])
    assert rc == 2 and message in capsys.readouterr().err
    rc = main(["pairs", *paths[:2], str(tmp_path / "o.parquet"), "-k", "3"])
    assert rc == 2 and "several inputs need --threshold" in capsys.readouterr().err
    assert not (tmp_path / "o.parquet").exists()


def test_peak_memory_stays_under_the_limit(tmp_path):
    """A child process streams ~45 MB of character-5-gram text (about 300 MB of
    shingles, more than the limit leaves) under a limit 250 MB above its start."""
    script = textwrap.dedent("""
        import sys
        import numpy as np, pandas as pd, simhash_nb as sh
        from simhash_nb._core.pipeline.budget import resident_memory
        rng = np.random.default_rng(0)
        words = np.array(sh.datasets.load_sample("fortunes")["text"].str.cat(sep=" ").split())
        # warm up every kernel of the path (a spilled run with pairs): compiling one on a
        # cold cache holds hundreds of MB for a moment, which is not the run's own memory
        # (first in memory under a wide limit, which compiles most of them, then spilled:
        # on a cold cache the compiler's own memory would not fit a narrow limit at once)
        warm = pd.DataFrame({"text": [" ".join(words[rng.integers(0, len(words), 110)])
                                      for _ in range(2000)]})
        warm = pd.concat([warm, warm[:50]], ignore_index=True)
        sh.near_duplicate_shards(warm, memory_limit=resident_memory() + 2_000_000_000)
        sh.near_duplicate_shards(warm, memory_limit=resident_memory() + 60_000_000)
        frames = (pd.DataFrame({"text": [" ".join(words[rng.integers(0, len(words), 110)])
                                         for _ in range(10_000)]}) for _ in range(7))
        limit = resident_memory() + 250_000_000
        got = sh.near_duplicate_shards(frames, 0.7, memory_limit=limit, tmp_dir=sys.argv[1])
        # VmHWM: this process's own peak (ru_maxrss keeps the parent's size at fork
        # across exec on Linux: a large pytest process would count)
        hwm = [x for x in open("/proc/self/status") if x.startswith("VmHWM:")][0]
        print(limit, int(hwm.split()[1]) * 1024, len(got))
    """)
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    limit, peak, _ = (int(x) for x in out.stdout.split())
    assert peak <= limit, (peak, limit)
    assert os.listdir(tmp_path) == []


# --- the corpus store ----------------------------------------------------------------------


def _truth(corpus):
    """Every pair with Jaccard >= 0.7 (all pairs compared), as ids."""
    got = sh.jaccard_pairs(corpus["text"].tolist(), 0.7, candidates="all", **WORD3)
    ids = corpus["id"].to_numpy()
    return {(int(ids[i]), int(ids[j])): s for i, j, s in zip(got.i, got.j, got.jaccard)}


def _unordered(pairs: dict) -> dict:
    return {tuple(sorted(p)): s for p, s in pairs.items()}


def test_store_query_finds_the_pairs_of_the_new_documents(corpus, tmp_path, spill):
    """Searched by the documents' signatures: every pair found is a true one with its
    exact Jaccard, and at least 99% of the true pairs of new documents are found (the
    recall asked), as many as one run over all documents finds of them."""
    paths = _write_shards(corpus, tmp_path / "in")
    store = sh.CorpusStore.create(tmp_path / "store", **WORD3)
    store.add(paths[:3], id_column="id")
    opened = sh.CorpusStore.open(tmp_path / "store")
    assert opened.n == store.n == len(corpus) - len(pd.read_csv(paths[3]))
    got = opened.query(paths[3:], 0.7, id_column="id", add=True)
    new = set(pd.read_csv(paths[3])["id"].tolist())
    truth = {p: s for p, s in _unordered(_truth(corpus)).items() if new & set(p)}
    full = {p for p in _unordered(_expected(corpus)) if new & set(p)}
    found = _unordered({(a, b): s for a, b, s in zip(got.left, got.right, got.jaccard)})
    assert len(truth) > 200 and found.items() <= truth.items()
    assert len(found) >= max(0.99 * len(truth), len(full))
    assert sh.CorpusStore.open(tmp_path / "store").n == len(corpus)
    with pytest.raises(InputError, match="stores already"):
        opened.query(paths[3:], 0.7, id_column="id")


def _without_signatures(path) -> None:
    """A store as written before the signatures: no minhash.u8 in any segment."""
    manifest = json.loads((path / "manifest.json").read_text())
    for seg in manifest["segments"]:
        (path / seg["name"] / "minhash.u8").unlink()
        del seg["sizes"]["minhash.u8"], seg["crc32"]["minhash.u8"]
    (path / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("threshold", [0.7, 0.25])
def test_store_query_by_fingerprints_equals_the_full_run(corpus, tmp_path, threshold):
    """A store without signatures, or a threshold too low for their bands, is searched
    by the fingerprints: the pairs of one run over all documents, exactly."""
    store = sh.CorpusStore.create(tmp_path / "store", **WORD3)
    store.add(corpus.iloc[:1500], id_column="id")
    if threshold == 0.7:
        _without_signatures(tmp_path / "store")
    got = sh.CorpusStore.open(tmp_path / "store").query(corpus.iloc[1500:], threshold,
                                                        id_column="id")
    ids = corpus["id"].to_numpy()
    full = sh.near_duplicate_texts(corpus["text"].tolist(), threshold, **WORD3)
    want = {(int(ids[i]), int(ids[j])): s for i, j, s in zip(full.i, full.j, full.jaccard)
            if max(i, j) >= 1500}
    assert len(want) > 100
    assert _unordered({(a, b): s for a, b, s in zip(got.left, got.right, got.jaccard)}) == \
        _unordered(want)


def test_store_names_the_first_new_row_whose_id_it_holds(corpus, tmp_path):
    store = sh.CorpusStore.create(tmp_path / "s", **WORD3)
    store.add(corpus.iloc[:50], id_column="id")
    new = corpus.iloc[50:56].copy()
    new["id"] = new["id"].to_numpy()  # a copy to edit
    new.iloc[2, 0] = corpus["id"].iloc[40]
    new.iloc[4, 0] = corpus["id"].iloc[7]
    with pytest.raises(InputError, match=rf"row 2 has the id {corpus['id'].iloc[40]}, which"):
        store.query(new, id_column="id")
    assert store.n == 50


@pytest.mark.skipif(sys.platform != "linux", reason="threads have their own nice on Linux")
def test_store_check_runs_at_the_lowest_priority_beside_the_query(corpus, tmp_path,
                                                                   monkeypatch):
    import threading

    from simhash_nb.streaming import corpus as corpus_store
    store = sh.CorpusStore.create(tmp_path / "s", **WORD3)
    store.add(corpus.iloc[:50], id_column="id")
    seen = {}
    check = corpus_store.CorpusStore.check_segment

    def spying(self, *a, **kw):
        seen["thread"] = threading.get_native_id()
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, seen["thread"])
        return check(self, *a, **kw)

    monkeypatch.setattr(corpus_store.CorpusStore, "check_segment", spying)
    before = os.getpriority(os.PRIO_PROCESS, 0)
    store.query(corpus.iloc[50:60], id_column="id")
    assert seen["thread"] != threading.get_native_id() and seen["nice"] == 19
    assert os.getpriority(os.PRIO_PROCESS, 0) == before  # the query's own threads: as were


def test_store_refuses_other_specs_and_damage(corpus, tmp_path):
    store = sh.CorpusStore.create(tmp_path / "s", **WORD3)
    store.add(corpus.iloc[:50], id_column="id")
    with pytest.raises(sh.SpecMismatchError):
        store.query(corpus.iloc[50:60], id_column="id", tokenizer="char")
    seg = [p for p in os.listdir(tmp_path / "s") if p.startswith("seg-")][0]
    for name in ("minhash.u8", "shingles.u64"):  # both checked as a query runs
        damaged = tmp_path / "s" / seg / name
        data = bytearray(damaged.read_bytes())
        data[0] ^= 1
        damaged.write_bytes(bytes(data))
        opened = sh.CorpusStore.open(tmp_path / "s")
        for check in (opened.verify, lambda: opened.query(  # noqa: B023 (called at once)
                corpus.iloc[50:60], id_column="id", add=True)):
            with pytest.raises(InputError, match=f"{name} fails its checksum"):
                check()
        assert sh.CorpusStore.open(tmp_path / "s").n == 50  # the failed query added nothing
        data[0] ^= 1
        damaged.write_bytes(bytes(data))
    damaged.write_bytes(bytes(data[:-1]))
    with pytest.raises(InputError, match="shingles.u64 is missing or truncated"):
        sh.CorpusStore.open(tmp_path / "s")
    damaged.write_bytes(bytes(data))
    signatures = tmp_path / "s" / seg / "minhash.u8"
    kept = signatures.read_bytes()
    signatures.unlink()
    with pytest.raises(InputError, match="minhash.u8 is missing or truncated"):
        sh.CorpusStore.open(tmp_path / "s")
    signatures.write_bytes(kept)
    fps = tmp_path / "s" / seg / "fingerprints.npy"
    data = bytearray(fps.read_bytes())
    data[-1] ^= 1
    fps.write_bytes(bytes(data))
    with pytest.raises(InputError, match="fingerprints.npy fails its checksum"):
        sh.CorpusStore.open(tmp_path / "s")
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    manifest["version"] = 99
    (tmp_path / "s" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="version 99 is not supported"):
        sh.CorpusStore.open(tmp_path / "s")


def test_a_failed_append_leaves_the_store_as_it_was(corpus, tmp_path, monkeypatch):
    store = sh.CorpusStore.create(tmp_path / "s", **WORD3)
    store.add(corpus.iloc[:50], id_column="id")
    before = (tmp_path / "s" / "manifest.json").read_text()

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sh.streaming.corpus, "_crc", crash)
    with pytest.raises(KeyboardInterrupt):
        store.add(corpus.iloc[50:100], id_column="id")
    monkeypatch.undo()
    assert (tmp_path / "s" / "manifest.json").read_text() == before
    assert sh.CorpusStore.open(tmp_path / "s").n == 50
    assert not [p for p in os.listdir(tmp_path / "s") if p.startswith(".staging")]


def test_cli_save_and_against(corpus, tmp_path, capsys):
    paths = _write_shards(corpus, tmp_path / "in")
    common = ["--threshold", "0.7", "--id", "id", "-q"]
    assert main(["pairs", *paths[:3], str(tmp_path / "a.parquet"), "--tokenizer", "word",
                 "--ngram", "3", "--save", str(tmp_path / "st"), *common]) == 0
    assert main(["pairs", paths[3], str(tmp_path / "b.parquet"), "--against",
                 str(tmp_path / "st"), *common]) == 0
    first = _pair_set(pq.read_table(tmp_path / "a.parquet").to_pandas())
    rows = np.concatenate(np.array_split(np.arange(len(corpus)), 4)[:3])
    assert first == set(_expected(corpus.iloc[rows]))  # the run that saved the store
    both = first | _pair_set(pq.read_table(tmp_path / "b.parquet").to_pandas())
    truth = set(_unordered(_truth(corpus)))
    assert set(_unordered(dict.fromkeys(both))) <= truth
    assert len(both) >= 0.99 * len(truth)
    assert main(["pairs", paths[3], str(tmp_path / "c.parquet"), "--against",
                 str(tmp_path / "st"), "--tokenizer", "char", *common]) == 2
    assert "stores shingles of" in capsys.readouterr().err


# --- kernels against their twins -------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=12), min_size=1, max_size=8),
       st.lists(st.lists(st.integers(0, 30), max_size=12), min_size=1, max_size=8),
       st.floats(0.05, 1.0))
def test_cross_similarities_match_the_naive_twin(a, b, threshold):
    def csr(docs):
        sets = [sorted(set(d)) for d in docs]
        indptr = np.concatenate([[0], np.cumsum([len(s) for s in sets])]).astype(np.int64)
        flat = np.array([x for s in sets for x in s], dtype=np.uint64)
        return indptr, flat, sets

    ia, ha, sa = csr(a)
    ib, hb, sb = csr(b)
    left = np.repeat(np.arange(len(a)), len(b))
    right = np.tile(np.arange(len(b)), len(a))
    out = parts_similarities_above(List([ia, ib]), List([ha, hb]), np.zeros_like(left), left,
                                   np.ones_like(right), right, threshold,
                                   np.empty(left.shape[0]))
    for p in range(left.shape[0]):
        want = naive.jaccard(sa[left[p]], sb[right[p]])
        if want >= threshold * (1 + 1e-9):
            assert out[p] == pytest.approx(want)
        elif want < threshold * (1 - 1e-6):
            assert out[p] == -1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.lists(st.integers(0, 20), max_size=10), min_size=1, max_size=5),
                min_size=1, max_size=6),
       st.floats(0.05, 1.0), st.integers(0, 2**32 - 1))
def test_batches_held_apart_match_the_naive_twin(batches, threshold, seed):
    """A store that keeps its batches apart (in memory, no copy) compares documents of
    any two batches as the naive Jaccard does."""
    store = pipeline_store.ShingleStore(1 << 30, 1 << 30)
    sets = []
    for docs in batches:
        part = [sorted(set(d)) for d in docs]
        sets += part
        indptr = np.concatenate([[0], np.cumsum([len(x) for x in part])]).astype(np.int64)
        store.append(indptr, np.array([x for d in part for x in d], dtype=np.uint64))
    store.seal()
    rng = np.random.default_rng(seed)
    i = rng.integers(0, len(sets), 60)
    j = rng.integers(0, len(sets), 60)
    out = store.similarities(i, j, threshold)
    for p in range(i.shape[0]):
        want = naive.jaccard(sets[i[p]], sets[j[p]])
        if want >= threshold * (1 + 1e-9):
            assert out[p] == pytest.approx(want)
        elif want < threshold * (1 - 1e-6):
            assert out[p] < threshold
    store.close()


def test_pyarrow_batches_are_a_source():
    batch = pa.record_batch({"text": ["the cat sat on the mat", "the cat sat on the mat!"]})
    assert sh.near_duplicate_shards([batch])[["left", "right"]].values.tolist() == [[0, 1]]
    with pytest.raises(TypeError, match="give pandas DataFrames"):
        sh.near_duplicate_shards([["not a frame"]])


def test_sigterm_while_streaming_leaves_nothing(tmp_path):
    """SIGTERM to the CLI once its shingles spill: exit status 130, the temporary folder
    and the output gone."""
    import signal
    import time

    rng = np.random.default_rng(3)
    words = np.array(sh.datasets.load_sample("fortunes")["text"].str.cat(sep=" ").split())
    texts = [" ".join(words[rng.integers(0, len(words), 120)]) for _ in range(40_000)]
    pd.DataFrame({"text": texts}).to_parquet(tmp_path / "in.parquet")
    spill_dir = tmp_path / "tmp"
    spill_dir.mkdir()
    cmd = [os.path.join(os.path.dirname(sys.executable), "simhash-nb"), "pairs",
           str(tmp_path / "in.parquet"),
           str(tmp_path / "out.parquet"), "--threshold", "0.7", "--memory-limit", "400MB",
           "--tmp-dir", str(spill_dir), "-q"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not os.listdir(spill_dir) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert os.listdir(spill_dir), "the run ended before its shingles spilled"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert os.listdir(spill_dir) == [] and not (tmp_path / "out.parquet").exists()


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(0, 60), max_size=40), st.sets(st.integers(0, 60), max_size=40),
       st.sampled_from([0.3, 0.5, 0.7, 0.8, 0.9, 1.0]))
def test_size_filter_never_drops_a_pair_that_reaches_the_threshold(a, b, threshold):
    """The size filter skips a candidate before its shingles are read: only when the
    exact Jaccard similarity is below the threshold (or a set is empty)."""
    from simhash_nb._core.pipeline.stages import may_reach

    passes = bool(may_reach(np.array([len(a)]), np.array([len(b)]), threshold)[0])
    if a and b and len(a & b) / len(a | b) >= threshold:
        assert passes
    if not (a and b):
        assert not passes
    if a and b and min(len(a), len(b)) < threshold * max(len(a), len(b)) - 1e-6:
        assert not passes


def test_verify_block_shrinks_to_what_the_documents_leave():
    """Many documents leave less room for a block of candidates' shingles; never
    below 16 MB, never above a quarter of what is free."""
    budget = MemoryBudget.make("2GB", base=200_000_000)
    assert budget.verify_bytes_for(1000, 128) == budget.verify_bytes
    few = budget.verify_bytes_for(10_000_000, 128)
    assert 16 << 20 <= few < budget.verify_bytes
    assert few == budget.free - 10_000_000 * budget.per_document(128, 1)
    assert budget.verify_bytes_for(10**9, 128) == 16 << 20


def test_run_ahead_gives_the_items_in_order_and_raises_the_producers_error():
    from simhash_nb._core.parallel import run_ahead

    assert list(run_ahead(iter(range(100)), depth=3)) == list(range(100))

    def failing():
        yield 1
        raise OSError("disk gone")

    got = []
    with pytest.raises(OSError, match="disk gone"):
        for x in run_ahead(failing()):
            got.append(x)
    assert got == [1]


def test_run_ahead_stops_and_closes_the_producer_when_the_caller_stops():
    import threading
    import time

    from simhash_nb._core.parallel import run_ahead

    closed = threading.Event()
    made = []

    def endless():
        try:
            i = 0
            while True:
                made.append(i)
                yield i
                i += 1
        finally:
            closed.set()

    ahead = run_ahead(endless())
    assert next(ahead) == 0
    ahead.close()  # the caller stops early (a break, an error, Ctrl-C)
    assert closed.wait(5)
    count = len(made)
    time.sleep(0.2)
    assert len(made) == count <= 3  # nothing made after the stop


def test_the_search_ahead_gives_the_same_pairs_and_labels(corpus, spill, monkeypatch):
    """The verified path with the next wave searched in a background thread and
    without, shingles spilled: the same pairs, the same labels (union-find order)."""
    from simhash_nb.config import config

    texts = corpus["text"].tolist()
    results = []
    for ahead in (True, False):
        monkeypatch.setitem(config, "search_ahead", ahead)
        p = sh.near_duplicate_texts(texts, 0.6, **WORD3)
        labels = sh.cluster_texts(texts, 0.6, **WORD3)
        results.append((p.i.tolist(), p.j.tolist(), p.jaccard.tolist(), labels.tolist()))
    assert results[0] == results[1]
    assert len(results[0][0]) > 500


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sets(st.integers(0, 40), min_size=1, max_size=30), min_size=2, max_size=12),
       st.sampled_from([0.3, 0.5, 0.7, 0.9]), st.integers(0, 2**63 - 1))
def test_spilled_verification_with_the_prefix_filter_is_exact(docs, threshold, salt):
    """Spilled shingles without sketches are verified prefix first (only pairs whose
    smallest hashes meet are read in full), with sketches in full at once: every pair
    at or above the threshold gets its exact Jaccard, whatever the documents; in blocks
    of any size."""
    mix = np.uint64(salt | 1)
    rows = [np.unique(np.array(sorted(d), dtype=np.uint64) * mix) for d in docs]
    indptr = np.concatenate([[0], np.cumsum([r.shape[0] for r in rows])])
    i, j = np.triu_indices(len(docs), 1)
    i, j = i.astype(np.int64), j.astype(np.int64)
    want = np.array([len(docs[a] & docs[b]) / len(docs[a] | docs[b]) for a, b in zip(i, j)])
    for verify_bytes, sketched in ((1, False), (1 << 20, False), (1 << 20, True)):
        with pipeline_store.ShingleStore(0, verify_bytes) as s:
            s.append(indptr, np.concatenate(rows))
            s.seal()
            if not sketched:  # a store without sketches reads prefixes first
                s.sketches = None
            assert s.spilled and s._prefix_first(s) is not sketched
            got = s.similarities(i, j, threshold)
            at = s.at_least(i, j, np.arange(i.shape[0]), threshold)
            other = s.similarities_with(s, i, j, threshold)
        hit = want >= threshold
        np.testing.assert_allclose(got[hit], want[hit])
        assert (got[~hit] < threshold).all()
        assert (at == hit).all()
        np.testing.assert_allclose(other[hit], want[hit])
        assert (other[~hit] < threshold).all()


def test_spilled_gather_reads_every_run_on_threads_and_names_a_short_read():
    """The spilled shingles of many documents, read on the kernel's threads (each run to
    its own place): the same CSR as held in memory, whole or first ``counts`` hashes;
    a file cut short fails with the folder and how much of the run it held."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(0, 60, 5000)
    indptr = np.concatenate([[0], np.cumsum(sizes)])
    hashes = rng.integers(0, 2**64, int(indptr[-1]), dtype=np.uint64)
    docs = np.unique(rng.integers(0, 5000, 3000))
    counts = np.minimum(sizes[docs], rng.integers(0, 60, docs.shape[0]))
    with pipeline_store.ShingleStore(1 << 30, 1 << 30) as held, \
            pipeline_store.ShingleStore(0, 1 << 30) as spilled:
        for s in (held, spilled):
            s.append(indptr, hashes)
            s.seal()
        assert spilled.spilled and not held.spilled
        for c in (None, counts):
            want, got = held.gather(docs, c), spilled.gather(docs, c)
            assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])
        cut = int(indptr[docs[-1]]) * 8  # the last document's run is short
        os.truncate(os.path.join(spilled.folder, pipeline_store.SHINGLES), cut)
        with pytest.raises(OSError, match=r"cannot read the shingles of .* bytes\)"):
            spilled.gather(docs)


def test_prefix_filter_keeps_pairs_at_the_threshold_sharing_only_their_largest_hashes():
    """The worst case of the prefix filter: two sets just at the threshold whose shared
    hashes are the largest of both, so the prefixes meet in one hash only."""
    rows, pairs, want = [], [], []
    for t in (0.5, 0.7, 0.8, 0.9):
        for a in range(1, 40):
            for b in range(max(1, int(t * a)), a + 1):
                c = next((c for c in range(1, b + 1) if c / (a + b - c) >= t), None)
                if c is None:
                    continue
                base = 1000 * len(rows)
                shared = np.arange(500, 500 + c)
                rows.append(np.concatenate([np.arange(a - c), shared]) + base)
                rows.append(np.concatenate([np.arange(100, 100 + b - c), shared]) + base)
                pairs.append((len(rows) - 2, len(rows) - 1, t))
                want.append(c / (a + b - c))
    indptr = np.concatenate([[0], np.cumsum([r.shape[0] for r in rows])])
    with pipeline_store.ShingleStore(0, 1 << 20) as s:
        s.append(indptr, np.concatenate(rows).astype(np.uint64))
        s.seal()
        for t in (0.5, 0.7, 0.8, 0.9):
            sel = [p for p in pairs if p[2] == t]
            i = np.array([p[0] for p in sel], dtype=np.int64)
            j = np.array([p[1] for p in sel], dtype=np.int64)
            assert s.prefixes_meet(i, j, t).all()
            got = s.similarities(i, j, t)
            exp = np.array([w for w, p in zip(want, pairs) if p[2] == t])
            np.testing.assert_allclose(got, exp)
    assert len(pairs) > 900


def test_a_store_query_shows_the_search_against_stored_rows(corpus, tmp_path, capsys):
    """With progress=True, the search of the stored rows (the long part of a query)
    has its bar, counting them, after the new rows' self-join (counting its tables)."""
    store = sh.CorpusStore.create(tmp_path / "store", **WORD3)
    store.query(corpus.iloc[:1500], 0.7, id_column="id", add=True)
    capsys.readouterr()
    store.query(corpus.iloc[1500:], 0.7, id_column="id", progress=True)
    bars = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines()
            if line.startswith("searching") and "100%" in line]
    assert len(bars) == 2  # the new rows' self-join, then the stored rows' search
    assert "table" in bars[0]
    assert "searching the store" in bars[1] and "1.50k/1.50k" in bars[1]


def test_file_batches_are_read_ahead_in_another_thread_and_fail_in_order(tmp_path,
                                                                           monkeypatch):
    """Shards are read and decoded in a background thread, in order; a broken shard's
    error comes after the batches of the shards before it, and frames given as an
    iterable are read in the caller's thread (a user's generator stays where it is)."""
    import threading

    from simhash_nb.streaming import sources

    for s in range(3):
        pq.write_table(pa.table({"text": [f"doc {s} {r}" for r in range(5)]}),
                       tmp_path / f"part-{s}.parquet")
    (tmp_path / "part-3.parquet").write_bytes(b"not parquet at all")
    readers = []
    stamp = sources._Stamp.of.__func__

    def spying(cls, path):
        readers.append(threading.get_native_id())
        return stamp(cls, path)

    monkeypatch.setattr(sources._Stamp, "of", classmethod(spying))
    src = sources.make_source(sorted(str(p) for p in tmp_path.glob("*.parquet")))
    got = []
    with pytest.raises(InputError, match="part-3.parquet"):
        for texts, _ in src.batches():
            got.extend(texts.to_pylist())
    assert got == [f"doc {s} {r}" for s in range(3) for r in range(5)]
    assert len(readers) == 4 and threading.get_native_id() not in readers

    def frames():
        readers.append(threading.get_native_id())
        yield pd.DataFrame({"text": ["a b c"]})

    readers.clear()
    assert [t.to_pylist() for t, _ in sources.make_source(frames()).batches()] == [["a b c"]]
    assert readers == [threading.get_native_id()]
