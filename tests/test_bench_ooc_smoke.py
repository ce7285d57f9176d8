"""Smoke tests of the out-of-core benchmark's parts (corpus, truth, scoring, report, plot,
datatrove's pair expansion). No timing, no simhash_nb runs and no peer libraries."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("pyarrow")
pytest.importorskip("benchmarks.bench_out_of_core")

import pyarrow.parquet as pq  # noqa: E402

from benchmarks import bench_out_of_core as bench  # noqa: E402
from benchmarks import ooc_corpus  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ooc") / "600"
    ooc_corpus.build(600, seed=3, folder=folder, shards=10, progress=False)
    return folder


def test_corpus_is_deterministic_with_planted_copies(corpus, tmp_path):
    again = ooc_corpus.build(600, seed=3, folder=tmp_path / "again", shards=10, progress=False)
    a, b = ooc_corpus.shard_paths(corpus), ooc_corpus.shard_paths(again)
    assert len(a) == 10 and [p.name for p in a] == [p.name for p in b]
    assert all(pq.read_table(x).equals(pq.read_table(y)) for x, y in zip(a, b))
    ids, texts = ooc_corpus.read(corpus)
    assert ids.dtype == np.int64 and len(np.unique(ids)) == 600 == len(texts)
    assert not np.array_equal(ids, np.arange(600))  # ids are not row numbers
    assert 400 < np.mean([len(t.encode()) for t in texts]) < 1200
    planted = pq.read_table(corpus / "planted.parquet").to_pandas()
    assert (planted["kind"] == "exact").sum() == 36 and (planted["kind"] == "edit").sum() == 54
    exact = planted[planted["kind"] == "exact"]
    assert all(texts[i] == texts[j] for i, j in zip(exact["left_row"], exact["right_row"]))
    assert planted["edit_rate"].between(0, 0.25).all()


def test_truth_has_every_exact_copy(corpus):
    ooc_corpus.make_truth(corpus)
    truth = ooc_corpus.truth_pairs(corpus)
    assert (truth[:, 0] < truth[:, 1]).all()
    planted = pq.read_table(corpus / "planted.parquet").to_pandas()
    exact = planted[planted["kind"] == "exact"]
    want = {(min(a, b), max(a, b)) for a, b in zip(exact["left"], exact["right"])}
    assert want <= set(map(tuple, truth.tolist()))
    assert bench.score(truth, truth)["f1"] == 1.0


def test_time_v_parsing():
    text = ("\tUser time (seconds): 1.50\n\tSystem time (seconds): 0.25\n"
            "\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02.50\n"
            "\tMaximum resident set size (kbytes): 204800\n\tExit status: 0\n")
    out = bench.parse_time_v(text)
    assert out == {"peak_rss_mb": 200.0, "time_v_wall_s": 62.5, "cpu_s": 1.75,
                   "exit_status": 0}


def test_score_and_agreement():
    truth = np.array([[1, 2], [3, 4], [5, 6]])
    found = np.array([[2, 1], [3, 4], [7, 8], [3, 4]])  # order and repeats do not count
    s = bench.score(found, truth)
    assert s["pairs"] == 3 and s["tp"] == 2 and s["precision"] == pytest.approx(2 / 3)
    assert s["recall"] == pytest.approx(2 / 3)
    assert bench.score(found, None) == {"pairs": 3}
    assert bench.agreement(found, truth) == pytest.approx(2 / 4)
    assert bench.agreement(np.empty((0, 2)), np.empty((0, 2))) == 1.0


def test_report_and_plot(tmp_path):
    ok = {"status": "ok", "wall_s": 2.0, "peak_rss_mb": 300.0, "f1": 0.99, "precision": 1.0,
          "recall": 0.98}
    res = {"threshold": 0.7, "memory_limit": "1GB", "quick": True, "sizes": {"5000": {
        "corpus": {"bytes": 3.7e6}, "runs": {
            "in_memory": ok, "streaming": {**ok, "time_vs_in_memory": 1.2},
            "incremental": {**ok, "share_of_full_run": 0.15, "agreement_with_full_run": 1.0},
            "gaoya": {"status": "unavailable: not installed"},
            "datatrove": {**ok, "wall_s": 30.0}}}}}
    text = bench.report(res)
    assert "SMOKE RUN" in text and "unavailable: not installed" in text
    assert "15% of the streaming run" in text and "1.20x in-memory time" in text
    pytest.importorskip("matplotlib")
    bench.plot(res, tmp_path / "ooc.png")
    assert (tmp_path / "ooc.png").stat().st_size > 1000


def test_datatrove_chains_become_pairs():
    peers = str(ROOT / "benchmarks" / "peers")
    sys.path.insert(0, peers)
    try:
        spec = importlib.util.spec_from_file_location("datatrove_peer", Path(peers) /
                                                      "datatrove_peer.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(peers)
    # one bucket: (task 0: docs 1, 2, 3 share a band) then (task 1: docs 5, 6)
    dups = np.array([[0, 1, 0, 2], [0, 2, 0, 3], [1, 5, 1, 6]], dtype=np.uint32)
    got = {tuple(r) for r in mod._group_pairs(dups, np).tolist()}
    assert got == {(0, 1, 0, 2), (0, 1, 0, 3), (0, 2, 0, 3), (1, 5, 1, 6)}


def test_incremental_share_and_agreement(corpus, tmp_path, monkeypatch):
    import pyarrow as pa

    ooc_corpus.make_truth(corpus)
    truth = ooc_corpus.truth_pairs(corpus)
    calls = []
    query_walls = iter([0.9, 0.5, 0.7])  # the three queries: median 0.7

    def fake(inputs, out, memory_limit, timeout, extra=()):
        calls.append((len(inputs), [str(x) for x in extra]))
        part = truth[: len(truth) // 2] if "--save" in extra else truth[len(truth) // 2:]
        pq.write_table(pa.table({"left": part[:, 0], "right": part[:, 1]}), out)
        return {"status": "ok", "wall_s": 1.0 if "--save" in extra else next(query_walls),
                "peak_rss_mb": 100.0 + len(calls)}

    monkeypatch.setattr(bench, "run_streaming", fake)
    full_file = tmp_path / "full.parquet"
    pq.write_table(pa.table({"left": truth[:, 1], "right": truth[:, 0]}), full_file)

    class Args:
        memory_limit, timeout = "1GB", 60

    work = tmp_path / "work"
    work.mkdir()
    r = bench._incremental(corpus, work, Args, {"status": "ok", "wall_s": 2.0,
                                                "pairs_file": str(full_file)})
    assert [c[0] for c in calls] == [9, 1, 1, 1] and calls[0][1][0] == "--save"
    assert all(c[1][0] == "--against" for c in calls[1:])
    assert r["shards"] == {"stored": 9, "new": 1} and r["runs_wall_s"] == [0.9, 0.5, 0.7]
    assert r["wall_s"] == 0.7 and r["peak_rss_mb"] == 104.0  # the median; the largest
    assert r["share_of_full_run"] == 0.35 and r["agreement_with_full_run"] == 1.0
    assert r["f1"] == 1.0
