"""Dask twins of the core functions: fingerprints, near-duplicate pairs, clusters and
dedupe on Dask DataFrames, with the same results as on one machine.

``sh.distributed`` is loaded on first use and needs the ``dask`` extra
(``pip install 'simhash-nb[dask]'``); ``import simhash_nb`` never imports Dask. Importing
it also registers the ``.simhash`` accessor on Dask DataFrames and Series.

How it works
------------
- :func:`fingerprint` runs the core kernels on each partition (``map_partitions``).
- :func:`near_duplicates` splits fingerprints into the permutation tables of
  :func:`simhash_nb.near_duplicates` (the same block layout and cost model, plus the
  cost of shuffling each table, which favours fewer tables), emits
  ``(table, key, row, fingerprint)`` records for every table, shuffles them on the key,
  and verifies the rows sharing a key with the same Numba kernels. A pair is kept only
  by the first table whose key it matches (the single-machine ownership rule), so
  every pair appears once. No worker ever holds all fingerprints.
- :func:`clusters` and :func:`dedupe` start from the same search, contract each
  partition's pairs with union-find, then run the alternating large-star / small-star
  rounds of Kiveris et al. ("Connected components in MapReduce and beyond", SoCC 2014)
  on the edge list until every component is a star around its smallest row. Each
  round is one shuffle of edges; no worker holds the whole graph.
- :func:`near_duplicate_texts`, :func:`cluster_texts` and :func:`dedupe_texts` are
  the verified path (exact shingle Jaccard at a threshold): candidates from the same
  table-key shuffle, with the single machine's ``k`` and seeded sampled tables, then
  each candidate shuffled with the shingle hashes of its two texts and verified (the
  user guide's "Verified near-duplicates on a Dask cluster" tells what moves where).

Row ids
-------
Rows are numbered by their global position: partition after partition, in order, 0 to
``n - 1``. Pairs and cluster labels use these positions, so they equal the
single-machine result on ``fps.compute()``. Missing fingerprints keep their position
but are in no pair (cluster label ``<NA>``; :func:`dedupe` keeps them), as in the
pandas accessor. ``near_duplicates(..., ids="index")`` reports index labels instead
(it needs known divisions, so that labels are unique and ordered).

Threads: Numba inside Dask
--------------------------
Dask runs one task per worker thread, and each task calls multi-threaded Numba
kernels. To keep threads at most the number of cores, each task runs its kernels with
``n_jobs`` Numba threads, by default **1**: Dask's own defaults (``LocalCluster()``,
``dask-worker --nthreads``) already give one worker thread per core. With few, fat
workers -- say ``LocalCluster(n_workers=2, threads_per_worker=1)`` on a 16-core machine
-- pass ``n_jobs=8``, or ``n_jobs=sh.distributed.threads_per_task(client)``, which
divides each host's cores by the Dask threads on it. (Numba's threading layer here is
OpenMP; the per-task thread count is thread-local, so concurrent tasks do not interfere.)

Tunables are read on the client when the graph is built (``max_pairs``, the table
design, ``config["distributed_partition_rows"]``); workers use their own
:data:`simhash_nb.config` for the kernels' internal settings.

Examples
--------
>>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
>>> pdf = pd.DataFrame({"text": ["a b c d", "x y z", "a b c d", "a b c e"]})
>>> ddf = dd.from_pandas(pdf, npartitions=2)
>>> ddf = sh.distributed.fingerprint(ddf, tokenizer="word")
>>> sh.distributed.near_duplicates(ddf, k=0).compute().values.tolist()
[[0, 2, 0]]
>>> sh.distributed.clusters(ddf, k=0).compute().tolist()
[0, 1, 0, 3]
"""

from __future__ import annotations

import logging as _logging

try:
    import dask  # noqa: F401
    import dask.dataframe  # noqa: F401
except ImportError as _e:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "simhash_nb.distributed needs Dask: pip install 'simhash-nb[dask]' "
        "(installs dask[dataframe] and distributed)"
    ) from _e

from .accessors import SimhashDaskDataFrameAccessor, SimhashDaskSeriesAccessor
from .components import clusters, dedupe
from .fingerprint import fingerprint
from .input import threads_per_task
from .search import near_duplicates
from .verified import cluster_texts, dedupe_texts, near_duplicate_texts
from .workers import prepare_workers


class _QuietShuffles(_logging.Filter):
    """Drops the two WARNING lines that ``distributed`` logs for every P2P shuffle that
    starts and ends normally ("Shuffle ... initialized by task ...", "Shuffle ...
    deactivated due to stimulus 'task-finished-...'"): the functions here shuffle once
    or more a call (table keys, star rounds, candidates), so a basic run printed some
    twenty of them. Every other line of that logger (restarts, failed broadcasts, ...)
    still shows."""

    QUIET = frozenset({
        "Shuffle %s initialized by task %r executed on worker %s",
        "Shuffle %s deactivated due to stimulus '%s'",
    })

    def filter(self, record: _logging.LogRecord) -> bool:
        return record.msg not in self.QUIET


def _quiet_shuffles() -> None:
    """Install :class:`_QuietShuffles` once on the scheduler plugin's logger (a filter
    on the logger itself, so no handler sees those records). It acts where this module
    is imported and the scheduler runs: a ``LocalCluster`` made here, not a scheduler
    started elsewhere (``dask scheduler``)."""
    logger = _logging.getLogger("distributed.shuffle._scheduler_plugin")
    if not any(type(f).__name__ == "_QuietShuffles" for f in logger.filters):  # reloads too
        logger.addFilter(_QuietShuffles())


_quiet_shuffles()

__all__ = [
    "SimhashDaskDataFrameAccessor",
    "SimhashDaskSeriesAccessor",
    "cluster_texts",
    "clusters",
    "dedupe",
    "dedupe_texts",
    "fingerprint",
    "near_duplicate_texts",
    "near_duplicates",
    "prepare_workers",
    "threads_per_task",
]
