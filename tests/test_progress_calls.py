"""Progress bars of the long public calls (issue 23.3): ``progress=True`` draws a tqdm bar
on stderr that ends at the work done, ``False`` draws nothing, and the results are the
same either way; ``None`` draws one only for a large job in a terminal."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pandas as pd
import pytest
from tqdm import tqdm

import simhash_nb as sh
from simhash_nb._core import fingerprint as fp_module
from simhash_nb._core import progress as progress_module
from simhash_nb._core.fingerprint import features_and_fingerprints
from simhash_nb._core.progress import chunk_steps, show_progress
from simhash_nb._core.text import over_chunks
from simhash_nb.config import config


def _texts(n: int = 600, seed: int = 0) -> list[str]:
    """Texts of random words, every tenth a near copy of the one before."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{x}" for x in range(3000)])
    texts = []
    for i in range(n):
        if i % 10 == 9:
            texts.append(texts[-1] + " end")
        else:
            texts.append(" ".join(rng.choice(vocab, 12)))
    return texts


def _final(err: str, desc: str) -> str:
    """The last line drawn by the bar named ``desc``."""
    lines = [x for x in err.replace("\r", "\n").splitlines() if x.startswith(f"{desc}:")]
    assert lines, f"no {desc!r} bar in {err!r}"
    return lines[-1]


def _done(n: int, scaled: bool = True) -> str:
    """How a bar of ``n`` units shows itself complete (``n/n``)."""
    shown = tqdm.format_sizeof(n) if scaled else str(n)
    return f"{shown}/{shown}"


@pytest.fixture
def bar_config():
    """Restore the thresholds a test changes."""
    keys = ("progress_min_texts", "progress_min_shingles", "progress_min_probes",
            "progress_min_pairs", "search_brute_seconds")
    saved = {key: config[key] for key in keys}
    yield config
    config.update(saved)


# --- the shared pieces ----------------------------------------------------------------


def test_the_rule_of_progress_none(monkeypatch):
    monkeypatch.setattr(progress_module, "interactive", lambda: True)
    assert show_progress(None, 10, 10) and not show_progress(None, 9, 10)
    assert show_progress(True, 0, 10) and not show_progress(False, 10**9, 10)
    monkeypatch.setattr(progress_module, "interactive", lambda: False)
    assert not show_progress(None, 10**9, 10)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_over_chunks_reports_each_chunk_in_order_on_the_calling_thread(n_threads):
    ran, steps, callers = [], [], []
    caller = threading.get_ident()

    def done(c0, c1):
        steps.append((c0, c1))
        callers.append(threading.get_ident())

    over_chunks(lambda c0, c1: ran.append((c0, c1)), 7, n_threads, done)
    assert sorted(ran) == [(c, c + 1) for c in range(7)]
    assert steps == [(c, c + 1) for c in range(7)] and set(callers) == {caller}
    advanced = []
    chunk_steps(np.array([0, 3, 3, 10]), advanced.append)(0, 3)
    assert advanced == [10]


# --- sh.fingerprint, sh.features, binary features ---------------------------------------


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("bits", [64, 128])
def test_fingerprint_bar(capsys, n_jobs, bits):
    texts = _texts() + [None]
    quiet = sh.fingerprint(texts, bits=bits, missing="zero", n_jobs=n_jobs, progress=False)
    assert capsys.readouterr().err == ""
    shown = sh.fingerprint(texts, bits=bits, missing="zero", n_jobs=n_jobs, progress=True)
    assert _done(len(texts)) in _final(capsys.readouterr().err, "fingerprinting")
    np.testing.assert_array_equal(shown, quiet)
    word = sh.fingerprint(texts, tokenizer="word", missing="zero", progress=True)
    assert _done(len(texts)) in _final(capsys.readouterr().err, "fingerprinting")
    np.testing.assert_array_equal(word, sh.fingerprint(texts, tokenizer="word",
                                                       missing="zero", progress=False))


def test_fingerprint_bar_moves_a_chunk_at_a_time(monkeypatch):
    steps = []

    @contextlib.contextmanager
    def recording_bar(show, total, **options):
        yield steps.append if show else None

    monkeypatch.setattr(fp_module, "progress_bar", recording_bar)
    texts = _texts(3000)
    monkeypatch.setitem(config, "text_slice_bytes", 20_000)  # several slices
    got = sh.fingerprint(texts, n_jobs=2, progress=True)
    assert sum(steps) == len(texts) and len(steps) > 10  # chunks of every slice
    np.testing.assert_array_equal(got, sh.fingerprint(texts, progress=False))


@pytest.mark.parametrize("weights", ["binary", "tf"])
def test_features_bar(capsys, weights):
    texts = _texts()
    quiet = sh.features(texts, weights=weights, progress=False)
    assert capsys.readouterr().err == ""
    shown = sh.features(texts, weights=weights, progress=True)
    assert _done(len(texts)) in _final(capsys.readouterr().err, "shingling")
    for name in ("indptr", "hashes", "weights"):
        np.testing.assert_array_equal(getattr(shown, name), getattr(quiet, name))


def test_binary_features_and_fingerprints_bar(capsys):
    texts = _texts()
    fb0, fps0 = features_and_fingerprints(texts, progress=False)
    assert capsys.readouterr().err == ""
    fb1, fps1 = features_and_fingerprints(texts, progress=True)
    assert _done(len(texts)) in _final(capsys.readouterr().err, "fingerprinting")
    np.testing.assert_array_equal(fps1, fps0)
    np.testing.assert_array_equal(fb1.hashes, fb0.hashes)
    np.testing.assert_array_equal(fb1.indptr, fb0.indptr)


def test_fingerprint_default_bar_only_for_large_batches(capsys, monkeypatch, bar_config):
    monkeypatch.setattr(progress_module, "interactive", lambda: True)
    texts = _texts(200)
    bar_config["progress_min_texts"] = len(texts) + 1
    sh.fingerprint(texts)
    sh.features(texts)
    assert capsys.readouterr().err == ""
    bar_config["progress_min_texts"] = len(texts)
    sh.fingerprint(texts)
    assert _done(len(texts)) in _final(capsys.readouterr().err, "fingerprinting")
    sh.features(texts)
    assert _done(len(texts)) in _final(capsys.readouterr().err, "shingling")


# --- jaccard_pairs, threshold_table -----------------------------------------------------


@pytest.mark.parametrize("candidates", ["all", "minhash", "simhash"])
def test_jaccard_pairs_bars(capsys, candidates):
    texts = _texts()
    quiet = sh.jaccard_pairs(texts, 0.5, candidates=candidates, progress=False)
    assert capsys.readouterr().err == ""
    shown = sh.jaccard_pairs(texts, 0.5, candidates=candidates, progress=True)
    err = capsys.readouterr().err
    pd.testing.assert_frame_equal(shown, quiet)
    assert len(shown) >= 50  # the near copies
    n = len(texts)
    assert _done(n) in _final(err, "shingling")
    if candidates == "all":
        assert _done(n) in _final(err, "all pairs")
        return
    assert _done(shown.attrs["n_candidates"]) in _final(err, "verifying")
    if candidates == "minhash":
        assert _done(n) in _final(err, "minhash")
        assert _done(shown.attrs["bands"], scaled=False) in _final(err, "bands")


def test_jaccard_pairs_default_bars_by_shingles(capsys, monkeypatch, bar_config):
    monkeypatch.setattr(progress_module, "interactive", lambda: True)
    fb = sh.features(_texts())
    bar_config["progress_min_shingles"] = fb.hashes.shape[0] + 1
    sh.jaccard_pairs(fb, 0.5, candidates="minhash")
    assert capsys.readouterr().err == ""
    bar_config["progress_min_shingles"] = fb.hashes.shape[0]
    sh.jaccard_pairs(fb, 0.5, candidates="minhash")
    assert _done(len(fb)) in _final(capsys.readouterr().err, "minhash")


def test_threshold_table_bars(capsys, monkeypatch, bar_config):
    texts = _texts()
    others = np.random.default_rng(5).integers(0, 2**63, 4400, dtype=np.uint64)
    fps = np.concatenate([sh.fingerprint(texts), others])  # enough for a table search
    labels = np.arange(len(fps))
    labels[9:len(texts):10] -= 1  # each near copy is a duplicate of the text before it
    quiet = sh.threshold_table(fps, labels, progress=False)
    assert capsys.readouterr().err == ""
    shown = sh.threshold_table(fps, labels, progress=True)
    assert _done(len(fps)) in _final(capsys.readouterr().err, "counting pairs")
    pd.testing.assert_frame_equal(shown, quiet)
    assert shown["tp"].iloc[-1] == len(texts) // 10  # each near copy with its original
    # with max_k the search draws the bar (a table search: not all pairs compared)
    bar_config["search_brute_seconds"] = 0.0
    quiet = sh.threshold_table(fps, labels, max_k=6, progress=False)
    assert capsys.readouterr().err == ""
    shown = sh.threshold_table(fps, labels, max_k=6, progress=True)
    assert "searching (k=6)" in capsys.readouterr().err
    pd.testing.assert_frame_equal(shown, quiet)
    # the default: a bar from config["progress_min_pairs"] pairs on, in a terminal
    monkeypatch.setattr(progress_module, "interactive", lambda: True)
    n_pairs = len(fps) * (len(fps) - 1) // 2
    bar_config["progress_min_pairs"] = n_pairs + 1
    sh.threshold_table(fps, labels)
    assert capsys.readouterr().err == ""
    bar_config["progress_min_pairs"] = n_pairs
    sh.threshold_table(fps, labels)
    assert _done(len(fps)) in _final(capsys.readouterr().err, "counting pairs")


# --- SimhashIndex.query -----------------------------------------------------------------


def test_index_query_bar(capsys, monkeypatch, bar_config):
    rng = np.random.default_rng(3)
    stored = rng.integers(0, 2**63, 3000, dtype=np.uint64)
    index = sh.SimhashIndex(k=4)
    index.add(stored)
    index.add(stored[:200] ^ np.uint64(0b101))  # a second run (not merged: 3000 > 2 * 200)
    assert len(index._state.runs) == 2
    queries = np.concatenate([stored[:500] ^ np.uint64(1), rng.integers(0, 2**63, 300,
                                                                          dtype=np.uint64)])
    quiet = index.query(queries, progress=False)
    assert capsys.readouterr().err == ""
    shown = index.query(queries, progress=True)
    assert _done(len(queries)) in _final(capsys.readouterr().err, "querying")
    for name in ("query", "id", "distance"):
        np.testing.assert_array_equal(getattr(shown, name), getattr(quiet, name))
    assert len(shown) >= 700  # every near copy: of a stored row, and of its second-run twin
    # the default: from config["progress_min_probes"] query rows times tables on
    monkeypatch.setattr(progress_module, "interactive", lambda: True)
    probes = len(queries) * sum(run.layout.n_tables for run in index._state.runs)
    bar_config["progress_min_probes"] = probes + 1
    index.query(queries)
    assert capsys.readouterr().err == ""
    bar_config["progress_min_probes"] = probes
    index.query(queries)
    assert _done(len(queries)) in _final(capsys.readouterr().err, "querying")
