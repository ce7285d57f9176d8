"""The verified path over shards larger than memory: :func:`near_duplicate_shards`,
:func:`cluster_shards`, :func:`dedupe_shards`."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core.clusters import check_keep, keep_from_labels
from .._core.docstrings import shared_docs
from .._core.pipeline import MemoryBudget, Shingler
from .._core.pipeline.run import VerifiedPairs, verified_labels, verified_pairs
from .._core.verified import check_options
from ..io import InputError, TableReader, TableWriter, table_format
from .bars import reading_bar
from .sources import FileSource, check_unique_ids, make_source

__all__ = ["ShardRun", "check_new_output", "cluster_shards", "dedupe_shards",
           "near_duplicate_shards", "relabel_present", "run_shards", "write_kept"]


@dataclasses.dataclass
class ShardRun:
    """What a streaming run found: verified pairs or cluster labels over all rows of
    the source (in reading order), the rows' ids (or None) and which rows had text."""

    source: object
    valid: np.ndarray
    ids: pa.Array | None
    pairs: VerifiedPairs | None = None
    labels: np.ndarray | None = None
    k: int = 0

    @property
    def n(self) -> int:
        return int(self.valid.shape[0])

    def names(self, rows: np.ndarray):
        """The ids of ``rows`` (their row numbers without an id column)."""
        if self.ids is None:
            return pa.array(rows, pa.int64())
        return self.ids.take(pa.array(rows, pa.int64()))

    def pairs_table(self) -> pa.Table:
        p = self.pairs
        return pa.table({"left": self.names(p.i), "right": self.names(p.j),
                         "jaccard": pa.array(p.jaccard),
                         "distance": pa.array(p.distance, pa.uint8())})

    def labels_table(self) -> pa.Table:
        """One row a document: its id (or row) and its cluster's first id (or row);
        null for a row without text."""
        rows = np.arange(self.n)
        first = self.names(np.where(self.valid, self.labels, 0))
        mask = pa.array(~self.valid)
        cluster = pc.if_else(mask, pa.scalar(None, first.type), first)
        return pa.table({"id" if self.ids is not None else "row": self.names(rows),
                         "cluster": cluster})


def run_shards(source, threshold: float = 0.7, *, what: str = "pairs",
               text_column: str = "text", id_column: str | None = None, memory_limit=None,
               tmp_dir=None, recall: float = 0.99, bits: int = 128, tokenizer=None,
               ngram: int | None = None, normalize=None, seed: int | None = None, spec=None,
               params=None, max_pairs: int | None = None, random_state: int | None = 0,
               n_jobs: int | None = None, progress: bool | None = None) -> ShardRun:
    """Run the verified path over ``source`` and keep ``what`` ("pairs" or "labels");
    the options are those of :func:`near_duplicate_shards`."""
    threshold, recall = check_options(threshold, recall, bits)
    shingler = Shingler.make(bits, tokenizer=tokenizer, ngram=ngram, normalize=normalize,
                             seed=seed, spec=spec, params=params)
    budget = MemoryBudget.make(memory_limit)
    src = make_source(source, text_column, id_column, budget.batch_text_bytes)
    if tmp_dir is not None and not os.path.isdir(tmp_dir):
        raise InputError(f"tmp_dir {tmp_dir}: no such folder")
    valid, ids = [], []

    def batches():
        pool = pa.default_memory_pool()
        for texts, batch_ids in src.batches():
            if batch_ids is not None:
                ids.append(batch_ids)
            yield texts
            # Arrow's allocator keeps freed batches for reuse; counted against the
            # budget otherwise (140 MB of 550 MB at 2M documents, measured)
            pool.release_unused()
        if id_column is not None and ids:
            check_unique_ids(_concat(ids), id_column)
            pool.release_unused()

    run = verified_labels if what == "labels" else verified_pairs
    with reading_bar(src, progress) as bar:
        def on_batch(v):
            valid.append(v)
            bar.update(int(v.shape[0]))
        got = run(batches(), shingler, threshold, recall, budget, tmp_dir=tmp_dir,
                  random_state=random_state, max_pairs=max_pairs, n_jobs=n_jobs,
                  progress=progress, missing="empty", on_batch=on_batch)
    out = ShardRun(src, np.concatenate(valid) if valid else np.zeros(0, bool),
                   _concat(ids) if ids else None)
    if what == "labels":
        out.labels, out.k = got
    else:
        out.pairs, out.k = got, got.k
    return out


def _concat(arrays) -> pa.Array:
    return pa.chunked_array(arrays).combine_chunks()


# The parameters the three shard functions share, one wording each (filled into their
# ``{{shards}}`` docstring slot by :func:`~simhash_nb._core.docstrings.shared_docs`).
SHARD_DOCS = {"shards": """
source : str, path, list of them, DataFrame, or iterable of DataFrames / Arrow batches
    Shards: parquet, JSON Lines or CSV files (``.gz`` for the text formats), folders
    (every such file below them, in sorted order) or glob patterns; or frames given
    one at a time. Rows are numbered in reading order across the shards.
threshold : float, default 0.7
    Jaccard similarity of the shingle sets, in (0, 1].
text_column, id_column : str
    The column of the texts (default ``"text"``) and, optionally, of the rows' ids
    (present and distinct: refused otherwise), which then name the rows.
memory_limit : int or str, optional
    The most memory the run holds, such as ``"2GB"`` (default: half the memory
    available). Texts are read and shingled a batch at a time; the shingles that do
    not fit go to a temporary file; 16 bytes of fingerprint, and about 100 bytes of
    search, a document stay in memory.
tmp_dir : str, optional
    Where the temporary files go (default: the system's); removed when the run ends,
    fails or is interrupted.
recall, bits, tokenizer, ngram, normalize, seed, spec, params, max_pairs, \
random_state, n_jobs, progress
    As in :func:`simhash_nb.near_duplicate_texts`."""}


@shared_docs(**SHARD_DOCS)
def near_duplicate_shards(
        source, threshold: float = 0.7, *, text_column: str = "text",
        id_column: str | None = None, memory_limit=None, tmp_dir=None, recall: float = 0.99,
        bits: int = 128, tokenizer=None, ngram: int | None = None, normalize=None,
        seed: int | None = None, spec=None, params=None, max_pairs: int | None = None,
        random_state: int | None = 0, n_jobs: int | None = None,
        progress: bool | None = None) -> pd.DataFrame:
    """Every pair of rows whose texts' shingle sets reach Jaccard ``threshold``,
    verified exactly, over shards larger than memory.

    Parameters
    ----------
    {{shards}}

    Returns
    -------
    pandas.DataFrame
        Columns ``left``, ``right`` (ids, or row numbers), ``jaccard``, ``distance``;
        ``left`` comes first in reading order. Rows without text are in no pair.

    Raises
    ------
    simhash_nb.io.InputError
        Naming the file, for a missing column, an unreadable file, a text column that
        holds no text, shards whose id columns differ in type, or repeated ids.
    MemoryLimitError
        When ``memory_limit`` cannot hold the documents' fingerprints (with the least
        limit that can).

    Examples
    --------
    >>> import pandas as pd, simhash_nb as sh
    >>> frames = [pd.DataFrame({"text": ["the cat sat on the mat", "a dog"]}),
    ...           pd.DataFrame({"text": ["the cat sat on the mat!"]})]
    >>> sh.near_duplicate_shards(frames, 0.7)[["left", "right", "jaccard"]]
       left  right  jaccard
    0     0      2      1.0
    """
    return run_shards(**locals()).pairs_table().to_pandas()


@shared_docs(**SHARD_DOCS)
def cluster_shards(
        source, threshold: float = 0.7, *, text_column: str = "text",
        id_column: str | None = None, memory_limit=None, tmp_dir=None, recall: float = 0.99,
        bits: int = 128, tokenizer=None, ngram: int | None = None, normalize=None,
        seed: int | None = None, spec=None, params=None, max_pairs: int | None = None,
        random_state: int | None = 0, n_jobs: int | None = None,
        progress: bool | None = None) -> pd.DataFrame:
    """Clusters of rows joined by verified pairs at Jaccard ``threshold``, over shards
    larger than memory (no pair is held: see :func:`simhash_nb.cluster_texts`).

    Parameters
    ----------
    {{shards}}

    Returns
    -------
    pandas.DataFrame
        One row a source row: ``id`` (or ``row``) and ``cluster``, the id (or row) of
        the first row of its cluster; null for a row without text.

    Raises
    ------
    simhash_nb.io.InputError, MemoryLimitError
        As :func:`near_duplicate_shards`.

    Examples
    --------
    >>> import pandas as pd, simhash_nb as sh
    >>> df = pd.DataFrame({"id": ["a", "b", "c"], "text": ["the cat sat on the mat",
    ...                    "a dog", "The cat sat on the mat."]})
    >>> sh.cluster_shards(df, id_column="id")
      id cluster
    0  a       a
    1  b       b
    2  c       a
    """
    return run_shards(what="labels", **locals()).labels_table().to_pandas()


@shared_docs(**SHARD_DOCS)
def dedupe_shards(
        source, output=None, threshold: float = 0.7, *,
        keep: Literal["first", "last"] = "first", text_column: str = "text",
        id_column: str | None = None, memory_limit=None, tmp_dir=None, recall: float = 0.99,
        bits: int = 128, tokenizer=None, ngram: int | None = None, normalize=None,
        seed: int | None = None, spec=None, params=None, max_pairs: int | None = None,
        random_state: int | None = 0, n_jobs: int | None = None,
        progress: bool | None = None) -> np.ndarray:
    """Keep one row per cluster of :func:`cluster_shards` (rows without text stay), and
    write the kept rows of file shards to ``output``.

    ``output`` is a folder that gets one shard per input file, with the same relative
    name, format and schema; with a single input file it may instead be a file name
    (its format from the extension). Nothing is written until every shard is done: the
    folder appears whole or not at all. Each input file is checked not to have changed
    since it was read.

    Parameters
    ----------
    {{shards}}
    output : str or path, optional
        Where the kept rows go (file shards only); without it, only the mask is returned.
    keep : {"first", "last"}, default "first"
        Which row of each cluster stays.

    Returns
    -------
    ndarray of bool
        The mask of kept rows, in reading order.

    Raises
    ------
    simhash_nb.io.InputError, MemoryLimitError
        As :func:`near_duplicate_shards`, or if ``output`` exists already, or an input
        file changed between the passes.
    TypeError
        If ``output`` is given for frames (only file shards are written).

    Examples
    --------
    >>> import pandas as pd, simhash_nb as sh
    >>> df = pd.DataFrame({"text": ["the cat sat on the mat", "a dog",
    ...                              "The cat sat on the mat."]})
    >>> sh.dedupe_shards(df)
    array([ True,  True, False])
    """
    options = dict(locals())
    del options["output"], options["keep"]
    check_keep(keep)
    if output is not None:
        check_new_output(output)
    run = run_shards(what="labels", **options)
    mask = np.ones(run.n, dtype=bool)
    mask[run.valid] = keep_from_labels(relabel_present(run.labels, run.valid), keep)
    if output is not None:
        if not isinstance(run.source, FileSource):
            raise TypeError("output= writes shards read from files; for frames, use the "
                            "returned mask")
        write_kept(run.source, mask, output)
    return mask


def relabel_present(labels: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Cluster labels (first rows, over all rows) of the rows with text, renumbered
    among those rows (as :func:`~simhash_nb._core.clusters.keep_from_labels` wants)."""
    present = np.flatnonzero(valid)
    position = np.full(valid.shape[0], -1, dtype=np.int64)
    position[present] = np.arange(present.shape[0])
    return position[labels[present]]


def check_new_output(output) -> None:
    """Refuse an output folder that exists (unless empty) or whose parent does not."""
    if os.path.exists(output) and not (os.path.isdir(output) and not os.listdir(output)):
        raise InputError(f"{output} exists already; give a new folder (nothing is "
                         "overwritten)")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent):
        raise InputError(f"{output}: the folder {parent} does not exist")


def write_kept(src: FileSource, mask: np.ndarray, output) -> None:
    """Write the rows of ``mask`` of each shard of ``src`` to ``output`` (a folder, or a
    file for a single shard), after checking that no shard changed."""
    src.check_unchanged()
    output = os.fspath(output)
    single = len(src.paths) == 1 and _is_file_name(output)
    if single:
        _write_shard(src.paths[0], mask, output, src.text_column)
        return
    parent = os.path.dirname(os.path.abspath(output))
    staging = tempfile.mkdtemp(prefix=".simhash-nb-", dir=parent)
    try:
        base = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in src.paths])
        start = 0
        for path in src.paths:
            rows = src.rows[path]
            target = os.path.join(staging, os.path.relpath(os.path.abspath(path), base))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            _write_shard(path, mask[start:start + rows], target, src.text_column)
            start += rows
        src.check_unchanged()
        if os.path.isdir(output):
            os.rmdir(output)  # empty: checked before the run
        os.replace(staging, output)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _is_file_name(path: str) -> bool:
    try:
        table_format(path)
    except InputError:
        return False
    return not os.path.isdir(path)


def _write_shard(path: str, keep: np.ndarray, target: str, text_column: str) -> None:
    start = 0
    with TableReader(path, text_columns=[text_column]) as reader:
        with TableWriter(target, reader.schema, specs=reader.specs) as writer:
            for batch in reader:
                writer.write(batch.filter(pa.array(keep[start:start + batch.num_rows])))
                start += batch.num_rows
    if start != keep.shape[0]:
        raise InputError(f"{path} has {start:,} rows now, {keep.shape[0]:,} when it was "
                         "read; run again on files that stay put")
