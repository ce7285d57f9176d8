"""``simhash-nb fit-idf IN OUT``: the IDF table of a corpus, for ``--weights tfidf --idf``."""


from __future__ import annotations

import math
import os
import time

import numpy as np
import pyarrow as pa

from .._core.features import text_batch
from .._core.idf import IdfTable, document_frequencies
from ..io import atomic_path
from .recipe import describe, recipe_of
from .steps import batches, check_folder, command, open_reader, say, text_of
from .usage import UsageError


def merge_counts(parts: list) -> tuple[np.ndarray, np.ndarray]:
    """The ``(hashes, df)`` of several batches summed by hash."""
    if not parts:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    hashes = np.concatenate([h for h, _ in parts])
    counts = np.concatenate([c for _, c in parts])
    unique, inverse = np.unique(hashes, return_inverse=True)
    return unique, np.bincount(inverse, weights=counts, minlength=unique.shape[0]).astype(
        np.int64)


def fit_table(args, recipe):
    """The :class:`~simhash_nb.IdfTable` of the texts of IN, streamed in batches; as
    :meth:`IdfTable.fit` on the texts present (rows with missing text are no documents)."""
    parts, n = [], 0
    with open_reader(args, args.column) as reader:
        reader.require(args.column)
        for batch in batches(args, reader, "counting"):
            col = text_of(batch, args.column, args.input)
            if pa.types.is_dictionary(col.type):  # parquet categoricals
                col = col.dictionary_decode()
            fb, valid, _ = text_batch(col, recipe.spec, recipe.extras, args.n_jobs, False)
            parts.append(document_frequencies(fb))
            n += int(np.count_nonzero(valid))
    if n == 0:
        raise UsageError(f"{args.input}: no texts in column {args.column!r} to fit on")
    hashes, df = merge_counts(parts)
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    return IdfTable(hashes, idf, math.log(1.0 + n) + 1.0, "fitted", n, recipe.spec)


@command
def cmd_fit_idf(args) -> int:
    """``simhash-nb fit-idf IN OUT``."""
    if not args.output.lower().endswith(".npz"):
        raise UsageError(f"{args.output}: an IDF table is written as .npz; give OUT a .npz "
                         "name")
    check_folder(args.output)
    if os.path.abspath(args.output) == os.path.abspath(args.input):
        raise UsageError("OUT must not be the same file as IN")
    recipe = recipe_of(args, fit=True)
    t0 = time.perf_counter()
    table = fit_table(args, recipe)
    with atomic_path(args.output) as tmp:
        table.save(tmp)
    say(args, f"fitted the IDF of {len(table):,} features on {table.n_docs:,} texts "
              f"({describe(recipe.spec)}, {time.perf_counter() - t0:.1f} s); wrote "
              f"{args.output}")
    return 0
