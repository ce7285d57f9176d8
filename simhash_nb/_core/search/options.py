"""Validated search options shared by near_duplicates, clusters and dedupe, and the
cost check that warns before a long search."""

from __future__ import annotations

import contextlib
import dataclasses
import numbers
import warnings
from collections.abc import Callable

import numba

from ...config import config
from ..progress import progress_bar, show_progress
from ..similarity import resolve_k
from .design import (
    METHODS,
    TableDesign,
    binom_cdf,
    check_blocks,
    check_recall,
    pair_count,
    table_design,
)
from .engine import TooManyPairsError, check_max_pairs


class SearchCostWarning(UserWarning):
    """A search's modelled cost is high; the message names a cheaper alternative.

    Warned by :func:`~simhash_nb.near_duplicates`, :func:`~simhash_nb.clusters` and
    :func:`~simhash_nb.dedupe` before they search, when the design's modelled time
    (:func:`~simhash_nb.table_design`'s ``cost`` divided by Numba's threads) exceeds
    ``config["search_warn_seconds"]`` (60 s). For an exact search (no ``recall``) the
    message also gives the modelled time with ``recall=0.99``. A ``UserWarning``; the
    search goes on.

    Examples
    --------
    >>> import warnings, numpy as np, simhash_nb as sh
    >>> sh.config["search_warn_seconds"] = 0.0          # warn before any search
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = sh.near_duplicates(np.arange(100, dtype=np.uint64), k=3)
    >>> sh.reset_config()
    >>> [w.category.__name__ for w in caught]
    ['SearchCostWarning']
    >>> str(caught[0].message)[:28]
    'this search (brute, 0 tables'
    """


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """The validated options of a search (shared by near_duplicates, clusters, dedupe)."""

    k: int
    bits: int
    recall: float | None
    method: str
    blocks: int | None
    random_state: int | None
    max_pairs: int
    progress: bool | None = None
    designer: Callable[[int], TableDesign] | None = None  # a design for n rows, instead
    memory_bytes: int | None = None  # of the tables sorted side by side (dense, sampled)

    @classmethod
    def make(cls, bits: int, k=None, similarity=None, recall=None, method="auto", blocks=None,
             random_state=0, max_pairs=None, progress=None) -> SearchOptions:
        k = resolve_k(k, similarity, bits)
        recall = check_recall(recall)
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if blocks is not None:
            blocks = check_blocks(blocks, k, bits)
        if random_state is not None and (isinstance(random_state, bool)
                                         or not isinstance(random_state, numbers.Integral)):
            raise TypeError(f"random_state must be an int or None, got {random_state!r}")
        if progress is not None and not isinstance(progress, bool):
            raise TypeError(f"progress must be True, False or None, got {progress!r}")
        return cls(k, bits, None if recall >= 1.0 else recall, method, blocks, random_state,
                   check_max_pairs(max_pairs), progress)

    @contextlib.contextmanager
    def bar(self, design: TableDesign):
        """A progress callback over the design's tables (None when no bar is shown): on
        with ``progress=True``; with None, for table searches (packed, dense or sampled)
        modelled to take over ``config["search_progress_seconds"]`` when a person is
        watching (see :func:`~simhash_nb._core.progress.show_progress`)."""
        seconds = design.cost / max(1, numba.get_num_threads())
        show = (show_progress(self.progress, seconds, config["search_progress_seconds"])
                and design.method in ("tables", "dense", "sampling"))
        with progress_bar(show, design.tables, desc=f"searching (k={self.k})",
                          unit="table") as advance:
            yield advance

    def design(self, n: int, n_against: int | None = None) -> TableDesign:
        """The table design for ``n`` distinct rows, warning when it is costly."""
        if self.designer is not None:
            d = self.designer(n)
        else:
            d = table_design(n, self.k, self.bits, recall=self.recall, n_against=n_against,
                             blocks=self.blocks, method=self.method)
        expected = pair_count(n, n_against) * binom_cdf(self.k, self.bits)
        if expected > max(self.max_pairs, 10_000):  # a clear excess, not noise
            raise TooManyPairsError(
                f"k={self.k} is too large for {self.bits}-bit fingerprints at this size: even "
                f"unrelated (random) fingerprints would give about {expected:,.0f} pairs, more "
                f"than max_pairs={self.max_pairs:,}; lower k (or raise the similarity), use "
                "128-bit fingerprints, or verify by Jaccard (sh.near_duplicate_texts)"
            )
        if d.cost / max(1, numba.get_num_threads()) > config["search_warn_seconds"]:
            note = ""
            if self.recall is None and d.method != "sampling":
                alt = table_design(n, self.k, self.bits, recall=0.99, n_against=n_against)
                note = f"; recall=0.99 would take about {_seconds(alt.cost)}"
            warnings.warn(SearchCostWarning(
                f"this search ({d.method}, {d.tables:,} tables, k={self.k}, {n:,} rows) is "
                f"modelled to take about {_seconds(d.cost)} on one core{note}"), stacklevel=3)
        return d


def _seconds(cost: float) -> str:
    cores = max(1, numba.get_num_threads())
    s = cost / cores
    return f"{s:,.0f} s" if s < 3600 else f"{s / 3600:,.1f} hours"
