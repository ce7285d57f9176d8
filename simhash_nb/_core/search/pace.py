"""Slices of a wave's work sized by time, so that Python answers Ctrl-C between kernel
calls (issue 23: every long kernel answers within a second)."""

from __future__ import annotations

import time
from collections.abc import Iterator

from ..parallel import SLICE_SECONDS


class Pace:
    """Units of work a kernel call, sized from the rate measured so far to take about
    ``seconds``: ``first`` units to begin, growing at most fourfold a call. The size
    carries over from one wave to the next (the waves of one search cost alike), so a
    fast search soon runs a wave a call.

    Examples
    --------
    >>> pace = Pace(4)
    >>> next(pace.ranges(10))
    (0, 4)
    >>> sum(hi - lo for lo, hi in pace.ranges(1000))
    1000
    """

    def __init__(self, first: int, seconds: float = SLICE_SECONDS, most: int | None = None):
        self.size = max(1, int(first))
        self.seconds = seconds
        self.most = most  # units a call, at most (memory the call's input takes)

    def ranges(self, n: int) -> Iterator[tuple[int, int]]:
        """Ranges ``[lo, hi)`` covering ``[0, n)`` in order, each timed (the caller's
        work between two of them) to size the next."""
        lo = 0
        while lo < n:
            hi = min(n, lo + self.size)
            start = time.perf_counter()
            yield lo, hi
            took = time.perf_counter() - start
            if 2 * (hi - lo) >= min(self.size, n):  # a short tail says little of the rate
                self.record(hi - lo, took)
            lo = hi

    def record(self, done: int, took: float) -> None:
        """Size the next call from ``done`` units of work that took ``took`` seconds:
        about ``seconds`` of it, at most four times the present size."""
        fit = done * self.seconds / max(took, 1e-6)
        self.size = int(max(1, min(4 * self.size, fit, self.most or fit)))
