"""The collector of pairs: per-task output slices, counted past a limit."""

from __future__ import annotations

import numpy as np


class Collector:
    """Gathers per-task output slices; counts all pairs, materialises up to a limit.

    With ``keep``, the searches that stream their output (dense and sampled tables)
    pass each slice ``(u, v, d)`` through ``keep`` as it comes (:meth:`take`) and hold
    only what it returns, in ``kept``; the other searches still fill ``parts``.
    """

    def __init__(self, limit: int, keep=None):
        self.limit = limit
        self.total = 0
        self.weighted = 0
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.keep = keep
        self.kept: list[tuple] = []

    def take(self, part: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Hold a slice of pairs, or what ``keep`` keeps of it."""
        if self.keep is None:
            self.parts.append(part)
        else:
            self.kept.append(self.keep(*part))

    @property
    def over(self) -> bool:
        return self.weighted > self.limit

    def add(self, left, right, dist, counts, cap: int) -> None:
        """Keep ``[t * cap, t * cap + counts[t])`` of each task ``t`` (unless over)."""
        self.total += int(counts.sum())
        if self.over:
            return
        for t in np.flatnonzero(counts):
            s = slice(t * cap, t * cap + int(min(counts[t], cap)))
            self.parts.append((left[s], right[s], dist[s]))

    def add_task(self, count: int, pairs: tuple) -> None:
        """:meth:`add` of one task's ``count`` pairs, ``pairs`` those it kept."""
        self.total += count
        if not self.over and count:
            self.parts.append(pairs)

    def result(self):
        if not self.parts:
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
        return tuple(np.concatenate(p) for p in zip(*self.parts))
