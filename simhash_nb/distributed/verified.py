"""The verified near-duplicate path on Dask: :func:`near_duplicate_texts`,
:func:`cluster_texts` and :func:`dedupe_texts`.

The Dask twins of :func:`simhash_nb.near_duplicate_texts` and its siblings, in stages:

1. **shingle + fingerprint** (one read of the texts): each partition's binary-weight
   fingerprints and shingle counts, persisted (16 bytes and a count per document; the
   shingles themselves are not kept).
2. **design**: from those, on the client, the same ``k`` and the same seeded sampled
   tables as on one machine -- the corpus's size, its shingle count, its count of
   distinct fingerprints (one small shuffle) and, from ``config["verify_sample_rows"]``
   documents up, the distance histogram of the same sampled rows
   (:func:`~simhash_nb._core.candidates.background_pmf`: only those rows' fingerprints
   come to the client).
3. **candidates**: the table-key shuffle of :func:`simhash_nb.distributed.near_duplicates`
   with those tables: ``(bucket, table, row, fingerprint)`` records shuffled on the
   key, each bucket searched with the core kernels, each pair kept by the first table
   whose key it shares. So the candidates are exactly the single-machine ones.
4. **verify**: candidates shuffled to the partition of their left row, which shingles
   those rows and attaches their hashes; shuffled again to the partition of the right
   row, which shingles it and computes the exact Jaccard
   (:mod:`simhash_nb.distributed.shingles`). No worker holds all shingles, nothing is
   gathered to the client.
5. **pairs / clusters / dedupe**: the verified pairs; or their connected components by
   the large-star / small-star rounds of :func:`simhash_nb.distributed.clusters`.
"""

from __future__ import annotations

import dataclasses
import inspect
import numbers
from typing import Any, Literal

import dask.dataframe as dd
import numpy as np
import pandas as pd

from .._core.candidates import background_pmf, candidate_design
from .._core.clusters import check_keep
from .._core.search.design import check_recall
from .._core.search.families import TableFamily, sampled
from .._core.similarity import check_similarity
from .._frames import fingerprint_array
from ..config import config
from .components import _drops, _keep_part, _route, _stars
from .input import _check_picklable, check_dask, fp_meta, row_base, select, task_threads
from .search import (
    EDGE_META,
    _contract,
    _emit,
    _emit_meta,
    _max_pairs,
    _pairs_meta,
    _search_part,
)
from .shingles import Shingling, attach_left, carried_meta, pairs_meta, verify_right

__all__ = ["cluster_texts", "dedupe_texts", "near_duplicate_texts"]

# the rows background_pmf samples by default (kept in step with the core)
_SAMPLE = int(inspect.signature(background_pmf).parameters["sample"].default)


# --- checks -------------------------------------------------------------------------------


def _check(threshold, recall, bits: int, k: int | None) -> tuple[float, float]:
    """The single-machine checks of the verified path, and of the ``k`` override."""
    threshold = check_similarity(threshold, "threshold")
    recall = check_recall(recall)
    if recall >= 1.0:
        raise ValueError("recall must be below 1 (candidates come from a probabilistic "
                         "search); use sh.jaccard_pairs(..., candidates='all') for an "
                         "exhaustive join")
    if bits not in (64, 128) or isinstance(bits, bool):
        raise ValueError(f"bits must be 64 or 128, got {bits!r}")
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k < bits:
            raise ValueError(f"k must be an integer in [0, {bits}), got {k!r}")
        try:  # whether some design reaches the recall does not depend on the corpus size
            candidate_design(2, threshold, bits, recall, k=int(k))
        except ValueError:
            raise ValueError(
                f"k={k} is too small for recall {recall} at threshold {threshold} with "
                f"{bits}-bit fingerprints (too many pairs at the threshold lie further "
                "apart); leave k unset or lower the recall") from None
    return threshold, recall


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


def _shingling(bits: int, options: dict, n_jobs: int | None) -> Shingling:
    """The shingle options, checked on the client by shingling one text (the core's own
    errors), and checked to pickle (they travel to the workers)."""
    options = {key: v for key, v in options.items() if v is not None}
    how = Shingling(bits, options, task_threads(n_jobs))
    how.batch(pd.Series(["options check"]))
    if callable(options.get("tokenizer")) or "params" in options:
        _check_picklable(options)
    return how


# --- stage 1: fingerprints and shingle counts ------------------------------------------------


def _prints_part(texts: pd.Series, how: Shingling) -> pd.DataFrame:
    """Fingerprint words ``w0[, w1]`` and shingle count ``nf`` (-1: missing) of a partition."""
    present = texts.notna().to_numpy(bool)
    words = np.zeros((len(texts), how.bits // 64), dtype=np.uint64)
    nf = np.full(len(texts), -1, dtype=np.int64)
    if present.any():
        sub = texts if present.all() else texts[present]
        fb, fps = how.batch(sub)
        words[present] = fps.reshape(len(sub), -1)
        nf[present] = np.diff(fb.indptr)
    cols: dict[str, Any] = {f"w{w}": words[:, w] for w in range(words.shape[1])}
    cols["nf"] = nf
    return pd.DataFrame(cols, index=texts.index)


def _prints_meta(bits: int, index) -> pd.DataFrame:
    cols: dict[str, Any] = {f"w{w}": np.empty(0, np.uint64) for w in range(bits // 64)}
    cols["nf"] = np.empty(0, np.int64)
    return pd.DataFrame(cols, index=index[:0])


def _describe(prints: pd.DataFrame, check_index: bool) -> pd.DataFrame:
    nf = prints["nf"].to_numpy()
    unique = bool(prints.index.is_unique) if check_index else True
    return pd.DataFrame({"n": [len(prints)], "present": [int((nf >= 0).sum())],
                         "nnz": [int(nf[nf > 0].sum())], "unique": [unique]})


_DESCRIBE_META = pd.DataFrame({"n": np.empty(0, np.int64), "present": np.empty(0, np.int64),
                               "nnz": np.empty(0, np.int64), "unique": np.empty(0, bool)})


@dataclasses.dataclass(frozen=True)
class _Stats:
    offsets: np.ndarray  # int64[P + 1]: first global row of each partition, then n
    present: np.ndarray  # int64[P + 1]: the same, counting present texts only
    nnz: int

    @property
    def n_present(self) -> int:
        return int(self.present[-1])


def _scan(prints: dd.DataFrame, check_index: bool) -> _Stats:
    parts = prints.map_partitions(_describe, check_index, meta=_DESCRIBE_META,
                                  clear_divisions=True, enforce_metadata=False).compute()
    if check_index and not parts["unique"].all():
        p = int(np.flatnonzero(~parts["unique"].to_numpy(bool))[0])
        raise ValueError(f"partition {p} has duplicate index labels, so pairs of labels "
                         "would be ambiguous; use ids='position' or make the index unique")

    def cum(col: str) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(parts[col].to_numpy(np.int64)))).astype(np.int64)

    return _Stats(cum("n"), cum("present"), int(parts["nnz"].sum()))


# --- stage 2: the design (the single machine's k and tables) --------------------------------


def _present_words(prints: pd.DataFrame) -> pd.DataFrame:
    words = [c for c in prints.columns if c != "nf"]
    return prints.loc[prints["nf"].to_numpy() >= 0, words].reset_index(drop=True)


def _unique_count(df: pd.DataFrame) -> pd.Series:
    return pd.Series([len(df.drop_duplicates())], dtype=np.int64)


def _distinct(prints: dd.DataFrame, shuffle_method: str | None) -> int:
    """Distinct fingerprints among the present texts (one shuffle of 16 bytes a row)."""
    words = prints.map_partitions(_present_words, meta=_present_words(prints._meta))
    words = words.map_partitions(pd.DataFrame.drop_duplicates, meta=words._meta)
    shuffled = words.shuffle("w0", npartitions=max(1, prints.npartitions), ignore_index=True,
                             shuffle_method=shuffle_method)
    counts = shuffled.map_partitions(_unique_count, meta=pd.Series([], dtype=np.int64))
    return int(counts.sum().compute())


def _sample_part(prints: pd.DataFrame, ranks: np.ndarray, present: np.ndarray,
                 partition_info=None) -> pd.DataFrame:
    p = partition_info["number"] if partition_info else 0
    lo, hi = int(present[p]), int(present[p + 1])
    mine = ranks[(ranks >= lo) & (ranks < hi)] - lo
    words = _present_words(prints)
    return words.iloc[mine].reset_index(drop=True)


def _background(prints: dd.DataFrame, stats: _Stats, random_state: int | None) -> np.ndarray:
    """:func:`background_pmf` of all present fingerprints, from the rows it samples only:
    the same draw (``default_rng(seed).choice(n, sample)``), fetched in row order."""
    n = stats.n_present
    ranks = np.sort(np.random.default_rng(random_state).choice(n, min(n, _SAMPLE),
                                                               replace=False))
    meta = _present_words(prints._meta)
    words = prints.map_partitions(_sample_part, ranks, stats.present, meta=meta,
                                  clear_divisions=True, enforce_metadata=False).compute()
    words = np.ascontiguousarray(words.to_numpy(np.uint64))
    # all of the sample: background_pmf's own draw of m from m rows, sorted, keeps them all
    return background_pmf(words, sample=words.shape[0], seed=random_state)


def _choose_k(prints: dd.DataFrame, stats: _Stats, threshold: float, recall: float,
              bits: int, random_state: int | None) -> int:
    """The ``k`` :func:`simhash_nb.near_duplicate_texts` chooses on the same texts."""
    n = max(stats.n_present, 2)
    if stats.n_present >= config["verify_sample_rows"]:
        background = _background(prints, stats, random_state)
        cost = 2.0 * stats.nnz / n * config["search_cost_verify_feature"]
        return candidate_design(n, threshold, bits, recall, background=background,
                                verify_cost=cost).k
    return candidate_design(n, threshold, bits, recall).k


@dataclasses.dataclass(frozen=True)
class _Plan:
    """Everything the lazy stages need, decided on the client."""

    texts: Any  # dask Series of texts, partitioned like the input
    prints: Any  # persisted dask DataFrame: w0[, w1], nf
    stats: _Stats
    how: Shingling
    threshold: float
    k: int
    family: TableFamily
    labels: bool


def _plan(data: dd.DataFrame | dd.Series, threshold: float, recall: float, bits: int,
          k: int | None, random_state: int | None, column: str | None, ids: str,
          shuffle_method: str | None, n_jobs: int | None, options: dict,
          npartitions: int | None = None) -> _Plan:
    """Check the input, fingerprint the texts (persisted), and design the search as one
    machine would: stages 1 and 2 of the module docstring."""
    threshold, recall = _check(threshold, recall, bits, k)
    _check_npartitions(npartitions)
    if ids not in ("position", "index"):
        raise ValueError(f"ids must be 'position' or 'index', got {ids!r}")
    texts = _texts(data, column)
    if ids == "index" and not data.known_divisions:
        raise ValueError("ids='index' needs known divisions (a sorted index, so labels are "
                         "unique across partitions); call .set_index(...) or use "
                         "ids='position' (global row positions)")
    how = _shingling(bits, options, n_jobs)
    prints = texts.map_partitions(_prints_part, how, meta=_prints_meta(bits, texts._meta.index))
    prints = prints.persist()
    stats = _scan(prints, ids == "index")
    if k is None:
        k = _choose_k(prints, stats, threshold, recall, bits, random_state)
    rows = max(_distinct(prints, shuffle_method), 2)
    design = candidate_design(rows, threshold, bits, recall, k=k)
    family = sampled(bits, design.key_bits, design.tables, random_state)
    return _Plan(texts, prints, stats, how, threshold, int(k), family, ids == "index")


# --- stage 3: candidates by the table-key shuffle --------------------------------------------


def _search_fps(prints: pd.DataFrame, bits: int) -> pd.Series:
    """The fingerprints to search: missing for missing texts and texts without shingles
    (they are in no pair)."""
    words = prints[[f"w{w}" for w in range(bits // 64)]].to_numpy(np.uint64)
    fps = words[:, 0].copy() if bits == 64 else np.ascontiguousarray(words)
    valid = prints["nf"].to_numpy() > 0
    return pd.Series(fingerprint_array(fps, valid), index=prints.index, name="simhash")


def _check_npartitions(npartitions: int | None) -> None:
    if npartitions is not None and (isinstance(npartitions, bool) or not isinstance(
            npartitions, numbers.Integral) or npartitions < 1):
        raise ValueError(f"npartitions must be a positive integer, got {npartitions!r}")


def _candidates(plan: _Plan, npartitions: int | None, limit: int,
                shuffle_method: str | None) -> dd.DataFrame:
    """Candidate pairs ``(left < right, distance)`` of the sampled tables (lazy)."""
    bits, family = plan.how.bits, plan.family
    fps = plan.prints.map_partitions(_search_fps, bits, meta=fp_meta(bits, "simhash"))
    key_masks = np.ascontiguousarray(family.masks[:, : bits // 64])
    rows = max(1, int(config["distributed_partition_rows"]))
    offsets = plan.stats.offsets
    longest = int(np.diff(offsets).max()) if offsets.shape[0] > 1 else 0
    per_task = max(1, rows // max(1, longest))
    tables = family.n_tables
    emitted = [
        fps.map_partitions(_emit, range(t, min(t + per_task, tables)), key_masks, offsets,
                           False, None, meta=_emit_meta(bits // 64, None),
                           clear_divisions=True, enforce_metadata=False)
        for t in range(0, tables, per_task)
    ]
    frame = emitted[0] if len(emitted) == 1 else dd.concat(emitted,
                                                          ignore_unknown_divisions=True)
    q = npartitions or max(fps.npartitions, -(-plan.stats.n_present * tables // rows))
    shuffled = frame.shuffle("bucket", npartitions=q, ignore_index=True,
                             shuffle_method=shuffle_method)
    return shuffled.map_partitions(_search_part, family, bits, plan.k, "pairs", limit,
                                   plan.how.n_jobs, None, meta=_pairs_meta(None),
                                   enforce_metadata=False)


# --- stage 4: verification --------------------------------------------------------------------


def _verified(plan: _Plan, npartitions: int | None, max_pairs: int | None,
              shuffle_method: str | None) -> dd.DataFrame:
    """Verified pairs ``left, right, jaccard, distance`` (lazy)."""
    cands = _candidates(plan, npartitions, _max_pairs(max_pairs), shuffle_method)
    offsets = plan.stats.offsets
    label_dtype = plan.texts._meta.index.dtype if plan.labels else None
    routed = _route(cands, "left", offsets, shuffle_method)
    carried = dd.map_partitions(attach_left, plan.texts, routed, offsets, plan.how,
                                plan.labels, meta=carried_meta(label_dtype),
                                align_dataframes=False, enforce_metadata=False)
    routed = _route(carried, "right", offsets, shuffle_method)
    return dd.map_partitions(verify_right, plan.texts, routed, offsets, plan.how,
                             plan.threshold, plan.labels, meta=pairs_meta(label_dtype),
                             align_dataframes=False, enforce_metadata=False)


# --- stage 5: pairs, clusters, dedupe -----------------------------------------------------------


def near_duplicate_texts(
    data,
    threshold: float = 0.7,
    *,
    recall: float = 0.99,
    bits: int = 128,
    tokenizer=None,
    ngram: int | None = None,
    normalize=None,
    seed: int | None = None,
    spec=None,
    params=None,
    random_state: int | None = 0,
    k: int | None = None,
    column: str | None = None,
    ids: Literal["position", "index"] = "position",
    npartitions: int | None = None,
    max_pairs: int | None = None,
    shuffle_method: str | None = None,
    n_jobs: int | None = None,
):
    """Every pair of texts whose shingle sets have Jaccard similarity ``>= threshold``,
    verified exactly, on Dask.

    The Dask twin of :func:`simhash_nb.near_duplicate_texts`: the same shingles and
    fingerprints, the same ``k`` and seeded sampled tables (so the same candidates), the
    same exact Jaccard; the pairs equal the single-machine ones on ``data.compute()``.
    Candidates come from the table-key shuffle of :func:`near_duplicates`; each is then
    shuffled with the shingle hashes of its two texts to be verified, so no worker holds
    all shingles and nothing is gathered to the client.

    Parameters
    ----------
    data : dask Series or DataFrame
        Texts (object, ``string``, ``string[pyarrow]``), or a DataFrame with a text
        column.
    threshold : float, default 0.7
        Jaccard similarity of the shingle sets, in (0, 1].
    recall : float, default 0.99
        Least probability of finding a pair at the threshold, in (0, 1).
    bits : {128, 64}, default 128
        Fingerprint width of the candidate search.
    tokenizer, ngram, normalize, seed, spec, params
        The shingles, as in :func:`simhash_nb.near_duplicate_texts` (weights are
        binary). A callable tokenizer must pickle, to travel to the workers.
    random_state : int or None, default 0
        Seed of the sampled tables and of the sample that prices the candidates (as on
        one machine; ``None`` draws both afresh, so the two runs may then differ).
    k : int, optional
        The candidates' Hamming threshold. By default the one
        :func:`simhash_nb.near_duplicate_texts` chooses on the same texts (from
        ``config["verify_sample_rows"]`` texts up, from the distances of a sample of
        ``3000`` of their fingerprints, the only ones brought to the client).
    column : str, optional
        The text column of a DataFrame (default ``"text"``).
    ids : {"position", "index"}, default "position"
        ``left``/``right`` as global row positions (0 to n-1, partition after
        partition, missing texts counted), or as index labels (needs known divisions).
    npartitions : int, optional
        Partitions of the candidate shuffle (default: as
        :func:`near_duplicates`).
    max_pairs : int, optional
        Refuse more candidate pairs than this in any one partition of the candidate
        search (default ``config["max_pairs"]``), raised as
        :class:`~simhash_nb.TooManyPairsError` when the result is computed.
    shuffle_method : str, optional
        Dask's shuffle method (default: ``"p2p"`` on a distributed cluster).
    n_jobs : int, optional
        Numba threads per task (default 1; see the module docs of
        :mod:`simhash_nb.distributed`).

    Returns
    -------
    dask DataFrame
        Columns ``left < right`` (int64 positions, or labels), ``jaccard`` (float64,
        exact) and ``distance`` (uint8, of the fingerprints); each partition sorted by
        ``(left, right)``, partitions in no global order. Missing texts and texts
        without shingles are in no pair.

    Raises
    ------
    ValueError
        On a threshold, recall, ``k`` or ``ids`` out of range, a bad shingle option, or
        ``ids="index"`` on unknown divisions or duplicate labels.
    TypeError
        If ``data`` is not a Dask collection of texts (pandas, or fingerprints), or a
        callable tokenizer does not pickle.

    Notes
    -----
    Eager up to the candidates: the texts are read and fingerprinted once (the
    fingerprints and shingle counts persisted, 16 bytes and a count a text), then the
    design is computed (a shuffle of the fingerprints for their distinct count, and the
    sampled rows fetched). The verification stages read the texts again (twice), and
    shingle only the texts that some candidate names.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> texts = pd.Series(["the cat sat on the mat", "something else entirely",
    ...                    "the cat sat on the mat!", None])
    >>> s = dd.from_pandas(texts, npartitions=2)
    >>> p = sh.distributed.near_duplicate_texts(s, 0.7).compute()
    >>> p[["left", "right"]].values.tolist(), p.jaccard.tolist()
    ([[0, 2]], [1.0])
    >>> local = sh.near_duplicate_texts(texts[:3], 0.7)  # the same, on one machine
    >>> local.i.tolist(), local.j.tolist(), local.jaccard.tolist()
    ([0], [2], [1.0])
    """
    plan = _plan(data, threshold, recall, bits, k, random_state, column, ids, shuffle_method,
                 n_jobs, dict(tokenizer=tokenizer, ngram=ngram, normalize=normalize,
                              seed=seed, spec=spec, params=params), npartitions)
    return _verified(plan, npartitions, max_pairs, shuffle_method)


def _edges(pairs: pd.DataFrame) -> pd.DataFrame:
    """One partition's verified pairs contracted to (root, member) edges."""
    u, v = _contract(pairs["left"].to_numpy(np.int64), pairs["right"].to_numpy(np.int64))
    return pd.DataFrame({"u": u, "v": v})


def _text_stars(data, threshold, recall, bits, k, random_state, column, npartitions,
                max_pairs, shuffle_method, max_rounds, n_jobs, options):
    """The plan and the stars ``(u = smallest row, v = other row)`` of the components of
    the verified pairs."""
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, numbers.Integral) or \
            max_rounds < 1:
        raise ValueError(f"max_rounds must be a positive integer, got {max_rounds!r}")
    plan = _plan(data, threshold, recall, bits, k, random_state, column, "position",
                 shuffle_method, n_jobs, options, npartitions)
    pairs = _verified(plan, npartitions, max_pairs, shuffle_method)
    edges = pairs.map_partitions(_edges, meta=EDGE_META)
    stars = _stars(edges, max(1, plan.texts.npartitions), shuffle_method, int(max_rounds))
    return plan, stars


def _labels(prints: pd.DataFrame, stars: pd.DataFrame, base: int) -> pd.Series:
    labels = np.arange(base, base + len(prints), dtype=np.int64)
    if len(stars):
        labels[stars["v"].to_numpy(np.int64) - base] = stars["u"].to_numpy(np.int64)
    missing = prints["nf"].to_numpy() < 0
    return pd.Series(pd.arrays.IntegerArray(labels, missing), index=prints.index,
                     name="cluster", copy=False)


def _label_part(prints: pd.DataFrame, stars: pd.DataFrame, offsets: np.ndarray,
                partition_info=None) -> pd.Series:
    return _labels(prints, stars, row_base(prints, offsets, partition_info))


def _label_frame(part: pd.DataFrame, prints: pd.DataFrame, stars: pd.DataFrame,
                 offsets: np.ndarray, out: str, partition_info=None) -> pd.DataFrame:
    base = row_base(part, offsets, partition_info)
    return part.assign(**{out: _labels(prints, stars, base).set_axis(part.index)})


def cluster_texts(
    data,
    threshold: float = 0.7,
    *,
    recall: float = 0.99,
    bits: int = 128,
    tokenizer=None,
    ngram: int | None = None,
    normalize=None,
    seed: int | None = None,
    spec=None,
    params=None,
    random_state: int | None = 0,
    k: int | None = None,
    column: str | None = None,
    out: str | None = None,
    npartitions: int | None = None,
    max_pairs: int | None = None,
    shuffle_method: str | None = None,
    max_rounds: int = 100,
    n_jobs: int | None = None,
):
    """Clusters of texts joined by pairs at Jaccard similarity ``>= threshold``, on Dask.

    The Dask twin of :func:`simhash_nb.cluster_texts`: the connected components of
    :func:`near_duplicate_texts`' pairs, found by the large-star / small-star rounds of
    :func:`clusters` (union-find within each partition first). Each label is the global
    position of the first row of its cluster, as on one machine.

    Parameters
    ----------
    data, threshold, recall, bits, tokenizer, ngram, normalize, seed, spec, params, \
random_state, k, column, npartitions, max_pairs, shuffle_method, n_jobs
        As in :func:`near_duplicate_texts`.
    out : str, optional
        With a DataFrame: return it with the labels added as column ``out``.
    max_rounds : int, default 100
        As in :func:`clusters`.

    Returns
    -------
    dask Series or DataFrame
        ``Int64`` labels named ``"cluster"``, partitioned and indexed like ``data``
        (``<NA>`` for a missing text; a text in no pair is labelled with its own
        position); with ``out``, ``data`` with that column.

    Raises
    ------
    ValueError
        As :func:`near_duplicate_texts`, or on a bad ``max_rounds``.
    TypeError
        As :func:`near_duplicate_texts`, or if ``out=`` is given for a Series.

    Notes
    -----
    Eager up to the labels (the verified pairs are computed to join the components);
    the labels themselves are a lazy map over the persisted fingerprints.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> texts = ["the cat sat on the mat", "the cat sat on the mat!",
    ...          "something else entirely", "The cat sat on the mat."]
    >>> s = dd.from_pandas(pd.Series(texts), npartitions=2)
    >>> sh.distributed.cluster_texts(s).compute().tolist()
    [0, 0, 2, 0]
    >>> sh.cluster_texts(texts).tolist()
    [0, 0, 2, 0]
    """
    if out is not None and not isinstance(data, dd.DataFrame):
        raise TypeError("out= names a column to add to a DataFrame; this is a Series")
    plan, stars = _text_stars(data, threshold, recall, bits, k, random_state, column,
                              npartitions, max_pairs, shuffle_method, max_rounds, n_jobs,
                              dict(tokenizer=tokenizer, ngram=ngram, normalize=normalize,
                                   seed=seed, spec=spec, params=params))
    offsets = plan.stats.offsets
    routed = _route(stars, "v", offsets, shuffle_method)
    meta = pd.Series(pd.array([], dtype="Int64"), name="cluster")
    if out is None:
        return dd.map_partitions(_label_part, plan.prints, routed, offsets, meta=meta,
                                 align_dataframes=False, enforce_metadata=False)
    return dd.map_partitions(_label_frame, data, plan.prints, routed, offsets, out,
                             meta=data._meta.assign(**{out: meta.set_axis(data._meta.index)}),
                             align_dataframes=False, enforce_metadata=False)


def dedupe_texts(
    data,
    threshold: float = 0.7,
    *,
    keep: Literal["first", "last", False] = "first",
    recall: float = 0.99,
    bits: int = 128,
    tokenizer=None,
    ngram: int | None = None,
    normalize=None,
    seed: int | None = None,
    spec=None,
    params=None,
    random_state: int | None = 0,
    k: int | None = None,
    column: str | None = None,
    npartitions: int | None = None,
    max_pairs: int | None = None,
    shuffle_method: str | None = None,
    max_rounds: int = 100,
    n_jobs: int | None = None,
):
    """The rows kept after dropping near-duplicate texts (one row per cluster), on Dask.

    The rows where :func:`simhash_nb.dedupe_texts` (same ``keep``) is True, as
    :func:`dedupe` returns them: ``data``'s rows that stay, all columns kept. Rows
    with a missing text stay.

    Parameters
    ----------
    data, threshold, recall, bits, tokenizer, ngram, normalize, seed, spec, params, \
random_state, k, column, npartitions, max_pairs, shuffle_method, n_jobs
        As in :func:`near_duplicate_texts`.
    keep : {"first", "last", False}, default "first"
        Keep the first row of each cluster (in global row order), the last, or
        (``False``) only rows in no pair.
    max_rounds : int, default 100
        As in :func:`clusters`.

    Returns
    -------
    dask Series or DataFrame
        ``data``'s rows that stay, in their partitions.

    Raises
    ------
    ValueError
        As :func:`cluster_texts`, or if ``keep`` is not "first", "last" or False.
    TypeError
        As :func:`near_duplicate_texts`.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> df = pd.DataFrame({"text": ["the cat sat on the mat", "the cat sat on the mat!",
    ...                             "something else entirely"], "n": [1, 2, 3]})
    >>> kept = sh.distributed.dedupe_texts(dd.from_pandas(df, npartitions=2), keep="last")
    >>> kept.compute()["n"].tolist()
    [2, 3]
    >>> sh.dedupe_texts(df["text"], keep="last").tolist()
    [False, True, True]
    """
    check_keep(keep)
    plan, stars = _text_stars(data, threshold, recall, bits, k, random_state, column,
                              npartitions, max_pairs, shuffle_method, max_rounds, n_jobs,
                              dict(tokenizer=tokenizer, ngram=ngram, normalize=normalize,
                                   seed=seed, spec=spec, params=params))
    offsets = plan.stats.offsets
    routed = _route(_drops(stars, keep, shuffle_method), "row", offsets, shuffle_method)
    return dd.map_partitions(_keep_part, data, routed, offsets, meta=data._meta,
                             align_dataframes=False, enforce_metadata=False)
