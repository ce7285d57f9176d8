"""The verified path on Dask (sh.distributed.near_duplicate_texts, cluster_texts,
dedupe_texts) on a LocalCluster of 2 worker processes: the same k, pairs, exact Jaccard,
clusters and kept rows as on one machine, across an empty partition, missing and empty
texts and copies spanning partitions; the verification stages on pandas; bad input."""

import numpy as np
import pandas as pd
import pytest

import simhash_nb as sh
from simhash_nb._core.candidates import candidate_design
from simhash_nb._core.pipeline import Shingler

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

S = sh.distributed.shingles
DESIGN = sh.distributed.design


def _prints(texts: pd.Series, shingler) -> pd.DataFrame:
    """A partition's prints as stage 1 persists them (fingerprints, counts, shingles):
    what the verification stages read."""
    return sh.distributed.design.prints_part(texts, shingler, 1)


def _shingle_bytes(texts: list, shingler) -> list:
    """Each text's shingles as the prints keep them (bytes of sorted uint64 hashes)."""
    return list(_prints(pd.Series(texts), shingler)[S.SHINGLES])


@pytest.fixture(scope="module")
def client(dask_cluster):  # the session's cluster (tests/conftest.py)
    with distributed.Client(dask_cluster) as cl:
        yield cl


@pytest.fixture(scope="module")
def texts():
    """~3,000 texts: fortunes, edited copies at several edit rates (around J = 0.7),
    exact copies, empty and missing texts, shuffled."""
    base = sh.datasets.load_sample("fortunes")["text"].tolist()[:1500]
    rng = np.random.default_rng(0)
    out = list(base)
    for rate in (0.02, 0.05, 0.1):
        out += list(sh.datasets.make_near_duplicates(base, n=400, edit_rate=rate,
                                                     random_state=int(rate * 100)).texts)[1500:]
    out += [base[3]] * 30 + ["", ""]
    out = [out[p] for p in rng.permutation(len(out))]
    for p in (5, 700, 2700):
        out[p] = None
    return pd.Series(out, dtype=object)


def _with_empty_partition(s: pd.Series, cuts=(0.3, 0.3, 0.7)):
    """A Dask Series of ``s`` in partitions cut at those shares (one of them empty)."""
    n = len(s)
    edges = [0, *[int(c * n) for c in cuts], n]
    pieces = [s.iloc[a:b] for a, b in zip(edges, edges[1:])]
    out = dd.from_delayed([dask.delayed(p) for p in pieces], meta=s.iloc[:0])
    assert 0 in out.map_partitions(len).compute().tolist()
    return out


def _pair_set(i, j) -> set:
    return set(zip(np.asarray(i).tolist(), np.asarray(j).tolist()))


def _agreement(a: set, b: set) -> float:
    return len(a & b) / max(1, len(a | b))


# --- pairs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("options,sample_rows", [
    ({}, None),  # 128-bit char 5-grams; k from the design alone
    ({}, 1000),  # k priced by the corpus's background distances, as from 50k texts up
    ({"bits": 64, "tokenizer": "word", "ngram": 3}, 1000),
])
def test_pairs_match_single_machine(client, texts, monkeypatch, options, sample_rows):
    if sample_rows is not None:
        monkeypatch.setitem(sh.config, "verify_sample_rows", sample_rows)
    present = texts.dropna()
    local = sh.near_duplicate_texts(present, 0.7, **options)
    pos = np.flatnonzero(texts.notna().to_numpy())  # local rows -> global positions
    data = _with_empty_partition(texts)
    plan = DESIGN.plan_texts(data, {o: v for o, v in options.items() if o != "bits"},
                             threshold=0.7, recall=0.99, bits=options.get("bits", 128))
    assert plan.k == local.k  # the single machine's k and tables
    if sample_rows is not None:  # k was priced by the sampled background: a smaller one
        assert local.k < candidate_design(len(present), 0.7, options.get("bits", 128), 0.99).k
    got = sh.distributed.near_duplicate_texts(data, 0.7, **options).compute()
    assert len(local) > 400 and (got.left < got.right).all()
    want = _pair_set(pos[local.i], pos[local.j])
    assert _agreement(_pair_set(got.left, got.right), want) >= 0.99
    assert _pair_set(got.left, got.right) == want  # the same candidates: the same pairs
    got = got.sort_values(["left", "right"])
    np.testing.assert_array_equal(got.jaccard.to_numpy(), local.jaccard)
    np.testing.assert_array_equal(got.distance.to_numpy(), local.distance)
    assert got.jaccard.min() >= 0.7


def test_pairs_by_index_label_and_accessor(client, texts):
    s = texts.iloc[:1200].copy()
    s.index = [f"doc{p:05d}" for p in range(len(s))]
    data = dd.from_pandas(s, npartitions=3)  # sorted labels: known divisions
    got = sh.distributed.near_duplicate_texts(data, 0.8, ids="index").compute()
    want = s.simhash.near_duplicates(threshold=0.8)  # the pandas accessor's labels
    assert len(want) > 50
    assert _pair_set(got.left, got.right) == _pair_set(want.left, want.right)
    by_accessor = data.simhash.near_duplicate_texts(0.8, ids="index").compute()
    assert _pair_set(by_accessor.left, by_accessor.right) == _pair_set(want.left, want.right)
    frame = dd.from_pandas(pd.DataFrame({"body": s, "n": np.arange(len(s))}), npartitions=3)
    by_column = frame.simhash.near_duplicate_texts("body", 0.8).compute()
    assert _pair_set(by_column.left, by_column.right) == _pair_set(
        s.index.get_indexer(want.left), s.index.get_indexer(want.right))


def test_k_override_and_max_pairs(client, texts):
    data = dd.from_pandas(texts.iloc[:1500], npartitions=2)
    present = texts.iloc[:1500].dropna()
    pos = np.flatnonzero(texts.iloc[:1500].notna().to_numpy())
    local = sh.near_duplicate_texts(present, 0.7)
    same = sh.distributed.near_duplicate_texts(data, 0.7, k=local.k).compute()
    assert _pair_set(same.left, same.right) == _pair_set(pos[local.i], pos[local.j])
    narrow = sh.distributed.near_duplicate_texts(data, 0.7, k=local.k - 3).compute()
    exact = sh.jaccard_pairs(present, 0.7, candidates="all")  # the ground truth
    assert len(narrow) > 100 and (narrow.distance <= local.k - 3).all()
    assert _pair_set(narrow.left, narrow.right) <= _pair_set(pos[exact.i], pos[exact.j])
    with pytest.raises(ValueError, match="k=20 is too small"):  # before any work
        sh.distributed.near_duplicate_texts(data, 0.7, k=20)
    with pytest.raises(sh.TooManyPairsError):
        sh.distributed.near_duplicate_texts(data, 0.7, max_pairs=10).compute()


def test_p2p_and_tasks_shuffles_give_the_same_pairs(client, texts):
    """Small shuffles default to "tasks"; P2P carries the shingles (a large_binary column
    with nulls) just as well."""
    data = dd.from_pandas(texts.iloc[:1500], npartitions=3)
    by_tasks = sh.distributed.near_duplicate_texts(data, 0.7).compute()
    by_p2p = sh.distributed.near_duplicate_texts(data, 0.7, shuffle_method="p2p").compute()
    assert len(by_tasks) > 50
    assert _pair_set(by_p2p.left, by_p2p.right) == _pair_set(by_tasks.left, by_tasks.right)
    by_p2p = by_p2p.sort_values(["left", "right"])
    by_tasks = by_tasks.sort_values(["left", "right"])
    np.testing.assert_array_equal(by_p2p.jaccard.to_numpy(), by_tasks.jaccard.to_numpy())


# --- clusters and dedupe --------------------------------------------------------------------


def test_clusters_and_dedupe_match_single_machine(client, texts):
    present = texts.dropna()
    pos = np.flatnonzero(texts.notna().to_numpy())
    frame = pd.DataFrame({"body": texts, "n": np.arange(len(texts))})
    data = dd.from_pandas(frame, npartitions=4)
    labels = sh.distributed.cluster_texts(data, column="body").compute()
    local = sh.cluster_texts(present)
    assert labels.isna().to_numpy().tolist() == texts.isna().to_numpy().tolist()
    np.testing.assert_array_equal(labels.to_numpy()[pos].astype(np.int64), pos[local])
    assert np.unique(local).shape[0] < len(present) - 300  # copies were joined
    with_col = sh.distributed.cluster_texts(data, column="body", out="cluster").compute()
    assert with_col.columns.tolist() == ["body", "n", "cluster"]
    assert with_col["cluster"].equals(labels)
    for keep in ("first", False):  # "last": in the accessor's test
        kept = sh.distributed.dedupe_texts(data, keep=keep, column="body").compute()
        mask = np.ones(len(texts), dtype=bool)  # missing texts stay
        mask[pos] = sh.dedupe_texts(present, keep=keep)
        assert kept["n"].tolist() == np.flatnonzero(mask).tolist(), keep
        assert kept.columns.tolist() == ["body", "n"]


def test_series_accessor_clusters_and_dedupe(client, texts):
    s = texts.iloc[:1000]
    data = dd.from_pandas(s, npartitions=2)
    labels = data.simhash.cluster_texts(0.8).compute()
    want = s.simhash.clusters(threshold=0.8)
    assert labels.tolist() == want.tolist()
    kept = data.simhash.dedupe_texts(0.8, keep="last").compute()
    assert kept.index.tolist() == s.simhash.dedupe(threshold=0.8, keep="last").index.tolist()


# --- the verification stages, on pandas -------------------------------------------------------


def test_stages_carry_each_left_text_once_per_other_partition():
    texts = pd.Series(["a b c d e", "a b c d e", "a b c d x", "", "a b c d e"])
    offsets = np.array([0, 3, 5], dtype=np.int64)  # partitions [0, 3) and [3, 5)
    shingler = Shingler.make(128, tokenizer="word", ngram=1)
    cands = pd.DataFrame({"left": [0, 0, 0, 0], "right": [1, 2, 3, 4],
                          "distance": np.array([0, 5, 9, 0], dtype=np.uint8)})
    carried = S.attach_left(_prints(texts.iloc[:3], shingler), cands, offsets, False,
                            partition_info={"number": 0})
    carries = carried[S.SHINGLES].notna()
    # (0, part 1) only: partition 0 verifies its own pairs with its own shingles of row 0
    assert carries.tolist() == [False, False, True, False]
    assert carried[S.SHINGLES][carries].tolist() == _shingle_bytes(["a b c d e"], shingler)
    first = carried[carried.right < 3]
    got = S.verify_right(_prints(texts.iloc[:3], shingler), first, offsets, 1, 0.6, False,
                         partition_info={"number": 0})
    assert got[["left", "right"]].values.tolist() == [[0, 1], [0, 2]]
    np.testing.assert_allclose(got.jaccard, [1.0, 4 / 6])
    second = S.verify_right(_prints(texts.iloc[3:], shingler), carried[carried.right >= 3],
                            offsets, 1, 0.6, False, partition_info={"number": 1})
    assert second[["left", "right"]].values.tolist() == [[0, 4]]  # "" is in no pair


def test_a_left_text_without_shingles_is_in_no_pair():
    texts = pd.Series(["", "a b", "", "a b"])
    offsets = np.array([0, 2, 4], dtype=np.int64)
    shingler = Shingler.make(128, tokenizer="word", ngram=1)
    cands = pd.DataFrame({"left": [0, 0, 1], "right": [2, 3, 3],
                          "distance": np.zeros(3, dtype=np.uint8)})
    carried = S.attach_left(_prints(texts.iloc[:2], shingler), cands, offsets, False,
                            partition_info={"number": 0})
    got = S.verify_right(_prints(texts.iloc[2:], shingler), carried, offsets, 1, 0.5, False,
                         partition_info={"number": 1})
    assert got[["left", "right"]].values.tolist() == [[1, 3]]


def test_carried_shingles_survive_any_binary_column():
    pa = pytest.importorskip("pyarrow")
    one, two = np.array([1, 2], np.uint64).tobytes(), np.array([3], np.uint64).tobytes()
    runs = [one, None, two, b""]
    columns = [pd.Series(runs, dtype=object),  # bytes objects
               pd.Series(pd.arrays.ArrowExtensionArray(pa.array(runs, pa.binary()))),
               pd.Series(pd.arrays.ArrowExtensionArray(pa.array(runs, pa.large_binary()))),
               pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array(  # a shuffle's concat
                   [pa.array(runs[:1], pa.large_binary()),
                    pa.array([b"skipped", *runs[1:]], pa.large_binary()).slice(1)]))),
               pd.Series(pd.arrays.ArrowExtensionArray(  # hashes at an odd byte: copied
                   pa.LargeBinaryArray.from_buffers(pa.large_binary(), 4, [
                       pa.array([True, False, True, True]).buffers()[1],
                       pa.py_buffer(np.array([1, 17, 17, 25, 25], np.int64)),
                       pa.py_buffer(b"x" + one + two)])))]
    for col in columns:
        parts = S.column_shingles(col)  # CSR parts in row order, a null empty
        assert np.concatenate([np.diff(i) for i, _ in parts]).tolist() == [2, 0, 1, 0]
        assert np.concatenate([h for _, h in parts]).tolist() == [1, 2, 3]


# --- bad input --------------------------------------------------------------------------------


def test_bad_input_errors():
    s = dd.from_pandas(pd.Series(["a b", "c d"]), npartitions=1)
    D = sh.distributed
    for bad, err in [(0.0, ValueError), (1.5, ValueError), ("0.7", TypeError),
                     (True, TypeError)]:
        with pytest.raises(err, match="threshold"):
            D.near_duplicate_texts(s, bad)
    with pytest.raises(ValueError, match="recall must be below 1"):
        D.near_duplicate_texts(s, recall=1.0)
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        D.cluster_texts(s, bits=32)
    with pytest.raises(ValueError, match="k must be an integer"):
        D.near_duplicate_texts(s, k=128)
    with pytest.raises(ValueError, match="ids must be"):
        D.near_duplicate_texts(s, ids="label")
    with pytest.raises(ValueError, match="npartitions"):
        D.near_duplicate_texts(s, npartitions=0)
    with pytest.raises(ValueError, match="keep"):
        D.dedupe_texts(s, keep="middle")
    with pytest.raises(ValueError, match="max_rounds"):
        D.cluster_texts(s, max_rounds=0)
    with pytest.raises(ValueError, match="ngram"):
        D.near_duplicate_texts(s, ngram=0)
    with pytest.raises(TypeError, match="pandas Series"):
        D.near_duplicate_texts(pd.Series(["a b"]))
    with pytest.raises(TypeError, match="out= names a column"):
        D.cluster_texts(s, out="c")
    with pytest.raises(TypeError, match="column= applies to a Dask DataFrame"):
        D.near_duplicate_texts(s, column="text")
    fps = D.fingerprint(s)
    with pytest.raises(TypeError, match="needs the texts"):
        D.near_duplicate_texts(fps)
    unsorted = dd.from_pandas(pd.Series(["a", "b"]), npartitions=1).clear_divisions()
    with pytest.raises(ValueError, match="known divisions"):
        D.near_duplicate_texts(unsorted, ids="index")
    with pytest.raises(KeyError):
        D.near_duplicate_texts(dd.from_pandas(pd.DataFrame({"x": ["a"]}), npartitions=1))


def test_missing_texts_are_in_no_pair_and_not_an_error(client):
    s = pd.Series([None, "the cat sat on the mat", np.nan, "the cat sat on the mat", pd.NA])
    data = dd.from_pandas(s, npartitions=2)
    got = sh.distributed.near_duplicate_texts(data).compute()
    assert got[["left", "right"]].values.tolist() == [[1, 3]]
    labels = sh.distributed.cluster_texts(data).compute()
    assert labels.isna().tolist() == [True, False, True, False, True]
    assert labels[1] == labels[3] == 1
    with pytest.raises(ValueError, match="missing"):  # the core refuses them: say so
        sh.near_duplicate_texts(s)
