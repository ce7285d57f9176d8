"""Waves of fewer tables than threads (a tight memory budget: one table sorted at a time)
share each table among the threads: the partition by chunks of rows, the scan by ranges
of groups; the same entries and the same pairs, in the same order, as one thread."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from simhash_nb._core.search import dense
from simhash_nb._core.search.families import pigeonhole, sampled
from simhash_nb._kernels import dense_tables as dk


def _fps(n, words, seed=0):
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, (n, words), dtype=np.uint64)
    fps[n // 2:] = fps[: n - n // 2] ^ np.uint64(0b1011)  # near pairs
    return fps


@pytest.mark.parametrize("chunks", [1, 2, 3, 7])
@pytest.mark.parametrize("words", [1, 2])
def test_partition_by_chunks_equals_the_serial_partition(chunks, words):
    fps = _fps(10_001, words)
    family = sampled(64 * words, 20, 5, 0)
    sort_bits = dense.sort_bits_for(fps.shape[0], 30)
    top = dense.top_bits_for(sort_bits)
    t = 3
    want = [np.empty(fps.shape[0], np.uint32), np.zeros((words, fps.shape[0] + dk.PAD), np.uint64),
            np.empty((1 << top) + 1, np.int64)]
    dk.partition_rows(fps, family.masks[t], family.mults[t], sort_bits, top, want[0], want[1],
                      np.empty(1 << 11, np.int64), want[2])
    got = [np.empty_like(want[0]), np.zeros_like(want[1]), np.empty_like(want[2])]
    dk.partition_chunks(fps, family.masks[t], family.mults[t], sort_bits, top, got[0], got[1],
                        np.empty((chunks, 1 << 11), np.int64), got[2])
    for a, b in zip(want, got, strict=True):
        assert np.array_equal(a, b)
    assert np.unique(want[2]).shape[0] > 100  # many groups, not one


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two threads")
@pytest.mark.parametrize("family", [sampled(128, 14, 6, 0), pigeonhole(128, 8, 10)])
def test_one_table_a_wave_shared_by_threads_gives_the_same_pairs_in_order(family):
    fps = _fps(30_000, 2)
    one_lane = (fps.shape[0] + dk.PAD) * (8 + 16 * 2)  # memory for one table at a time

    def waves(threads):
        numba.set_num_threads(threads)
        try:
            return [tuple(x.tolist() for x in w) for w in dense.dense_waves(
                fps, -1, family, 8, memory_bytes=one_lane)]
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)

    serial = waves(1)
    shared = waves(2)
    assert shared == serial
    assert sum(len(w[0]) for w in serial) >= 10_000


def test_slots_cut_a_lane_into_ranges_of_about_equal_rows(monkeypatch):
    fps = _fps(20_000, 1)
    family = sampled(64, 16, 5, 0)
    s = dense._Search(fps, -1, family, 18, 8, np.empty(0, np.int64), np.empty(0, np.int64), 1)
    s.threads = 4
    s.work = dense.DenseWork(fps.shape[0], 1, 1, 4)
    s.partition(np.array([2]))
    lane_of, pos, stop = s.slots(1)
    assert lane_of.tolist() == [0, 0, 0, 0]
    assert pos[0] == 0 and stop[-1] == s.n_groups and np.array_equal(pos[1:], stop[:-1])
    rows = s.bounds[0][stop] - s.bounds[0][pos]
    assert rows.sum() == fps.shape[0] and rows.min() > 0.2 * fps.shape[0]
