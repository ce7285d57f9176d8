"""The cross search of new fingerprints against stored ones (``_core.search.cross``)
against its pure-Python twin, brute force and the dense search it stands in for."""

from __future__ import annotations

import dataclasses
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_nb._core.search import cross
from simhash_nb._core.search.api import candidate_waves
from simhash_nb._core.search.cross import cross_waves
from simhash_nb._core.search.design import TableDesign
from simhash_nb._core.search.families import pigeonhole, sampled
from simhash_nb._core.search.options import SearchOptions
from simhash_nb._kernels import cross_tables as _ck
from simhash_nb.config import config

from . import naive


def _planted(seed: int, m: int, n: int, words: int, flips: int):
    """``m`` new and ``n`` stored random rows; about half the new rows have stored
    near copies (up to ``flips`` bits flipped) and a few exact duplicates on both
    sides."""
    rng = np.random.default_rng(seed)
    new = rng.integers(0, 2**64, (m, words), dtype=np.uint64)
    stored = rng.integers(0, 2**64, (n, words), dtype=np.uint64)
    if m and n:
        for j in range(0, n, 2):
            src = new[int(rng.integers(0, m))].copy()
            for b in rng.integers(0, 64 * words, int(rng.integers(0, flips + 1))).tolist():
                src[b // 64] ^= np.uint64(1) << np.uint64(b % 64)
            stored[j] = src
        if m > 2:
            new[1] = new[0]  # duplicates among the new rows
        if n > 3:
            stored[3] = stored[0]  # and among the stored ones
    return new, stored


def _collect(waves):
    """``{(i, j): d}`` of the yielded waves, and each wave's pairs as a list; fails on a
    pair yielded twice."""
    got = {}
    per_wave = []
    for i, j, d in waves:
        assert i.dtype == np.int64 and j.dtype == np.int64 and d.dtype == np.uint8
        assert i.shape == j.shape == d.shape and i.shape[0] > 0
        wave = list(zip(i.tolist(), j.tolist(), d.tolist(), strict=True))
        for a, b, x in wave:
            assert (a, b) not in got, "pair reported twice"
            got[(a, b)] = x
        per_wave.append(wave)
    return got, per_wave


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 50), st.integers(0, 60),
       st.sampled_from([1, 2]), st.integers(1, 16), st.integers(1, 12), st.integers(0, 40),
       st.sampled_from([1, 4]))
def test_cross_waves_match_the_naive_twin(seed, m, n, words, r, tables, k, steps):
    """Both step widths (one step of eight new rows at a time, or four without a branch),
    both fingerprint widths, duplicates and planted near pairs."""
    bits = 64 * words
    new, stored = _planted(seed, m, n, words, flips=min(k + 3, bits))
    family = sampled(bits, r, tables, random_state=seed)
    with mock.patch.object(cross, "steps_for", lambda *_: steps):
        got, per_wave = _collect(cross_waves(new, stored, family, k))
    want = naive.cross_sampled_pairs(new, stored, family, k)
    assert got == {p: d for p, (d, _) in want.items()}
    # a wave is one table's pairs, the tables in order
    owners = [{want[(i, j)][1] for i, j, _ in wave} for wave in per_wave]
    assert all(len(o) == 1 for o in owners)
    firsts = [o.pop() for o in owners]
    assert firsts == sorted(firsts) and len(set(firsts)) == len(firsts)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2]), st.integers(0, 6))
def test_pigeonhole_family_finds_every_pair_within_k(seed, words, k):
    """With the pigeonhole family (block rule) the cross search is exact: brute force."""
    bits = 64 * words
    new, stored = _planted(seed, 12, 40, words, flips=k + 2)
    got, _ = _collect(cross_waves(new, stored, pigeonhole(bits, k, k + 2), k))
    want = {(i, j): d for i, j, d in naive.pairs_within([list(r) for r in new], k,
                                                       [list(r) for r in stored])}
    assert got == want


@pytest.mark.parametrize("words", [1, 2])
def test_equals_candidate_waves_against_stored(words):
    """The candidate set of the dense search over new + stored rows with the same
    sampled family (its candidates are the owned key matches within k, too)."""
    bits = 64 * words
    k, r, tables = (10, 8, 20) if words == 1 else (25, 12, 30)
    new, stored = _planted(7, 60, 400, words, flips=k + 4)
    design = TableDesign("sampling", bits, k, 0, tables, r, 0.0, 0.0, 0.5)
    opts = dataclasses.replace(SearchOptions.make(bits, k), designer=lambda rows: design)
    want = {}
    for i, j, d in candidate_waves(new, opts, against=stored):
        for a, b, x in zip(i.tolist(), j.tolist(), d.tolist(), strict=True):
            if x <= k:
                want[(a, b)] = x
    got, _ = _collect(cross_waves(new, stored, sampled(bits, r, tables, 0), k))
    assert got == want
    assert len(got) > 100  # the planted pairs, duplicates expanded
    brute = naive.cross_sampled_pairs(new, stored, sampled(bits, r, tables, 0), k)
    assert got == {p: d for p, (d, _) in brute.items()}


@pytest.mark.parametrize("words", [1, 2])
def test_identical_fingerprints_at_distance_zero(words):
    fps = np.arange(1, 6, dtype=np.uint64).repeat(words).reshape(5, words)
    family = sampled(64 * words, 20, 3, 1)
    got, _ = _collect(cross_waves(fps, np.concatenate([fps, fps]), family, 0))
    assert got == {(i, j): 0 for i in range(5) for j in (i, i + 5)}


def test_empty_inputs_yield_nothing():
    family = sampled(128, 10, 4, 0)
    none = np.empty((0, 2), dtype=np.uint64)
    some = np.ones((3, 2), dtype=np.uint64)
    for a, b in [(none, some), (some, none), (none, none)]:
        assert list(cross_waves(a, b, family, 5)) == []
    with pytest.raises(ValueError, match="alike"):
        list(cross_waves(np.ones((2, 1), dtype=np.uint64), some, family, 5))


def test_chunks_waves_and_overflowing_tasks(monkeypatch):
    """Several chunks per table, one table a wave, and tasks past the initial room
    (run again with room for all their pairs) give the same pairs; progress counts
    every table."""
    new, stored = _planted(3, 40, 3000, 2, flips=6)
    stored[::3] = new[0]  # a crowd: many pairs in one table
    family = sampled(128, 10, 9, 2)
    want, _ = _collect(cross_waves(new, stored, family, 12))
    monkeypatch.setattr(cross, "_MIN_CHUNK", 64)
    monkeypatch.setitem(config, "pairs_initial_capacity", 8)
    done = []
    got, _ = _collect(cross_waves(new, stored, family, 12, progress=done.append,
                                  memory_bytes=1))
    assert got == want and len(got) > 1000
    assert done == [1] * 9


@pytest.mark.parametrize("steps", [1, 4])
def test_more_near_blocks_than_the_scan_lists_at_once(steps):
    """A crowd of 70 new copies of one row against 600 stored copies: every block of
    every stored row's run holds lanes within ``k``, far more than the scan lists
    before keeping their pairs (``HITS``), and the list fills in the middle of runs
    (3 or 9 blocks a run): every pair still comes once, as the naive twin finds."""
    rng = np.random.default_rng(11)
    new = rng.integers(0, 2**64, (100, 2), dtype=np.uint64)
    stored = rng.integers(0, 2**64, (900, 2), dtype=np.uint64)
    new[:70] = new[0]
    stored[:600] = new[0]
    stored[:600, 1] ^= np.uint64(1)  # one bit away
    family = sampled(128, 10, 3, 5)
    with mock.patch.object(cross, "steps_for", lambda *_: steps):
        got, _ = _collect(cross_waves(new, stored, family, 4))
    blocks_a_run = -(-70 // (8 * steps))
    assert 600 * blocks_a_run > _ck.HITS and _ck.HITS % blocks_a_run
    brute = naive.cross_sampled_pairs(new, stored, family, 4)
    assert got == {p: d for p, (d, _) in brute.items()}
    assert len(got) == 70 * 600 and set(got.values()) == {1}
