"""What makes the Dask verified path cheaper keeps its results exact: the bucket search
of dense tables over every row (copies not grouped first) finds exactly the pairs a
brute-force search over the tables finds, limit included; the size filter at the
search drops only pairs that cannot reach the threshold; a left text is carried only
to other partitions; and sh.distributed.near_duplicate_texts still returns the
single machine's pairs on a corpus of copies and near copies spanning partitions."""

import numpy as np
import pandas as pd
import pytest

import simhash_nb as sh
from simhash_nb._core.pipeline import Shingler
from simhash_nb._core.search.engine import TooManyPairsError
from simhash_nb._core.search.families import pigeonhole, sampled
from simhash_nb._frames import fingerprint_array

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

SEARCH = sh.distributed.search
S = sh.distributed.shingles
V = sh.distributed.verified


def _prints(texts: pd.Series, shingler) -> pd.DataFrame:
    """A partition's prints as stage 1 persists them (fingerprints, counts, shingles):
    what the verification stages read."""
    return sh.distributed.design.prints_part(texts, shingler, 1)


@pytest.fixture(scope="module")
def client(dask_cluster):  # the session's cluster (tests/conftest.py)
    with distributed.Client(dask_cluster) as cl:
        yield cl


def _fingerprints(seed: int = 0) -> np.ndarray:
    """``uint64[n, 2]``: 30 random fingerprints, each with 0 to 6 exact copies and 0 to
    4 variants a few bits away (themselves copied), shuffled."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(30):
        base = rng.integers(0, 2**63, size=2, dtype=np.uint64)
        rows += [base] * int(rng.integers(1, 8))
        for _ in range(int(rng.integers(0, 5))):
            var = base.copy()
            for b in rng.choice(128, int(rng.integers(1, 12)), replace=False):
                var[b // 64] ^= np.uint64(1) << np.uint64(b % 64)
            rows += [var] * int(rng.integers(1, 3))
    fps = np.array(rows, dtype=np.uint64)
    return fps[rng.permutation(fps.shape[0])]


def _brute_force(fps: np.ndarray, masks: np.ndarray, k: int) -> set:
    """Every pair ``(i < j)`` within distance ``k`` sharing the key of some table."""
    x = fps[:, None, :] ^ fps[None, :, :]
    dist = np.bitwise_count(x).sum(axis=2)
    shares = np.zeros(dist.shape, dtype=bool)
    for m in masks:
        shares |= ((x & m[None, None, :]) == 0).all(axis=2)
    i, j = np.nonzero(np.triu(shares & (dist <= k), 1))
    return set(zip(i.tolist(), j.tolist()))


def _records(fps: np.ndarray, family, sizes: np.ndarray | None = None) -> pd.DataFrame:
    """All tables' records of ``fps`` in one frame (as one bucket partition would get
    them), from a prints frame when ``sizes`` is given."""
    key_masks = np.ascontiguousarray(family.masks)
    n = fps.shape[0]
    if sizes is None:
        part = pd.Series(fingerprint_array(fps))
    else:
        part = pd.DataFrame({"w0": fps[:, 0], "w1": fps[:, 1], "nf": sizes})
    out = SEARCH.emit(part, range(family.n_tables), key_masks, np.array([0, n]), False)
    return out.sample(frac=1.0, random_state=1)  # shuffle order: the set must not care


@pytest.mark.parametrize("family,k", [(sampled(128, 12, 9, 3), 14),
                                      (pigeonhole(128, 4, 6), 4)])
def test_dense_bucket_search_over_every_row_finds_the_brute_force_pairs(family, k):
    fps = _fingerprints()
    want = _brute_force(fps, family.masks, k)
    copies = sum(1 for i, j in want if (fps[i] == fps[j]).all())
    assert copies > 50 and len(want) > copies  # copies, and pairs that are not copies
    got = SEARCH.search_part(_records(fps, family), family, 128, k, "pairs", 2**62, 1, None)
    pairs = list(zip(got.left.tolist(), got.right.tolist()))
    assert len(pairs) == len(set(pairs))  # each pair once, though all tables hold copies
    assert set(pairs) == want
    d = np.bitwise_count(fps[got.left.to_numpy()] ^ fps[got.right.to_numpy()]).sum(axis=1)
    assert got.distance.tolist() == d.tolist()


def test_dense_bucket_search_counts_pairs_of_rows_against_the_limit():
    family, k = sampled(128, 12, 9, 3), 14
    fps = _fingerprints(1)
    n_pairs = len(_brute_force(fps, family.masks, k))
    records = _records(fps, family)
    got = SEARCH.search_part(records, family, 128, k, "pairs", n_pairs, 1, None)
    assert len(got) == n_pairs  # exactly at the limit: allowed
    with pytest.raises(TooManyPairsError, match="max_pairs"):
        SEARCH.search_part(records, family, 128, k, "pairs", n_pairs - 1, 1, None)
    copies = np.repeat(fps[:1], 40, axis=0)  # 780 pairs of copies, all owned by table 0
    with pytest.raises(TooManyPairsError, match="780 pairs"):
        SEARCH.search_part(_records(copies, family), family, 128, k, "pairs", 779, 1, None)


def test_the_size_filter_drops_only_pairs_that_cannot_reach_the_threshold():
    family, k = sampled(128, 12, 9, 3), 14
    fps = _fingerprints(2)
    rng = np.random.default_rng(0)
    sizes = rng.choice([0, 3, 10, 13, 14, 20, 70_000, 100_000], size=fps.shape[0])
    unsized = SEARCH.search_part(_records(fps, family), family, 128, k, "pairs", 2**62, 1,
                                 None)
    got = SEARCH.search_part(_records(fps, family, sizes), family, 128, k, "pairs", 2**62,
                             1, None, 0.7)
    a, b = sizes[unsized.left.to_numpy()], sizes[unsized.right.to_numpy()]
    small, large = np.minimum(a, b), np.maximum(a, b)
    # sizes 0 are not searched; saturated counts (>= 65535) are kept
    keep = (small > 0) & ((small >= 0.7 * large) | (large >= SEARCH.SIZE_CAP))
    assert 0 < keep.sum() < len(unsized)
    assert got[["left", "right", "distance"]].values.tolist() == \
        unsized[keep][["left", "right", "distance"]].values.tolist()


def test_a_left_text_is_carried_only_to_other_partitions():
    texts = pd.Series(["a b c d e", "x y z", "a b c d e", "x y z w", "a b c d f"])
    offsets = np.array([0, 3, 5], dtype=np.int64)  # partitions [0, 3) and [3, 5)
    shingler = Shingler.make(128, tokenizer="word", ngram=1)
    cands = pd.DataFrame({"left": [0, 1, 2, 0], "right": [2, 3, 4, 4],
                          "distance": np.zeros(4, dtype=np.uint8)})
    carried = S.attach_left(_prints(texts.iloc[:3], shingler), cands, offsets, False,
                            partition_info={"number": 0})
    carries = carried[S.SHINGLES].notna()
    want = list(_prints(texts.iloc[[0, 1, 2]], shingler)[S.SHINGLES])  # rows 0, 1, 2 to part 1
    assert carried[S.SHINGLES][carries].tolist() == want
    assert carried.right[carries].tolist() == [4, 3, 4]
    here = S.verify_right(_prints(texts.iloc[:3], shingler), carried[carried.right < 3],
                          offsets, 1, 0.5, False, partition_info={"number": 0})
    assert here[["left", "right"]].values.tolist() == [[0, 2]]
    there = S.verify_right(_prints(texts.iloc[3:], shingler), carried[carried.right >= 3],
                           offsets, 1, 0.5, False, partition_info={"number": 1})
    assert there[["left", "right"]].values.tolist() == [[0, 4], [1, 3], [2, 4]]
    np.testing.assert_allclose(there.jaccard, [4 / 6, 3 / 4, 4 / 6])


def _copies_corpus() -> pd.Series:
    """Fortunes, exact copies (some spanning partitions), near copies, shorter and
    longer versions (pairs the size filter drops), empty and missing texts."""
    base = sh.datasets.load_sample("fortunes")["text"].tolist()[:600]
    rng = np.random.default_rng(5)
    near = list(sh.datasets.make_near_duplicates(base, n=300, edit_rate=0.05,
                                                 random_state=2).texts)[600:]
    out = base + near + [base[7]] * 25 + [base[9] * 2 for _ in range(5)]
    out += [base[9][: len(base[9]) // 2], base[11] + " " + base[11][:20], "", None]
    return pd.Series([out[p] for p in rng.permutation(len(out))], dtype=object)


@pytest.mark.parametrize("npartitions", [1, 3])
def test_distributed_pairs_equal_the_single_machine_on_copies(client, npartitions):
    texts = _copies_corpus()
    present = texts.dropna()
    local = sh.near_duplicate_texts(present, 0.7)
    pos = np.flatnonzero(texts.notna().to_numpy())
    want = sorted(zip(pos[local.i].tolist(), pos[local.j].tolist(), local.jaccard.tolist()))
    got = sh.distributed.near_duplicate_texts(
        dd.from_pandas(texts, npartitions=npartitions), 0.7).compute()
    got = sorted(zip(got.left.tolist(), got.right.tolist(), got.jaccard.tolist()))
    assert len(want) > 300
    assert got == want


def test_pairs_are_verified_evenly_across_partitions():
    rng = np.random.default_rng(3)
    i = rng.integers(0, 50_000, 20_000)  # every pair across partitions [0, 50k), [50k, 100k)
    j = rng.integers(50_000, 100_000, 20_000)
    cands = pd.DataFrame({"left": i, "right": j, "distance": np.zeros(20_000, np.uint8)})
    routed = V._by_priority(cands, np.array([0, 50_000, 100_000]))
    at_last = float((routed.right >= 50_000).mean())  # by position: all of them
    assert 0.45 < at_last < 0.55
    assert sorted(zip(routed.left.clip(upper=routed.right), routed.right.clip(lower=routed.left))) \
        == sorted(zip(i, j))  # the same pairs, each once
    # a row carries its text toward rows of higher priority only: at most once a partition
    prio = SEARCH.mix(np.arange(100_000, dtype=np.uint64))
    assert (prio[routed.left] < prio[routed.right]).all()


def test_pairs_across_partitions_are_routed_by_a_tournament():
    rng = np.random.default_rng(4)
    offsets = np.arange(0, 80_001, 10_000)  # 8 partitions
    i, j = rng.integers(0, 80_000, (2, 40_000))
    # families: each row pairs with every row of a few others spread over the partitions
    fam = rng.integers(0, 80_000, (500, 6))
    fi, fj = np.triu_indices(6, 1)
    i, j = np.concatenate([i, fam[:, fi].ravel()]), np.concatenate([j, fam[:, fj].ravel()])
    keep = i != j
    i, j = np.minimum(i, j)[keep], np.maximum(i, j)[keep]
    cands = pd.DataFrame({"left": i, "right": j, "distance": np.zeros(i.shape[0], np.uint8)})
    routed = V._by_priority(cands, offsets)
    left, right = routed.left.to_numpy(), routed.right.to_numpy()
    assert sorted(zip(np.minimum(left, right), np.maximum(left, right))) == sorted(zip(i, j))
    pl, pr = left // 10_000, right // 10_000
    gap = np.abs(pr - pl)
    near, far = (gap > 0) & (gap < 4), gap > 4
    assert (pr[near] > pl[near]).all() and (pr[far] < pl[far]).all()  # the tournament
    prio = SEARCH.mix(np.arange(80_000, dtype=np.uint64))
    rest = (gap == 0) | (gap == 4)
    assert (prio[left[rest]] < prio[right[rest]]).all()  # the rest by priority
    per_partition = np.bincount(pr, minlength=8)
    assert per_partition.min() > 0.9 * per_partition.mean()  # evenly spread
    # fewer carried shingles than routing every pair by priority
    carried = len({(a, b) for a, b, x in zip(left, pr, pl != pr) if x})
    by_priority = np.where(prio[i] < prio[j], i, j), np.where(prio[i] < prio[j], j, i)
    cross = by_priority[0] // 10_000 != by_priority[1] // 10_000
    assert carried < len(set(zip(by_priority[0][cross], by_priority[1][cross] // 10_000)))


@pytest.mark.parametrize("labels", [False, True])
def test_routed_pairs_come_out_lower_row_first(labels):
    texts = pd.Series(["a b c", "x y", "a b c", "x y", "a b c", "x y"],
                      index=[f"d{p}" for p in range(6)])
    offsets = np.array([0, 3, 6], dtype=np.int64)
    shingler = Shingler.make(128, tokenizer="word", ngram=1)
    pairs = [(0, 2), (0, 4), (2, 4), (1, 3), (1, 5), (3, 5)]
    cands = V._by_priority(pd.DataFrame({"left": [a for a, _ in pairs],
                                         "right": [b for _, b in pairs],
                                         "distance": np.zeros(6, np.uint8)}), offsets)
    assert (cands.left > cands.right).any()  # some pairs are routed higher row first
    got = []
    for p in (0, 1):  # route to the carrier's partition, then to the verifier's
        mine = cands[(cands.left >= offsets[p]) & (cands.left < offsets[p + 1])]
        own = _prints(texts.iloc[offsets[p]:offsets[p + 1]], shingler)
        got.append(S.attach_left(own, mine, offsets, labels, partition_info={"number": p}))
    carried = pd.concat(got)
    out = []
    for p in (0, 1):
        mine = carried[(carried.right >= offsets[p]) & (carried.right < offsets[p + 1])]
        own = _prints(texts.iloc[offsets[p]:offsets[p + 1]], shingler)
        part = S.verify_right(own, mine, offsets, 1, 0.9, labels, partition_info={"number": p})
        keys = part[["left", "right"]].values.tolist()
        assert keys == sorted(keys)  # each partition sorted by (left, right)
        out += keys
    want = [[texts.index[a], texts.index[b]] if labels else [a, b] for a, b in pairs]
    assert sorted(out) == sorted(want)


def test_stage_one_keeps_each_rows_shingles():
    texts = pd.Series(["a b c", None, "", "b c d e"], index=[10, 11, 12, 13])
    shingler = Shingler.make(128, tokenizer="word", ngram=1)
    prints = _prints(texts, shingler)
    [(indptr, hashes)] = S.column_shingles(prints[S.SHINGLES])
    fb, fps = S.shingle(pd.Series(["a b c", "", "b c d e"]), shingler, 1)
    assert np.diff(indptr).tolist() == [3, 0, 0, 4] == np.maximum(prints.nf, 0).tolist()
    assert hashes.tolist() == fb.hashes.tolist()
    assert prints[["w0", "w1"]].to_numpy(np.uint64)[[0, 2, 3]].tolist() == fps.tolist()
    assert prints.index.tolist() == [10, 11, 12, 13]
    pa = pytest.importorskip("pyarrow")  # a narrower or shifted binary column reads the same
    narrow = pa.array(list(prints[S.SHINGLES]), pa.binary()).slice(1)
    [got] = S.column_shingles(pd.Series(pd.arrays.ArrowExtensionArray(narrow)))
    assert np.diff(got[0]).tolist() == [0, 0, 4] and got[1].tolist() == fb.hashes[3:].tolist()


def test_verification_shingles_no_text_again(monkeypatch):
    texts = pd.Series(["a b c d e", "x y z", "a b c d e", "x y z w", "a b c d f"])
    offsets = np.array([0, 3, 5], dtype=np.int64)
    shingler = Shingler.make(128, tokenizer="word", ngram=1)
    prints = [_prints(texts.iloc[:3], shingler), _prints(texts.iloc[3:], shingler)]
    cands = pd.DataFrame({"left": [0, 1, 2, 0, 3], "right": [2, 3, 4, 4, 4],
                          "distance": np.zeros(5, dtype=np.uint8)})
    monkeypatch.setattr(Shingler, "__call__", lambda *a: pytest.fail("shingled again"))
    carried = pd.concat([S.attach_left(prints[p], cands[(cands.left >= offsets[p])
                                                        & (cands.left < offsets[p + 1])],
                                       offsets, False, partition_info={"number": p})
                         for p in (0, 1)])
    there = S.verify_right(prints[1], carried[carried.right >= 3], offsets, 1, 0.5, False,
                           partition_info={"number": 1})
    assert there[["left", "right"]].values.tolist() == [[0, 4], [1, 3], [2, 4]]  # not (3, 4)
    np.testing.assert_allclose(there.jaccard, [4 / 6, 3 / 4, 4 / 6])
    here = S.verify_right(prints[0], carried[carried.right < 3], offsets, 1, 0.5, False,
                          partition_info={"number": 0})
    assert here[["left", "right"]].values.tolist() == [[0, 2]]
