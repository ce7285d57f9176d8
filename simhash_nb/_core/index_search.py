"""The query of a :class:`~simhash_nb.SimhashIndex`: its query rows against each sorted run
(:mod:`simhash_nb._core.index_runs`), a timed slice of rows at a time, with a progress bar
over the rows done."""

from __future__ import annotations

import numba
import numpy as np

from .._kernels import tables as _tk
from ..config import config
from .index_runs import Run
from .parallel import deferred_interrupt, threads, timed_slices
from .progress import progress_bar, show_progress
from .search.groups import threads_for

__all__ = ["query_runs"]


def query_runs(st, q: np.ndarray, k: int, n_jobs: int | None,
               progress: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(query row, slot, distance)`` of every live slot within ``k`` bits of a row of
    ``q``, over the runs of the index state ``st`` (in no particular order).

    Each timed slice of query rows goes against every run before the next (Ctrl-C
    between kernel calls); ``progress`` as in :meth:`SimhashIndex.query`: a bar over the
    query rows done, by default from ``config["progress_min_probes"]`` rows times tables.
    """
    nq = q.shape[0]
    probes = nq * sum(run.layout.n_tables for run in st.runs)
    show = show_progress(progress, probes, config["progress_min_probes"])
    parts = []
    with threads(n_jobs), threads_for(nq * 16), progress_bar(
            show, nq, desc="querying", unit="query", unit_scale=True) as advance:
        per_thread = numba.get_num_threads() * config["chunks_per_thread"]
        for lo, hi in timed_slices(nq, first=4096):
            for run in st.runs:
                with deferred_interrupt():
                    qi, slot, dist = _query_run(st, run, q[lo:hi], k,
                                                max(1, min(hi - lo, per_thread)))
                parts.append((qi + lo, slot, dist))
            if advance is not None:
                advance(hi - lo)
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
    qi, slot, dist = (np.concatenate(x) for x in zip(*parts, strict=True))
    return qi, slot, dist


def _query_run(st, run: Run, q: np.ndarray, k: int, n_tasks: int):
    """The matches of ``q`` in one run: ``(query row, slot, distance)``."""
    layout, plan = run.layout, run.plan
    cap = config["pairs_initial_capacity"]
    args = (
        q, k, st.fps, run.lo, st.alive, run.tabs, plan.row_bits, layout.sels,
        layout.key_pieces, plan.extra_pieces, plan.hashed, plan.key_bits, plan.extra_bits,
        layout.block_masks, n_tasks,
    )
    out_q, out_s, out_d, counts = _tk.query_run(*args, cap)
    if counts.max() > cap:
        cap = int(counts.max())
        out_q, out_s, out_d, counts = _tk.query_run(*args, cap)
    keep = [slice(t * cap, t * cap + int(counts[t])) for t in np.flatnonzero(counts)]
    if not keep:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
    return tuple(np.concatenate([x[s] for s in keep]) for x in (out_q, out_s, out_d))
