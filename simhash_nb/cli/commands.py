"""The commands on tables: ``fingerprint``, ``pairs``, ``dedupe``, ``clusters``, ``tune``."""


from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from .._core.similarity import resolve_k
from .recipe import recipe_of
from .steps import (
    UsageError,
    batches,
    check_folder,
    check_ids,
    check_output,
    collect,
    command,
    fingerprint_batch,
    open_reader,
    rewrite,
    say,
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
    from ..io import fingerprints_to_arrow, table_format

    recipe = recipe_of(args)
    check_output(args)
    as_hex = table_format(args.output)[0] != "parquet"
    t0 = time.perf_counter()
    missing = [0]

    def transform(batch, start):
        fps, valid = fingerprint_batch(batch, args.column, recipe, args.n_jobs, args.input)
        missing[0] += int((~valid).sum())
        arr = fingerprints_to_arrow(fps, valid, hex=as_hex)
        if args.out_column in batch.schema.names:
            batch = batch.drop_columns([args.out_column])
        return batch.append_column(args.out_column, arr)

    rows = rewrite(args, transform, "fingerprinting", args.column,
                    specs={args.out_column: recipe.spec})
    extra = f" ({missing[0]:,} missing texts left empty)" if missing[0] else ""
    say(args, f"fingerprinted {rows:,} rows in {time.perf_counter() - t0:.1f} s{extra}; "
               f"wrote {args.output}")
    return 0


def search_options(args) -> dict:
    """The search options of a command: threshold, recall, progress bar."""
    progress = False if args.quiet else (True if args.progress else None)
    return {"k": args.k, "similarity": args.similarity, "recall": args.recall,
            "progress": progress}


def k_used(args, prints) -> int:
    """The Hamming threshold the command searched with."""
    bits = 128 if prints.fps.ndim == 2 else 64
    return resolve_k(args.k, args.similarity, bits)


def _one_or_more(args) -> None:
    """``args.inputs`` checked against the options; ``args.input``, the first."""
    check_threshold_args(args)
    args.input = args.inputs[0]


@command
def cmd_pairs(args) -> int:
    """``simhash-nb pairs IN... OUT``."""
    import pyarrow as pa

    from .._frames import search_pairs

    _one_or_more(args)
    if args.against and args.params:
        raise UsageError("--params cannot be used with --against: the store's spec is used")
    recipe = recipe_of(args)
    check_output(args)
    t0 = time.perf_counter()
    if args.threshold is not None:
        return verified_pairs_command(args, recipe, t0)
    prints, ids, n = collect(args, recipe)
    check_ids(ids, args.id)
    pairs = search_pairs(prints, None, args.n_jobs, max_pairs=args.max_pairs,
                         **search_options(args))
    pos = prints.positions
    _write_pairs(args, ids, pos[pairs.i], pos[pairs.j],
                 {"distance": pa.array(pairs.distance, pa.uint8())})
    say(args, f"{len(pairs):,} pairs within {k_used(args, prints)} bits among {n:,} rows "
               f"({time.perf_counter() - t0:.1f} s); wrote {args.output}")
    return 0


def _write_pairs(args, ids, i, j, columns: dict) -> None:
    """Write the pairs table: ``left``, ``right`` (the ids, or row numbers), ``columns``."""
    import pyarrow as pa

    from ..io import TableWriter

    if ids is not None:
        left, right = ids.take(pa.array(i)), ids.take(pa.array(j))
    else:
        left, right = pa.array(i, pa.int64()), pa.array(j, pa.int64())
    table = pa.table({"left": left, "right": right, **columns})
    with TableWriter(args.output, table.schema) as w:
        for batch in table.to_batches(max_chunksize=1 << 16):
            w.write(batch)


@command
def cmd_dedupe(args) -> int:
    """``simhash-nb dedupe IN... OUT``."""
    from .._frames import keep_mask

    _one_or_more(args)
    recipe = recipe_of(args)
    t0 = time.perf_counter()
    if args.threshold is not None:
        return verified_dedupe_command(args, recipe, t0)
    check_output(args)
    prints, _, n = collect(args, recipe)
    keep = keep_mask(prints, args.keep, args.n_jobs, **search_options(args))
    how = f"k={k_used(args, prints)}"

    def transform(batch, start):
        import pyarrow as pa

        return batch.filter(pa.array(keep[start:start + batch.num_rows]))

    rows = rewrite(args, transform, "writing", None)
    say(args, f"kept {rows:,} of {n:,} rows, dropped {n - rows:,} near duplicates "
               f"({how}, {time.perf_counter() - t0:.1f} s); wrote {args.output}")
    return 0


@command
def cmd_clusters(args) -> int:
    """``simhash-nb clusters IN... OUT``."""
    import pyarrow as pa

    from .._frames import cluster_positions

    _one_or_more(args)
    recipe = recipe_of(args)
    check_output(args)
    t0 = time.perf_counter()
    if args.threshold is not None:
        return verified_clusters_command(args, recipe, t0)
    prints, _, n = collect(args, recipe)
    labels = cluster_positions(prints, args.n_jobs, **search_options(args))
    how = f"k={k_used(args, prints)}"
    name = args.cluster_column

    def transform(batch, start):
        part = labels[start:start + batch.num_rows]
        arr = pa.array(part, pa.int64(), mask=part < 0)
        if name in batch.schema.names:
            batch = batch.drop_columns([name])
        return batch.append_column(name, arr)

    rows = rewrite(args, transform, "writing", None)
    present = labels[labels >= 0]
    sizes = np.bincount(present) if present.size else np.zeros(0, dtype=np.int64)
    multi = int((sizes > 1).sum())
    say(args, f"{rows:,} rows in {int((sizes > 0).sum()):,} clusters, {multi:,} with near "
               f"duplicates ({how}, {time.perf_counter() - t0:.1f} s); "
               f"wrote {args.output}")
    return 0


def _target(text: str) -> dict:
    name, _, value = text.partition("=")
    if name == "f1" and not value:
        return {"target": "f1"}
    if name in ("precision", "recall") and value:
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None and 0 < number <= 1:
            return {name: number}
        if number is not None:
            raise UsageError(f"--target {text}: {name} must be in (0, 1]")
    raise UsageError(f"--target must be f1, precision=P or recall=R, got {text!r}")


@command
def cmd_tune(args) -> int:
    """``simhash-nb tune IN --labels COL``: precision/recall/F1 per threshold."""
    import pyarrow as pa

    from .._core.evaluate import recommend_k, threshold_table
    from ..io import TableWriter, table_format

    recipe = recipe_of(args)
    spec = recipe.spec
    target = _target(args.target)
    for path in (args.table, args.plot):
        if path is not None and os.path.abspath(path) == os.path.abspath(args.input):
            raise UsageError("an output must not be the input file")
    if args.table is not None:
        table_format(args.table)
    if args.plot is not None:
        _check_plot_format(args.plot)
    for path in (args.table, args.plot):
        if path is not None:
            check_folder(path)
    fps, valid, labels = [], [], []
    with open_reader(args, args.column) as reader:
        reader.require(args.column, args.labels)
        for batch in batches(args, reader, "fingerprinting"):
            f, v = fingerprint_batch(batch, args.column, recipe, args.n_jobs, args.input)
            fps.append(f)
            valid.append(v)
            labels.append(batch.column(batch.schema.get_field_index(args.labels)))
    if not fps:
        raise UsageError(f"{args.input} has no rows")
    valid = np.concatenate(valid)
    present = np.concatenate(fps)[valid]
    truth = pa.chunked_array(labels).combine_chunks().filter(pa.array(valid)).to_pandas()
    table = threshold_table(present, truth, max_k=args.max_k, n_jobs=args.n_jobs)
    rec = recommend_k(table, **target)
    cols = [c for c in ("k", "predicted", "tp", "fp", "fn", "precision", "recall", "f1")
            if c in table.columns]
    shown = table[cols]
    if args.max_k is None:  # 65 or 129 rows: show up to a little past the chosen k
        shown = shown[shown["k"] <= max(16, rec.k + 4)]
    dropped = int((~valid).sum())
    note = f", {dropped:,} rows with missing text left out" if dropped else ""
    print(f"{len(present):,} texts{note}; {spec.bits}-bit fingerprints, "
          f"{spec.tokenizer} {spec.ngram}-grams")
    print(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"recommended k = {rec.k}: {rec.reason}")
    if args.table is not None:
        out = pa.Table.from_pandas(table, preserve_index=False)
        with TableWriter(args.table, out.schema) as w:
            for batch in out.to_batches():
                w.write(batch)
        say(args, f"wrote {args.table}")
    if args.plot is not None:
        _plot_tune(table, rec.k, args.plot)
        say(args, f"wrote {args.plot}")
    return 0


def _check_plot_format(path: str) -> None:
    """Refuse a --plot file type that matplotlib cannot write, before any work."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = (Path(path).suffix or ".png").lstrip(".").lower()
    types = FigureCanvasBase.get_supported_filetypes()
    if fmt not in types:
        raise UsageError(f"--plot {path}: unknown image type .{fmt}; use "
                         f"{', '.join('.' + t for t in sorted(types))}")


def _plot_tune(table, k: int, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io import atomic_path
    from ..plotting import plot_threshold_curves

    fig, ax = plt.subplots(figsize=(6.5, 4))
    plot_threshold_curves(table, ax=ax, mark=k)
    fig.tight_layout()
    fmt = (Path(path).suffix or ".png").lstrip(".").lower()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format=fmt)
    plt.close(fig)
