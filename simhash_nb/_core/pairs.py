"""The result type of pair searches, and the lazy pandas import of the result types."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np


def pandas_module():
    """The pandas module, imported on first use: ``import simhash_nb`` stays free of it
    (the one lazy pandas import of the result types and of :mod:`~._core.evaluate`)."""
    import pandas  # lazily: import simhash_nb does not import pandas

    return pandas


@dataclasses.dataclass(frozen=True)
class Pairs:
    """Pairs of rows and their Hamming distance.

    Unpacks as ``i, j, distance = pairs``; ``len(pairs)`` is the number of pairs.

    Attributes
    ----------
    i, j : ndarray of int64
        Row positions (for a self-join ``i < j``; with a second set, ``j`` indexes it).
    distance : ndarray of uint8
        Hamming distance of each pair.

    Examples
    --------
    >>> import numpy as np
    >>> p = Pairs(np.array([0]), np.array([2]), np.array([1], dtype=np.uint8))
    >>> len(p), p.to_frame().columns.tolist()
    (1, ['i', 'j', 'distance'])
    """

    i: np.ndarray
    j: np.ndarray
    distance: np.ndarray

    @classmethod
    def empty(cls) -> Pairs:
        """No pairs."""
        e = np.empty(0, dtype=np.int64)
        return cls(e, e.copy(), np.empty(0, dtype=np.uint8))

    def __len__(self) -> int:
        return int(self.i.shape[0])

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter((self.i, self.j, self.distance))

    def sorted(self) -> Pairs:
        """Pairs ordered by ``(i, j)``."""
        order = np.lexsort((self.j, self.i))
        return Pairs(self.i[order], self.j[order], self.distance[order])

    def to_frame(self):
        """A pandas DataFrame with columns ``i``, ``j``, ``distance``."""
        pd = pandas_module()
        return pd.DataFrame({"i": self.i, "j": self.j, "distance": self.distance})
