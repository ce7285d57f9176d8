"""The progress bar of the first pass of the shard runs and of a corpus store's reads:
the documents shingled, with an ETA when the shards' row counts are known."""

from __future__ import annotations

import sys

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from .._core.progress import show_progress
from ..io import table_format
from .sources import FileSource

__all__ = ["reading_bar"]


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def _parquet_rows(paths) -> int | None:
    """The rows of parquet files, from their footers; None when one cannot be read (the
    pass that reads it then says which, and why)."""
    try:
        return sum(pq.ParquetFile(p).metadata.num_rows for p in paths)
    except (OSError, pa.ArrowException):
        return None


def reading_bar(src, progress: bool | None):
    """A context manager with ``update(documents)``: a tqdm bar over the documents read
    from ``src`` with ``progress=True``, or with None when a person is watching (see
    :func:`~simhash_nb._core.progress.show_progress`; a stream shows one whatever its
    size), else one that draws nothing.

    Examples
    --------
    >>> with reading_bar(None, False) as bar:
    ...     bar.update(10)
    """
    if not show_progress(progress, 1, 1):
        return _NoBar()
    total = None
    if isinstance(src, FileSource) and all(table_format(p)[0] == "parquet"
                                           for p in src.paths):
        total = _parquet_rows(src.paths)
    # a refresh a batch (they are large): the bar moves however fast they go
    return tqdm(total=total, unit="doc", unit_scale=True, desc="shingling",
                file=sys.stderr, leave=False, dynamic_ncols=True, mininterval=0, miniters=1)
