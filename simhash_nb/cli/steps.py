"""The steps every command shares: streaming batches with a progress bar, reading and
writing tables, stored fingerprints, rewriting a table batch by batch, and SIGTERM
handled as Ctrl-C."""


from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
from tqdm import tqdm

from .._core.fingerprint import fingerprint_texts
from .._frames import Prints
from ..io import (
    InputError,
    TableReader,
    TableWriter,
    fingerprints_from_arrow,
    fingerprints_to_arrow,
    table_format,
)
from .usage import UsageError

# --- shared steps ------------------------------------------------------------------------


def progress_of(args) -> bool | None:
    """``-q`` and ``--progress`` as a ``progress=`` option: False, True, or None (a bar
    when stderr is a terminal)."""
    return False if args.quiet else (True if args.progress else None)


def _bar(args, reader, desc: str):
    progress = progress_of(args)
    return tqdm(total=reader.total, unit=reader.unit, unit_scale=True, unit_divisor=1024
                if reader.unit == "B" else 1000, desc=desc, file=sys.stderr,
                disable=None if progress is None else not progress,
                leave=False, dynamic_ncols=True)


def batches(args, reader, desc: str):
    """Iterate the reader's batches, advancing a progress bar."""
    with _bar(args, reader, desc) as bar:
        done = 0
        for batch in reader:
            yield batch
            now = reader.progress()
            bar.update(max(0, now - done))
            done = now


def open_reader(args, text_column: str | None):
    return TableReader(args.input, text_columns=[text_column] if text_column else [],
                       batch_rows=args.batch_rows)


def check_folder(path: str) -> None:
    """Refuse an output path whose folder does not exist, before any work."""
    out = Path(path)
    if not out.parent.is_dir() and str(out.parent) not in ("", "."):
        raise UsageError(f"{path}: the folder {out.parent} does not exist")


def check_output(args) -> None:
    table_format(args.output)
    check_folder(args.output)
    if os.path.abspath(args.output) == os.path.abspath(args.input):
        raise UsageError("OUT must not be the same file as IN")


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C: the temporary output is removed."""


@contextlib.contextmanager
def sigterm_as_interrupt():
    """While the block runs, SIGTERM acts as Ctrl-C (SIGINT) so that the same cleanup
    runs (temporary ``.part`` files removed, kernels stopped after the current wave).

    The handler only re-sends SIGINT to the process: a kernel that defers SIGINT
    (:func:`simhash_nb._core.parallel.deferred_interrupt`) defers SIGTERM too. Where
    SIGINT is ignored (a background job of a script, ``nohup``), SIGINT itself stays
    ignored but the one SIGTERM re-sends is not: SIGTERM still stops the run.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    previous_int = signal.getsignal(signal.SIGINT)
    if previous is None or previous_int is None:
        yield None
        return
    seen: list[int] = []
    terms: list[int] = []

    def on_sigterm(signum, frame):
        terms.append(signum)
        signal.raise_signal(signal.SIGINT)

    def on_sigint(signum, frame):
        if previous_int is signal.SIG_IGN and not terms:
            return  # a SIGINT of its own: ignored, as the process was told
        seen.append(signum)  # remembered: CPython ignores a KeyboardInterrupt raised in
        raise KeyboardInterrupt  # some callbacks (an import's module lock, a weakref)

    signal.signal(signal.SIGTERM, on_sigterm)
    if previous_int in (signal.default_int_handler, signal.SIG_IGN):
        signal.signal(signal.SIGINT, on_sigint)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


def command(func: Callable) -> Callable:
    """A command run with :func:`sigterm_as_interrupt`."""

    @functools.wraps(func)
    def run(args):
        with sigterm_as_interrupt() as seen:
            result = func(args)
        if seen:  # an interrupt that something swallowed: the run still counts as stopped
            out = getattr(args, "output", None)
            if out and os.path.isfile(out):
                os.remove(out)
            raise KeyboardInterrupt
        return result

    return run


def text_of(batch, column: str, path: str):
    """The text column of a batch, refused when it holds no text."""
    col = batch.column(batch.schema.get_field_index(column))
    t = col.type
    values = t.value_type if pa.types.is_dictionary(t) else t  # parquet categoricals
    if not (pa.types.is_string(values) or pa.types.is_large_string(values)
            or pa.types.is_string_view(values) or pa.types.is_null(values)):
        raise InputError(f"{path}: column {column!r} holds {t}, not text")
    return col


def fingerprint_batch(batch, column: str, recipe, n_jobs, path: str):
    """Fingerprints and validity of a batch's texts (``recipe``: see ``recipe.Recipe``)."""
    col = text_of(batch, column, path)
    fps, _, valid = fingerprint_texts(col, recipe.spec, n_jobs, recipe.extras, False)
    return fps, np.asarray(valid, dtype=bool)


def _stored_fingerprints(batch, column: str, path: str):
    return fingerprints_from_arrow(batch.column(batch.schema.get_field_index(column)),
                                   f"{path}: column {column!r}")


def collect(args, recipe):
    """Fingerprints (and ids) of every row of IN, streamed in batches."""
    column = args.fingerprints or args.column
    id_col = getattr(args, "id", None)
    fps, valid, ids = [], [], []
    n = 0
    with open_reader(args, None if args.fingerprints else column) as reader:
        reader.require(column, id_col)
        stored_spec = reader.specs.get(column) if args.fingerprints else recipe.spec
        for batch in batches(args, reader, "fingerprinting"):
            if args.fingerprints:
                f, v = _stored_fingerprints(batch, column, args.input)
            else:
                f, v = fingerprint_batch(batch, column, recipe, args.n_jobs, args.input)
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
        id_values = pa.chunked_array(ids, type=reader.schema.field(id_col).type)
        id_values = id_values.combine_chunks()
    return Prints(all_fps, all_valid, stored_spec), id_values, n


def put_column(batch, name: str, values):
    """``batch`` with the column ``name`` set to ``values``: one of that name is replaced,
    else the column goes last."""
    if name in batch.schema.names:
        batch = batch.drop_columns([name])
    return batch.append_column(name, values)


def labels_column(labels: np.ndarray, name: str) -> Callable:
    """A :func:`rewrite` transform: the cluster ``labels`` of the rows in reading order as
    the column ``name`` (int64; null where a label is negative, a row without text)."""

    def transform(batch, start):
        part = labels[start:start + batch.num_rows]
        return put_column(batch, name, pa.array(part, pa.int64(), mask=part < 0))

    return transform


def rows_kept(keep: np.ndarray) -> Callable:
    """A :func:`rewrite` transform: the rows of each batch whose ``keep`` (over all rows,
    in reading order) is True."""
    return lambda batch, start: batch.filter(pa.array(keep[start:start + batch.num_rows]))


def write_table(path: str, table) -> None:
    """Write an Arrow table to ``path`` (format from the extension, atomically)."""
    with TableWriter(path, table.schema) as w:
        for batch in table.to_batches(max_chunksize=1 << 16):
            w.write(batch)


def say(args, message: str) -> None:
    if not args.quiet:
        print(message, file=sys.stderr)


def rewrite(args, transform: Callable, desc: str, text_column: str | None, specs=None) -> int:
    """Stream IN, transform each batch, write OUT (atomically); the rows written.

    Fingerprint columns of IN (parquet with specs) keep their spec in a parquet OUT and
    become hexadecimal text in a CSV or JSON Lines OUT, like those ``fingerprint`` writes.
    """
    as_text = table_format(args.output)[0] != "parquet"
    with open_reader(args, text_column) as reader:
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
            for batch in batches(args, reader, desc):
                writer.write(convert(batch, start))
                start += batch.num_rows
            return writer.rows
