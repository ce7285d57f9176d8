"""near_duplicates and table_design: complete, each pair once, equal to brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core.search import engine as search_engine
from simhash_nb._core.search import layout as search_layout
from simhash_nb.config import config, reset_config

from . import naive

# --- helpers ---------------------------------------------------------------------------


def random_fps(rng, n, bits):
    shape = (n,) if bits == 64 else (n, 2)
    return rng.integers(0, 2**64, size=shape, dtype=np.uint64, endpoint=False)


def flip_bits(fp, positions):
    """A copy of one fingerprint (scalar or 2 words) with the given bits flipped."""
    fp = np.array(fp, dtype=np.uint64, copy=True)
    for b in positions:
        if fp.ndim == 0:
            fp ^= np.uint64(1) << np.uint64(b)
        else:
            fp[b // 64] ^= np.uint64(1) << np.uint64(b % 64)
    return fp


def planted(rng, n, bits, k, per_distance=6):
    """Random fingerprints plus neighbours of random rows at every distance 0..k+1."""
    base = random_fps(rng, n, bits)
    extra = []
    for d in range(k + 2):
        for _ in range(per_distance):
            src = base[rng.integers(n)]
            extra.append(flip_bits(src, rng.choice(bits, size=d, replace=False)))
    fps = np.concatenate([base, np.array(extra, dtype=np.uint64)])
    return fps[rng.permutation(fps.shape[0])]


def assert_pairs_equal(got: sh.Pairs, want: sh.Pairs):
    assert got.i.dtype == np.int64 and got.j.dtype == np.int64
    assert got.distance.dtype == np.uint8
    np.testing.assert_array_equal(got.i, want.i)
    np.testing.assert_array_equal(got.j, want.j)
    np.testing.assert_array_equal(got.distance, want.distance)


def assert_each_pair_once(p: sh.Pairs, self_join=True):
    if self_join:
        assert np.all(p.i < p.j)
    key = p.i.astype(np.uint64) << np.uint64(32) | p.j.astype(np.uint64)
    assert np.unique(key).shape[0] == len(p)


@pytest.fixture(autouse=True)
def _reset():
    yield
    reset_config()


# --- completeness against brute force ----------------------------------------------------

CASES_64 = [(k, b) for k in (1, 2, 3, 4, 6, 8, 10, 12) for b in (None, k + 1, k + 2)] + [
    (0, None), (0, 1), (0, 3), (3, 6), (3, 7), (3, 11), (2, 64 // 3),
]
CASES_128 = [(k, b) for k in (1, 3, 5, 10, 15, 20) for b in (None, k + 1, k + 2)] + [
    (0, None), (0, 2), (3, 5), (3, 7), (3, 9), (20, 23),
]


@pytest.mark.parametrize("k, blocks", CASES_64)
def test_planted_64(k, blocks):
    rng = np.random.default_rng(1000 + k * 10 + (blocks or 0))
    fps = planted(rng, 400, 64, k)
    got = sh.near_duplicates(fps, k, blocks=blocks)
    assert_pairs_equal(got, sh.pairs_within(fps, k))
    assert_each_pair_once(got)
    assert set(got.distance.tolist()) >= set(range(min(k, 3) + 1))


@pytest.mark.parametrize("k, blocks", CASES_128)
def test_planted_128(k, blocks):
    rng = np.random.default_rng(2000 + k * 10 + (blocks or 0))
    fps = planted(rng, 300, 128, k)
    got = sh.near_duplicates(fps, k, blocks=blocks)
    assert_pairs_equal(got, sh.pairs_within(fps, k))
    assert_each_pair_once(got)


def test_matches_pure_python_reference():
    rng = np.random.default_rng(3)
    fps = planted(rng, 60, 64, 3)
    got = sh.near_duplicates(fps, 3, blocks=5)
    assert list(zip(got.i.tolist(), got.j.tolist(), got.distance.tolist())) == naive.pairs_within(
        fps.tolist(), 3
    )


def test_auto_design_uses_tables_on_larger_sets():
    rng = np.random.default_rng(4)
    fps = planted(rng, 20_000, 64, 3, per_distance=50)
    design = sh.table_design(fps.shape[0], 3)
    assert design.method == "tables"
    got = sh.near_duplicates(fps, 3)
    assert_pairs_equal(got, sh.pairs_within(fps, 3))
    assert_each_pair_once(got)


def test_exact_and_hashed_keys_both_covered():
    # small n: wide keys are hashed to log2(n) + extra bits; a 16-bit key stays exact
    small = search_layout.Layout.make(64, 1, 4).plan(50)
    assert small.hashed.all()
    exact = search_layout.Layout.make(64, 3, 4).plan(600)
    assert not exact.hashed.any()
    rng = np.random.default_rng(5)
    for n, k, b in ((50, 1, 4), (600, 3, 4)):
        fps = planted(rng, n, 64, k)
        assert_pairs_equal(sh.near_duplicates(fps, k, blocks=b), sh.pairs_within(fps, k))


def test_blocks_straddling_words_128():
    layout = search_layout.Layout.make(128, 2, 3)  # widths 43, 43, 42: block 1 spans bit 64
    assert layout.starts[1] < 64 < layout.starts[1] + layout.widths[1]
    rng = np.random.default_rng(6)
    base = random_fps(rng, 1, 128)[0]
    # neighbours differing around the word boundary
    fps = np.array(
        [flip_bits(base, rng.choice(np.arange(40, 90), size=rng.integers(0, 4), replace=False))
         for _ in range(200)],
        dtype=np.uint64,
    )
    got = sh.near_duplicates(fps, 2, blocks=3)
    assert_pairs_equal(got, sh.pairs_within(fps, 2))


# --- adversarial sets ---------------------------------------------------------------------


@pytest.mark.parametrize("bits", [64, 128])
def test_all_identical(bits):
    rng = np.random.default_rng(7)
    n = 500
    fps = np.repeat(random_fps(rng, 1, bits), n, axis=0)
    got = sh.near_duplicates(fps, 3)
    i, j = np.triu_indices(n, 1)
    order = np.lexsort((j, i))
    np.testing.assert_array_equal(got.i, i[order])
    np.testing.assert_array_equal(got.j, j[order])
    assert not got.distance.any()


def test_huge_identical_groups_refused_with_count():
    rng = np.random.default_rng(8)
    groups = random_fps(rng, 3, 64)
    fps = np.concatenate([np.repeat(groups, 20_000), random_fps(rng, 1000, 64)])
    expected = 3 * 20_000 * 19_999 // 2
    with pytest.raises(sh.TooManyPairsError, match=f"{expected:,} pairs") as err:
        sh.near_duplicates(fps, 3, max_pairs=10**6)
    assert "clusters" in str(err.value)
    assert isinstance(err.value, ValueError)


def test_max_pairs_counts_before_materialising():
    rng = np.random.default_rng(9)
    fps = planted(rng, 500, 64, 3)
    total = len(sh.pairs_within(fps, 3))
    assert len(sh.near_duplicates(fps, 3, max_pairs=total)) == total
    with pytest.raises(sh.TooManyPairsError, match=f"would return {total:,} pairs"):
        sh.near_duplicates(fps, 3, max_pairs=total - 1)
    with pytest.raises(sh.TooManyPairsError, match=f"would return {total:,} pairs"):
        sh.near_duplicates(fps, 3, max_pairs=total - 1, blocks=4)


def test_identical_groups_expand_to_all_pairs():
    rng = np.random.default_rng(10)
    base = planted(rng, 150, 64, 3)
    fps = np.concatenate([base, base[:40], base[:10], base[5:8]])
    fps = fps[rng.permutation(fps.shape[0])]
    for blocks in (None, 4, 5):
        got = sh.near_duplicates(fps, 3, blocks=blocks)
        assert_pairs_equal(got, sh.pairs_within(fps, 3))


@pytest.mark.parametrize("bits", [64, 128])
def test_near_identical_groups(bits):
    rng = np.random.default_rng(11)
    centers = random_fps(rng, 4, bits)
    rows = []
    for c in centers:
        for _ in range(150):
            rows.append(flip_bits(c, rng.choice(bits, size=rng.integers(0, 3), replace=False)))
    fps = np.concatenate([np.array(rows, dtype=np.uint64), random_fps(rng, 200, bits)])
    for blocks in (None, 4, 6):
        got = sh.near_duplicates(fps, 3, blocks=blocks)
        assert_pairs_equal(got, sh.pairs_within(fps, 3))


@pytest.mark.parametrize("bits, k, blocks", [(64, 3, 5), (64, 2, 4), (128, 3, 6), (128, 5, 7)])
def test_differences_inside_one_block(bits, k, blocks):
    rng = np.random.default_rng(12)
    layout = search_layout.Layout.make(bits, k, blocks)
    base = random_fps(rng, 1, bits)[0]
    rows = []
    for x in range(blocks):
        span = np.arange(layout.starts[x], layout.starts[x] + layout.widths[x])
        for _ in range(40):
            rows.append(flip_bits(base, rng.choice(span, size=rng.integers(0, 6), replace=False)))
    fps = np.array(rows, dtype=np.uint64)
    got = sh.near_duplicates(fps, k, blocks=blocks)
    assert_pairs_equal(got, sh.pairs_within(fps, k))
    assert_each_pair_once(got)


def clustered(rng, n, bits, varying):
    """Distinct fingerprints equal outside ``varying`` random low bits: runs sharing a
    key are huge."""
    shape = (n,) if bits == 64 else (n, 2)
    fps = np.broadcast_to(random_fps(rng, 1, bits)[0], shape).copy()
    low = rng.integers(0, 2**varying, size=n, dtype=np.uint64)
    if bits == 64:
        fps = (fps & ~np.uint64(2**varying - 1)) | low
    else:  # vary the low bits of both words
        fps[:, 0] = (fps[:, 0] & ~np.uint64(2**varying - 1)) | low
        fps[:, 1] ^= low << np.uint64(7)
    return np.unique(fps, axis=0) if bits == 128 else np.unique(fps)


def count_refinements(monkeypatch) -> list:
    calls = []
    original = search_engine.refine_group

    def spy(*args):
        calls.append(args[1].shape[0])
        return original(*args)

    monkeypatch.setattr(search_engine, "refine_group", spy)
    return calls


@pytest.mark.filterwarnings("ignore::simhash_nb.ChainingWarning")  # chains on purpose
@pytest.mark.parametrize("bits, k", [(64, 1), (64, 3), (64, 5), (128, 3), (128, 6)])
def test_big_runs_are_refined(bits, k, monkeypatch):
    rng = np.random.default_rng(30 + k)
    fps = clustered(rng, 2000, bits, 16)
    fps = np.concatenate([fps, fps[:40], planted(rng, 300, bits, k)])  # duplicates too
    against = np.concatenate([fps[::7], clustered(rng, 300, bits, 16)])
    config["search_big_run_pairs"] = 200
    refined = count_refinements(monkeypatch)
    for blocks in (None, k + 2):
        got = sh.near_duplicates(fps, k, blocks=blocks)
        assert_pairs_equal(got, sh.pairs_within(fps, k))
        assert_each_pair_once(got)
        got = sh.near_duplicates(fps, k, blocks=blocks, against=against)
        assert_pairs_equal(got, sh.pairs_within(fps, k, against))
    total = len(sh.pairs_within(fps, k))
    with pytest.raises(sh.TooManyPairsError, match=f"would return {total:,} pairs"):
        sh.near_duplicates(fps, k, max_pairs=total - 1)
    np.testing.assert_array_equal(sh.clusters(fps, k), _labels(fps, k))
    assert len(refined) > 0


def _labels(fps, k):
    p = sh.pairs_within(fps, k)
    return np.array(naive.clusters(len(fps), zip(p.i, p.j)))


def test_refinement_with_colliding_hashed_keys(monkeypatch):
    rng = np.random.default_rng(31)
    fps = np.concatenate([clustered(rng, 1500, 64, 14), planted(rng, 500, 64, 3)])
    config["search_hash_extra_bits"] = -8  # 3-bit hashed keys: runs mix many keys
    config["search_big_run_pairs"] = 30
    refined = count_refinements(monkeypatch)
    for blocks in (4, 6):
        assert search_layout.Layout.make(64, 3, blocks).plan(len(fps)).hashed.all()
        got = sh.near_duplicates(fps, 3, blocks=blocks)
        assert_pairs_equal(got, sh.pairs_within(fps, 3))
    assert len(refined) > 0


def test_one_big_run_at_default_settings(monkeypatch):
    # 30k distinct fingerprints differing only in their low 22 bits: tables whose key
    # avoids those bits see one run of 4.5e8 candidate pairs; refining keeps it fast
    rng = np.random.default_rng(32)
    fps = clustered(rng, 30_000, 64, 22)
    refined = count_refinements(monkeypatch)
    got = sh.near_duplicates(fps, 3)
    assert_pairs_equal(got, sh.pairs_within(fps, 3))
    assert max(refined) > 20_000


# --- against= ----------------------------------------------------------------------------


@pytest.mark.parametrize("bits, k, blocks", [(64, 3, None), (64, 3, 5), (64, 0, None),
                                             (128, 4, None), (128, 4, 6), (128, 0, None)])
def test_against(bits, k, blocks):
    rng = np.random.default_rng(13)
    a = planted(rng, 300, bits, k)
    b = np.concatenate([
        a[:30],  # identical across the sets
        np.array([flip_bits(x, rng.choice(bits, size=2, replace=False)) for x in a[30:80]]),
        random_fps(rng, 200, bits),
    ])
    b = np.concatenate([b, b[:20]])  # duplicates inside b
    a = np.concatenate([a, a[:5]])  # and inside a
    got = sh.near_duplicates(a, k, blocks=blocks, against=b)
    assert_pairs_equal(got, sh.pairs_within(a, k, b))
    assert_each_pair_once(got, self_join=False)


def test_against_matches_pure_python():
    rng = np.random.default_rng(14)
    a, b = planted(rng, 30, 64, 2), planted(rng, 25, 64, 2)
    b[:5] = a[:5]
    got = sh.near_duplicates(a, 2, against=b, blocks=3)
    ref = naive.pairs_within(a.tolist(), 2, b.tolist())
    assert list(zip(got.i.tolist(), got.j.tolist(), got.distance.tolist())) == ref


@given(
    data=st.data(),
    bits=st.sampled_from([64, 128]),
    n=st.integers(0, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_small_sets(data, bits, n, seed):
    k = data.draw(st.integers(0, 12 if bits == 64 else 20), label="k")
    blocks = data.draw(
        st.one_of(st.none(), st.integers(max(k + 1, bits // 64), min(k + 3, bits))), label="b"
    )
    rng = np.random.default_rng(seed)
    fps = planted(rng, n, bits, k, per_distance=1) if n else random_fps(rng, 0, bits)
    if search_layout.table_count(blocks or k + 1, k) > config["max_tables"]:
        return
    got = sh.near_duplicates(fps, k, blocks=blocks)
    if n == 0:  # (sh.pairs_within refuses empty 128-bit input)
        assert len(got) == 0 and len(sh.near_duplicates(fps, k, against=fps)) == 0
        return
    assert_pairs_equal(got, sh.pairs_within(fps, k))
    against = planted(rng, 10, bits, k, per_distance=1)
    got = sh.near_duplicates(fps, k, blocks=blocks, against=against)
    assert_pairs_equal(got, sh.pairs_within(fps, k, against))


# --- edges and errors ----------------------------------------------------------------------


def test_empty_and_single():
    for fps in (np.empty(0, np.uint64), np.empty((0, 2), np.uint64), np.ones(1, np.uint64)):
        p = sh.near_duplicates(fps, 3)
        assert len(p) == 0 and p.i.dtype == np.int64 and p.distance.dtype == np.uint8
    p = sh.near_duplicates(np.ones(3, np.uint64), 3, against=np.empty(0, np.uint64))
    assert len(p) == 0


def test_n_jobs_gives_same_result():
    rng = np.random.default_rng(15)
    fps = planted(rng, 3000, 64, 3)
    assert_pairs_equal(sh.near_duplicates(fps, 3, n_jobs=1), sh.near_duplicates(fps, 3))


def test_docstring_example():
    fps = np.array([0b0000, 0b0111, 0b1111_0000, 0b0001, 0b0000], dtype=np.uint64)
    p = sh.near_duplicates(fps, k=1)
    assert p.i.tolist() == [0, 0, 3] and p.j.tolist() == [3, 4, 4]


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(k=-1), ValueError, "k must be in"),
        (dict(k=64), ValueError, "k must be in"),
        (dict(k=2.0), TypeError, "k must be an integer"),
        (dict(k=3, blocks=3), ValueError, "greater than k=3"),
        (dict(k=3, blocks=2), ValueError, "greater than k=3"),
        (dict(k=3, blocks=65), ValueError, "at most bits=64"),
        (dict(k=3, blocks=4.0), TypeError, "blocks must be an integer"),
        (dict(k=10, blocks=40), ValueError, "tables"),
        (dict(k=3, max_pairs=-1), ValueError, "max_pairs"),
        (dict(k=3, n_jobs=0), ValueError, "n_jobs"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    fps = np.arange(10, dtype=np.uint64)
    with pytest.raises(exc, match=match):
        sh.near_duplicates(fps, **kwargs)


def test_bad_fingerprints():
    with pytest.raises(TypeError, match="uint64"):
        sh.near_duplicates(np.arange(10, dtype=np.int64), 3)
    with pytest.raises(TypeError, match="uint64"):
        sh.near_duplicates(np.zeros(10), 3)
    with pytest.raises(ValueError, match="shape"):
        sh.near_duplicates(np.zeros((10, 3), np.uint64), 3)
    with pytest.raises(ValueError, match="128-bit"):
        sh.near_duplicates(np.zeros(10, np.uint64), 3, against=np.zeros((4, 2), np.uint64))
    with pytest.raises(ValueError, match="k must be in"):
        sh.near_duplicates(np.zeros((10, 2), np.uint64), 128)
    with pytest.raises(ValueError, match="at least 2"):
        sh.near_duplicates(np.zeros((10, 2), np.uint64), 0, blocks=1)


# --- table design --------------------------------------------------------------------------


def test_table_design_choices():
    d = sh.table_design(1_000_000, 3)
    assert d.method == "tables" and d.blocks in (4, 5, 6)
    assert d.tables == search_layout.table_count(d.blocks, 3)
    assert d.cost > 0 and d.candidates > 0
    big = sh.table_design(100_000_000, 3)
    assert big.blocks >= d.blocks  # more rows: more tables for fewer candidates
    assert sh.table_design(100, 3).method == "brute"
    assert sh.table_design(10**6, 0).method == "exact"
    assert sh.table_design(10**6, 0, n_against=10).method in ("tables", "brute")
    forced = sh.table_design(10, 3, blocks=8)
    assert (forced.method, forced.blocks, forced.tables) == ("tables", 8, 56)
    assert forced.key_bits == 5 * 8
    d128 = sh.table_design(10**6, 20, bits=128)
    assert d128.method in ("tables", "dense", "brute")


def test_table_design_cost_model_is_consistent():
    # the chosen design is the cheapest of those the model compares
    n = 2_000_000
    chosen = sh.table_design(n, 3)
    for b in range(4, 12):
        assert sh.table_design(n, 3, blocks=b).cost >= chosen.cost - 1e-12
    # expected candidates shrink as the key grows
    c = [sh.table_design(n, 3, blocks=b).candidates for b in range(4, 9)]
    assert all(x > y for x, y in zip(c, c[1:]))


def test_table_design_errors():
    with pytest.raises(ValueError, match="bits"):
        sh.table_design(10, 3, bits=32)
    with pytest.raises(ValueError, match="n must be"):
        sh.table_design(-1, 3)
    with pytest.raises(ValueError, match="greater than k"):
        sh.table_design(10, 3, blocks=3)


def test_ownership_is_a_partition():
    """A pair agreeing on >= b - k blocks is owned by exactly one table: the first."""
    import itertools

    from simhash_nb._kernels import tables as tk

    for bits, k, b in ((64, 3, 5), (64, 2, 6), (128, 4, 7)):
        layout = search_layout.Layout.make(bits, k, b)
        sels = [tuple(s) for s in layout.sels.tolist()]
        assert sels == sorted(sels) and len(sels) == search_layout.table_count(b, k)
        x = np.zeros((1, bits // 64), dtype=np.uint64)
        for r in range(b - k, b + 1):
            for agree in itertools.combinations(range(b), r):
                y = x.copy()
                for blk in set(range(b)) - set(agree):  # one differing bit per other block
                    bit = int(layout.starts[blk])
                    y[0, bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
                owners = [
                    t for t in range(len(sels))
                    if tk.is_owner(x, 0, y, 0, layout.sels[t], layout.block_masks)
                ]
                assert [sels[t] for t in owners] == [agree[: b - k]]


def test_sorted_pairs_packed_keys_match_lexsort():
    from simhash_nb._core.search.engine import sorted_pairs

    rng = np.random.default_rng(5)
    i = rng.integers(0, 2**28 - 1, 5000)
    j = i + rng.integers(1, 2**27, 5000) % (2**28 - 1 - i).clip(1)
    d = rng.integers(0, 129, 5000).astype(np.uint8)
    got = sorted_pairs(i, j, d)
    order = np.lexsort((j, i))
    assert np.array_equal(got.i, i[order]) and np.array_equal(got.j, j[order])
    assert np.array_equal(got.distance, d[order])
    assert got.i.dtype == np.int64 and got.distance.dtype == np.uint8
    big = sorted_pairs(np.array([2**29, 3]), np.array([2**29 + 1, 4]), np.array([1, 2], np.uint8))
    assert big.i.tolist() == [3, 2**29] and big.distance.tolist() == [2, 1]  # argsort path
