"""The ``simhash-nb`` command (also ``python -m simhash_nb``).

Commands
--------
``fingerprint IN OUT``  add a fingerprint column to every row
``pairs IN OUT``        every pair of rows within ``k`` bits: ``left``, ``right``, ``distance``
``dedupe IN OUT``       the rows left after dropping near duplicates
``clusters IN OUT``     every row with the label of its near-duplicate cluster
``demo``                the whole job on bundled sample corpora
``tune IN``             precision/recall per threshold against labels (when available)

Inputs are CSV, JSON Lines (both optionally ``.gz``) or parquet; outputs are chosen by
extension. Inputs stream in batches with a progress bar on stderr. Outputs are written
to a temporary file and renamed when complete, so a failed run leaves no partial file.
User mistakes (a missing column, an unreadable file, an unknown extension) end with a
one-line message and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

PROG = "simhash-nb"
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit status 2."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class UsageError(Exception):
    """A user mistake: reported as one line, exit status 2."""


# --- options ------------------------------------------------------------------------------


def _add_io(p, out: bool = True) -> None:
    p.add_argument("input", metavar="IN", help="input table: .csv, .jsonl, .parquet (csv/jsonl "
                   "may be .gz)")
    if out:
        p.add_argument("output", metavar="OUT", help="output table; format from the extension "
                       "(.parquet, .csv, .jsonl, optionally .gz for csv/jsonl)")


def _add_text(p, fingerprints: bool = True) -> None:
    g = p.add_argument_group("input columns")
    g.add_argument("--column", default="text", help="column holding the text (default: text)")
    if fingerprints:
        g.add_argument("--fingerprints", metavar="COL", default=None,
                       help="use fingerprints already in COL (as written by 'fingerprint') "
                       "instead of fingerprinting --column")
    s = p.add_argument_group("fingerprint options (see simhash_nb.fingerprint)")
    s.add_argument("--bits", type=int, choices=(64, 128), default=None, help="default 64")
    s.add_argument("--tokenizer", choices=("char", "word", "jieba"), default=None,
                   help="character n-grams (default), word n-grams, or jieba words")
    s.add_argument("--ngram", type=int, default=None, help="n-gram length (char: 4, word: 1)")
    s.add_argument("--weights", choices=("tf", "binary"), default=None, help="default tf")
    s.add_argument("--normalize", default=None, metavar="STEPS",
                   help="comma-separated steps among html,nfkc,lower,punct,digits,whitespace "
                   "(default nfkc,lower; 'none' for none)")
    s.add_argument("--seed", type=int, default=None, help="feature hash seed (default 0)")


def _add_run(p) -> None:
    g = p.add_argument_group("run")
    g.add_argument("--batch-rows", type=int, default=65536, metavar="N",
                   help="rows per batch for parquet input (default 65536)")
    g.add_argument("--n-jobs", type=int, default=None, metavar="N", help="threads (default all)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    g.add_argument("--progress", action="store_true",
                   help="show the progress bar even when stderr is not a terminal")
    g.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)


def _add_k(p) -> None:
    p.add_argument("-k", "--k", type=int, default=3, dest="k",
                   help="largest Hamming distance counted as a near duplicate (default 3)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``simhash-nb``; ``parser.commands`` lists its commands.

    Examples
    --------
    >>> build_parser().commands[:4]
    ['fingerprint', 'pairs', 'dedupe', 'clusters']
    """
    from . import __version__

    parser = _Parser(
        prog=PROG,
        description="Near-duplicate text detection with SimHash (simhash_nb).",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("fingerprint", help="add a fingerprint column",
                       description="Fingerprint the text column of IN; write every row of IN "
                       "plus the fingerprint column to OUT (parquet: uint64 or 16-byte binary "
                       "with the spec in the metadata; csv/jsonl: hexadecimal text).")
    _add_io(p)
    _add_text(p, fingerprints=False)
    p.add_argument("--out-column", default="simhash", help="name of the new column "
                   "(default simhash)")
    _add_run(p)
    p.set_defaults(func=_cmd_fingerprint)

    p = sub.add_parser("pairs", help="near-duplicate pairs",
                       description="Write every pair of rows of IN within k bits: columns "
                       "left, right (ids, or 0-based row numbers) and distance.")
    _add_io(p)
    _add_k(p)
    _add_text(p)
    p.add_argument("--id", default=None, metavar="COL",
                   help="identify rows by COL instead of their row number")
    p.add_argument("--max-pairs", type=int, default=None, metavar="N",
                   help="refuse to write more than N pairs")
    _add_run(p)
    p.set_defaults(func=_cmd_pairs)

    p = sub.add_parser("dedupe", help="drop near duplicates",
                       description="Write the rows of IN that remain after dropping near "
                       "duplicates: one row per cluster (rows with missing text stay).")
    _add_io(p)
    _add_k(p)
    _add_text(p)
    p.add_argument("--keep", choices=("first", "last"), default="first",
                   help="which row of each cluster stays (default first)")
    _add_run(p)
    p.set_defaults(func=_cmd_dedupe)

    p = sub.add_parser("clusters", help="label near-duplicate clusters",
                       description="Write every row of IN with a cluster column: the 0-based "
                       "row number of the first row of its cluster (empty for missing text).")
    _add_io(p)
    _add_k(p)
    _add_text(p)
    p.add_argument("--cluster-column", default="cluster", metavar="NAME",
                   help="name of the new column (default cluster)")
    _add_run(p)
    p.set_defaults(func=_cmd_clusters)

    p = sub.add_parser("demo", help="run the whole job on bundled sample corpora",
                       description="Fingerprint the bundled SPDX licence texts and fortunes, "
                       "choose k for each against an exact Jaccard ground truth, find "
                       "near-duplicate pairs and clusters, print a summary and write "
                       "pairs, clusters, fingerprints and a plot into --out.")
    p.add_argument("--out", default="demo-output", help="output folder (default demo-output)")
    p.add_argument("-k", "--k", type=int, default=None, dest="k",
                   help="largest Hamming distance counted as a near duplicate (default: "
                   "tuned per corpus, the best F1 against the Jaccard ground truth)")
    p.add_argument("--jaccard", type=float, default=0.7, metavar="J",
                   help="ground truth for tuning k: texts whose shingle sets have Jaccard "
                   "similarity >= J are near duplicates (default 0.7)")
    p.add_argument("--examples", type=int, default=4, help="example pairs shown per corpus")
    p.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=_cmd_demo)

    _add_tune(sub)
    parser.commands = list(sub.choices)
    return parser


def _add_tune(sub) -> None:
    """``tune``: only when the evaluation module provides ``threshold_table``."""
    try:
        from .evaluate import recommend_k, threshold_table  # noqa: F401
    except ImportError:
        return
    p = sub.add_parser("tune", help="precision and recall per threshold k",
                       description="Fingerprint the texts of IN and score every Hamming "
                       "threshold k against the ground truth in --labels (rows with equal "
                       "labels are duplicates, an empty label is a row without duplicates): "
                       "print precision, recall and F1 per k and a recommended k.")
    _add_io(p, out=False)
    _add_text(p, fingerprints=False)
    g = p.add_argument_group("tuning")
    g.add_argument("--labels", required=True, metavar="COL", help="ground-truth cluster column")
    g.add_argument("--max-k", type=int, default=None, metavar="K",
                   help="only thresholds up to K (needed for large inputs: pairs within K "
                   "are found without comparing all pairs)")
    g.add_argument("--target", default="f1", metavar="T",
                   help="how to choose k: f1 (default), precision=0.95 or recall=0.95")
    g.add_argument("--table", default=None, metavar="OUT", help="write the full table")
    g.add_argument("--plot", default=None, metavar="PNG", help="plot precision, recall and "
                   "F1 against k")
    _add_run(p)
    p.set_defaults(func=_cmd_tune)


# --- shared steps ------------------------------------------------------------------------


class _Recipe(NamedTuple):
    """A spec and the objects it stands for (see :func:`simhash_nb.features.prepare`)."""

    spec: Any
    extras: dict


def _spec(args) -> _Recipe | None:
    from .features import prepare

    normalize = args.normalize
    if normalize is not None:
        steps = [s.strip() for s in normalize.split(",") if s.strip()]
        normalize = () if steps in ([], ["none"]) else tuple(steps)
    options = dict(bits=args.bits, tokenizer=args.tokenizer, ngram=args.ngram,
                   weights=args.weights, normalize=normalize, seed=args.seed)
    if getattr(args, "fingerprints", None):
        given = [f"--{k}" for k, v in options.items() if v is not None]
        if given:
            raise UsageError(f"{', '.join(given)} cannot be used with --fingerprints "
                             "(the fingerprints are made already)")
        return None
    try:
        return _Recipe(*prepare(**options))
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None


def _bar(args, reader, desc: str):
    from tqdm import tqdm

    disable = True if args.quiet else (False if args.progress else None)
    return tqdm(total=reader.total, unit=reader.unit, unit_scale=True, unit_divisor=1024
                if reader.unit == "B" else 1000, desc=desc, file=sys.stderr, disable=disable,
                leave=False, dynamic_ncols=True)


def _batches(args, reader, desc: str):
    """Iterate the reader's batches, advancing a progress bar."""
    with _bar(args, reader, desc) as bar:
        done = 0
        for batch in reader:
            yield batch
            now = reader.progress()
            bar.update(max(0, now - done))
            done = now


def _reader(args, text_column: str | None):
    from .io import TableReader

    return TableReader(args.input, text_columns=[text_column] if text_column else [],
                       batch_rows=args.batch_rows)


def _check_output(args) -> None:
    from .io import table_format

    table_format(args.output)
    out = Path(args.output)
    if not out.parent.is_dir() and str(out.parent) not in ("", "."):
        raise UsageError(f"{args.output}: the folder {out.parent} does not exist")
    if os.path.abspath(args.output) == os.path.abspath(args.input):
        raise UsageError("OUT must not be the same file as IN")


def _fingerprint_batch(batch, column: str, recipe: _Recipe, n_jobs, path: str):
    import pyarrow as pa

    from .fingerprint import _fingerprint_texts
    from .io import InputError

    col = batch.column(batch.schema.get_field_index(column))
    t = col.type
    values = t.value_type if pa.types.is_dictionary(t) else t  # parquet categoricals
    if not (pa.types.is_string(values) or pa.types.is_large_string(values)
            or pa.types.is_string_view(values) or pa.types.is_null(values)):
        raise InputError(f"{path}: column {column!r} holds {t}, not text")
    fps, _, valid = _fingerprint_texts(col, recipe.spec, n_jobs, recipe.extras, False)
    return fps, np.asarray(valid, dtype=bool)


def _stored_fingerprints(batch, column: str, path: str):
    from .io import fingerprints_from_arrow

    return fingerprints_from_arrow(batch.column(batch.schema.get_field_index(column)),
                                   f"{path}: column {column!r}")


def _collect(args, recipe: _Recipe | None):
    """Fingerprints (and ids) of every row of IN, streamed in batches."""
    from .accessors import _Prints

    column = args.fingerprints or args.column
    id_col = getattr(args, "id", None)
    fps, valid, ids = [], [], []
    n = 0
    with _reader(args, None if args.fingerprints else column) as reader:
        reader.require(column, id_col)
        stored_spec = reader.specs.get(column) if args.fingerprints else recipe.spec
        for batch in _batches(args, reader, "fingerprinting"):
            if args.fingerprints:
                f, v = _stored_fingerprints(batch, column, args.input)
            else:
                f, v = _fingerprint_batch(batch, column, recipe, args.n_jobs, args.input)
            fps.append(f)
            valid.append(v)
            if id_col:
                ids.append(batch.column(batch.schema.get_field_index(id_col)))
            n += batch.num_rows
    if fps:
        widths = {f.ndim for f in fps}
        if len(widths) > 1:
            raise UsageError(f"{args.input}: column {column!r} mixes 64- and 128-bit values")
        all_fps, all_valid = np.concatenate(fps), np.concatenate(valid)
    else:
        bits = recipe.spec.bits if recipe is not None else 64
        all_fps = np.zeros((0,) if bits == 64 else (0, 2), dtype=np.uint64)
        all_valid = np.zeros(0, dtype=bool)
    id_values = None
    if id_col:
        import pyarrow as pa

        id_values = pa.chunked_array(ids, type=reader.schema.field(id_col).type)
        id_values = id_values.combine_chunks()
    return _Prints(all_fps, all_valid, stored_spec), id_values, n


def _say(args, message: str) -> None:
    if not args.quiet:
        print(message, file=sys.stderr)


def _rewrite(args, transform: Callable, desc: str, text_column: str | None, specs=None) -> int:
    """Stream IN, transform each batch, write OUT (atomically); the rows written.

    Fingerprint columns of IN (parquet with specs) keep their spec in a parquet OUT and
    become hexadecimal text in a CSV or JSON Lines OUT, like those ``fingerprint`` writes.
    """
    import pyarrow as pa

    from .io import TableWriter, fingerprints_from_arrow, fingerprints_to_arrow, table_format

    as_text = table_format(args.output)[0] != "parquet"
    with _reader(args, text_column) as reader:
        reader.require(text_column)
        carried = {c: s for c, s in reader.specs.items() if c in reader.schema.names}

        def convert(batch, start):
            out = transform(batch, start)
            for col in carried:
                if not as_text or col not in out.schema.names:
                    continue
                i = out.schema.get_field_index(col)
                if pa.types.is_string(out.schema.field(i).type):
                    continue
                fps, valid = fingerprints_from_arrow(out.column(i), col)
                out = out.set_column(i, col, fingerprints_to_arrow(fps, valid, hex=True))
            return out

        empty = pa.RecordBatch.from_pylist([], schema=reader.schema)
        schema = convert(empty, 0).schema
        all_specs = {c: s for c, s in {**carried, **(specs or {})}.items()
                     if c in schema.names}
        with TableWriter(args.output, schema, specs=all_specs) as writer:
            start = 0
            for batch in _batches(args, reader, desc):
                writer.write(convert(batch, start))
                start += batch.num_rows
            return writer.rows


# --- commands ----------------------------------------------------------------------------


def _cmd_fingerprint(args) -> int:
    """``simhash-nb fingerprint IN OUT``."""
    from .io import fingerprints_to_arrow, table_format

    recipe = _spec(args)
    _check_output(args)
    as_hex = table_format(args.output)[0] != "parquet"
    t0 = time.perf_counter()
    missing = [0]

    def transform(batch, start):
        fps, valid = _fingerprint_batch(batch, args.column, recipe, args.n_jobs, args.input)
        missing[0] += int((~valid).sum())
        arr = fingerprints_to_arrow(fps, valid, hex=as_hex)
        if args.out_column in batch.schema.names:
            batch = batch.drop_columns([args.out_column])
        return batch.append_column(args.out_column, arr)

    rows = _rewrite(args, transform, "fingerprinting", args.column,
                    specs={args.out_column: recipe.spec})
    extra = f" ({missing[0]:,} missing texts left empty)" if missing[0] else ""
    _say(args, f"fingerprinted {rows:,} rows in {time.perf_counter() - t0:.1f} s{extra}; "
               f"wrote {args.output}")
    return 0


def _cmd_pairs(args) -> int:
    """``simhash-nb pairs IN OUT``."""
    import pyarrow as pa

    from .accessors import _search_pairs
    from .io import TableWriter

    recipe = _spec(args)
    _check_output(args)
    t0 = time.perf_counter()
    prints, ids, n = _collect(args, recipe)
    pairs = _search_pairs(prints, args.k, None, args.max_pairs, args.n_jobs)
    pos = prints.positions
    i, j = pos[pairs.i], pos[pairs.j]
    if ids is not None:
        left, right = ids.take(pa.array(i)), ids.take(pa.array(j))
    else:
        left, right = pa.array(i, pa.int64()), pa.array(j, pa.int64())
    table = pa.table({"left": left, "right": right,
                      "distance": pa.array(pairs.distance, pa.uint8())})
    with TableWriter(args.output, table.schema) as w:
        for batch in table.to_batches(max_chunksize=1 << 16):
            w.write(batch)
    _say(args, f"{len(pairs):,} pairs within {args.k} bits among {n:,} rows "
               f"({time.perf_counter() - t0:.1f} s); wrote {args.output}")
    return 0


def _cmd_dedupe(args) -> int:
    """``simhash-nb dedupe IN OUT``."""
    from .accessors import _keep_mask

    recipe = _spec(args)
    _check_output(args)
    t0 = time.perf_counter()
    prints, _, n = _collect(args, recipe)
    keep = _keep_mask(prints, args.k, args.keep, args.n_jobs)

    def transform(batch, start):
        import pyarrow as pa

        return batch.filter(pa.array(keep[start:start + batch.num_rows]))

    rows = _rewrite(args, transform, "writing", None)
    _say(args, f"kept {rows:,} of {n:,} rows, dropped {n - rows:,} near duplicates "
               f"(k={args.k}, {time.perf_counter() - t0:.1f} s); wrote {args.output}")
    return 0


def _cmd_clusters(args) -> int:
    """``simhash-nb clusters IN OUT``."""
    import pyarrow as pa

    from .accessors import _cluster_positions

    recipe = _spec(args)
    _check_output(args)
    t0 = time.perf_counter()
    prints, _, n = _collect(args, recipe)
    labels = _cluster_positions(prints, args.k, args.n_jobs)
    name = args.cluster_column

    def transform(batch, start):
        part = labels[start:start + batch.num_rows]
        arr = pa.array(part, pa.int64(), mask=part < 0)
        if name in batch.schema.names:
            batch = batch.drop_columns([name])
        return batch.append_column(name, arr)

    rows = _rewrite(args, transform, "writing", None)
    present = labels[labels >= 0]
    sizes = np.bincount(present) if present.size else np.zeros(0, dtype=np.int64)
    multi = int((sizes > 1).sum())
    _say(args, f"{rows:,} rows in {int((sizes > 0).sum()):,} clusters, {multi:,} with near "
               f"duplicates (k={args.k}, {time.perf_counter() - t0:.1f} s); wrote {args.output}")
    return 0


def _target(text: str) -> dict:
    name, _, value = text.partition("=")
    if name == "f1" and not value:
        return {"target": "f1"}
    if name in ("precision", "recall") and value:
        try:
            return {name: float(value)}
        except ValueError:
            pass
    raise UsageError(f"--target must be f1, precision=P or recall=R, got {text!r}")


def _cmd_tune(args) -> int:
    """``simhash-nb tune IN --labels COL``: precision/recall/F1 per threshold."""
    import pyarrow as pa

    from .evaluate import recommend_k, threshold_table
    from .io import TableWriter, table_format

    recipe = _spec(args)
    spec = recipe.spec
    target = _target(args.target)
    for path in (args.table, args.plot):
        if path is not None and os.path.abspath(path) == os.path.abspath(args.input):
            raise UsageError("an output must not be the input file")
    if args.table is not None:
        table_format(args.table)
    fps, valid, labels = [], [], []
    with _reader(args, args.column) as reader:
        reader.require(args.column, args.labels)
        for batch in _batches(args, reader, "fingerprinting"):
            f, v = _fingerprint_batch(batch, args.column, recipe, args.n_jobs, args.input)
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
        _say(args, f"wrote {args.table}")
    if args.plot is not None:
        _plot_tune(table, rec.k, args.plot)
        _say(args, f"wrote {args.plot}")
    return 0


def _plot_tune(table, k: int, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .io import atomic_path
    from .plotting import plot_threshold_curves

    fig, ax = plt.subplots(figsize=(6.5, 4))
    plot_threshold_curves(table, ax=ax, mark=k)
    fig.tight_layout()
    fmt = (Path(path).suffix or ".png").lstrip(".").lower()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format=fmt)
    plt.close(fig)


# --- demo ---------------------------------------------------------------------------------


def _window(a: str, b: str, width: int) -> tuple[str, str]:
    """Both texts (white space collapsed) cut to ``width``, from just before they differ."""
    a, b = " ".join(str(a).split()), " ".join(str(b).split())
    same = 0
    for x, y in zip(a, b):
        if x != y:
            break
        same += 1
    start = max(0, same - width // 3)

    def cut(t: str) -> str:
        t = ("…" + t[start + 1:]) if start else t
        return t if len(t) <= width else t[: width - 1] + "…"

    return cut(a), cut(b)


def _examples(pairs, n: int):
    """Up to ``n`` pairs spread over the distances (largest first), one per left row."""
    pairs = pairs.drop_duplicates("left")
    groups = [g for _, g in sorted(pairs.groupby("distance"), key=lambda kv: -kv[0])]
    rows = []
    for r in range(max((len(g) for g in groups), default=0)):
        rows += [g.iloc[r] for g in groups if r < len(g)]
        if len(rows) >= n:
            break
    return rows[:n]


def _side_by_side(rows, texts, width: int = 46) -> list[str]:
    lines = []
    for row in rows:
        a, b = _window(texts[row["left"]], texts[row["right"]], width)
        lines.append(f"  d={int(row['distance'])}  {a:<{width}} | {b}")
    return lines


DEMO_NORMALIZE = ("nfkc", "lower", "punct", "whitespace")


def _cmd_demo(args) -> int:
    """``simhash-nb demo``: the whole job on the bundled corpora, with a summary and plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from . import datasets
    from .evaluate import jaccard_pairs, recommend_k, threshold_table
    from .fingerprint import make_spec
    from .hamming import hamming_matrix
    from .io import write_parquet

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # Runs of white space and punctuation would otherwise dominate the tf weights of
    # indented or decorated texts (ASCII art, code) and pull unrelated ones together.
    spec = make_spec(normalize=DEMO_NORMALIZE)
    corpora = {"licences": datasets.load_licences(), "fortunes": datasets.load_fortunes()}
    all_pairs, all_clusters, all_fps, nn, ks = [], [], [], {}, {}
    how = (f"within k={args.k} bits" if args.k is not None else
           "within k bits, k chosen per corpus: the best F1 against exact Jaccard "
           f">= {args.jaccard}")
    print(f"simhash_nb demo: 64-bit SimHash of character {spec.ngram}-grams after "
          f"{'+'.join(spec.normalize)} normalisation; near duplicates {how}\n")
    for name, df in corpora.items():
        t0 = time.perf_counter()
        df = df.set_index("id", drop=False).rename_axis(None)
        df = df.simhash.fingerprint(spec=spec)
        k = args.k
        if k is None:  # the tuning workflow: ground truth, threshold table, recommendation
            truth = jaccard_pairs(df["text"], threshold=args.jaccard, spec=spec)
            rec = recommend_k(threshold_table(df["simhash"].simhash.to_numpy(), truth))
            k = rec.k
            print(f"{name}: k={k} ({len(truth):,} pairs with Jaccard >= {args.jaccard}; at k={k} "
                  f"precision {rec.precision:.2f}, recall {rec.recall:.2f}, F1 {rec.f1:.2f})")
        ks[name] = k
        pairs = df.simhash.near_duplicates(k=k)
        labels = df.simhash.clusters(k=k)
        elapsed = time.perf_counter() - t0
        sizes = labels.value_counts()
        texts = df["text"]
        print(f"{name}: {len(df):,} texts, {len(pairs):,} near-duplicate pairs within {k} bits, "
              f"{int((sizes > 1).sum()):,} clusters of 2+ texts (largest {int(sizes.max())}), "
              f"{len(df) - len(sizes):,} texts redundant; {elapsed * 1000:.0f} ms")
        print("\n".join(_side_by_side(_examples(pairs, args.examples), texts)) + "\n")
        pairs.insert(0, "corpus", name)
        pairs["left_text"] = texts.loc[pairs["left"]].to_numpy()
        pairs["right_text"] = texts.loc[pairs["right"]].to_numpy()
        all_pairs.append(pairs)
        first_id = df["id"].to_numpy()[labels.to_numpy()]
        all_clusters.append(pd.DataFrame({
            "corpus": name, "id": df["id"].to_numpy(), "cluster": first_id,
            "cluster_size": labels.map(sizes).to_numpy(), "text": texts.to_numpy()}))
        all_fps.append(df[["id", "simhash"]].assign(corpus=name).reset_index(drop=True))
        m = hamming_matrix(df["simhash"].simhash.to_numpy())
        np.fill_diagonal(m, 255)
        nn[name] = m.min(axis=1)

    pairs = pd.concat(all_pairs, ignore_index=True)
    clusters = pd.concat(all_clusters, ignore_index=True)
    clusters = clusters[clusters["cluster_size"] > 1].sort_values(["corpus", "cluster", "id"])
    pairs.to_csv(out / "pairs.csv", index=False)
    clusters.to_csv(out / "clusters.csv", index=False)
    fps = pd.concat(all_fps, ignore_index=True)
    fps.attrs = all_fps[0].attrs
    write_parquet(fps, out / "fingerprints.parquet")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (name, d) in zip(axes, nn.items()):
        bins = np.arange(0, min(int(d.max()), 40) + 2) - 0.5
        near = d <= ks[name]
        ax.hist(d[~near], bins=bins, color="#8aa1b1", label="other texts")
        ax.hist(d[near], bins=bins, color="#d1495b", label=f"near duplicate (≤ {ks[name]} bits)")
        ax.axvline(ks[name] + 0.5, color="black", linestyle="--", linewidth=1)
        ax.set_title(f"{name}: {len(d):,} texts")
        ax.set_xlabel("Hamming distance to the nearest other text")
        ax.set_ylabel("texts")
        ax.legend(frameon=False)
    fig.suptitle("SimHash (64 bits): distance of each text to its nearest neighbour")
    fig.tight_layout()
    fig.savefig(out / "nearest_neighbour_distance.png", dpi=110)
    plt.close(fig)
    print(f"wrote {out}/pairs.csv ({len(pairs):,} pairs), {out}/clusters.csv "
          f"({len(clusters):,} texts in clusters), {out}/fingerprints.parquet, "
          f"{out}/nearest_neighbour_distance.png")
    return 0


# --- entry point --------------------------------------------------------------------------


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    if isinstance(e, KeyError) and len(e.args) == 1 and isinstance(e.args[0], str):
        text = e.args[0]
    if isinstance(e, FileNotFoundError) and e.filename:
        text = f"{e.filename}: no such file"
    return (text.splitlines()[0] if text else type(e).__name__)


def _note_cold_cache() -> None:
    """One line on a terminal's stderr when the kernels must be compiled (first run)."""
    if not sys.stderr.isatty():
        return
    from ._kernels import cache_is_cold

    if cache_is_cold():
        print(f"{PROG}: first run: compiling the Numba kernels (a minute or so, once; later "
              "runs load them from the cache)", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``simhash-nb`` with ``argv`` (default: the command line); the exit status.

    Examples
    --------
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     main([])
    2
    >>> err.getvalue().split(":")[1]
    ' error'
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        names = ", ".join(parser.commands)
        print(f"{PROG}: error: choose a command: {names} (see {PROG} --help)", file=sys.stderr)
        return EXIT_USAGE
    from .spec import SpecMismatchError

    _note_cold_cache()
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (UsageError, SpecMismatchError, ValueError, TypeError, KeyError, OSError) as e:
        if getattr(args, "traceback", False):
            raise
        print(f"{PROG} {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
