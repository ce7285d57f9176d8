"""SimhashIndex: batches, queries against brute force, removal, persistence."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import simhash_nb as sh
from simhash_nb._core import index as index_mod
from simhash_nb.config import reset_config

from . import naive
from .test_search import flip_bits, planted, random_fps


@pytest.fixture(autouse=True)
def _reset():
    yield
    reset_config()


def brute_matches(stored, ids, queries, k):
    """(query, id, distance) sorted by query, distance, id, from sh.pairs_within."""
    if len(stored) == 0 or len(queries) == 0:
        return [], [], []
    p = sh.pairs_within(queries, k, stored)
    got_ids = np.asarray(ids)[p.j]
    order = np.lexsort((got_ids, p.distance, p.i))
    return p.i[order].tolist(), got_ids[order].tolist(), p.distance[order].tolist()


def as_lists(m: sh.Matches):
    return m.query.tolist(), m.id.tolist(), m.distance.tolist()


def queries_near(rng, stored, bits, m, max_d):
    rows = stored[rng.integers(0, len(stored), m)]
    out = [flip_bits(r, rng.choice(bits, size=rng.integers(0, max_d + 1), replace=False))
           for r in rows]
    return np.concatenate([np.array(out, dtype=np.uint64), random_fps(rng, 20, bits)])


@pytest.mark.parametrize("bits, k", [(64, 3), (64, 0), (64, 6), (128, 3), (128, 10)])
def test_batches_equal_one_batch_and_brute_force(bits, k):
    rng = np.random.default_rng(20 + k)
    fps = planted(rng, 3000, bits, k)
    ids = rng.permutation(10**6)[: len(fps)]
    one = sh.SimhashIndex(k, bits)
    one.add(fps, ids)
    many = sh.SimhashIndex(k, bits)
    for part in np.array_split(np.arange(len(fps)), [5, 6, 100, 1000, 1001, 2500]):
        many.add(fps[part], ids[part])
    assert len(many._runs) > 1
    q = queries_near(rng, fps, bits, 200, k + 1)
    want = brute_matches(fps, ids, q, k)
    assert as_lists(one.query(q)) == want
    assert as_lists(many.query(q)) == want
    for kq in range(k):  # smaller k than built for
        assert as_lists(many.query(q, k=kq)) == brute_matches(fps, ids, q, kq)


def test_query_matches_pure_python_reference():
    rng = np.random.default_rng(21)
    fps = planted(rng, 40, 64, 3)
    ids = np.arange(100, 100 + len(fps))
    index = sh.SimhashIndex(3, blocks=5)
    index.add(fps[:20], ids[:20])
    index.add(fps[20:], ids[20:])
    q = queries_near(rng, fps, 64, 10, 4)
    got = list(zip(*as_lists(index.query(q))))
    assert got == naive.index_query(fps.tolist(), ids.tolist(), q.tolist(), 3)


def test_forced_blocks_and_identical_rows():
    rng = np.random.default_rng(22)
    base = random_fps(rng, 50, 64)
    fps = np.concatenate([base, base, np.repeat(base[:1], 100)])
    index = sh.SimhashIndex(3, blocks=7)
    index.add(fps)
    q = queries_near(rng, base, 64, 30, 3)
    assert as_lists(index.query(q)) == brute_matches(fps, np.arange(len(fps)), q, 3)


def test_default_k_is_the_library_default(tmp_path):
    # the same k as sh.near_duplicates(fps) and sh.clusters(fps): similarity 0.7
    assert sh.SimhashIndex().k == sh.k_for_similarity(0.7) == 12
    assert sh.SimhashIndex(bits=128).k == sh.k_for_similarity(0.7, 128) == 25
    spec = sh.FingerprintSpec.from_options(bits=128)
    assert sh.SimhashIndex(spec=spec).k == 25
    assert sh.SimhashIndex(similarity=0.9).k == sh.k_for_similarity(0.9)
    try:
        sh.config["default_similarity"] = 0.9
        assert sh.SimhashIndex().k == sh.k_for_similarity(0.9)
    finally:
        reset_config()
    with pytest.raises(ValueError, match="pass k or similarity, not both"):
        sh.SimhashIndex(3, similarity=0.7)
    # finds what near_duplicates finds at its default k, and keeps k through a save
    rng = np.random.default_rng(26)
    fps = planted(rng, 300, 64, 12, per_distance=10)
    index = sh.SimhashIndex()
    index.add(fps)
    got = index.query(fps)
    pairs = sh.near_duplicates(fps)
    assert int((got.query < got.id).sum()) == len(pairs)
    index.save(tmp_path / "i.npz")
    assert sh.SimhashIndex.load(tmp_path / "i.npz").k == 12


def test_default_ids_and_counter():
    index = sh.SimhashIndex()
    index.add(np.arange(3, dtype=np.uint64))
    index.add(np.arange(3, 5, dtype=np.uint64), ids=[10, 11])
    index.add(np.arange(5, 7, dtype=np.uint64))
    assert index.ids.tolist() == [0, 1, 2, 10, 11, 12, 13]
    assert len(index) == 7 and 12 in index and 3 not in index and "x" not in index
    np.testing.assert_array_equal(index.fingerprints, np.arange(7, dtype=np.uint64))


def test_bad_ids():
    index = sh.SimhashIndex()
    index.add(np.arange(3, dtype=np.uint64), ids=[5, 6, 7])
    fps = np.arange(2, dtype=np.uint64)
    with pytest.raises(ValueError, match="2 fingerprints"):
        index.add(fps, ids=[1, 2, 3])
    with pytest.raises(ValueError, match="duplicated within the batch: \\[4\\]"):
        index.add(fps, ids=[4, 4])
    with pytest.raises(ValueError, match="already in the index: \\[6\\]"):
        index.add(fps, ids=[6, 9])
    with pytest.raises(TypeError, match="integers"):
        index.add(fps, ids=[1.5, 2.5])
    with pytest.raises(ValueError, match="one-dimensional"):
        index.add(fps, ids=[[1, 2]])
    with pytest.raises(ValueError, match="int64"):
        index.add(fps, ids=np.array([2**63, 1], dtype=np.uint64))
    assert len(index) == 3  # nothing was added by the failed calls


def test_bad_fingerprints_and_spec():
    spec = sh.FingerprintSpec(bits=128)
    index = sh.SimhashIndex(k=3, spec=spec)
    assert index.bits == 128
    with pytest.raises(ValueError, match="64-bit fingerprints but this index holds 128"):
        index.add(np.arange(3, dtype=np.uint64))
    with pytest.raises(TypeError, match="uint64"):
        index.add(np.zeros((3, 2), dtype=np.int64))
    with pytest.raises(sh.SpecMismatchError, match="ngram"):
        index.add(np.zeros((3, 2), np.uint64), spec=spec.replace(ngram=spec.ngram + 1))
    index.add(np.zeros((3, 2), np.uint64), spec=spec)
    with pytest.raises(sh.SpecMismatchError):
        index.query(np.zeros((1, 2), np.uint64), spec=spec.replace(seed=1))
    with pytest.raises(ValueError, match="64-bit"):
        index.query(np.zeros(1, np.uint64))
    with pytest.raises(ValueError, match="built for k <= 3"):
        index.query(np.zeros((1, 2), np.uint64), k=4)
    with pytest.raises(ValueError, match="k must be in"):
        index.query(np.zeros((1, 2), np.uint64), k=-1)
    with pytest.raises(ValueError, match="does not match"):
        sh.SimhashIndex(bits=64, spec=spec)
    with pytest.raises(ValueError, match="k must be in"):
        sh.SimhashIndex(k=64)
    with pytest.raises(ValueError, match="greater than k"):
        sh.SimhashIndex(k=3, blocks=3)
    with pytest.raises(ValueError, match="bits must be"):
        sh.SimhashIndex(bits=32)
    with pytest.raises(TypeError, match="FingerprintSpec"):
        sh.SimhashIndex(spec="char")


def test_remove_and_readd():
    rng = np.random.default_rng(23)
    fps = planted(rng, 500, 64, 3)
    ids = np.arange(len(fps)) * 3
    index = sh.SimhashIndex(3)
    index.add(fps[:300], ids[:300])
    index.add(fps[300:], ids[300:])
    gone = ids[rng.choice(len(ids), 100, replace=False)]
    index.remove(gone)
    assert len(index) == len(ids) - 100
    assert not any(int(g) in index for g in gone)
    keep = ~np.isin(ids, gone)
    q = queries_near(rng, fps, 64, 100, 3)
    assert as_lists(index.query(q)) == brute_matches(fps[keep], ids[keep], q, 3)
    with pytest.raises(KeyError, match="not in the index"):
        index.remove([gone[0], ids[keep][0]])
    assert ids[keep][0] in index  # nothing removed by the failed call
    back = np.isin(ids, gone)
    index.add(fps[back], ids[back])
    assert len(index) == len(ids)
    assert as_lists(index.query(q)) == brute_matches(fps, ids, q, 3)
    index.remove([])


def test_compaction_after_many_removals():
    rng = np.random.default_rng(24)
    fps = planted(rng, 1000, 64, 3)
    index = sh.SimhashIndex(3)
    index.add(fps)
    ids = np.arange(len(fps))
    index.remove(ids[::2])
    index.remove(ids[1::4])
    assert index._total == len(index)  # rebuilt from the live rows
    keep = np.ones(len(fps), bool)
    keep[::2] = keep[1::4] = False
    q = queries_near(rng, fps, 64, 100, 3)
    assert as_lists(index.query(q)) == brute_matches(fps[keep], ids[keep], q, 3)
    index.remove(index.ids)
    assert len(index) == 0 and len(index.query(q)) == 0


def test_adding_does_not_rebuild_everything():
    rng = np.random.default_rng(25)
    index = sh.SimhashIndex(3)
    index.add(random_fps(rng, 10_000, 64))
    big = index._runs[0]
    for _ in range(20):
        index.add(random_fps(rng, 50, 64))
    assert index._runs[0] is big  # the large sorted run was never re-sorted
    sizes = [r.size for r in index._runs]
    assert len(sizes) <= 8 and sum(sizes) == 11_000


def test_many_small_adds_keep_few_runs():
    rng = np.random.default_rng(26)
    fps = random_fps(rng, 3000, 64)
    index = sh.SimhashIndex(3)
    for x in range(0, 3000, 7):
        index.add(fps[x : x + 7])
    assert len(index._runs) <= 2 * np.log2(3000)
    q = queries_near(rng, fps, 64, 50, 3)
    assert as_lists(index.query(q)) == brute_matches(fps, np.arange(3000), q, 3)


def test_matches_object():
    index = sh.SimhashIndex(k=2)
    index.add(np.array([0b000, 0b111], dtype=np.uint64), ids=[10, 20])
    m = index.query(np.array([0b001, 0b110, 0xFF00], dtype=np.uint64))
    assert len(m) == 4 and m.n_queries == 3
    q, ids, d = m
    assert q.tolist() == [0, 0, 1, 1] and ids.tolist() == [10, 20, 20, 10]
    assert d.tolist() == [1, 2, 1, 2]
    split = m.split()
    assert [x.tolist() for x, _ in split] == [[10, 20], [20, 10], []]
    assert [x.tolist() for _, x in split] == [[1, 2], [1, 2], []]
    assert m.to_frame().columns.tolist() == ["query", "id", "distance"]
    empty = sh.SimhashIndex().query(np.empty(0, np.uint64))
    assert len(empty) == 0 and empty.split() == []


# --- persistence ---------------------------------------------------------------------------


def filled_index(bits=64, spec=None):
    rng = np.random.default_rng(27)
    fps = planted(rng, 2000, bits, 3)
    index = sh.SimhashIndex(3, bits, spec)
    index.add(fps[:1500], np.arange(1500) + 7)
    index.add(fps[1500:], np.arange(1500, len(fps)) + 7)
    index.remove([7, 8, 100])
    return index, fps, rng


@pytest.mark.parametrize("bits", [64, 128])
def test_save_load_roundtrip(tmp_path, bits):
    spec = sh.FingerprintSpec(bits=bits, tokenizer="word", ngram=2)
    index, fps, rng = filled_index(bits, spec)
    path = tmp_path / "index.simhash"
    index.save(path)
    loaded = sh.SimhashIndex.load(str(path))
    assert loaded.spec == spec and loaded.k == 3 and loaded.bits == bits
    assert len(loaded) == len(index)
    np.testing.assert_array_equal(loaded.ids, index.ids)
    np.testing.assert_array_equal(loaded.fingerprints, index.fingerprints)
    q = queries_near(rng, fps, bits, 200, 3)
    assert as_lists(loaded.query(q)) == as_lists(index.query(q))
    # the id counter survives, and adding to a loaded index keeps its sorted run
    run = loaded._runs[0]
    loaded.add(fps[:5])
    assert loaded._runs[0] is run
    assert loaded.ids[-5:].tolist() == list(range(index._next_id, index._next_id + 5))
    assert not list(tmp_path.glob("*.tmp"))


def test_save_empty_and_overwrite(tmp_path):
    path = tmp_path / "i.npz"
    sh.SimhashIndex(k=2).save(path)
    assert len(sh.SimhashIndex.load(path)) == 0
    index, _, _ = filled_index()
    index.save(path)  # replaces the old file
    assert len(sh.SimhashIndex.load(path)) == len(index)


def test_truncated_file(tmp_path):
    index, _, _ = filled_index()
    path = tmp_path / "i.npz"
    index.save(path)
    data = path.read_bytes()
    for cut in (10, len(data) // 2, len(data) - 30):
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="cannot read a SimhashIndex"):
            sh.SimhashIndex.load(path)


def test_tampered_payload(tmp_path):
    index, _, _ = filled_index()
    path = tmp_path / "i.npz"
    index.save(path)
    data = bytearray(path.read_bytes())
    pos = data.find(b"fingerprints.npy") + 400  # inside the fingerprint array
    data[pos] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="cannot read|checksum"):
        sh.SimhashIndex.load(path)


def write_raw(path, header, fps, ids, fix_checksum=True):
    if fix_checksum:
        header = dict(header)
        header.pop("sha256", None)
        header["sha256"] = index_mod._checksum(header, fps, ids)
    blob = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with open(path, "wb") as f:
        np.savez(f, header=blob, fingerprints=fps, ids=ids)


def read_raw(path):
    with np.load(path) as z:
        return json.loads(z["header"].tobytes()), z["fingerprints"], z["ids"]


def test_consistent_but_altered_files(tmp_path):
    index, _, _ = filled_index()
    path = tmp_path / "i.npz"
    index.save(path)
    header, fps, ids = read_raw(path)
    bad = tmp_path / "bad.npz"
    # a changed id with the old checksum
    ids2 = ids.copy()
    ids2[0] += 1
    write_raw(bad, header, fps, ids2, fix_checksum=False)
    with pytest.raises(ValueError, match="checksum mismatch"):
        sh.SimhashIndex.load(bad)
    # a changed header field with the old checksum
    write_raw(bad, {**header, "k": 2}, fps, ids, fix_checksum=False)
    with pytest.raises(ValueError, match="checksum mismatch"):
        sh.SimhashIndex.load(bad)
    # another format version, even with a valid checksum
    write_raw(bad, {**header, "version": 2}, fps, ids)
    with pytest.raises(ValueError, match="version 2 is not supported"):
        sh.SimhashIndex.load(bad)
    # not an index at all
    write_raw(bad, {"format": "something else"}, fps, ids, fix_checksum=False)
    with pytest.raises(ValueError, match="not a simhash_nb SimhashIndex file"):
        sh.SimhashIndex.load(bad)
    # wrong shapes and types
    write_raw(bad, {**header, "count": header["count"] + 1}, fps, ids)
    with pytest.raises(ValueError, match="wrong type or shape"):
        sh.SimhashIndex.load(bad)
    write_raw(bad, header, fps.astype(np.int64), ids)
    with pytest.raises(ValueError, match="wrong type or shape"):
        sh.SimhashIndex.load(bad)
    # duplicated ids with a valid checksum are still refused
    ids3 = ids.copy()
    ids3[1] = ids3[0]
    write_raw(bad, header, fps, ids3)
    with pytest.raises(ValueError, match="duplicated"):
        sh.SimhashIndex.load(bad)
    # a pickled object array is never unpickled
    with open(bad, "wb") as f:
        np.savez(f, header=np.array([{"x": 1}], dtype=object), fingerprints=fps, ids=ids)
    with pytest.raises(ValueError, match="cannot read"):
        sh.SimhashIndex.load(bad)
    bad.write_bytes(b"not a zip file at all")
    with pytest.raises(ValueError, match="cannot read"):
        sh.SimhashIndex.load(bad)
    with pytest.raises(FileNotFoundError):
        sh.SimhashIndex.load(tmp_path / "missing.npz")


def test_failed_save_keeps_old_file(tmp_path, monkeypatch):
    index, _, _ = filled_index()
    path = tmp_path / "i.npz"
    sh.SimhashIndex(k=3).save(path)
    before = path.read_bytes()

    def broken_savez(f, **arrays):
        f.write(b"PK\x03\x04 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(index_mod.np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        index.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["i.npz"]
    assert len(sh.SimhashIndex.load(path)) == 0
