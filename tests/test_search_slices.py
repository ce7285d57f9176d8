"""Long table waves run in timed calls (Ctrl-C is answered between them, issue 23) with
the same pairs as one call, and long table searches report progress."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_nb as sh
from simhash_nb._core.search import cross, dense
from simhash_nb._core.search.families import pigeonhole, sampled


def _fps(n, words, seed=0):
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, (n, words), dtype=np.uint64)
    fps[n // 2:] = fps[: n - n // 2] ^ np.uint64(0b1011)  # near pairs
    return fps


def _small_calls(monkeypatch, rows_a_call):
    """Dense waves of one table a lane, each lane working ``rows_a_call`` rows' worth a
    call; cross waves ``rows_a_call`` stored rows a call; outputs that overflow."""
    monkeypatch.setattr(dense, "SLICE_SECONDS", 1e-9)  # one table a lane, every wave
    budget = rows_a_call * dense._dk.ROW_WORK
    monkeypatch.setattr(dense._Search, "paced",
                        lambda self, work, seconds: setattr(self.pace, "size", budget))

    class Fixed:
        def __init__(self, first, seconds):
            pass

        def ranges(self, n):
            return ((lo, min(n, lo + rows_a_call)) for lo in range(0, n, rows_a_call))

    monkeypatch.setattr(cross, "Pace", Fixed)
    monkeypatch.setitem(sh.config, "pairs_initial_capacity", 4)


def _counted(monkeypatch, module, name):
    calls = []
    kernel = getattr(module, name)

    def counted(*args):
        calls.append(1)
        return kernel(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("words", [1, 2])
def test_dense_waves_in_many_calls_give_the_same_pairs_in_order(monkeypatch, words):
    fps = _fps(20_000, words)
    family = sampled(64 * words, 6, 5, 0)
    whole = [tuple(x.tolist() for x in w) for w in dense.dense_waves(fps, -1, family, 12)]
    _small_calls(monkeypatch, 500)
    calls = _counted(monkeypatch, dense._dk, "scan_groups")
    waves = []
    sliced = [tuple(x.tolist() for x in w)
              for w in dense.dense_waves(fps, -1, family, 12, progress=waves.append)]
    assert sliced == whole and sum(len(w[0]) for w in whole) >= 10_000
    assert sum(waves) == family.n_tables and len(calls) >= 20 * len(waves)


def test_sliced_dense_search_keeps_pairs_and_limits(monkeypatch):
    fps = _fps(30_000, 1)[:, 0]
    want = sh.near_duplicates(fps, k=14, method="dense")
    _small_calls(monkeypatch, 2000)
    got = sh.near_duplicates(fps, k=14, method="dense")
    assert np.array_equal(got.i, want.i) and np.array_equal(got.j, want.j)
    assert np.array_equal(got.distance, want.distance)
    with pytest.raises(sh.TooManyPairsError, match="more than max_pairs"):
        sh.near_duplicates(fps, k=14, method="dense", max_pairs=len(want) - 1)
    assert len(sh.near_duplicates(fps, k=14, method="dense", max_pairs=len(want))) == len(want)


@pytest.mark.parametrize("family", [pigeonhole(128, 6, 8), sampled(128, 8, 6, 1)])
def test_cross_waves_in_slices_of_stored_rows_give_the_same_pairs(monkeypatch, family):
    stored = _fps(40_000, 2, seed=1)
    new = np.concatenate([stored[::7] ^ np.uint64(5), _fps(2_000, 2, seed=2)])
    whole = sorted(zip(*(np.concatenate(x).tolist() for x in zip(
        *cross.cross_waves(new, stored, family, 6), strict=True)), strict=True))
    _small_calls(monkeypatch, 3000)
    calls = _counted(monkeypatch, cross._ck, "scan_stored")
    waves = []
    sliced = sorted(zip(*(np.concatenate(x).tolist() for x in zip(
        *cross.cross_waves(new, stored, family, 6, progress=waves.append), strict=True)),
        strict=True))
    assert sliced == whole and len(whole) >= stored.shape[0] // 7
    assert sum(waves) == family.n_tables and len(calls) >= 14 * len(waves)


def test_packed_table_search_shows_progress(capsys):
    fps = _fps(5_000, 1)[:, 0]
    design = sh.table_design(5_000, 3, 64, method="tables")
    assert design.method == "tables"
    sh.near_duplicates(fps, k=3, method="tables", progress=True)
    err = capsys.readouterr().err
    assert "searching (k=3)" in err and f"{design.tables}/{design.tables}" in err
    sh.clusters(fps, 3, method="tables", progress=True)
    assert f"{design.tables}/{design.tables}" in capsys.readouterr().err
