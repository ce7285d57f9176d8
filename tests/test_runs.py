"""Runs of shingles taken by row (``_core.pipeline.take_runs``, the Dask verification's
carried shingles) against the naive twin, and the Arrow column built from them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simhash_nb._core.pipeline import take_runs
from tests import naive

runs_lists = st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=6), min_size=1, max_size=12)


def _csr(runs):
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in runs])]).astype(np.int64)
    data = np.array([h for r in runs for h in r], dtype=np.uint64)
    return indptr, data


@given(runs_lists, st.data(), st.booleans())
def test_take_runs_equals_the_naive_twin(runs, data, pooled):
    rows = data.draw(st.lists(st.integers(-1, len(runs) - 1), max_size=20))
    indptr, hashes = _csr(runs)
    held = []

    def alloc(n):
        held.append(np.full(n, 7, np.uint64))  # not zeros: every slot must be written
        return held[-1]

    out, ends = take_runs(hashes, indptr, np.array(rows, dtype=np.int64),
                          alloc=alloc if pooled else None)
    want_out, want_ends = naive.take_runs(runs, rows)
    assert out.tolist() == want_out and ends.tolist() == want_ends
    if pooled:
        assert out is held[0]


def test_take_runs_refuses_rows_out_of_range():
    indptr, hashes = _csr([[1, 2], [3]])
    with pytest.raises(IndexError, match=r"rows must be in \[-1, 2\)"):
        take_runs(hashes, indptr, np.array([0, 2]))
    with pytest.raises(IndexError):
        take_runs(hashes, indptr, np.array([-2]))


def test_carried_column_equals_arrow_take_over_chunks_slices_and_nulls():
    """The Dask verification's carried column (``shingles._take``) holds what Arrow's
    ``take`` gives, from a column of several chunks, one of them a slice, with nulls."""
    import pandas as pd

    from simhash_nb.distributed import shingles as S

    rng = np.random.default_rng(1)

    def chunk(n):
        values = [rng.integers(0, 2**63, rng.integers(0, 5), dtype=np.uint64).tobytes()
                  if rng.random() > 0.2 else None for _ in range(n)]
        return pa.array(values, pa.large_binary())

    sliced = chunk(9).slice(2, 5)
    col = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([chunk(4), sliced,
                                                                   chunk(3)])))
    rows = np.array([3, -1, 0, 11, 5, 5, -1, 6], dtype=np.int64)
    got = S._take(col, rows)
    want = pa.chunked_array([chunk.cast(pa.large_binary()) for chunk in
                             col.array.__arrow_array__().chunks]).take(
        pa.array(rows, pa.int64(), mask=rows < 0))
    # a null source row comes back as an empty run (no shingles), not as null
    want_bytes = [b if b is not None or r < 0 else b"" for b, r in zip(want.to_pylist(), rows)]
    assert got.__arrow_array__().to_pylist() == want_bytes
