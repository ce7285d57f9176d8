"""Stages 1 and 2 of the Dask verified path (:mod:`simhash_nb.distributed.verified`): the
checks, one read of the texts (their fingerprints and shingle counts, persisted) and,
from those, on the client, the single machine's ``k`` and seeded sampled tables.

The options are checked as on one machine
(:func:`~simhash_nb._core.verified.check_options`) and become one
:class:`~simhash_nb._core.pipeline.Shingler`, which travels to the workers. ``k`` is
:func:`~simhash_nb._core.pipeline.k_for` of the corpus's size and shingle count and, from
``config["verify_sample_rows"]`` present texts up, of the fingerprints of the rows
:func:`~simhash_nb._core.pipeline.sampled_rows` draws (only those come to the client).
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .._core.candidates import candidate_design
from .._core.pipeline import Shingler, k_for, sampled_rows
from .._core.search.families import TableFamily, sampled
from .._core.verified import check_options
from ..config import config
from .input import check_dask, check_npartitions, check_picklable, select, shuffle_for, task_threads
from .shingles import CARRIED, SHINGLES, shingle, shingle_column

__all__ = ["Plan", "PrintStats", "plan_texts", "prints_part"]


# --- checks -------------------------------------------------------------------------------


def _check_k(k, threshold: float, recall: float, bits: int) -> None:
    """A ``k`` override: an integer below ``bits`` with which some design reaches the
    recall (whether one does does not depend on the corpus size)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k < bits:
        raise ValueError(f"k must be an integer in [0, {bits}), got {k!r}")
    try:
        candidate_design(2, threshold, bits, recall, k=int(k))
    except ValueError:
        raise ValueError(
            f"k={k} is too small for recall {recall} at threshold {threshold} with "
            f"{bits}-bit fingerprints (too many pairs at the threshold lie further "
            "apart); leave k unset or lower the recall") from None


def _texts(data: dd.DataFrame | dd.Series, column: str | None) -> dd.Series:
    """The text Series of ``data`` (a DataFrame's column selected partition-aligned)."""
    check_dask(data)
    if isinstance(data, dd.Series) and column is not None:
        raise TypeError("column= applies to a Dask DataFrame; this is a Series")
    series, kind = select(data, column, "text", aligned=True)
    if kind != "text":
        what = f"column {series.name!r}" if isinstance(data, dd.DataFrame) else "the Series"
        raise TypeError(f"{what} holds fingerprints; the verified path needs the texts "
                        "(their shingles decide)")
    return series


def _shingler(bits: int, options: dict, n_jobs: int | None) -> Shingler:
    """The run's :class:`Shingler`, checked on the client by shingling one text (the
    core's own errors), and checked to pickle (it travels to the workers)."""
    options = {key: v for key, v in options.items() if v is not None}
    shingler = Shingler.make(bits, **options)
    shingle(pd.Series(["options check"]), shingler, n_jobs)
    if callable(options.get("tokenizer")) or "params" in options:
        check_picklable(options)
    return shingler


# --- stage 1: fingerprints and shingle counts ------------------------------------------------


def prints_part(texts: pd.Series, shingler: Shingler, n_jobs: int | None) -> pd.DataFrame:
    """Fingerprint words ``w0[, w1]``, shingle count ``nf`` (-1: missing) and shingles
    (:data:`~simhash_nb.distributed.shingles.SHINGLES`: each row's sorted distinct
    shingle hashes as the bytes of ``uint64`` values, empty if missing) of a partition
    of texts: what stage 1 persists, and what the verification reads.

    Examples
    --------
    >>> import pandas as pd
    >>> from simhash_nb._core.pipeline import Shingler
    >>> shingler = Shingler.make(128, tokenizer="word", ngram=1)
    >>> p = prints_part(pd.Series(["a b", None, "a"]), shingler, 1)
    >>> p.columns.tolist(), p["nf"].tolist(), [len(b) for b in p["shingles"]]
    (['w0', 'w1', 'nf', 'shingles'], [2, -1, 1], [16, 0, 8])
    """
    present = texts.notna().to_numpy(bool)
    words = np.zeros((len(texts), shingler.bits // 64), dtype=np.uint64)
    nf = np.full(len(texts), -1, dtype=np.int64)
    indptr, hashes = np.zeros(1, np.int64), np.empty(0, np.uint64)
    if present.any():
        sub = texts if present.all() else texts[present]
        fb, fps = shingle(sub, shingler, n_jobs)
        words[present] = fps
        nf[present] = np.diff(fb.indptr)
        indptr, hashes = fb.indptr, fb.hashes
    cols: dict[str, Any] = {f"w{w}": words[:, w] for w in range(words.shape[1])}
    cols["nf"] = nf
    cols[SHINGLES] = shingle_column(np.maximum(nf, 0), hashes[: int(indptr[-1])])
    return pd.DataFrame(cols, index=texts.index)


def _prints_meta(bits: int, index) -> pd.DataFrame:
    cols: dict[str, Any] = {f"w{w}": np.empty(0, np.uint64) for w in range(bits // 64)}
    cols["nf"] = np.empty(0, np.int64)
    cols[SHINGLES] = pd.Series([], dtype=CARRIED)
    return pd.DataFrame(cols, index=index[:0])


def _describe(prints: pd.DataFrame, check_index: bool) -> pd.DataFrame:
    nf = prints["nf"].to_numpy()
    unique = bool(prints.index.is_unique) if check_index else True
    return pd.DataFrame({"n": [len(prints)], "present": [int((nf >= 0).sum())],
                         "nnz": [int(nf[nf > 0].sum())], "unique": [unique]})


_DESCRIBE_META = pd.DataFrame({"n": np.empty(0, np.int64), "present": np.empty(0, np.int64),
                               "nnz": np.empty(0, np.int64), "unique": np.empty(0, bool)})


@dataclasses.dataclass(frozen=True)
class PrintStats:
    """Where each partition's rows start, and the corpus's shingle count."""

    offsets: np.ndarray  # int64[P + 1]: first global row of each partition, then n
    present: np.ndarray  # int64[P + 1]: the same, counting present texts only
    nnz: int

    @property
    def n_present(self) -> int:
        return int(self.present[-1])


def _scan(prints: dd.DataFrame, check_index: bool) -> PrintStats:
    parts = prints.map_partitions(_describe, check_index, meta=_DESCRIBE_META,
                                  clear_divisions=True, enforce_metadata=False).compute()
    if check_index and not parts["unique"].all():
        p = int(np.flatnonzero(~parts["unique"].to_numpy(bool))[0])
        raise ValueError(f"partition {p} has duplicate index labels, so pairs of labels "
                         "would be ambiguous; use ids='position' or make the index unique")

    def cum(col: str) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(parts[col].to_numpy(np.int64)))).astype(np.int64)

    return PrintStats(cum("n"), cum("present"), int(parts["nnz"].sum()))


# --- stage 2: the design (the single machine's k and tables) --------------------------------


def _present_words(prints: pd.DataFrame) -> pd.DataFrame:
    words = [c for c in prints.columns if c not in ("nf", SHINGLES)]
    return prints.loc[prints["nf"].to_numpy() >= 0, words].reset_index(drop=True)


def _unique_count(df: pd.DataFrame) -> pd.Series:
    return pd.Series([len(df.drop_duplicates())], dtype=np.int64)


def _distinct(prints: dd.DataFrame, shuffle_method: str | None):
    """Distinct fingerprints among the present texts (one shuffle of 16 bytes a row),
    lazy: their count."""
    words = prints.map_partitions(_present_words, meta=_present_words(prints._meta))
    words = words.map_partitions(pd.DataFrame.drop_duplicates, meta=words._meta)
    q = max(1, prints.npartitions)
    shuffled = words.shuffle("w0", npartitions=q, ignore_index=True,
                             shuffle_method=shuffle_for(shuffle_method, words, q))
    counts = shuffled.map_partitions(_unique_count, meta=pd.Series([], dtype=np.int64))
    return counts.sum()


def _sample_part(prints: pd.DataFrame, ranks: np.ndarray, present: np.ndarray,
                 partition_info=None) -> pd.DataFrame:
    p = partition_info["number"] if partition_info else 0
    lo, hi = int(present[p]), int(present[p + 1])
    mine = ranks[(ranks >= lo) & (ranks < hi)] - lo
    words = _present_words(prints)
    return words.iloc[mine].reset_index(drop=True)


def _sampled_words(prints: dd.DataFrame, stats: PrintStats, random_state: int | None):
    """The fingerprints of the present texts :func:`sampled_rows` draws, in row order
    (lazy)."""
    ranks = sampled_rows(stats.n_present, random_state)
    meta = _present_words(prints._meta)
    return prints.map_partitions(_sample_part, ranks, stats.present, meta=meta,
                                 clear_divisions=True, enforce_metadata=False)


def _design_inputs(prints: dd.DataFrame, stats: PrintStats, sample: bool,
                   random_state: int | None, shuffle_method: str | None):
    """``(sampled fingerprints or None, count of distinct fingerprints)`` in one round
    trip to the cluster; the sample only with ``sample`` (``k`` chosen here, from
    ``config["verify_sample_rows"]`` present texts up, as one machine chooses it)."""
    sampled = _sampled_words(prints, stats, random_state) if sample else None
    words, distinct = dask.compute(sampled, _distinct(prints, shuffle_method))
    if words is not None:
        words = np.ascontiguousarray(words.to_numpy(np.uint64))
    return words, int(distinct)


# --- the plan --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Plan:
    """Everything the lazy stages need, decided on the client."""

    texts: Any  # dask Series of texts, partitioned like the input
    prints: Any  # persisted dask DataFrame: w0[, w1], nf, shingles
    stats: PrintStats
    shingler: Shingler
    n_jobs: int | None  # Numba threads per task
    threshold: float
    k: int
    family: TableFamily
    labels: bool

    @property
    def bits(self) -> int:
        return self.shingler.bits


def plan_texts(data: dd.DataFrame | dd.Series, options: dict, *, threshold: float,
               recall: float, bits: int, k: int | None = None, random_state: int | None = 0,
               column: str | None = None, ids: str = "position",
               shuffle_method: str | None = None, n_jobs: int | None = None,
               npartitions: int | None = None) -> Plan:
    """Check the input, fingerprint the texts (persisted), and design the search as one
    machine would: stages 1 and 2. ``options`` are the shingle options (``tokenizer``,
    ``ngram``, ``normalize``, ``seed``, ``spec``, ``params``; None: unset)."""
    threshold, recall = check_options(threshold, recall, bits)
    if k is not None:
        _check_k(k, threshold, recall, bits)
    check_npartitions(npartitions)
    if ids not in ("position", "index"):
        raise ValueError(f"ids must be 'position' or 'index', got {ids!r}")
    texts = _texts(data, column)
    if ids == "index" and not data.known_divisions:
        raise ValueError("ids='index' needs known divisions (a sorted index, so labels are "
                         "unique across partitions); call .set_index(...) or use "
                         "ids='position' (global row positions)")
    n_jobs = task_threads(n_jobs)
    shingler = _shingler(bits, options, n_jobs)
    prints = texts.map_partitions(prints_part, shingler, n_jobs,
                                  meta=_prints_meta(bits, texts._meta.index))
    prints = prints.persist()
    stats = _scan(prints, ids == "index")
    sample = k is None and stats.n_present >= config["verify_sample_rows"]
    words, distinct = _design_inputs(prints, stats, sample, random_state, shuffle_method)
    if k is None:  # the k one machine chooses on the same texts
        k = k_for(stats.n_present, stats.nnz, threshold, recall, bits, words)
    rows = max(distinct, 2)
    design = candidate_design(rows, threshold, bits, recall, k=k)
    family = sampled(bits, design.key_bits, design.tables, random_state)
    return Plan(texts, prints, stats, shingler, n_jobs, threshold, int(k), family,
                ids == "index")
