"""``simhash-nb tune IN --labels COL``: precision, recall and F1 per Hamming threshold
against ground-truth labels, a recommended k, the table and a plot."""


from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
from matplotlib.backend_bases import FigureCanvasBase
from matplotlib.figure import Figure

from .._core.evaluate import recommend_k, threshold_table
from ..io import atomic_path, table_format
from ..plotting import plot_threshold_curves
from .recipe import recipe_of
from .steps import batches, check_folder, command, fingerprint_batch, open_reader, say, write_table
from .usage import UsageError


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


def _check_outputs(args) -> None:
    """Refuse a --table or --plot that could not be written, before any work."""
    for path in (args.table, args.plot):
        if path is not None and os.path.abspath(path) == os.path.abspath(args.input):
            raise UsageError("an output must not be the input file")
    if args.table is not None:
        table_format(args.table)
    if args.plot is not None:
        fmt = _image_format(args.plot)
        types = FigureCanvasBase.get_supported_filetypes()
        if fmt not in types:
            raise UsageError(f"--plot {args.plot}: unknown image type .{fmt}; use "
                             f"{', '.join('.' + t for t in sorted(types))}")
    for path in (args.table, args.plot):
        if path is not None:
            check_folder(path)


def _image_format(path: str) -> str:
    return (Path(path).suffix or ".png").lstrip(".").lower()


def _fingerprints_and_labels(args, recipe):
    """The fingerprints of the rows of IN with text, their labels (pandas), and which
    rows had text."""
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
    truth = pa.chunked_array(labels).combine_chunks().filter(pa.array(valid)).to_pandas()
    return np.concatenate(fps)[valid], truth, valid


@command
def cmd_tune(args) -> int:
    """``simhash-nb tune IN --labels COL``: precision/recall/F1 per threshold."""
    recipe = recipe_of(args)
    spec = recipe.spec
    target = _target(args.target)
    _check_outputs(args)
    present, truth, valid = _fingerprints_and_labels(args, recipe)
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
        write_table(args.table, pa.Table.from_pandas(table, preserve_index=False))
        say(args, f"wrote {args.table}")
    if args.plot is not None:
        _plot(table, rec.k, args.plot)
        say(args, f"wrote {args.plot}")
    return 0


def _plot(table, k: int, path: str) -> None:
    fig = Figure(figsize=(6.5, 4))
    plot_threshold_curves(table, ax=fig.subplots(), mark=k)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format=_image_format(path))
