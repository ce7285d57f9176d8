"""Cluster labels and dedupe masks of a Series' rows, from the fingerprint road.

Rows without a fingerprint (missing texts) get the label -1 (``<NA>`` in the
Series) and are always kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._core.clusters import clusters, dedupe
from .fingerprints import Prints


def cluster_positions(p: Prints, n_jobs=None, **search) -> np.ndarray:
    """Cluster label per row: the position of its cluster's first row; -1 if missing."""
    pos = p.positions
    labels = np.full(p.fps.shape[0], -1, dtype=np.int64)
    if pos.shape[0]:
        got = clusters(p.present(), n_jobs=n_jobs, **search)
        labels[pos] = pos[np.asarray(got, dtype=np.int64)]
    return labels


def keep_mask(p: Prints, keep: str, n_jobs=None, **search) -> np.ndarray:
    mask = np.ones(p.fps.shape[0], dtype=bool)
    if p.valid.any():
        mask[p.valid] = np.asarray(dedupe(p.present(), keep=keep, n_jobs=n_jobs, **search),
                                   dtype=bool)
    return mask


def cluster_series(labels: np.ndarray, index, name: str = "cluster"):
    arr = pd.arrays.IntegerArray(labels, labels < 0)
    return pd.Series(arr, index=index, name=name, copy=False)
