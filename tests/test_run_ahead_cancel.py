"""A run_ahead producer whose caller stops ends within a slice of the item it is making
(check_cancelled between two timed kernel calls), not after the whole item."""

from __future__ import annotations

import threading
import time

import numpy as np

import simhash_nb as sh
from simhash_nb._core.parallel import check_cancelled, run_ahead
from simhash_nb._core.search import dense
from simhash_nb._core.search.families import sampled


def test_the_producer_stops_inside_an_item_once_the_caller_stops():
    slices, closed = [], threading.Event()

    def items():
        try:
            for item in range(100):
                for s in range(1000):  # an item of many slices
                    check_cancelled()
                    slices.append((item, s))
                    time.sleep(0.001)
                yield item
        finally:
            closed.set()

    ahead = run_ahead(items())
    assert next(ahead) == 0
    ahead.close()
    assert closed.wait(5)
    made = len(slices)
    time.sleep(0.1)
    assert len(slices) == made  # nothing after the stop
    assert made < 1900  # the second item was cut short, not finished


def test_check_cancelled_outside_a_producer_does_nothing():
    check_cancelled()
    assert list(run_ahead(iter([1, 2]))) == [1, 2]


def test_dense_waves_in_a_producer_stop_between_kernel_calls(monkeypatch):
    rng = np.random.default_rng(0)
    fps = rng.integers(0, 2**64, (20_000, 2), dtype=np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, (10_000, 2, 4)).astype(np.uint64)
    fps[10_000:] = fps[:10_000] ^ np.bitwise_or.reduce(flips, axis=2)  # near pairs
    family = sampled(128, 10, 6, 0)
    one_table = (fps.shape[0] + dense._dk.PAD) * (8 + 16 * 2)  # a wave is one table
    monkeypatch.setattr(dense, "SLICE_SECONDS", 1e-9)
    budget = 300 * dense._dk.ROW_WORK  # a few hundred rows a call: many calls a table
    monkeypatch.setattr(dense._Search, "paced",
                        lambda self, work, seconds: setattr(self.pace, "size", budget))
    monkeypatch.setitem(sh.config, "pairs_initial_capacity", 4)
    calls, stopped = [], threading.Event()
    kernel = dense._dk.scan_groups

    def counted(*args):
        calls.append(stopped.is_set())
        return kernel(*args)

    monkeypatch.setattr(dense._dk, "scan_groups", counted)
    whole = len(list(dense.dense_waves(fps, -1, family, 30, memory_bytes=one_table)))
    all_calls = len(calls)
    calls.clear()
    ahead = run_ahead(dense.dense_waves(fps, -1, family, 30, memory_bytes=one_table))
    next(ahead)
    stopped.set()
    ahead.close()
    time.sleep(0.3)
    assert whole == family.n_tables and all_calls >= 20 * whole
    assert sum(calls) <= 2  # at most the call under way when the caller stopped
    assert len(calls) < all_calls // 2  # the producer did not finish the tables
