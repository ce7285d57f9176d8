"""The verified near-duplicate path on Dask: :func:`near_duplicate_texts`,
:func:`cluster_texts` and :func:`dedupe_texts`.

The Dask twins of :func:`simhash_nb.near_duplicate_texts` and its siblings, in stages:

1. **shingle + fingerprint** (one read of the texts, with the run's one
   :class:`~simhash_nb._core.pipeline.Shingler`): each partition's binary-weight
   fingerprints and shingle counts, persisted (16 bytes and a count per document; the
   shingles themselves are not kept).
2. **design**: from those, on the client, the same ``k`` and the same seeded sampled
   tables as on one machine -- the corpus's size, its shingle count, its count of
   distinct fingerprints (one small shuffle) and, from ``config["verify_sample_rows"]``
   documents up, the fingerprints of the rows the core samples
   (:func:`~simhash_nb._core.pipeline.sampled_rows` and
   :func:`~simhash_nb._core.pipeline.k_for`: only those rows come to the client).
   Stages 1 and 2 are :mod:`simhash_nb.distributed.design`.
3. **candidates**: the table-key shuffle of :func:`simhash_nb.distributed.near_duplicates`
   with those tables: ``(bucket, table, row, fingerprint)`` records shuffled on the
   key, each bucket searched with the core kernels, each pair kept by the first table
   whose key it shares. So the candidates are exactly the single-machine ones.
4. **verify**: candidates shuffled to the partition of their left row, which shingles
   those rows and attaches their hashes; shuffled again to the partition of the right
   row, which shingles it and computes the exact Jaccard with a
   :class:`~simhash_nb._core.pipeline.ShingleStore` of its rows and the carried ones
   (:mod:`simhash_nb.distributed.shingles`). No worker holds all shingles, nothing is
   gathered to the client.
5. **pairs / clusters / dedupe**: the verified pairs; or their connected components by
   the large-star / small-star rounds of :func:`simhash_nb.distributed.clusters`.
"""

from __future__ import annotations

import numbers
from typing import Literal

import dask.dataframe as dd
import numpy as np
import pandas as pd

from .._core.clusters import check_keep
from .._frames import fingerprint_array
from ..config import config
from .components import drop_rows, keep_part, route, star_rounds
from .design import Plan, plan_texts
from .input import fp_meta, row_base
from .search import EDGE_META, contract, emit, emit_meta, pair_limit, pairs_meta, search_part
from .shingles import attach_left, carried_meta, verified_meta, verify_right

__all__ = ["cluster_texts", "dedupe_texts", "near_duplicate_texts"]


# --- stage 3: candidates by the table-key shuffle --------------------------------------------


def _search_fps(prints: pd.DataFrame, bits: int) -> pd.Series:
    """The fingerprints to search: missing for missing texts and texts without shingles
    (they are in no pair)."""
    words = prints[[f"w{w}" for w in range(bits // 64)]].to_numpy(np.uint64)
    fps = words[:, 0].copy() if bits == 64 else np.ascontiguousarray(words)
    valid = prints["nf"].to_numpy() > 0
    return pd.Series(fingerprint_array(fps, valid), index=prints.index, name="simhash")


def _candidates(plan: Plan, npartitions: int | None, limit: int,
                shuffle_method: str | None) -> dd.DataFrame:
    """Candidate pairs ``(left < right, distance)`` of the sampled tables (lazy)."""
    bits, family = plan.bits, plan.family
    fps = plan.prints.map_partitions(_search_fps, bits, meta=fp_meta(bits, "simhash"))
    key_masks = np.ascontiguousarray(family.masks[:, : bits // 64])
    rows = max(1, int(config["distributed_partition_rows"]))
    offsets = plan.stats.offsets
    longest = int(np.diff(offsets).max()) if offsets.shape[0] > 1 else 0
    per_task = max(1, rows // max(1, longest))
    tables = family.n_tables
    emitted = [
        fps.map_partitions(emit, range(t, min(t + per_task, tables)), key_masks, offsets,
                           False, None, meta=emit_meta(bits // 64, None),
                           clear_divisions=True, enforce_metadata=False)
        for t in range(0, tables, per_task)
    ]
    frame = emitted[0] if len(emitted) == 1 else dd.concat(emitted,
                                                          ignore_unknown_divisions=True)
    q = npartitions or max(fps.npartitions, -(-plan.stats.n_present * tables // rows))
    shuffled = frame.shuffle("bucket", npartitions=q, ignore_index=True,
                             shuffle_method=shuffle_method)
    return shuffled.map_partitions(search_part, family, bits, plan.k, "pairs", limit,
                                   plan.n_jobs, None, meta=pairs_meta(None),
                                   enforce_metadata=False)


# --- stage 4: verification --------------------------------------------------------------------


def _verified(plan: Plan, npartitions: int | None, max_pairs: int | None,
              shuffle_method: str | None) -> dd.DataFrame:
    """Verified pairs ``left, right, jaccard, distance`` (lazy)."""
    cands = _candidates(plan, npartitions, pair_limit(max_pairs), shuffle_method)
    offsets = plan.stats.offsets
    label_dtype = plan.texts._meta.index.dtype if plan.labels else None
    routed = route(cands, "left", offsets, shuffle_method)
    carried = dd.map_partitions(attach_left, plan.texts, routed, offsets, plan.shingler,
                                plan.n_jobs, plan.labels, meta=carried_meta(label_dtype),
                                align_dataframes=False, enforce_metadata=False)
    routed = route(carried, "right", offsets, shuffle_method)
    return dd.map_partitions(verify_right, plan.texts, routed, offsets, plan.shingler,
                             plan.n_jobs, plan.threshold, plan.labels,
                             meta=verified_meta(label_dtype), align_dataframes=False,
                             enforce_metadata=False)


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
    options = dict(tokenizer=tokenizer, ngram=ngram, normalize=normalize, seed=seed,
                   spec=spec, params=params)
    plan = plan_texts(data, options, threshold=threshold, recall=recall, bits=bits, k=k,
                      random_state=random_state, column=column, ids=ids,
                      shuffle_method=shuffle_method, n_jobs=n_jobs, npartitions=npartitions)
    return _verified(plan, npartitions, max_pairs, shuffle_method)


def _edges(pairs: pd.DataFrame) -> pd.DataFrame:
    """One partition's verified pairs contracted to (root, member) edges."""
    u, v = contract(pairs["left"].to_numpy(np.int64), pairs["right"].to_numpy(np.int64))
    return pd.DataFrame({"u": u, "v": v})


def _text_stars(data, threshold, recall, bits, k, random_state, column, npartitions,
                max_pairs, shuffle_method, max_rounds, n_jobs, options):
    """The plan and the stars ``(u = smallest row, v = other row)`` of the components of
    the verified pairs."""
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, numbers.Integral) or \
            max_rounds < 1:
        raise ValueError(f"max_rounds must be a positive integer, got {max_rounds!r}")
    plan = plan_texts(data, options, threshold=threshold, recall=recall, bits=bits, k=k,
                      random_state=random_state, column=column, ids="position",
                      shuffle_method=shuffle_method, n_jobs=n_jobs, npartitions=npartitions)
    pairs = _verified(plan, npartitions, max_pairs, shuffle_method)
    edges = pairs.map_partitions(_edges, meta=EDGE_META)
    stars = star_rounds(edges, max(1, plan.texts.npartitions), shuffle_method, int(max_rounds))
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
    routed = route(stars, "v", offsets, shuffle_method)
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
    routed = route(drop_rows(stars, keep, shuffle_method), "row", offsets, shuffle_method)
    return dd.map_partitions(keep_part, data, routed, offsets, meta=data._meta,
                             align_dataframes=False, enforce_metadata=False)
