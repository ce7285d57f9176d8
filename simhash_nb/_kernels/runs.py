"""Runs of ``uint64`` words copied by row, back to back (the carried shingles of the
Dask verification; see :func:`simhash_nb._core.pipeline.take_runs`)."""

from __future__ import annotations

from numba import njit, prange

from .prange import PRANGE_ONLY


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def copy_runs(words, lo, ends, out):
    """Copy the runs ``words[lo[k]:lo[k] + ends[k + 1] - ends[k]]`` to
    ``out[ends[k]:ends[k + 1]]``."""
    for k in prange(lo.shape[0]):
        out[ends[k]:ends[k + 1]] = words[lo[k]:lo[k] + ends[k + 1] - ends[k]]
