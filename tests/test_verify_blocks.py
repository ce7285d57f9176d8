"""Blocks of candidate pairs counted by distinct documents (``_kernels/verify_blocks``)
against the naive twin, and what they change in the spilled store's reads."""

from __future__ import annotations

import weakref

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from simhash_nb._core.pipeline import store as pipeline_store
from simhash_nb._kernels.verify_blocks import block_ends
from tests import naive

pairs_lists = st.lists(st.tuples(st.integers(0, 15), st.integers(0, 15),
                                 st.integers(1, 40), st.integers(1, 40)), max_size=60)


@given(pairs_lists, st.integers(1, 200), st.booleans())
def test_block_ends_equal_the_naive_greedy_blocks(pairs, limit, same_store):
    i = np.array([p[0] for p in pairs], dtype=np.int64)
    j = np.array([p[1] for p in pairs], dtype=np.int64)
    need_i = np.array([p[2] for p in pairs], dtype=np.int64)
    need_j = np.array([p[3] for p in pairs], dtype=np.int64)
    marks = np.full(16, 6, dtype=np.int32)  # ids of earlier blocks, below 7
    other = marks if same_store else np.full(16, 3, dtype=np.int32)
    ends, after = block_ends(i, j, need_i, need_j, marks, other, 7, limit)
    assert ends.tolist() == naive.block_ends(i.tolist(), j.tolist(), need_i.tolist(),
                                             need_j.tolist(), limit, same_store)
    assert after == 7 + len(ends) + (len(ends) == 0)


def test_blocks_read_each_document_once_and_stay_within_the_budget():
    """Pairs that share documents: a block counts each once, so the pairs of a few
    documents fill one block where counting per pair needed several; every block's
    distinct documents fit the budget, and consecutive queries start fresh."""
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 50, 400)
    indptr = np.concatenate([[0], np.cumsum(sizes)])
    hashes = rng.integers(0, 2**64, int(indptr[-1]), dtype=np.uint64)
    i = np.sort(rng.integers(0, 40, 3000))
    j = rng.integers(40, 400, 3000)
    with pipeline_store.ShingleStore(0, 4096) as s:
        s.append(indptr, hashes)
        s.seal()
        for _ in range(2):  # block ids go on from one call to the next
            blocks = list(s._blocks(i, j))
            assert blocks[0].start == 0 and blocks[-1].stop == i.shape[0]
            for b in blocks:
                docs = np.unique(np.concatenate([i[b], j[b]]))
                assert ((sizes[docs] + 1) * 8).sum() <= 4096 or b.stop - b.start == 1
            per_pair = np.cumsum((sizes[i] + sizes[j] + 2) * 8)[-1] / 4096
            assert len(blocks) < 0.6 * per_pair


def test_a_block_is_freed_before_the_next_one_is_read(monkeypatch):
    """The budget holds one block of documents read back (``verify_bytes``): each block's
    arrays are gone when the next block is read, in every read of a spilled store (prefix
    pass, verification, and against another store). A loop variable that kept the last
    block held two at once (a 2M-document run at 1GB peaked at 1.01-1.06 GB, now 0.87)."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 50, 400)
    indptr = np.concatenate([[0], np.cumsum(sizes)])
    hashes = rng.integers(0, 2**64, int(indptr[-1]), dtype=np.uint64)
    hashes[indptr[1:-1]] = 7  # a shared first hash: prefixes meet, so pairs are read
    i = np.sort(rng.integers(0, 40, 3000))
    j = rng.integers(40, 400, 3000)
    read, blocks = pipeline_store.ShingleStore.gather, pipeline_store.ShingleStore._blocks
    alive, starts = [], []

    def gather(self, docs, counts=None):
        got = read(self, docs, counts)
        alive.append(weakref.ref(got[1]))
        return got

    def each_block(self, *args):
        for s in blocks(self, *args):  # a block starts: what earlier ones read is gone
            starts.append(sum(ref() is not None for ref in alive))
            yield s

    monkeypatch.setattr(pipeline_store.ShingleStore, "gather", gather)
    monkeypatch.setattr(pipeline_store.ShingleStore, "_blocks", each_block)
    with pipeline_store.ShingleStore(0, 4096) as s, pipeline_store.ShingleStore(0, 4096) as t:
        for store in (s, t):
            store.append(indptr, hashes)
            store.seal()
        docs = [hashes[a:b] for a, b in zip(indptr[:-1], indptr[1:], strict=True)]
        want = [naive.jaccard(docs[a], docs[b]) for a, b in zip(i, j, strict=True)]
        got = s.similarities(i, j, 0.0)
        np.testing.assert_allclose(got, want)
        np.testing.assert_allclose(s.similarities_with(t, i, j, 0.0), want)
    assert len(starts) > 20 and len(alive) >= len(starts)  # many blocks, each read back
    assert max(starts) == 0, starts

