"""Numpy helpers that the core's modules share."""

from __future__ import annotations

import numpy as np

__all__ = ["sorted_unique"]


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values of an integer array, ascending: ``np.unique(values)``, by a
    sort and a comparison of neighbours.

    numpy 2.3 and later answer ``np.unique`` of integers through a hash table, about ten
    times slower from 100k values on (numpy 2.4.6 here, 1M values: 0.85-0.94 s against
    0.07-0.09 s).

    Examples
    --------
    >>> import numpy as np
    >>> sorted_unique(np.array([5, 1, 5, 3], dtype=np.uint64)).tolist()
    [1, 3, 5]
    """
    s = np.sort(np.asarray(values).ravel())
    if s.shape[0] < 2:
        return s
    keep = np.empty(s.shape[0], dtype=np.bool_)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
