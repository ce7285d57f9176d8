"""Verified near-duplicates from texts: SimHash candidates, exact Jaccard decides."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_nb as sh
from simhash_nb._core.candidates import candidate_design, candidate_threshold


@pytest.fixture(scope="module")
def fortunes():
    return sh.datasets.load_sample("fortunes")["text"].tolist()


@pytest.mark.parametrize("opts", [{}, {"tokenizer": "word", "ngram": 3}])
def test_equals_the_exact_threshold_join(fortunes, opts):
    truth = sh.jaccard_pairs(fortunes, threshold=0.7, candidates="all", **opts)
    got = sh.near_duplicate_texts(fortunes, 0.7, **opts)
    want = set(zip(truth["i"].tolist(), truth["j"].tolist()))
    assert len(want) > 100
    assert set(zip(got.i.tolist(), got.j.tolist())) == want
    assert np.all(got.i < got.j) and np.all(got.jaccard >= 0.7)
    np.testing.assert_allclose(got.jaccard, sh.jaccard(fortunes, (got.i, got.j), **opts))


def test_recall_on_edited_copies_and_no_pair_below_threshold(fortunes):
    nd = sh.datasets.make_near_duplicates(fortunes[:1500], n=1500, edit_rate=0.05,
                                          random_state=1)
    texts = list(nd.texts)
    truth = sh.jaccard_pairs(texts, threshold=0.6, candidates="all")
    got = sh.near_duplicate_texts(texts, 0.6, recall=0.99)
    want = set(zip(truth["i"].tolist(), truth["j"].tolist()))
    found = set(zip(got.i.tolist(), got.j.tolist()))
    assert found <= want  # verified: never below the threshold
    assert len(found) >= 0.98 * len(want)


def test_clusters_dedupe_frame_and_empty_texts():
    texts = ["alpha beta gamma delta", "alpha beta gamma delta!", "", "", "zeta eta theta"]
    p = sh.near_duplicate_texts(texts, 0.9, tokenizer="word", ngram=1)
    assert list(zip(p.i.tolist(), p.j.tolist())) == [(0, 1)]  # empty texts pair with nothing
    assert p.clusters().tolist() == [0, 0, 2, 3, 4]
    assert p.dedupe().tolist() == [True, False, True, True, True]
    assert list(p.to_frame().columns) == ["i", "j", "jaccard", "distance"]
    assert p.n == 5 and p.bits == 128 and p.k == candidate_design(5, 0.9, 128, 0.99).k


def test_candidate_threshold_grows_with_recall_and_falls_with_similarity():
    assert candidate_threshold(0.7, 128, 0.995) > candidate_threshold(0.7, 128, 0.9)
    assert candidate_threshold(0.9, 128, 0.99) < candidate_threshold(0.7, 128, 0.99)
    assert candidate_threshold(1.0, 64, 0.99) == 0


@pytest.mark.parametrize("kwargs,err,match", [
    ({"threshold": 0}, ValueError, "threshold must be in"),
    ({"threshold": 1.5}, ValueError, "threshold must be in"),
    ({"threshold": "0.7"}, TypeError, "threshold must be"),
    ({"recall": 1.0}, ValueError, "recall must be below 1"),
    ({"recall": 0}, ValueError, "recall must be in"),
    ({"bits": 256}, ValueError, "bits must be 64 or 128"),
])
def test_bad_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        sh.near_duplicate_texts(["a b c", "a b c"], **kwargs)


def test_recommendation_and_plot_use_the_angle_relation(fortunes, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    fps = sh.fingerprint(fortunes)
    table = sh.threshold_table(fps, sh.jaccard_pairs(fortunes, 0.7))
    rec = sh.recommend_k(table)
    assert rec.similarity == pytest.approx(sh.similarity_for_k(rec.k, 64))
    assert "similarity=" in repr(rec)
    ax = sh.plotting.plot_threshold_curves(table, mark=rec)
    tops = [c for c in ax.get_children() if type(c).__name__ == "SecondaryAxis"]
    assert len(tops) == 1
    ax.figure.savefig(tmp_path / "curves.png")


def test_missing_texts_are_refused_in_the_core_and_skipped_by_the_accessor():
    import pandas as pd

    with pytest.raises(ValueError, match=r"texts\[1\] is missing"):
        sh.near_duplicate_texts(["a b c", None, "a b c"], tokenizer="word", ngram=1)
    s = pd.Series(["a b c d", None, "a b c d", "x y"], index=list("pqrs"))
    got = s.simhash.near_duplicates(threshold=0.9, tokenizer="word", ngram=1)
    assert got[["left", "right"]].values.tolist() == [["p", "r"]]
    assert got["jaccard"].tolist() == [1.0]
    labels = s.simhash.clusters(threshold=0.9, tokenizer="word", ngram=1)
    assert labels.isna().tolist() == [False, True, False, False]
    assert labels.dropna().tolist() == [0, 0, 3]
    assert s.simhash.dedupe(threshold=0.9, tokenizer="word", ngram=1).index.tolist() == [
        "p", "q", "s"]
    with pytest.raises(TypeError, match="needs a text Series"):
        pd.Series(sh.fingerprint(["a b"]), dtype="UInt64").simhash.near_duplicates(
            threshold=0.9)


def test_cli_threshold_pairs_dedupe_clusters(tmp_path, fortunes):
    import pandas as pd

    from simhash_nb.cli import main

    texts = fortunes[:600]
    src = tmp_path / "docs.csv"
    pd.DataFrame({"id": [f"d{x}" for x in range(len(texts))], "text": texts}).to_csv(
        src, index=False)
    want = sh.near_duplicate_texts(texts, 0.7)
    assert len(want) > 0
    assert main(["pairs", str(src), str(tmp_path / "p.csv"), "--threshold", "0.7", "-q"]) == 0
    got = pd.read_csv(tmp_path / "p.csv")
    assert list(got.columns) == ["left", "right", "jaccard", "distance"]
    assert list(zip(got.left, got.right)) == list(zip(want.i.tolist(), want.j.tolist()))
    assert main(["dedupe", str(src), str(tmp_path / "u.csv"), "--threshold", "0.7", "-q"]) == 0
    assert len(pd.read_csv(tmp_path / "u.csv")) == int(want.dedupe().sum())
    assert main(["clusters", str(src), str(tmp_path / "c.csv"), "--threshold", "0.7",
                 "-q"]) == 0
    assert pd.read_csv(tmp_path / "c.csv")["cluster"].tolist() == want.clusters().tolist()


def test_cluster_texts_equal_the_components_of_the_verified_pairs(fortunes):
    nd = sh.datasets.make_near_duplicates(fortunes[:800], n=800, edit_rate=0.05,
                                          random_state=3)
    texts = list(nd.texts) + list(nd.texts[:50])  # exact copies too: groups of three
    pairs = sh.near_duplicate_texts(texts, 0.6)
    labels = sh.cluster_texts(texts, 0.6)
    np.testing.assert_array_equal(labels, pairs.clusters())
    assert len(np.unique(labels)) < len(texts) - 500  # many joined
    for keep in ("first", "last", False):
        np.testing.assert_array_equal(sh.dedupe_texts(texts, 0.6, keep=keep),
                                      pairs.dedupe(keep=keep))


def test_cluster_texts_skip_pairs_already_joined(fortunes, monkeypatch):
    from simhash_nb._kernels import jaccard as jk

    texts = [fortunes[0]] * 40 + fortunes[1:30]  # 780 candidate pairs among the copies
    seen = []
    real = jk.listed_at_least

    def counting(indptr, hashes, left, right, todo, threshold, ok):
        seen.append(todo.shape[0])
        return real(indptr, hashes, left, right, todo, threshold, ok)

    monkeypatch.setattr(jk, "listed_at_least", counting)
    sh.config["verify_batch"] = 16
    try:
        labels = sh.cluster_texts(texts, 0.7)
    finally:
        sh.reset_config()
    assert (labels[:40] == 0).all()
    assert sum(seen) < 780 / 4  # most of the copies' pairs were never verified


def test_too_many_pairs_names_the_verified_remedies(fortunes):
    texts = [fortunes[0] + f" {i}" for i in range(300)]  # 44,850 near-identical pairs
    with pytest.raises(sh.TooManyPairsError, match="more than max_pairs=1,000 pairs"):
        sh.near_duplicate_texts(texts, 0.7, max_pairs=1_000)


def _related_texts(n=60, seed=0):
    """Texts sharing a 40-word opening, each with its own 10-word ending: word-3-gram
    Jaccard about 0.65 for every pair (close fingerprints, below a 0.7 threshold)."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{x}" for x in range(5000)]
    base = " ".join(rng.choice(vocab, 40))
    return [base + " " + " ".join(rng.choice(vocab, 10)) for _ in range(n)]


def test_candidates_are_verified_as_they_come_not_held():
    """max_pairs bounds the pairs returned, not the candidates: 1,770 candidates, none
    at the threshold, pass max_pairs=100 (they are verified wave by wave)."""
    texts = _related_texts()
    sims = sh.jaccard_pairs(texts, 0.5, tokenizer="word", ngram=3)
    assert sims.jaccard.max() < 0.7 and len(sims) == 60 * 59 // 2
    cand = sh.near_duplicates(sh.fingerprint(texts, tokenizer="word", ngram=3, bits=128,
                                             weights="binary"), 39)
    assert len(cand) > 1000  # the search finds most pairs as candidates
    got = sh.near_duplicate_texts(texts, 0.7, tokenizer="word", ngram=3, max_pairs=100)
    assert len(got) == 0
    labels = sh.cluster_texts(texts, 0.7, tokenizer="word", ngram=3, max_pairs=100)
    assert (labels == np.arange(60)).all()
    # a lower threshold joins them all, verified
    assert (sh.cluster_texts(texts, 0.6, tokenizer="word", ngram=3) == 0).all()


def test_filtered_self_join_streams_the_sampled_search(monkeypatch):
    """The verify callback sees the candidates in several waves, each pair once; it holds
    only what it keeps; identical fingerprints come first."""
    from simhash_nb._core.search.api import filtered_self_join
    from simhash_nb._core.search.options import SearchOptions

    rng = np.random.default_rng(1)
    base = rng.integers(0, 2**64, size=(3000, 2), dtype=np.uint64)
    near = base.copy()
    flips = rng.integers(0, 128, size=(3000, 6))
    for x in range(6):
        near[np.arange(3000), flips[:, x] // 64] ^= np.uint64(1) << (flips[:, x] % 64).astype(
            np.uint64)
    fps = np.concatenate([base, near, base[:5]])  # 5 identical pairs
    sh.config["dense_tables_per_wave"] = 1
    try:
        opts = SearchOptions.make(128, 12, recall=0.99, method="sampling", progress=False)
        calls = []

        def verify(i, j, d):
            calls.append(len(i))
            keep = d == 0
            return i[keep], j[keep], d[keep]

        i, j, d = filtered_self_join(fps, opts, verify)
    finally:
        sh.reset_config()
    _, counts = np.unique(fps, axis=0, return_counts=True)
    identical = int((counts * (counts - 1) // 2).sum())
    assert identical >= 5
    assert calls[0] == identical  # the identical pairs first
    assert len(calls) > 3  # then wave by wave
    assert sum(calls) >= 3000 * 0.98  # planted pairs (distance <= 6), each once at most
    assert sum(calls) <= 3000 + identical + 5 * 2 + 50
    assert (d == 0).all() and len(i) == identical


def test_progress_bar_over_the_candidate_tables(capsys):
    rng = np.random.default_rng(2)
    vocab = np.array([f"w{x}" for x in range(20000)])  # an array: a list is copied each draw
    texts = [" ".join(rng.choice(vocab, 30)) for _ in range(5000)]
    texts += [t + " end" for t in texts[:50]]
    got = sh.near_duplicate_texts(texts, 0.7, tokenizer="word", ngram=3, progress=True)
    err = capsys.readouterr().err
    assert "searching" in err and "table" in err
    # the shingling has its bar too, moving in steps, to all the texts
    steps = [line for line in err.replace("\r", "\n").splitlines()
             if line.startswith("shingling")]
    assert len(steps) >= 20 and f"{len(texts)}/{len(texts)}" in steps[-1]
    assert len(got) == 50
    labels = sh.cluster_texts(texts, 0.7, tokenizer="word", ngram=3, progress=True)
    assert "shingling" in capsys.readouterr().err
    quiet = sh.cluster_texts(texts, 0.7, tokenizer="word", ngram=3, progress=False)
    err = capsys.readouterr().err
    assert "searching" not in err and "shingling" not in err
    assert (labels == quiet).all()  # the same result in twenty batches as in one
