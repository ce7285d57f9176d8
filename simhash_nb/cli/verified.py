"""The ``--threshold`` road of ``pairs``, ``clusters`` and ``dedupe``: the verified path
streamed over one or more input shards within ``--memory-limit``."""

from __future__ import annotations

import os
import time

import numpy as np
import pyarrow as pa

from .._core.clusters import keep_from_labels
from ..streaming import CorpusStore, expand_paths, run_shards
from ..streaming.run import check_new_output, relabel_present, write_kept
from .steps import check_folder, labels_column, progress_of, rewrite, rows_kept, say, write_table
from .usage import UsageError


def check_threshold_args(args) -> None:
    """Refuse the options that mean nothing beside ``--threshold``, or several inputs
    without it."""
    if args.threshold is None:
        extra = [f for f, v in (("--memory-limit", args.memory_limit),
                                ("--tmp-dir", args.tmp_dir),
                                ("--save", getattr(args, "save", None)),
                                ("--against", getattr(args, "against", None)),
                                ("--id", getattr(args, "id", None)
                                 if args.command != "pairs" else None))
                 if v is not None]
        if extra:
            raise UsageError(f"{', '.join(extra)} apply only to the verified road: add "
                             "--threshold J")
        if len(args.inputs) > 1:
            raise UsageError("several inputs need --threshold J (the verified road streams "
                             "shards); without it, give one input")
        return
    given = [flag for flag, value in (("-k", args.k), ("--similarity", args.similarity),
                                      ("--fingerprints", args.fingerprints),
                                      ("--weights", args.weights)) if value is not None]
    if given:
        raise UsageError(f"{', '.join(given)} cannot be used with --threshold: the verified "
                         "road compares the texts' shingle sets (binary, 128-bit candidates "
                         "at a k it calibrates); drop them, or drop --threshold for the "
                         "fingerprint road")
    if args.tmp_dir is not None:
        if not os.path.isdir(args.tmp_dir):
            raise UsageError(f"--tmp-dir {args.tmp_dir}: no such folder")
    if getattr(args, "against", None) and args.params:
        raise UsageError("--params cannot be used with --against: the store's spec is used")


def _shingle_options(args, spec) -> dict:
    """The shingles of a run or a new store: the recipe's, at ``--bits`` (default 128)."""
    return dict(bits=args.bits or 128, tokenizer=spec.tokenizer, ngram=spec.ngram,
                normalize=spec.normalize, seed=spec.seed, params=dict(spec.params) or None)


def _run_options(args) -> dict:
    """The options of a streaming run that the command's flags give."""
    return dict(text_column=args.column, id_column=getattr(args, "id", None),
                memory_limit=args.memory_limit, tmp_dir=args.tmp_dir,
                recall=0.99 if args.recall is None else args.recall,
                max_pairs=getattr(args, "max_pairs", None), n_jobs=args.n_jobs,
                progress=progress_of(args))


def stream(args, recipe, what: str):
    """Run the verified path over the inputs (``what``: "pairs" or "labels")."""
    return run_shards(args.inputs, args.threshold, what=what, **_run_options(args),
                      **_shingle_options(args, recipe.spec))


def _summary(run, args, t0: float) -> str:
    missing = int((~run.valid).sum())
    note = f", {missing:,} without text" if missing else ""
    return (f"{run.n:,} rows in {len(run.source.paths):,} file(s){note}; Jaccard >= "
            f"{args.threshold} verified (k={run.k}), {time.perf_counter() - t0:.1f} s")


def store_command(args, recipe, t0: float) -> int:
    """``pairs ... --save STORE`` and/or ``--against STORE``: pairs against a corpus
    store, the inputs appended to it with ``--save``."""
    save, against = args.save, args.against
    if save and against and os.path.abspath(save) != os.path.abspath(against):
        raise UsageError("--save with --against appends to that store: give the same STORE "
                         "to both (or --save alone for a new one)")
    asked = {}  # shingle options typed: checked against an existing store's spec
    if against:
        store = CorpusStore.open(against)
        if args.bits is not None and args.bits != store.bits:
            raise UsageError(f"--bits {args.bits}: {against} holds {store.bits}-bit "
                             "fingerprints")
        asked = {k: v for k, v in (("tokenizer", args.tokenizer), ("ngram", args.ngram),
                                   ("seed", args.seed)) if v is not None}
        if args.normalize is not None:
            asked["normalize"] = recipe.spec.normalize
    else:
        store = CorpusStore.create(save, **_shingle_options(args, recipe.spec))
    pairs = store.query(args.inputs, args.threshold, add=bool(save), **_run_options(args),
                        **asked)
    write_table(args.output, pa.Table.from_pandas(pairs, preserve_index=False))
    note = f"; {store.n:,} documents in {save}" if save else ""
    say(args, f"{len(pairs):,} pairs with Jaccard >= {args.threshold} (verified) "
              f"{'against ' + against if against else 'among the inputs'} "
              f"({time.perf_counter() - t0:.1f} s){note}; wrote {args.output}")
    return 0


def verified_pairs_command(args, recipe, t0: float) -> int:
    if getattr(args, "save", None) or getattr(args, "against", None):
        return store_command(args, recipe, t0)
    run = stream(args, recipe, "pairs")
    write_table(args.output, run.pairs_table())
    say(args, f"{len(run.pairs):,} pairs among {_summary(run, args, t0)}; wrote {args.output}")
    return 0


def _rewrite_the_input(args, run, transform) -> None:
    """Rewrite the one input file of ``run`` (IN may be its folder) through ``transform``,
    once it is checked unchanged since it was read."""
    args.input = run.source.paths[0]
    run.source.check_unchanged()
    rewrite(args, transform, "writing", None)


def verified_clusters_command(args, recipe, t0: float) -> int:
    run = stream(args, recipe, "labels")
    if len(run.source.paths) > 1:  # a table of id (or row) and cluster
        write_table(args.output, run.labels_table())
    else:
        labels = np.where(run.valid, run.labels, -1)
        _rewrite_the_input(args, run, labels_column(labels, args.cluster_column))
    present = run.labels[run.valid]
    sizes = np.bincount(present, minlength=run.n) if present.size else np.zeros(0, np.int64)
    say(args, f"{int((sizes > 0).sum()):,} clusters, {int((sizes > 1).sum()):,} with near "
              f"duplicates, among {_summary(run, args, t0)}"
              + f"; wrote {args.output}")
    return 0


def verified_dedupe_command(args, recipe, t0: float) -> int:
    many = len(expand_paths(args.inputs)) > 1  # one output shard per input
    if many:
        check_new_output(args.output)
    else:
        check_folder(args.output)
    run = stream(args, recipe, "labels")
    keep = np.ones(run.n, dtype=bool)
    keep[run.valid] = keep_from_labels(relabel_present(run.labels, run.valid), args.keep)
    if many:
        write_kept(run.source, keep, args.output)
    else:
        _rewrite_the_input(args, run, rows_kept(keep))
    kept = int(keep.sum())
    say(args, f"kept {kept:,} of {run.n:,} rows, dropped {run.n - kept:,} near duplicates; "
              + _summary(run, args, t0) + f"; wrote {args.output}")
    return 0
