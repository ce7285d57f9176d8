"""Smoke tests of the end-to-end benchmark's parts (corpus, shingles, scoring, report).

No timing and no peer libraries: they run in a few seconds.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import simhash_nb as sh

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("benchmarks.bench_e2e")

from benchmarks import bench_e2e, corpus  # noqa: E402


@pytest.fixture(scope="module")
def run_peers():
    spec = importlib.util.spec_from_file_location(
        "run_peers", ROOT / "benchmarks" / "peers" / "run_peers.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["run_peers"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_corpus_is_deterministic_with_copies():
    a, meta = corpus.build(400, seed=1)
    b, _ = corpus.build(400, seed=1)
    assert a == b and len(a) == 400
    src = np.array(meta["src"])
    copies = np.flatnonzero(src >= 0)
    assert copies.size == 60 and (src[copies] < 400).all() and (src[src[copies]] == -1).all()
    j = sh.jaccard(a, (copies, src[copies]), tokenizer="word", ngram=3)
    assert (j >= 0.7).any() and (j < 0.7).any()  # spread across the threshold


EDGE = ["", "a", "ab cd", "The cat, the CAT!  sat",
        "x\u00b2 \u201cfoo\u201d \u2014 bar_baz caf\u00e9",
        "It\u2019s \uff21\uff22 \u00bd \ufb01ne\tdone\n\nyes",
        "don't-stop me now. Now!"]


@pytest.mark.parametrize("kind,n,opts", [("word", 3, {"tokenizer": "word", "ngram": 3}),
                                         ("char", 5, {})])
def test_peer_shingles_match_simhash_nb(run_peers, kind, n, opts):
    texts = EDGE + sh.datasets.load_sample("fortunes")["text"].tolist()[:300]
    ours = sh.features(texts, **opts).n_features
    theirs = [len(run_peers.shingles(t, kind, n)) for t in texts]
    assert ours.tolist() == theirs
    sets = [run_peers.shingles(t, kind, n) for t in texts[:40]]
    i, j = np.triu_indices(40, 1)
    exact = sh.jaccard(texts[:40], (i, j), **opts)
    py = [len(sets[a] & sets[b]) / len(sets[a] | sets[b]) if sets[a] | sets[b] else 1.0
          for a, b in zip(i, j)]
    assert np.allclose(exact, py)


def test_pairs_from_lists(run_peers):
    pairs = run_peers.pairs_from_lists([[0, 2], [1], [2, 0, 3], [3, 2]])
    assert pairs.tolist() == [[0, 2], [2, 3]]
    assert pairs.dtype == np.int64


def test_score_pooled_truth():
    texts = ["a b c d e f", "a b c d e f", "a b c d e g", "x y z w", "x y z q", "p q r s"]
    methods = {"all": np.array([[0, 1], [0, 2], [1, 2], [3, 4]]),
               "one": np.array([[1, 0]]), "none": np.empty((0, 2), np.int64)}
    s = bench_e2e.score(texts, methods, 0.7)
    w = s["judges"]["word3"]
    assert s["pooled_pairs"] == 4 and w["truth_pairs"] == 1  # only (0, 1) has J >= 0.7
    assert w["methods"]["one"]["precision"] == 1.0 and w["methods"]["one"]["recall"] == 1.0
    assert w["methods"]["all"]["precision"] == 0.25 and w["methods"]["all"]["f1"] == 0.4
    assert w["methods"]["none"]["recall"] == 0.0


def test_report_and_plot(tmp_path):
    run = {"times_s": [1.0], "median_s": 1.0, "peak_rss_mb": 10.0, "info": {"k": 12}}
    methods = {"pairs": 2, "tp": 2, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    judge = {"truth_pairs": 2, "methods": {"word3/verified": methods, "char5/default": methods}}
    res = {"threshold": 0.7, "features": ["word3"], "quick": True,
           "sizes": {"100": {"runs": {"word3/verified": run,
                                      "word3/gaoya": {**run, "median_s": 3.0},
                                      "word3/datasketch": {"status": "skipped (too slow)"},
                                      "char5/default": {**run, "info": {"k": 3}}},
                             "score": {"judges": {"word3": judge, "char5": judge}}}}}
    text = bench_e2e.report(res)
    assert "SMOKE RUN" in text and "3.0x faster than gaoya" in text and "skipped" in text
    pytest.importorskip("matplotlib")
    bench_e2e.plot(res, tmp_path / "e2e.png")
    assert (tmp_path / "e2e.png").stat().st_size > 1000


def test_verified_uses_near_duplicate_texts_when_present(monkeypatch):
    class Result:
        i = np.array([0], dtype=np.int64)
        j = np.array([1], dtype=np.int64)
        jaccard = np.array([1.0])
        k = 9

    seen = {}

    def fake(texts, threshold, **kw):
        seen.update(kw, threshold=threshold)
        return Result()

    monkeypatch.setattr(sh, "near_duplicate_texts", fake, raising=False)
    pairs, info = bench_e2e._ours("verified", ["a b c", "a b c"], {"tokenizer": "word",
                                                                    "ngram": 3}, 0.7, None)
    assert pairs.tolist() == [[0, 1]] and info["k"] == 9
    assert seen == {"tokenizer": "word", "ngram": 3, "threshold": 0.7}
    assert info["api"].startswith("sh.near_duplicate_texts(texts, threshold=0.7")
