"""Ground truth, threshold tables and recommendations (simhash_nb/evaluate.py)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core.evaluate import minhash_bands
from simhash_nb.config import config, reset_config
from tests import naive
from tests.conftest import fp_ints

_COLS = ["tp", "fp", "fn"]
# fingerprints below have at most 6 bits set, so distances are at most 12
_KS = {64: [*range(14), 40, 64], 128: [*range(14), 100, 128]}


def _fps(draw_ints, bits):
    if bits == 64:
        return np.array(draw_ints, dtype=np.uint64)
    words = [[x & (2**64 - 1), x >> 64] for x in draw_ints]
    return np.array(words, dtype=np.uint64).reshape(-1, 2)


@st.composite
def _fps_and_labels(draw):
    bits = draw(st.sampled_from([64, 128]))
    n = draw(st.integers(0, 12))
    # fingerprints built from few set bits, so small distances are common
    ints = draw(st.lists(
        st.sets(st.integers(0, bits - 1), max_size=6).map(lambda s: sum(1 << b for b in s)),
        min_size=n, max_size=n,
    ))
    labels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return _fps(ints, bits), labels, bits


def _naive_table(fps, truth: dict, ks):
    ints = fp_ints(fps)
    dist = {p: naive.hamming(ints[p[0]], ints[p[1]]) for p in truth}
    return {k: naive.threshold_counts(dist, truth, k) for k in ks}


def _check(table, want):
    for k, counts in want.items():
        row = table.loc[table["k"] == k, _COLS].iloc[0].tolist()
        assert tuple(row) == counts, (k, row, counts)


@given(_fps_and_labels())
def test_labels_self_join_matches_naive(case):
    fps, labels, bits = case
    n = len(labels)
    table = sh.threshold_table(fps, labels)
    assert table["k"].tolist() == list(range(bits + 1))
    truth = {(i, j): labels[i] == labels[j] for i, j in itertools.combinations(range(n), 2)}
    _check(table, _naive_table(fps, truth, _KS[bits]))
    assert (table["predicted"] == table["tp"] + table["fp"]).all()
    assert (table["tp"] + table["fp"] + table["fn"] + table["tn"] == n * (n - 1) // 2).all()
    # max_k: same rows, found with near_duplicates instead of all pairs
    top = sh.threshold_table(fps, labels, max_k=5)
    assert top["k"].tolist() == list(range(6))
    pd.testing.assert_frame_equal(top, table.iloc[:6])


@given(_fps_and_labels(), st.data())
def test_duplicate_pairs_and_labelled_pairs_match_naive(case, data):
    fps, _, bits = case
    n = fps.shape[0]
    if n < 2:
        return
    all_pairs = list(itertools.combinations(range(n), 2))
    dup = data.draw(st.lists(st.sampled_from(all_pairs), max_size=8))
    # duplicate pairs, listed in any orientation and repeated: every other pair is not one
    listed = [(j, i) if x % 2 else (i, j) for x, (i, j) in enumerate(dup)]
    table = sh.threshold_table(fps, pd.DataFrame(listed, columns=["i", "j"]))
    truth = {p: p in set(dup) for p in all_pairs}
    _check(table, _naive_table(fps, truth, _KS[bits]))
    # labelled pairs: only these are evaluated
    labelled = data.draw(st.lists(st.tuples(st.sampled_from(all_pairs), st.booleans()),
                                  max_size=10, unique_by=lambda t: t[0]))
    i = np.array([p[0][0] for p in labelled], dtype=np.int64)
    j = np.array([p[0][1] for p in labelled], dtype=np.int64)
    lab = np.array([p[1] for p in labelled], dtype=bool)
    table = sh.threshold_table(fps, (i, j, lab))
    assert table.attrs["mode"] == "labelled pairs" and table.attrs["n_pairs"] == len(labelled)
    _check(table, _naive_table(fps, {p: y for p, y in labelled}, _KS[bits]))
    df = pd.DataFrame({"i": i, "j": j, "duplicate": lab})
    pd.testing.assert_frame_equal(sh.threshold_table(fps, df), table)


def test_ratios_and_rows():
    fps = np.array([0b0000, 0b0001, 0b0111, 0b1111_1111], dtype=np.uint64)
    t = sh.threshold_table(fps, [0, 0, 0, 1])
    assert list(t.columns) == ["k", "predicted", "tp", "fp", "fn", "tn", "precision",
                               "recall", "f1", "note"]
    row = t.loc[2]
    assert (row.tp, row.fp, row.fn) == (2, 0, 1)
    assert row.precision == 1.0 and row.recall == pytest.approx(2 / 3)
    assert row.f1 == pytest.approx(0.8)
    assert np.isnan(t.loc[0, "precision"]) and "precision undefined" in t.loc[0, "note"]
    assert t.loc[64, "predicted"] == 6 and t.loc[64, "recall"] == 1.0
    assert t.attrs["n_duplicates"] == 3 and t.attrs["mode"] == "self-join"


def test_missing_labels_are_singletons():
    fps = np.zeros(4, dtype=np.uint64)
    t = sh.threshold_table(fps, pd.Series(["a", None, "a", np.nan]))
    assert t.attrs["n_duplicates"] == 1
    assert (t.loc[0, "tp"], t.loc[0, "fp"]) == (1, 5)


def test_empty_truth_gives_nan_and_a_note_without_warnings():
    fps = np.array([0, 1, 3], dtype=np.uint64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = sh.threshold_table(fps, [0, 1, 2])
        lab = sh.threshold_table(fps, ([0], [1], [False]))
        none = sh.threshold_table(fps, pd.DataFrame({"i": [], "j": []}, dtype=np.int64))
    for table in (t, lab, none):
        assert table["recall"].isna().all() and table["f1"].isna().all()
        assert table["note"].str.contains("no duplicates in the truth").all()
        assert "no duplicate pairs" in table.attrs["note"]
    assert np.isnan(t.loc[0, "precision"])  # nothing predicted at k=0
    assert t.loc[1, "precision"] == 0.0  # one pair predicted, and it is wrong
    with pytest.raises(ValueError, match="no duplicate pairs"):
        sh.recommend_k(t)
    with pytest.raises(ValueError, match="no duplicate pairs"):
        sh.recommend_k(t, recall=0.9)


def test_jaccard_truth_with_threshold_and_ids():
    texts = ["the cat sat on the mat", "the cat sat on a mat", "dogs bark", "dogs bark!",
             "nothing alike here"]
    truth = sh.jaccard_pairs(texts, threshold=0.3, tokenizer="word")
    assert truth.attrs["n_documents"] == 5
    fps = sh.fingerprint(texts, tokenizer="word")
    t_all = sh.threshold_table(fps, truth)
    assert t_all.attrs["n_duplicates"] == len(truth) == 2
    t_hi = sh.threshold_table(fps, truth, threshold=0.9)
    assert t_hi.attrs["n_duplicates"] == int((truth["jaccard"] >= 0.9).sum())
    with pytest.raises(ValueError, match="below the threshold"):
        sh.threshold_table(fps, truth, threshold=0.1)
    ids = ["a", "b", "c", "d", "e"]
    by_id = pd.DataFrame({"i": ["a", "c"], "j": ["b", "d"]})
    t_ids = sh.threshold_table(fps, by_id, ids=ids)
    pd.testing.assert_frame_equal(t_ids[_COLS], t_all[_COLS])
    with pytest.raises(ValueError, match="not among the ids"):
        sh.threshold_table(fps, pd.DataFrame({"i": ["a"], "j": ["zz"]}), ids=ids)


def test_bad_truth():
    fps = np.arange(4, dtype=np.uint64)
    with pytest.raises(ValueError, match="labels has 3 entries but there are 4"):
        sh.threshold_table(fps, [0, 0, 1])
    with pytest.raises(ValueError, match="not a row position"):
        sh.threshold_table(fps, ([0], [4]))
    with pytest.raises(ValueError, match="with itself"):
        sh.threshold_table(fps, ([1], [1]))
    with pytest.raises(ValueError, match="columns 'i' and 'j'"):
        sh.threshold_table(fps, pd.DataFrame({"a": [0], "b": [1]}))
    with pytest.raises(TypeError, match="truth must be"):
        sh.threshold_table(fps, "labels")
    with pytest.raises(ValueError, match="must not be missing"):
        sh.threshold_table(fps, pd.DataFrame({"i": [0], "j": [1], "label": [np.nan]}))
    with pytest.raises(ValueError, match="booleans or 0/1"):
        sh.threshold_table(fps, ([0], [1], [2]))
    with pytest.raises(ValueError, match="needs a pair table with a 'jaccard'"):
        sh.threshold_table(fps, ([0], [1]), threshold=0.5)
    with pytest.raises(TypeError, match="uint64"):
        sh.threshold_table(np.arange(4), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="max_k"):
        sh.threshold_table(fps, [0, 0, 1, 1], max_k=65)
    # texts and fingerprints of different lengths
    truth = sh.jaccard_pairs(["aaaa", "aaaa", "bbbb"], threshold=0.5)
    with pytest.raises(ValueError, match="computed for 3 documents but there are 4"):
        sh.threshold_table(fps, truth)
    try:
        config["evaluate_max_brute_pairs"] = 5
        with pytest.raises(ValueError, match="max_k"):
            sh.threshold_table(fps, [0, 0, 1, 1])
        assert len(sh.threshold_table(fps, [0, 0, 1, 1], max_k=3)) == 4
    finally:
        reset_config()


# --- jaccard_pairs ----------------------------------------------------------------------


def _near_dup_corpus(n=60, seed=3):
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(300)])
    base = [" ".join(rng.choice(words, size=40)) for _ in range(n // 2)]
    texts = []
    for t in base:
        w = t.split()
        texts.append(t)
        w[rng.integers(0, 40)] = "edit"
        texts.append(" ".join(w))
    return texts


def test_jaccard_pairs_candidates_agree():
    texts = _near_dup_corpus()
    exact = sh.jaccard_pairs(texts, threshold=0.6, candidates="all", tokenizer="word")
    sims = sh.jaccard(texts, tokenizer="word")
    i, j = np.triu_indices(len(texts), 1)
    keep = sims >= 0.6
    assert exact[["i", "j"]].values.tolist() == np.c_[i[keep], j[keep]].tolist()
    assert len(exact) >= 30
    got = {}
    for c in ("minhash", "simhash"):
        got[c] = sh.jaccard_pairs(texts, threshold=0.6, candidates=c, tokenizer="word")
        found = set(map(tuple, got[c][["i", "j"]].values.tolist()))
        assert found <= set(map(tuple, exact[["i", "j"]].values.tolist()))
        np.testing.assert_allclose(
            got[c]["jaccard"], sh.jaccard(texts, got[c][["i", "j"]], tokenizer="word"))
    assert len(got["minhash"]) == len(exact)  # recall at 0.6 is > 0.99 per pair
    assert got["minhash"].attrs["recall_at_threshold"] >= 0.99
    assert got["simhash"].attrs["k"] == 12
    # auto picks minhash when all pairs are too many
    try:
        config["jaccard_max_all_pairs"] = 10
        auto = sh.jaccard_pairs(texts, threshold=0.6, tokenizer="word")
        assert auto.attrs["candidates"] == "minhash"
    finally:
        reset_config()


def test_jaccard_pairs_bad_input():
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        sh.jaccard_pairs(["a", "b"], threshold=0)
    with pytest.raises(ValueError, match="candidates"):
        sh.jaccard_pairs(["a", "b"], candidates="lsh")
    with pytest.raises(ValueError, match="bands"):
        sh.jaccard_pairs(["a", "b"], candidates="minhash", bands=(20, 10))
    with pytest.raises(ValueError, match="max_pairs"):
        sh.jaccard_pairs(["same"] * 30, candidates="minhash", max_pairs=100)
    with pytest.raises(ValueError, match="max_pairs"):
        sh.jaccard_pairs(["same"] * 30, candidates="all", max_pairs=100)
    assert len(sh.jaccard_pairs(["same"] * 30, candidates="all")) == 435
    try:
        config["jaccard_max_all_pairs"] = 10
        with pytest.raises(ValueError, match="candidates='minhash'"):
            sh.jaccard_pairs(["a", "b", "c", "d", "e", "f"], candidates="all")
    finally:
        reset_config()


def test_minhash_bands_reach_the_recall():
    for t in (0.3, 0.5, 0.8):
        b, r = minhash_bands(t, 128)
        assert b * r <= 128 and 1 - (1 - t**r) ** b >= 0.99


# --- recommend_k --------------------------------------------------------------------------


def _table():
    fps = np.array([0b0000, 0b0001, 0b0111, 0xFF << 20, 0xFFFF << 40], dtype=np.uint64)
    return sh.threshold_table(fps, [0, 0, 0, 1, 2])


def test_recommend_f1_precision_recall():
    t = _table()
    rec = sh.recommend_k(t)
    f1 = t["f1"].to_numpy()
    assert rec.k == int(np.nanargmax(f1)) and rec.f1 == pytest.approx(np.nanmax(f1))
    assert rec.met and "highest F1" in rec.reason and f"k={rec.k}" in repr(rec)
    assert sh.recommend_k(t, target="f1") == rec
    p = sh.recommend_k(t, precision=0.9)
    ok = t[t["precision"] >= 0.9]
    assert p.k == int(ok.loc[ok["recall"].idxmax(), "k"]) and p.precision >= 0.9
    r = sh.recommend_k(t, recall=1.0)
    assert r.recall == 1.0 and r.k == int(t.loc[t["recall"] >= 1.0, "k"].iloc[0])
    assert int(r) == r.k and [0, 1, 2, 3, 4][r] == r.k  # usable as an index


def test_recommend_unreachable_target_says_so():
    fps = np.array([0b0000, 0b0001, 0b0011], dtype=np.uint64)
    t = sh.threshold_table(fps, [0, 0, 1])  # the only duplicate is at distance 1, and (1, 2) too
    rec = sh.recommend_k(t, precision=0.99)
    assert not rec.met and "no threshold" in rec.reason and rec.k == 1
    assert rec.precision == 0.5


def test_recommend_bad_input():
    t = _table()
    with pytest.raises(ValueError, match="one target"):
        sh.recommend_k(t, precision=0.9, recall=0.9)
    with pytest.raises(ValueError, match="target must be 'f1'"):
        sh.recommend_k(t, "precision")
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        sh.recommend_k(t, recall=1.5)
    with pytest.raises(TypeError, match="DataFrame"):
        sh.recommend_k(t.to_numpy())
    with pytest.raises(ValueError, match="lacks columns"):
        sh.recommend_k(t.drop(columns="f1"))


# --- make_near_duplicates -----------------------------------------------------------------


def test_make_near_duplicates_labels_and_pairs():
    from simhash_nb.datasets import make_near_duplicates

    originals = [f"Sentence number {i} is here. And a second one {i} follows!" for i in range(20)]
    texts, pairs, labels = make_near_duplicates(originals, n=30, edit_rate=0.2, random_state=4)
    again = make_near_duplicates(originals, n=30, edit_rate=0.2, random_state=4)
    assert again.texts == texts and again.pairs.equals(pairs)
    assert len(texts) == 50 and texts[:20] == originals
    assert labels.tolist()[:20] == list(range(20))
    pos, neg = pairs[pairs["duplicate"]], pairs[~pairs["duplicate"]]
    assert len(pos) == 30 and len(neg) == 30
    assert (pos["j"].to_numpy() == np.arange(20, 50)).all()
    assert (labels[pos["i"]] == labels[pos["j"]]).all()
    assert (labels[neg["i"]] != labels[neg["j"]]).all() and (neg["i"] < neg["j"]).all()
    assert not neg[["i", "j"]].duplicated().any()
    assert pos["edits"].sum() > 0 and (neg["edits"] == 0).all()
    # a threshold table over these labels runs and finds the copies at some k
    table = sh.threshold_table(sh.fingerprint(texts, tokenizer="word"), labels)
    assert table["recall"].iloc[-1] == 1.0


def test_make_near_duplicates_edits():
    from simhash_nb.datasets import make_near_duplicates

    text = "one two three four five six seven eight nine ten"
    same = make_near_duplicates([text], n=5, edit_rate=0, boilerplate=0, reorder=0,
                                random_state=0)
    assert same.texts[1:] == [text] * 5 and (same.pairs["edits"] == 0).all()
    every = make_near_duplicates([text, "alpha beta"], n=4, edit_rate=1.0, boilerplate=0,
                                 reorder=0, random_state=0)
    src = every.labels[2:]
    words = np.array([10, 2])[src]
    assert every.pairs["edits"].iloc[:4].tolist() == words.tolist()
    for copy in every.texts[2:]:
        assert copy not in (text, "alpha beta")
    boiler = make_near_duplicates([text], n=3, edit_rate=0, boilerplate=1, reorder=0,
                                  random_state=0)
    for copy in boiler.texts[1:]:
        assert text in copy and "\n" in copy and copy != text
    two = "First sentence here. Second sentence there."
    swapped = make_near_duplicates([two], n=1, edit_rate=0, boilerplate=0, reorder=1,
                                   random_state=0)
    assert swapped.texts[1] == "Second sentence there. First sentence here."
    zh = "今天天气很好。我们去公园散步吧。"
    out = make_near_duplicates([zh], n=3, edit_rate=0.3, boilerplate=0, reorder=0,
                               random_state=1)
    for copy in out.texts[1:]:
        assert " " not in copy  # Chinese edits insert characters without spaces


def test_make_near_duplicates_bad_input():
    from simhash_nb.datasets import make_near_duplicates

    with pytest.raises(TypeError, match="not one string"):
        make_near_duplicates("abc", n=1)
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        make_near_duplicates(["a", None], n=1)
    with pytest.raises(ValueError, match="empty"):
        make_near_duplicates([], n=1)
    with pytest.raises(ValueError, match="edit_rate"):
        make_near_duplicates(["a"], n=1, edit_rate=1.5)
    with pytest.raises(ValueError, match="n must be"):
        make_near_duplicates(["a"], n=-1)


@pytest.mark.parametrize("bits", [64, 128])
def test_threshold_table_counts_alike_in_numpy_and_in_the_kernel(bits):
    """All-pairs counting runs in numpy up to ``config["numpy_brute_pairs"]`` pairs and in
    the parallel kernel above: the same table either way (labels and pairs truth)."""
    from simhash_nb.config import config

    rng = np.random.default_rng(bits)
    base = rng.integers(0, 2**64, (300, bits // 64), dtype=np.uint64)
    fps = np.concatenate([base, base ^ np.uint64(0b1011)])[:, 0] if bits == 64 else (
        np.concatenate([base, base ^ np.uint64(0b1011)]))
    labels = np.arange(fps.shape[0]) % 300
    before = config["numpy_brute_pairs"]
    tables = []
    for limit in (1 << 24, 0):
        config["numpy_brute_pairs"] = limit
        try:
            tables.append((sh.threshold_table(fps, labels), sh.pairs_within(fps, 9)))
        finally:
            config["numpy_brute_pairs"] = before
    (numpy_table, numpy_pairs), (kernel_table, kernel_pairs) = tables
    pd.testing.assert_frame_equal(numpy_table, kernel_table)
    assert numpy_table["tp"].max() == 300  # the planted pairs, all found
    assert np.array_equal(numpy_pairs.i, kernel_pairs.i)
    assert np.array_equal(numpy_pairs.distance, kernel_pairs.distance)


@given(st.lists(st.lists(st.integers(0, 40), max_size=30), max_size=5),
       st.integers(1, 12))
def test_distinct_of_parts_is_np_unique_of_all(parts, rows):
    """The MinHash candidates' merge, range by range in calls of ``rows`` values (so that
    Ctrl-C is answered between them), gives what one np.unique over all of them gives."""
    from simhash_nb._core.evaluate import shingle_jaccard as sj
    arrays = [np.array(p, dtype=np.uint64) for p in parts]
    want = np.unique(np.concatenate(arrays)) if arrays else np.empty(0, np.uint64)
    saved = sj._DISTINCT_ROWS
    sj._DISTINCT_ROWS = rows
    try:
        got = sj._distinct(arrays)
    finally:
        sj._DISTINCT_ROWS = saved
    assert got.dtype == np.uint64 and got.tolist() == want.tolist()


@given(st.lists(st.integers(0, 2**64 - 1), max_size=60), st.sampled_from(["uint64", "int64"]))
def test_sorted_unique_is_np_unique(values, dtype):
    from simhash_nb._core.arrays import sorted_unique
    a = np.array([v % 2**63 if dtype == "int64" else v for v in values], dtype=dtype)
    got = sorted_unique(a)
    assert got.dtype == a.dtype and got.tolist() == np.unique(a).tolist()
