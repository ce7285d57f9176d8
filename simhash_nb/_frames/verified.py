"""The verified road of the faces: pairs and cluster labels of a text Series' present rows.

Calls :func:`~simhash_nb.near_duplicate_texts` / :func:`~simhash_nb.cluster_texts` on
the texts that are present and maps the results back to the caller's index labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._core.clusters import check_keep, keep_from_labels
from .._core.tokenizers import split_options
from .._core.verified import cluster_texts, near_duplicate_texts


def verified_pairs(series, threshold: float, options: dict[str, Any], how=near_duplicate_texts):
    """``(SimilarPairs among the present texts, their positions)``: the verified path
    (``how=cluster_texts``: cluster labels among the present texts instead)."""
    options = dict(options)
    recall = options.pop("recall", 0.99)
    spec_options, run = split_options(options)
    valid = ~series.isna().to_numpy()
    pos = np.flatnonzero(valid)
    texts = series if valid.all() else series.iloc[pos]
    got = how(texts, threshold, recall=recall, n_jobs=run["n_jobs"], **spec_options)
    return got, pos


def verified_labels(series, threshold: float, options: dict[str, Any]):
    """``(cluster labels among the present texts, their positions)``, by
    :func:`~simhash_nb.cluster_texts` (joined pairs are not verified again)."""
    return verified_pairs(series, threshold, options, how=cluster_texts)


def verified_cluster_positions(series, threshold: float, options: dict[str, Any]) -> np.ndarray:
    """Cluster label per row from the verified road: the position of its cluster's first
    row; -1 if missing (as :func:`~simhash_nb._frames.labels.cluster_positions`)."""
    sub, pos = verified_labels(series, threshold, options)
    labels = np.full(len(series), -1, dtype=np.int64)
    labels[pos] = pos[sub]
    return labels


def verified_keep_mask(series, threshold: float, keep, options: dict[str, Any]) -> np.ndarray:
    """The rows dedupe keeps by the verified road; missing rows are always kept."""
    check_keep(keep)
    sub, pos = verified_labels(series, threshold, options)
    mask = np.ones(len(series), dtype=bool)
    mask[pos] = keep_from_labels(sub, keep)
    return mask


def verified_frame(got, index, pos):
    return pd.DataFrame({"left": index.take(pos[got.i]), "right": index.take(pos[got.j]),
                         "jaccard": got.jaccard, "distance": got.distance})
