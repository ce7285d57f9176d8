"""The commands that search tables for near duplicates: ``fingerprint``, ``pairs``,
``dedupe``, ``clusters``."""


from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from .. import _frames
from .._core.similarity import resolve_k
from ..io import fingerprints_to_arrow, table_format
from ..streaming.sources import check_unique_ids
from .recipe import recipe_of
from .steps import (
    check_output,
    collect,
    command,
    fingerprint_batch,
    labels_column,
    progress_of,
    put_column,
    rewrite,
    rows_kept,
    say,
    write_table,
)
from .verified import (
    check_threshold_args,
    verified_clusters_command,
    verified_dedupe_command,
    verified_pairs_command,
)

# --- commands ----------------------------------------------------------------------------


@command
def cmd_fingerprint(args) -> int:
    """``simhash-nb fingerprint IN OUT``."""
    recipe = recipe_of(args)
    check_output(args)
    as_hex = table_format(args.output)[0] != "parquet"
    t0 = time.perf_counter()
    missing = [0]

    def transform(batch, start):
        fps, valid = fingerprint_batch(batch, args.column, recipe, args.n_jobs, args.input)
        missing[0] += int((~valid).sum())
        return put_column(batch, args.out_column, fingerprints_to_arrow(fps, valid, hex=as_hex))

    rows = rewrite(args, transform, "fingerprinting", args.column,
                    specs={args.out_column: recipe.spec})
    extra = f" ({missing[0]:,} missing texts left empty)" if missing[0] else ""
    say(args, f"fingerprinted {rows:,} rows in {time.perf_counter() - t0:.1f} s{extra}; "
               f"wrote {args.output}")
    return 0


def search_options(args) -> dict:
    """The search options of a command: threshold, recall, progress bar."""
    return {"k": args.k, "similarity": args.similarity, "recall": args.recall,
            "progress": progress_of(args)}


def k_used(args, prints) -> int:
    """The Hamming threshold the command searched with."""
    bits = 128 if prints.fps.ndim == 2 else 64
    return resolve_k(args.k, args.similarity, bits)


def _either_road(args, by_fingerprints: Callable, verified: Callable,
                 check_out: bool = True) -> int:
    """Run ``pairs``, ``dedupe`` or ``clusters``: the inputs checked against the options
    (``args.input``: the first), the recipe, OUT checked (``check_out``); then the
    ``verified`` road with ``--threshold``, else ``by_fingerprints``, each called with
    ``(args, recipe, t0)``."""
    check_threshold_args(args)
    args.input = args.inputs[0]
    recipe = recipe_of(args)
    if check_out:
        check_output(args)
    road = by_fingerprints if args.threshold is None else verified
    return road(args, recipe, time.perf_counter())


@command
def cmd_pairs(args) -> int:
    """``simhash-nb pairs IN... OUT``."""
    return _either_road(args, _pairs, verified_pairs_command)


@command
def cmd_dedupe(args) -> int:
    """``simhash-nb dedupe IN... OUT``."""
    return _either_road(args, _dedupe, verified_dedupe_command,
                        check_out=args.threshold is None)


@command
def cmd_clusters(args) -> int:
    """``simhash-nb clusters IN... OUT``."""
    return _either_road(args, _clusters, verified_clusters_command)


def _pairs(args, recipe, t0: float) -> int:
    """``pairs`` within k bits: ``left``, ``right`` (ids, or row numbers), ``distance``."""
    prints, ids, n = collect(args, recipe)
    if ids is not None:
        check_unique_ids(ids, args.id, empty=True)
    pairs = _frames.search_pairs(prints, None, args.n_jobs, max_pairs=args.max_pairs,
                                 **search_options(args))
    pos = prints.positions
    i, j = pos[pairs.i], pos[pairs.j]
    if ids is not None:
        left, right = ids.take(pa.array(i)), ids.take(pa.array(j))
    else:
        left, right = pa.array(i, pa.int64()), pa.array(j, pa.int64())
    write_table(args.output, pa.table({"left": left, "right": right,
                                       "distance": pa.array(pairs.distance, pa.uint8())}))
    say(args, f"{len(pairs):,} pairs within {k_used(args, prints)} bits among {n:,} rows "
               f"({time.perf_counter() - t0:.1f} s); wrote {args.output}")
    return 0


def _dedupe(args, recipe, t0: float) -> int:
    """``dedupe`` within k bits: the rows of IN less the near duplicates."""
    prints, _, n = collect(args, recipe)
    keep = _frames.keep_mask(prints, args.keep, args.n_jobs, **search_options(args))
    rows = rewrite(args, rows_kept(keep), "writing", None)
    say(args, f"kept {rows:,} of {n:,} rows, dropped {n - rows:,} near duplicates "
               f"(k={k_used(args, prints)}, {time.perf_counter() - t0:.1f} s); "
               f"wrote {args.output}")
    return 0


def _clusters(args, recipe, t0: float) -> int:
    """``clusters`` within k bits: the rows of IN with their cluster's first row."""
    prints, _, n = collect(args, recipe)
    labels = _frames.cluster_positions(prints, args.n_jobs, **search_options(args))
    how = f"k={k_used(args, prints)}"
    rows = rewrite(args, labels_column(labels, args.cluster_column), "writing", None)
    present = labels[labels >= 0]
    sizes = np.bincount(present) if present.size else np.zeros(0, dtype=np.int64)
    multi = int((sizes > 1).sum())
    say(args, f"{rows:,} rows in {int((sizes > 0).sum()):,} clusters, {multi:,} with near "
               f"duplicates ({how}, {time.perf_counter() - t0:.1f} s); "
               f"wrote {args.output}")
    return 0
