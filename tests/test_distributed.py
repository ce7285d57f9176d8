"""sh.distributed on a real LocalCluster (2 worker processes): the same results as the
single-machine functions, across empty partitions and duplicate groups spanning
partitions; clear errors for bad input."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._frames import fingerprint_array

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

D = sh.distributed
DC = D.components  # the star contraction's steps
DI = D.input


@pytest.fixture(scope="module")
def client(dask_cluster):  # the session's cluster (tests/conftest.py)
    with distributed.Client(dask_cluster) as cl:
        yield cl


def _planted(n_base, bits, seed):
    """Random fingerprints with near copies (1-3 bits flipped), a chain of 1-bit steps
    (one long cluster), and a group of 25 identical fingerprints, shuffled."""
    rng = np.random.default_rng(seed)
    words = bits // 64
    base = rng.integers(0, 2**64, (n_base, words), dtype=np.uint64, endpoint=False)

    def flip(rows, n_bits):
        out = rows.copy()
        for r in range(out.shape[0]):
            for b in rng.choice(bits, n_bits, replace=False):
                out[r, b // 64] ^= np.uint64(1) << np.uint64(b % 64)
        return out

    parts = [base, flip(base[: n_base // 2], 1), flip(base[: n_base // 3], 3),
             flip(base[n_base // 2:], 4)]
    chain = [rng.integers(0, 2**64, (1, words), dtype=np.uint64)]
    for _ in range(40):
        chain.append(flip(chain[-1], 1))
    parts += chain
    parts.append(np.repeat(base[-1:] ^ np.uint64(0xFF), 25, axis=0))
    fps = np.concatenate(parts)
    fps = fps[rng.permutation(fps.shape[0])]
    return fps[:, 0].copy() if bits == 64 else fps


def _series(fps, npartitions=5, empty=True):
    """A Dask Series of fingerprints with known divisions (even labels), two of its
    partitions empty."""
    n = fps.shape[0]
    index = np.arange(n) * 2
    s = pd.Series(fingerprint_array(fps), index=index, name="simhash")
    ds = dd.from_pandas(s, npartitions=1)
    if not empty:
        return ds.repartition(npartitions=npartitions)
    # [-1, 0) holds no even label, nor does [c - 1, c) for an even cut c
    cuts = (np.linspace(0, n, npartitions // 2 + 1).astype(int)[1:-1] * 2).tolist()
    divisions = [-1, 0, *[x for c in cuts for x in (c - 1, c)], 2 * n - 2]
    pieces = [s[(s.index >= lo) & (s.index < hi)] for lo, hi in zip(divisions, divisions[1:])]
    pieces[-1] = pd.concat([pieces[-1], s.iloc[-1:]])
    out = dd.from_delayed([dask.delayed(p) for p in pieces], meta=s.iloc[:0],
                          divisions=divisions)
    lengths = out.map_partitions(len).compute().tolist()
    assert lengths.count(0) >= 2 and sum(lengths) == n, lengths
    return out


def _sorted_frame(df):
    return df.sort_values(["left", "right"]).reset_index(drop=True)


# --- import -----------------------------------------------------------------------------


def test_import_is_lazy_and_names_the_extra():
    code = ("import sys, simhash_nb as sh; assert 'dask' not in sys.modules\n"
            "sys.modules['dask'] = None\n"
            "try:\n    sh.distributed\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "pip install 'simhash-nb[dask]'" in out


# --- fingerprints -----------------------------------------------------------------------


def test_fingerprint_matches_core_with_missing_and_empty_partitions(client):
    texts = [f"document number {i} about {i % 7} things" for i in range(60)]
    texts[5] = None
    pdf = pd.DataFrame({"text": texts, "n": range(60)})
    ddf = dd.from_pandas(pdf, npartitions=4)
    ddf = ddf[ddf["n"] % 20 < 15]  # holes; the last rows of each partition
    ddf = dd.concat([ddf, dd.from_pandas(pdf.iloc[:0], npartitions=1)])
    for bits in (64, 128):
        got = D.fingerprint(ddf, tokenizer="word", bits=bits).compute()
        want = pdf[pdf["n"] % 20 < 15].simhash.fingerprint(tokenizer="word", bits=bits)
        assert got["simhash"].dtype == want["simhash"].dtype
        assert got["simhash"].isna().tolist() == want["simhash"].isna().tolist()
        assert got["simhash"].astype(object).tolist() == want["simhash"].astype(object).tolist()
        assert got.attrs["simhash_spec"]["simhash"] == sh.FingerprintSpec.from_options(
            tokenizer="word", bits=bits).to_json()
    fps = ddf["text"].simhash.fingerprint(ngram=3).compute()
    present = [t for t, n in zip(texts, range(60)) if n % 20 < 15 and t is not None]
    assert fps.dropna().tolist() == sh.fingerprint(present, ngram=3).tolist()


# --- near-duplicate pairs ---------------------------------------------------------------


@pytest.mark.parametrize("bits,k", [(64, 3), (64, 0), (128, 6)])
def test_near_duplicates_match_single_machine(client, bits, k):
    fps = _planted(300, bits, seed=bits + k)
    s = _series(fps)
    got = _sorted_frame(D.near_duplicates(s, k).compute())
    want = sh.near_duplicates(fps, k)
    assert len(want) >= 300  # the 25 identical ones (300 pairs), and planted copies
    np.testing.assert_array_equal(got["left"], want.i)
    np.testing.assert_array_equal(got["right"], want.j)
    np.testing.assert_array_equal(got["distance"], want.distance)
    assert got["distance"].dtype == np.uint8


def test_near_duplicates_design_override_and_index_labels(client):
    fps = _planted(200, 64, seed=7)
    s = _series(fps)
    want = sh.near_duplicates(fps, 2)
    for blocks in (3, 6):
        got = _sorted_frame(D.near_duplicates(s, 2, blocks=blocks, npartitions=3).compute())
        np.testing.assert_array_equal(got["left"], want.i)
        np.testing.assert_array_equal(got["right"], want.j)
    # labels: the pandas accessor's answer on the same Series
    got = _sorted_frame(D.near_duplicates(s, 2, ids="index").compute())
    ref = _sorted_frame(s.compute().simhash.near_duplicates(2))
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)
    np.testing.assert_array_equal(got["left"], 2 * want.i)


def test_near_duplicates_of_text_skip_missing(client):
    texts = ["the quick brown fox jumps", None, "the quick brown fox jumped", "zzz",
             "the quick brown fox jumps", None, "another text entirely here"] * 3
    ds = dd.from_pandas(pd.Series(texts), npartitions=4)
    got = _sorted_frame(ds.simhash.near_duplicates(k=3, tokenizer="word", n_jobs=2).compute())
    ref = pd.Series(texts).simhash.near_duplicates(k=3, tokenizer="word")
    pd.testing.assert_frame_equal(got, _sorted_frame(ref), check_dtype=False)
    assert not set(got["left"]) & {1, 5} and len(got) > 10


@pytest.mark.parametrize("bits,k", [(64, 3), (64, 0), (128, 6)])
def test_near_duplicates_against_match_single_machine(client, bits, k):
    # Identical fingerprints inside each side and across them; only cross pairs count.
    fps = _planted(300, bits, seed=bits + k + 1)
    new, old = fps[:180], fps[150:]  # 30 rows in both
    want = sh.near_duplicates(new, k, against=old)
    assert len(want) >= 30 and len(want) < len(sh.near_duplicates(fps, k))
    got = _sorted_frame(D.near_duplicates(_series(new), k, against=_series(old, 4)).compute())
    np.testing.assert_array_equal(got["left"], want.i)
    np.testing.assert_array_equal(got["right"], want.j)
    np.testing.assert_array_equal(got["distance"], want.distance)
    # the accessor, a forced design and labels give the same pairs
    got = _sorted_frame(_series(new).simhash.near_duplicates(k, against=_series(old, 6),
                                                             blocks=k + 2).compute())
    np.testing.assert_array_equal(got["left"], want.i)
    got = _sorted_frame(D.near_duplicates(_series(new), k, against=_series(old),
                                          ids="index").compute())
    np.testing.assert_array_equal(got["left"], 2 * want.i)
    np.testing.assert_array_equal(got["right"], 2 * want.j)


def test_near_duplicates_against_of_text_and_bad_pairs(client):
    a = ["the quick brown fox jumps over the lazy dog today", None, "a text of its own",
         "the lazy dog sleeps"]
    b = ["The quick brown fox jumps over the lazy dog today!", "the lazy dog sleeps", None,
         "nothing alike at all"]
    da, db = dd.from_pandas(pd.Series(a), npartitions=2), dd.from_pandas(pd.Series(b), 2)
    got = _sorted_frame(D.near_duplicates(da, 4, against=db, tokenizer="word").compute())
    want = sh.near_duplicates(sh.fingerprint(a, tokenizer="word", missing="zero"), 4,
                              against=sh.fingerprint(b, tokenizer="word", missing="zero"))
    pairs = [(i, j) for i, j in zip(want.i, want.j) if a[i] is not None and b[j] is not None]
    assert list(zip(got["left"], got["right"])) == pairs and (0, 0) in pairs and (3, 1) in pairs
    s64 = _series(_planted(50, 64, 1))
    s128 = _series(_planted(50, 128, 1))
    with pytest.raises(ValueError, match="64-bit fingerprints but against holds 128"):
        D.near_duplicates(s64, 3, against=s128)
    with pytest.raises(TypeError, match="against is a pandas Series"):
        D.near_duplicates(s64, 3, against=s64.compute())
    fps = _planted(50, 64, 1)
    labelled = pd.Series(fingerprint_array(fps),
                         index=[f"r{i:03d}" for i in range(fps.shape[0])])
    with pytest.raises(TypeError, match="one index dtype"):
        D.near_duplicates(s64, 3, against=dd.from_pandas(labelled, npartitions=2),
                          ids="index")


def test_max_pairs_is_enforced_per_partition(client):
    fps = np.zeros(300, dtype=np.uint64)  # 44,850 identical pairs, all in one table key
    s = dd.from_pandas(pd.Series(fps), npartitions=3)
    with pytest.raises(sh.TooManyPairsError, match="max_pairs=1,000"):
        D.near_duplicates(s, 0, max_pairs=1000).compute()
    assert len(D.near_duplicates(s, 0).compute()) == 300 * 299 // 2


# --- clusters and dedupe ----------------------------------------------------------------


@pytest.mark.parametrize("bits,k,keeps", [(64, 3, ("first", "last")), (128, 5, (False,))])
def test_clusters_and_dedupe_match_single_machine(client, bits, k, keeps):
    fps = _planted(250, bits, seed=11 + bits)
    s = _series(fps)
    want = sh.clusters(fps, k)
    assert np.unique(want).shape[0] < fps.shape[0] - 60  # real clusters, the chain among them
    got = D.clusters(s, k).compute()
    assert str(got.dtype) == "Int64" and got.name == "cluster"
    assert got.index.equals(s.compute().index)
    np.testing.assert_array_equal(got.to_numpy(dtype=np.int64), want)
    for keep in keeps:
        kept = D.dedupe(s, k, keep=keep).compute()
        mask = sh.dedupe(fps, k, keep=keep)
        np.testing.assert_array_equal(kept.index.to_numpy() // 2, np.flatnonzero(mask))


@pytest.mark.filterwarnings("ignore::simhash_nb.ChainingWarning")  # chains on purpose
def test_long_chain_across_partitions_converges(client):
    # 1-bit steps: one cluster whose pairs sit in different partitions and tables
    rng = np.random.default_rng(3)
    chain = [np.uint64(rng.integers(0, 2**63))]
    for b in rng.integers(0, 64, 150):
        chain.append(chain[-1] ^ (np.uint64(1) << np.uint64(b)))
    fps = np.array(chain, dtype=np.uint64)[rng.permutation(151)]
    s = dd.from_pandas(pd.Series(fps), npartitions=6)
    want = sh.clusters(fps, 1)
    np.testing.assert_array_equal(D.clusters(s, 1).compute().to_numpy(dtype=np.int64), want)


def test_dataframe_dedupe_keeps_columns_and_missing_rows(client):
    texts = ["a b c d e", "a b c d e", None, "x y z", "a b c d e", None, "x y z"]
    pdf = pd.DataFrame({"text": texts, "n": range(7)})
    ddf = dd.from_pandas(pdf, npartitions=3).simhash.fingerprint(tokenizer="word")
    got = ddf.simhash.dedupe(k=0).compute()
    assert got["n"].tolist() == [0, 2, 3, 5]
    assert got.columns.tolist() == ["text", "n", "simhash"]
    labels = ddf.simhash.clusters(k=0).compute()
    assert labels.tolist() == [0, 0, pd.NA, 3, 0, pd.NA, 3]
    ref = pdf.simhash.fingerprint(tokenizer="word").simhash.clusters(k=0)
    assert labels.tolist() == ref.tolist()
    raw = dd.from_pandas(pdf, npartitions=2)  # text: fingerprinted on the way
    assert D.clusters(raw, 0, tokenizer="word").compute().tolist() == ref.tolist()


@pytest.mark.filterwarnings("ignore::simhash_nb.ChainingWarning")  # chains on purpose
def test_clusters_out_column_with_repeated_labels_and_unknown_divisions(client):
    # like dd.read_parquet: every partition has its own RangeIndex, divisions unknown
    fps = _planted(120, 64, seed=5)
    cuts = [0, 100, 100, 250, fps.shape[0]]
    pieces = [pd.DataFrame({"simhash": pd.array(fps[a:b], dtype="UInt64"), "n": range(a, b)})
              for a, b in zip(cuts, cuts[1:])]
    ddf = dd.from_map(lambda x: x, pieces, meta=pieces[0].iloc[:0])
    assert not ddf.known_divisions
    got = D.clusters(ddf, 3, out="cluster").compute()
    np.testing.assert_array_equal(got["n"], np.arange(fps.shape[0]))
    np.testing.assert_array_equal(got["cluster"].to_numpy(dtype=np.int64), sh.clusters(fps, 3))
    kept = D.dedupe(ddf, 3, keep="last").compute()
    np.testing.assert_array_equal(kept["n"], np.flatnonzero(sh.dedupe(fps, 3, keep="last")))
    with pytest.raises(TypeError, match="out= names a column"):
        D.clusters(ddf["simhash"], out="cluster")


def test_repartitioned_input_is_an_error_not_a_wrong_answer():
    part = pd.DataFrame({"x": range(5)})
    drops = pd.DataFrame({"row": [11]})
    assert DC.keep_part(part, drops, np.array([0, 10, 15]), {"number": 1})["x"].tolist() == [
        0, 2, 3, 4]
    with pytest.raises(RuntimeError, match="partition 1 has 5 rows now but had 6"):
        DC.keep_part(part, drops, np.array([0, 10, 16]), {"number": 1})


@settings(max_examples=25)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=60),
       st.integers(1, 4))
def test_star_rounds_find_the_components_of_any_graph(edges, partitions):
    from simhash_nb._kernels.unionfind import components

    i = np.array([min(e) for e in edges if e[0] != e[1]], dtype=np.int64)
    j = np.array([max(e) for e in edges if e[0] != e[1]], dtype=np.int64)
    want = components(41, i, j)
    frame = pd.DataFrame({"u": i, "v": j})
    # in-process (a client of another test may be alive: name the shuffle method)
    with dask.config.set(scheduler="sync"):
        stars = DC.star_rounds(dd.from_pandas(frame, npartitions=partitions), partitions,
                               "tasks", 50)
        got = stars.compute()
        offsets = np.array([0, 20, 41])
        keep = {kp: DC.route(DC.drop_rows(stars, kp, "tasks"), "row", offsets, "tasks").compute()
                for kp in ("first", "last", False)}
        for p in range(2):
            rows = DC.route(DC.drop_rows(stars, "first", "tasks"), "row", offsets, "tasks")
            rows = rows.partitions[p].compute()["row"]
            assert ((rows >= offsets[p]) & (rows < offsets[p + 1])).all()
        keep = {kp: df["row"].tolist() for kp, df in keep.items()}
    labels = np.arange(41)
    labels[got["v"].to_numpy()] = got["u"].to_numpy()
    np.testing.assert_array_equal(labels, want)
    assert got["v"].is_unique and (got["u"] < got["v"]).all()
    assert not set(got["u"]) & set(got["v"])  # stars: no centre is a leaf
    sizes = np.bincount(want, minlength=41)
    last = np.zeros(41, dtype=bool)
    last[[np.flatnonzero(want == c).max() for c in np.unique(want)]] = True
    assert sorted(keep["first"]) == np.flatnonzero(want != np.arange(41)).tolist()
    assert sorted(keep["last"]) == np.flatnonzero(~last).tolist()
    assert sorted(keep[False]) == np.flatnonzero(sizes[want] > 1).tolist()


def test_no_pairs_gives_singletons(client):
    fps = np.array([0, 0x5555_5555_5555_5555, 2**64 - 1, 0xAAAA_AAAA_AAAA_AAAA], dtype=np.uint64)
    s = dd.from_pandas(pd.Series(fps), npartitions=2)
    assert D.clusters(s, 2).compute().tolist() == [0, 1, 2, 3]
    assert len(D.near_duplicates(s, 2).compute()) == 0


# --- threads ----------------------------------------------------------------------------


def test_threads_per_task_divides_cores_between_dask_threads(client):
    cores = max(client.run(DI._usable_cores).values())
    assert D.threads_per_task(client) == max(1, cores // 2)
    with pytest.raises(ValueError, match="n_jobs"):
        D.fingerprint(dd.from_pandas(pd.Series(["a"]), npartitions=1), n_jobs=0)


# --- bad input --------------------------------------------------------------------------


def test_bad_input_errors(client):
    pdf = pd.DataFrame({"text": ["a b", "c d", "a b", "e f"]})
    ddf = dd.from_pandas(pdf, npartitions=2)
    with pytest.raises(KeyError, match="'body' is not in the DataFrame"):
        D.fingerprint(ddf, "body")
    with pytest.raises(KeyError, match="'body'"):
        D.near_duplicates(ddf, column="body")
    with pytest.raises(TypeError, match="pandas DataFrame"):
        D.near_duplicates(pdf)
    with pytest.raises(TypeError, match="neither text"):
        D.clusters(dd.from_pandas(pd.DataFrame({"text": [1.5, 2.5]}), npartitions=1))
    fps = D.fingerprint(ddf, tokenizer="word")
    with pytest.raises(TypeError, match="holds fingerprints already"):
        D.near_duplicates(fps, tokenizer="word")
    with pytest.raises(TypeError, match="holds fingerprints already"):
        D.fingerprint(fps, "simhash")
    with pytest.raises(ValueError, match="k must be in"):
        D.near_duplicates(fps, 64)
    with pytest.raises(ValueError, match="ids must be"):
        D.near_duplicates(fps, ids="label")
    with pytest.raises(ValueError, match="keep must be"):
        D.dedupe(fps, keep="middle")


def test_mixed_specs_across_partitions(client):
    a = dd.from_pandas(pd.Series(["one text", "two text"]), npartitions=1)
    b = dd.from_pandas(pd.Series(["three text", "four"], index=[2, 3]), npartitions=1)
    mixed = dd.concat([D.fingerprint(a, seed=0), D.fingerprint(b, seed=1)])
    with pytest.raises(sh.SpecMismatchError, match=r"partitions 0 and 1 .*seed: 0 != 1"):
        D.near_duplicates(mixed)
    with pytest.raises(sh.SpecMismatchError, match="partitions 0 and 1"):
        D.clusters(mixed)
    same = dd.concat([D.fingerprint(a, seed=1), D.fingerprint(b, seed=1)])
    assert len(D.near_duplicates(same, 63).compute()) == 6


def test_unknown_divisions(client):
    s = _series(_planted(50, 64, seed=1), empty=False).clear_divisions()
    with pytest.raises(ValueError, match="ids='index' needs known divisions"):
        D.near_duplicates(s, ids="index")
    # positions need no divisions
    assert len(D.near_duplicates(s, 3).compute()) == len(sh.near_duplicates(
        s.compute().to_numpy(dtype=np.uint64), 3))


def test_duplicate_labels_with_ids_index():
    s = pd.Series(np.arange(4, dtype=np.uint64), index=[0, 0, 1, 2])
    ds = dd.from_pandas(s, npartitions=1)
    assert ds.known_divisions
    with pytest.raises(ValueError, match="duplicate index labels"):
        D.near_duplicates(ds, 1, ids="index")


@pytest.mark.parametrize("bits,k", [(64, 12), (128, 30)])
def test_recall_and_default_k_match_the_single_machine(client, bits, k):
    from .test_search import planted

    rng = np.random.default_rng(bits)
    fps = planted(rng, 2500, bits, k, per_distance=10)
    series = pd.Series(fingerprint_array(fps, np.ones(len(fps), dtype=bool)))
    data = dd.from_pandas(series, npartitions=3)
    got = sh.distributed.near_duplicates(data, k, recall=0.99).compute()
    local = sh.near_duplicates(fps, k, recall=0.99)
    # the same seeded tables as on one machine: the same pairs
    assert sorted(zip(got.left, got.right)) == list(zip(local.i.tolist(), local.j.tolist()))
    assert np.all(got.distance.to_numpy() <= k)
    default = sh.distributed.near_duplicates(data).compute()
    want = sh.near_duplicates(fps)  # k from similarity 0.7 (12 / 25 bits)
    assert sorted(zip(default.left, default.right)) == list(zip(want.i.tolist(),
                                                                 want.j.tolist()))
    labels = sh.distributed.clusters(data, k, recall=0.999).compute().to_numpy()
    exact = sh.clusters(fps, k)
    for lab in np.unique(labels):  # recall can only split clusters
        assert np.unique(exact[labels == lab]).shape[0] == 1
