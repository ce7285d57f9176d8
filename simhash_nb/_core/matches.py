"""The result of index queries: :class:`Matches`, one row per (query, indexed id)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from .pairs import pandas_module

__all__ = ["Matches"]


@dataclasses.dataclass(frozen=True)
class Matches:
    """Result of :meth:`SimhashIndex.query`: one row per (query, indexed id) match.

    Unpacks as ``query, id, distance = matches``. Rows are sorted by query, then
    distance, then id.

    Attributes
    ----------
    query : ndarray of int64
        Position of the query row.
    id : ndarray of int64
        Id of the matching indexed fingerprint.
    distance : ndarray of uint8
        Hamming distance.
    n_queries : int
        Number of query rows (some may have no match).

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> index = sh.SimhashIndex(k=2)
    >>> index.add(np.array([0b000, 0b111], dtype=np.uint64), ids=[10, 20])
    >>> m = index.query(np.array([0b001, 0b110, 0xFF00], dtype=np.uint64))
    >>> m.query, m.id, m.distance
    (array([0, 0, 1, 1]), array([10, 20, 20, 10]), array([1, 2, 1, 2], dtype=uint8))
    >>> [ids.tolist() for ids, _ in m.split()]
    [[10, 20], [20, 10], []]
    """

    query: np.ndarray
    id: np.ndarray
    distance: np.ndarray
    n_queries: int

    def __len__(self) -> int:
        return int(self.query.shape[0])

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter((self.query, self.id, self.distance))

    def split(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(ids, distances)`` of each query row, in query order."""
        if self.n_queries == 0:
            return []
        cuts = np.searchsorted(self.query, np.arange(1, self.n_queries))
        return list(zip(np.split(self.id, cuts), np.split(self.distance, cuts)))

    def to_frame(self):
        """A pandas DataFrame with columns ``query``, ``id``, ``distance``."""
        pd = pandas_module()
        return pd.DataFrame({"query": self.query, "id": self.id, "distance": self.distance})
