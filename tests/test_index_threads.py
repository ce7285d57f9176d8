"""SimhashIndex under concurrent writers: queries, save and load see a consistent index."""

from __future__ import annotations

import threading

import numpy as np

import simhash_nb as sh


def _near(rng, rows: np.ndarray) -> np.ndarray:
    """Each row with 2 random bits flipped."""
    b1 = rng.integers(0, 32, rows.shape[0]).astype(np.uint64)
    b2 = rng.integers(32, 64, rows.shape[0]).astype(np.uint64)
    return rows ^ (np.uint64(1) << b1) ^ (np.uint64(1) << b2)


def _base(rng, n):
    fps = rng.integers(0, 2**64, n, dtype=np.uint64)
    index = sh.SimhashIndex(k=3)
    index.add(fps)
    return index, fps


def _check_planted(index, fps, rng, m=1000):
    """Every query 2 bits from a row that is never removed finds that row."""
    rows = rng.integers(0, fps.shape[0], m)
    got = index.query(_near(rng, fps[rows]))
    found = np.zeros(m, dtype=bool)
    found[got.query[got.id == rows[got.query]]] = True
    return int(found.sum())


def _run_concurrently(writer, reader_check, min_batches=5):
    done = threading.Event()
    errors = []

    def target():
        try:
            writer()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            done.set()

    t = threading.Thread(target=target)
    t.start()
    results = []
    while not done.is_set() or len(results) < min_batches:
        results.append(reader_check())
    t.join()
    assert not errors, errors
    return results


def test_queries_during_adds_find_their_matches():
    rng = np.random.default_rng(1)
    index, fps = _base(rng, 10_000)  # the adds merge into this run, more than once
    extra = rng.integers(0, 2**64, (40, 500), dtype=np.uint64)

    def writer():
        for batch in extra:
            index.add(batch)

    results = _run_concurrently(writer, lambda: _check_planted(index, fps, rng))
    assert results == [1000] * len(results)
    assert len(index) == 10_000 + extra.size


def test_queries_during_removes_find_their_matches():
    rng = np.random.default_rng(2)
    index, fps = _base(rng, 20_000)
    keep = 8_000  # ids >= keep are removed, in 40 batches (the index compacts on the way)
    doomed = np.arange(keep, 20_000).reshape(40, -1)

    def writer():
        for batch in doomed:
            index.remove(batch)

    def check():
        rows = rng.integers(0, keep, 1000)
        got = index.query(_near(rng, fps[rows]))
        found = np.zeros(1000, dtype=bool)
        found[got.query[got.id == rows[got.query]]] = True
        return int(found.sum())

    results = _run_concurrently(writer, check)
    assert results == [1000] * len(results)
    assert len(index) == keep
    assert not np.isin(index.ids, doomed).any()


def test_save_and_load_while_adding(tmp_path):
    rng = np.random.default_rng(3)
    index, fps = _base(rng, 5_000)
    extra = rng.integers(0, 2**64, (30, 300), dtype=np.uint64)

    def writer():
        for batch in extra:
            index.add(batch)

    path = tmp_path / "index.npz"
    sizes = []

    def check():
        index.save(path)
        loaded = sh.SimhashIndex.load(path)
        n = len(loaded)
        sizes.append(n)
        # a prefix of the batches, complete: ids 0..n-1 with their fingerprints
        assert n >= 5_000 and (n - 5_000) % 300 == 0
        assert loaded.ids.tolist() == list(range(n))
        want = np.concatenate([fps, extra.reshape(-1)])[:n]
        assert np.array_equal(loaded.fingerprints, want)
        return _check_planted(loaded, fps, rng, 200)

    results = _run_concurrently(writer, check, min_batches=3)
    assert results == [200] * len(results)


def test_index_pickles_and_copies_despite_its_lock():
    import copy
    import pickle

    rng = np.random.default_rng(4)
    index, fps = _base(rng, 2_000)
    for clone in (pickle.loads(pickle.dumps(index)), copy.deepcopy(index)):
        assert clone.ids.tolist() == index.ids.tolist()
        assert _check_planted(clone, fps, rng, 100) == 100
        clone.add(rng.integers(0, 2**64, 10, dtype=np.uint64))  # has its own lock
        assert len(clone) == len(index) + 10
