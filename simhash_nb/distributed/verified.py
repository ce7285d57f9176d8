"""The verified near-duplicate path on Dask: :func:`near_duplicate_texts`,
:func:`cluster_texts` and :func:`dedupe_texts`.

The Dask twins of :func:`simhash_nb.near_duplicate_texts` and its siblings, in stages:

1. **shingle + fingerprint** (one read of the texts, with the run's one
   :class:`~simhash_nb._core.pipeline.Shingler`): each partition's binary-weight
   fingerprints, shingle counts and shingles, persisted with the partition (16 bytes, a
   count and 8 bytes a shingle per document: each worker holds the shingles of its own
   partitions, none holds all of them), so that the verification never shingles a
   partition's own texts again.
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
   whose key it shares. So the candidates are exactly the single-machine ones. The
   records carry each row's shingle count, and the pairs whose counts cannot reach the
   threshold are dropped there (the single machine's size filter: about half of them
   on real-like text).
4. **verify**: each candidate's two rows ordered by a round-robin tournament of their
   partitions (or, within a partition and across opposite ones, a hash of the row), so
   that the pairs spread evenly over the partitions and a row travels to few of them;
   then shuffled to the partition of the first
   ("left") row, which attaches those rows' kept shingles (once per left row and other
   right partition); shuffled again to the partition of the right row, which computes
   the exact Jaccard with a :class:`~simhash_nb._core.pipeline.ShingleStore` of its own
   rows' kept shingles and the carried ones (:mod:`simhash_nb.distributed.shingles`).
   No text is shingled twice; no worker holds all shingles, nothing is gathered to the
   client.
5. **pairs / clusters / dedupe**: the verified pairs; or their connected components by
   the large-star / small-star rounds of :func:`simhash_nb.distributed.clusters`.
"""

from __future__ import annotations

from typing import Literal

import dask.dataframe as dd
import numpy as np
import pandas as pd

from .._core.clusters import check_keep
from .._core.docstrings import shared_docs
from .components import check_out, check_rounds, keep_rows, label_rows, route, star_rounds
from .design import Plan, plan_texts
from .docs import DASK_PARAMETERS
from .search import EDGE_META, contract, mix, pair_limit, shuffled_search
from .shingles import attach_left, carried_meta, verified_meta, verify_right

__all__ = ["cluster_texts", "dedupe_texts", "near_duplicate_texts"]


# --- stage 3: candidates by the table-key shuffle --------------------------------------------


def _candidates(plan: Plan, npartitions: int | None, limit: int,
                shuffle_method: str | None) -> dd.DataFrame:
    """Candidate pairs ``(left < right, distance)`` of the sampled tables (lazy): the
    prints' rows with shingles are searched, and the pairs whose shingle counts cannot
    reach the threshold dropped at the search (the single machine's size filter), so
    their texts never travel."""
    bits, family = plan.bits, plan.family
    key_masks = np.ascontiguousarray(family.masks[:, : bits // 64])
    return shuffled_search([(plan.prints, plan.stats.offsets)], family, key_masks, plan.k,
                           "pairs", plan.stats.n_present * family.n_tables, limit,
                           plan.n_jobs, shuffle_method, npartitions, threshold=plan.threshold)


# --- stage 4: verification --------------------------------------------------------------------


def _by_priority(cands: pd.DataFrame, offsets: np.ndarray) -> pd.DataFrame:
    """Candidates ``left < right`` as the verification routes them: ``left`` the row
    whose shingles travel, ``right`` the row where the pair is verified.

    Between two partitions ``p < q`` of ``P``, the pairs are verified at ``q`` when
    ``q - p < P / 2``, at ``p`` when ``q - p > P / 2`` (a round-robin tournament: each
    partition verifies its pairs with half of the others, so the work spreads evenly),
    and otherwise -- within a partition, or ``q - p = P / 2`` (every pair across two
    partitions) -- at the row of higher priority, a bijective hash of the row. Each row
    still travels at most once to each partition; at 200,000 texts in 8 partitions the
    tournament carries 17% fewer than priority alone (a row whose pairs with a
    partition all go there travels there once, whatever their priorities), and a
    partition's pairs stay within 5% of the mean. (By position alone, the last
    partition would verify every pair it has with any other.)"""
    i = cands["left"].to_numpy(np.int64)
    j = cands["right"].to_numpy(np.int64)
    parts = offsets.shape[0] - 1
    pi = np.searchsorted(offsets, i, side="right") - 1
    pj = np.searchsorted(offsets, j, side="right") - 1
    gap = 2 * np.abs(pj - pi)  # twice the distance, against the partitions' count
    by_priority = mix(i.view(np.uint64)) > mix(j.view(np.uint64))
    # the tournament verifies at j's partition (no swap) when it is the higher one and
    # near, or the lower one and far
    swap = np.where((gap == 0) | (gap == parts), by_priority, (gap < parts) != (pj > pi))
    return cands.assign(left=np.where(swap, j, i), right=np.where(swap, i, j))


def _verified(plan: Plan, npartitions: int | None, max_pairs: int | None,
              shuffle_method: str | None) -> dd.DataFrame:
    """Verified pairs ``left, right, jaccard, distance`` (lazy)."""
    cands = _candidates(plan, npartitions, pair_limit(max_pairs), shuffle_method)
    offsets = plan.stats.offsets
    cands = cands.map_partitions(_by_priority, offsets, meta=cands._meta)
    label_dtype = plan.prints._meta.index.dtype if plan.labels else None
    routed = route(cands, "left", offsets, shuffle_method)
    carried = dd.map_partitions(attach_left, plan.prints, routed, offsets, plan.labels,
                                meta=carried_meta(label_dtype),
                                align_dataframes=False, enforce_metadata=False)
    routed = route(carried, "right", offsets, shuffle_method)
    return dd.map_partitions(verify_right, plan.prints, routed, offsets, plan.n_jobs,
                             plan.threshold, plan.labels,
                             meta=verified_meta(label_dtype), align_dataframes=False,
                             enforce_metadata=False)


# --- stage 5: pairs, clusters, dedupe -----------------------------------------------------------


_SHINGLE_OPTIONS = ("tokenizer", "ngram", "normalize", "seed", "spec", "params")


def _plan(arguments: dict, ids: str = "position") -> Plan:
    """Stages 1 and 2 for a public function's ``arguments`` (its ``locals()``)."""
    a = arguments
    return plan_texts(a["data"], {o: a[o] for o in _SHINGLE_OPTIONS},
                      threshold=a["threshold"], recall=a["recall"], bits=a["bits"], k=a["k"],
                      random_state=a["random_state"], column=a["column"], ids=ids,
                      shuffle_method=a["shuffle_method"], n_jobs=a["n_jobs"],
                      npartitions=a["npartitions"])


@shared_docs(**DASK_PARAMETERS)
def near_duplicate_texts(
        data, threshold: float = 0.7, *, recall: float = 0.99, bits: int = 128,
        tokenizer=None, ngram: int | None = None, normalize=None, seed: int | None = None,
        spec=None, params=None, random_state: int | None = 0, k: int | None = None,
        column: str | None = None, ids: Literal["position", "index"] = "position",
        npartitions: int | None = None, max_pairs: int | None = None,
        shuffle_method: str | None = None, n_jobs: int | None = None):
    """Every pair of texts whose shingle sets have Jaccard similarity ``>= threshold``,
    verified exactly, on Dask.

    The Dask twin of :func:`simhash_nb.near_duplicate_texts`: the same shingles and
    fingerprints, the same ``k`` and seeded sampled tables (so the same candidates), the
    same exact Jaccard; the pairs equal the single-machine ones on ``data.compute()``.
    Candidates come from the table-key shuffle of :func:`near_duplicates`; each is then
    shuffled with the shingles of its two texts to be verified where the right one
    lives, so no worker holds all shingles and nothing is gathered to the client.

    Parameters
    ----------
    {{texts}}
    {{verified}}
    {{ids}}
    {{run}}

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
    fingerprints, shingle counts and shingles persisted: 16 bytes, a count and 8 bytes a
    shingle a text, each partition's on its worker), then the design is computed (a
    shuffle of the fingerprints for their distinct count, and the sampled rows fetched).
    The verification reads those shingles, not the texts: it shingles nothing again.

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
    # the signature stays explicit (help(), editors, errors on a misspelt keyword)
    return _verified(_plan(locals(), ids), npartitions, max_pairs, shuffle_method)


def _edges(pairs: pd.DataFrame) -> pd.DataFrame:
    """One partition's verified pairs contracted to (root, member) edges."""
    u, v = contract(pairs["left"].to_numpy(np.int64), pairs["right"].to_numpy(np.int64))
    return pd.DataFrame({"u": u, "v": v})


def _text_stars(arguments: dict) -> tuple[Plan, dd.DataFrame]:
    """The plan and the stars ``(u = smallest row, v = other row)`` of the components of
    the verified pairs, for a public function's ``arguments`` (its ``locals()``)."""
    max_rounds = check_rounds(arguments["max_rounds"])
    plan = _plan(arguments)
    shuffle_method = arguments["shuffle_method"]
    pairs = _verified(plan, arguments["npartitions"], arguments["max_pairs"], shuffle_method)
    edges = pairs.map_partitions(_edges, meta=EDGE_META)
    stars = star_rounds(edges, max(1, plan.texts.npartitions), shuffle_method, max_rounds)
    return plan, stars


def _missing_texts(prints: pd.DataFrame) -> np.ndarray:
    """Rows of a prints partition whose text is missing (their label is ``<NA>``)."""
    return prints["nf"].to_numpy() < 0


@shared_docs(**DASK_PARAMETERS)
def cluster_texts(  # the parameters of near_duplicate_texts, with out and max_rounds
        data, threshold: float = 0.7, *, recall: float = 0.99, bits: int = 128,
        tokenizer=None, ngram: int | None = None, normalize=None, seed: int | None = None,
        spec=None, params=None, random_state: int | None = 0, k: int | None = None,
        column: str | None = None, out: str | None = None, npartitions: int | None = None,
        max_pairs: int | None = None, shuffle_method: str | None = None,
        max_rounds: int = 100, n_jobs: int | None = None):
    """Clusters of texts joined by pairs at Jaccard similarity ``>= threshold``, on Dask.

    The Dask twin of :func:`simhash_nb.cluster_texts`: the connected components of
    :func:`near_duplicate_texts`' pairs, found by the large-star / small-star rounds of
    :func:`clusters` (union-find within each partition first). Each label is the global
    position of the first row of its cluster, as on one machine.

    Parameters
    ----------
    {{texts}}
    {{verified}}
    {{out}}
    {{run}}
    {{max_rounds}}

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
    check_out(data, out)
    plan, stars = _text_stars(locals())
    return label_rows(data, plan.prints, stars, plan.stats.offsets, out, shuffle_method,
                      _missing_texts)


@shared_docs(**DASK_PARAMETERS)
def dedupe_texts(  # the parameters of near_duplicate_texts, with keep and max_rounds
        data, threshold: float = 0.7, *, keep: Literal["first", "last", False] = "first",
        recall: float = 0.99, bits: int = 128, tokenizer=None, ngram: int | None = None,
        normalize=None, seed: int | None = None, spec=None, params=None,
        random_state: int | None = 0, k: int | None = None, column: str | None = None,
        npartitions: int | None = None, max_pairs: int | None = None,
        shuffle_method: str | None = None, max_rounds: int = 100,
        n_jobs: int | None = None):
    """The rows kept after dropping near-duplicate texts (one row per cluster), on Dask.

    The rows where :func:`simhash_nb.dedupe_texts` (same ``keep``) is True, as
    :func:`dedupe` returns them: ``data``'s rows that stay, all columns kept. Rows
    with a missing text stay.

    Parameters
    ----------
    {{texts}}
    {{verified}}
    {{keep}}
    {{run}}
    {{max_rounds}}

    {{kept}}

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
    plan, stars = _text_stars(locals())
    return keep_rows(data, stars, keep, plan.stats.offsets, shuffle_method)
