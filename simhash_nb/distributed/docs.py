"""Numpydoc blocks of the Dask functions' parameters, one wording each.

The functions of :mod:`~simhash_nb.distributed.search`,
:mod:`~simhash_nb.distributed.components` and :mod:`~simhash_nb.distributed.verified`
take many of the same parameters (how to shuffle, how many threads, ...): their
docstrings name these blocks in ``{{name}}`` lines, filled by
:func:`~simhash_nb._core.docstrings.shared_docs`. The verified path's search
parameters (``threshold``, ``recall``, ...) come from
:data:`~simhash_nb._core.verified.VERIFIED_PARAMETERS`, the wording of one machine.
"""

from __future__ import annotations

from .._core.clusters import KEEP_DOCS
from .._core.verified import VERIFIED_PARAMETERS

__all__ = ["DASK_PARAMETERS"]

DASK_PARAMETERS = {
    "column": """column : str, optional
    Column of a DataFrame: default ``"simhash"`` if it holds fingerprints, else
    ``"text"``.""",
    "blocks": """blocks : int, optional
    Blocks of the table layout (``C(blocks, k)`` tables, each one shuffled); by
    default the cheapest under :func:`~simhash_nb.table_design`'s cost model plus
    ``config["distributed_cost_record"]`` per shuffled record.""",
    "ids": """ids : {"position", "index"}, default "position"
    ``left``/``right`` as global row positions (0 to n-1, partition after
    partition, missing rows counted: the single-machine result on ``data.compute()``),
    or as index labels (needs known divisions and unique labels).""",
    "npartitions": """npartitions : int, optional
    Partitions of the table-key shuffle and of its result (default: the input's, or
    more, so that each holds about ``config["distributed_partition_rows"]`` table
    records).""",
    "max_pairs": """max_pairs : int, optional
    Refuse to hold more pairs (on the verified path, candidates) than this in any one
    partition of the search's result (default ``config["max_pairs"]``); raised as
    :class:`~simhash_nb.TooManyPairsError` when the result is computed.""",
    "shuffle_method": """shuffle_method : str, optional
    Dask's shuffle method (default: ``"tasks"`` for a shuffle of at most 32 partitions
    in and out, else Dask's default, ``"p2p"`` on a distributed cluster).""",
    "n_jobs": """n_jobs : int, optional
    Numba threads per task (default 1; see "Threads" in the module docs of
    :mod:`simhash_nb.distributed`).""",
    "out": """out : str, optional
    With a DataFrame: return it with the labels added as column ``out``. Prefer this
    to ``ddf.assign(cluster=labels)``, which Dask aligns by index (a shuffle, and
    wrong on unknown divisions with repeated labels).""",
    "max_rounds": """max_rounds : int, default 100
    Give up (``RuntimeError``) after this many large-star / small-star rounds;
    components converge in ``O(log^2 n)`` rounds, a handful in practice.""",
    "keep": KEEP_DOCS["keep"],
    "kept": """Returns
-------
dask Series or DataFrame
    ``data``'s rows that stay (all their columns), in their partitions.""",
}
# the verified path's own: its texts, the search parameters of one machine, and the
# candidates' k
DASK_PARAMETERS["texts"] = """data : dask Series or DataFrame
    Texts (object, ``string``, ``string[pyarrow]``), or a DataFrame with a text
    column.
column : str, optional
    The text column of a DataFrame (default ``"text"``)."""
DASK_PARAMETERS["verified"] = VERIFIED_PARAMETERS["verified"] + """
k : int, optional
    The candidates' Hamming threshold. By default the one
    :func:`simhash_nb.near_duplicate_texts` chooses on the same texts (from
    ``config["verify_sample_rows"]`` texts up, from the distances of a sample of
    ``3000`` of their fingerprints, the only ones brought to the client)."""
# the tail of every search: its shuffle, its pair limit, its threads
DASK_PARAMETERS["run"] = "\n".join(DASK_PARAMETERS[name] for name in (
    "npartitions", "max_pairs", "shuffle_method", "n_jobs"))
