"""Tables on disk: parquet that remembers its FingerprintSpec, and batched readers/writers.

Parquet files written by :func:`write_parquet` (and by the ``simhash-nb`` command) carry
the spec of each fingerprint column in the schema metadata, under the key
``simhash_nb.specs``: a JSON object ``{column: spec}`` (:meth:`FingerprintSpec.to_dict`).
:func:`read_parquet` restores it to ``DataFrame.attrs["simhash_spec"]`` and refuses to
combine files whose specs differ.

Fingerprint columns are stored as ``uint64`` (64 bits) or ``fixed_size_binary(16)``
(128 bits, big-endian: ``hi * 2**64 + lo``), nulls for missing values. Text formats (CSV,
JSON Lines) hold them as fixed-width lowercase hexadecimal strings (16 or 32 digits), as
no reader keeps unsigned 64-bit integers safe.

:class:`TableReader` and :class:`TableWriter` stream CSV, JSON Lines (both optionally
gzipped) and parquet in record batches; the command line uses them.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from ._core.spec import FingerprintSpec, SpecMismatchError
from ._frames import (
    SPEC_ATTR,
    InputError,
    fingerprint_kind,
    fingerprints_from_arrow,
    fingerprints_to_arrow,
)

__all__ = [
    "InputError",
    "SPEC_KEY",
    "TableReader",
    "TableWriter",
    "fingerprints_from_arrow",
    "fingerprints_to_arrow",
    "read_parquet",
    "read_specs",
    "table_format",
    "write_parquet",
]

SPEC_KEY = b"simhash_nb.specs"
"""Schema metadata key holding ``{column: spec}`` as JSON."""

_FORMATS = {
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
}


def table_format(path) -> tuple[str, str | None]:
    """``(format, compression)`` of a file from its name.

    Formats: ``"parquet"`` (``.parquet``, ``.pq``), ``"csv"`` (``.csv``), ``"jsonl"``
    (``.jsonl``, ``.ndjson``, ``.json`` holding one object per line); csv and jsonl may
    end in ``.gz`` (gzip).

    Examples
    --------
    >>> table_format("docs.jsonl.gz")
    ('jsonl', 'gzip')
    """
    name = Path(path).name.lower()
    compression = None
    if name.endswith(".gz"):
        compression, name = "gzip", name[:-3]
    fmt = _FORMATS.get(os.path.splitext(name)[1])
    if fmt is None or (fmt == "parquet" and compression):
        raise InputError(
            f"{path}: unknown file type; use .parquet, .csv, .jsonl (csv and jsonl may "
            "end in .gz)"
        )
    return fmt, compression


# --- parquet with specs -------------------------------------------------------------------


def _spec_map(specs: Mapping[str, Any]) -> dict[str, FingerprintSpec]:
    out = {}
    for col, spec in specs.items():
        if not isinstance(spec, FingerprintSpec):
            spec = FingerprintSpec.from_json(spec)
        out[str(col)] = spec
    return out


def specs_metadata(specs: Mapping[str, FingerprintSpec]) -> dict[bytes, bytes]:
    """Schema metadata entry for ``{column: spec}``."""
    body = {col: spec.to_dict() for col, spec in sorted(specs.items())}
    return {SPEC_KEY: json.dumps(body, sort_keys=True, separators=(",", ":")).encode()}


def specs_from_metadata(metadata: Mapping[bytes, bytes] | None,
                        source: str = "the schema") -> dict[str, FingerprintSpec]:
    """``{column: spec}`` from schema metadata (empty when there is none).

    Raises ``ValueError`` naming ``source`` and the key when the entry is not a JSON
    object of valid specs.
    """
    if not metadata or SPEC_KEY not in metadata:
        return {}
    try:
        body = json.loads(metadata[SPEC_KEY])
        if not isinstance(body, dict):
            raise ValueError(f"a JSON object expected, got {type(body).__name__}")
        return {str(col): FingerprintSpec.from_json(d) for col, d in body.items()}
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError) as e:
        raise ValueError(f"{source}: bad fingerprint specs in the metadata key "
                         f"{SPEC_KEY.decode()!r}: {e}") from None


def _frame_specs(df, spec) -> dict[str, FingerprintSpec]:
    fp_cols = [c for c in df.columns if fingerprint_kind(df[c].dtype) in ("fp64", "fp128")]
    if spec is None:
        recorded = df.attrs.get(SPEC_ATTR) or {}
        if isinstance(recorded, (str, FingerprintSpec)):
            recorded = {c: recorded for c in fp_cols}
        return {c: s for c, s in _spec_map(recorded).items() if c in df.columns}
    if isinstance(spec, FingerprintSpec):
        if not fp_cols:
            raise ValueError("spec given but the DataFrame has no fingerprint column "
                             "(UInt64 or binary[16][pyarrow])")
        spec = {c: spec for c in fp_cols}
    if not isinstance(spec, Mapping):
        raise TypeError(f"spec must be a FingerprintSpec or a dict of them, got {type(spec)}")
    specs = _spec_map(spec)
    for col, s in specs.items():
        if col not in df.columns:
            raise KeyError(f"spec given for column {col!r}, which is not in the DataFrame")
        kind = fingerprint_kind(df[col].dtype)
        if kind not in ("fp64", "fp128") or (kind == "fp128") != (s.bits == 128):
            raise ValueError(f"column {col!r} (dtype {df[col].dtype}) does not hold "
                             f"{s.bits}-bit fingerprints")
    return specs


def _temp_next_to(path: Path) -> str:
    """A new empty file beside ``path`` (same folder, so a rename is atomic).

    Created with mode 0666 less the umask, as the final file would be (``mkstemp``
    would make it private).
    """
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path}: the folder {path.parent} does not exist")
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.part"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return str(tmp)
    raise FileExistsError(f"cannot create a temporary file next to {path}")


@contextlib.contextmanager
def atomic_path(path) -> Iterator[str]:
    """A temporary path next to ``path``, renamed to it only if the block succeeds."""
    tmp = _temp_next_to(Path(path))
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_parquet(df, path, spec=None, *, index: bool | None = None) -> None:
    """Write a DataFrame to parquet with the spec of its fingerprint columns.

    Parameters
    ----------
    df : pandas.DataFrame or Series
    path : str or path
        Must end in ``.parquet`` or ``.pq`` (a ``ValueError`` otherwise: parquet under a
        ``.csv`` name would mislead every later reader). Written to a temporary file
        first, then renamed: a failed write leaves any existing file in place.
    spec : FingerprintSpec or dict of column -> FingerprintSpec, optional
        Default: the specs in ``df.attrs["simhash_spec"]`` (set by the ``.simhash``
        accessor). A single spec applies to every fingerprint column.
    index : bool, optional
        Store the index (as in ``DataFrame.to_parquet``; default: unless it is a
        RangeIndex).

    Raises
    ------
    TypeError
        If ``df`` is not a pandas DataFrame.
    ValueError
        If ``path`` does not end in ``.parquet`` or ``.pq``.
    FileNotFoundError
        If the folder of ``path`` does not exist.

    Examples
    --------
    >>> import pandas as pd, simhash_nb as sh, tempfile, os
    >>> df = pd.DataFrame({"text": ["a b", "c d"]}).simhash.fingerprint(tokenizer="word")
    >>> path = os.path.join(tempfile.mkdtemp(), "fps.parquet")
    >>> sh.write_parquet(df, path)
    >>> sh.read_parquet(path).simhash.near_duplicates(k=64 - 1).shape
    (1, 3)
    """
    import pandas as pd
    import pyarrow.parquet as pq

    if isinstance(df, pd.Series):
        attrs = df.attrs
        df = df.to_frame()
        df.attrs = dict(attrs)
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if isinstance(path, (str, os.PathLike)):
        suffix = Path(path).suffix.lower()
        if suffix not in (".parquet", ".pq"):
            raise ValueError(f"{path}: write_parquet writes parquet; name the file .parquet "
                             f"or .pq, not {suffix or 'without a suffix'}")
    specs = _frame_specs(df, spec)
    table = pa.Table.from_pandas(df, preserve_index=index)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           **specs_metadata(specs)})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_specs(path) -> dict[str, FingerprintSpec]:
    """``{column: spec}`` stored in a parquet file (empty if it has none).

    Examples
    --------
    >>> import pandas as pd, simhash_nb as sh, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "fps.parquet")
    >>> sh.write_parquet(pd.DataFrame({"text": ["x"]}).simhash.fingerprint(), path)
    >>> read_specs(path)["simhash"].bits
    64
    """
    import pyarrow.parquet as pq

    return specs_from_metadata(pq.read_schema(path).metadata, str(path))


def _parquet_paths(path) -> list[str]:
    if isinstance(path, (str, os.PathLike)):
        p = Path(path)
        if p.is_dir():
            files = sorted(str(f) for f in p.iterdir()
                           if f.suffix in (".parquet", ".pq") and not f.name.startswith("."))
            if not files:
                raise FileNotFoundError(f"no .parquet files in {p}")
            return files
        return [str(p)]
    paths = [str(p) for p in path]
    if not paths:
        raise ValueError("no paths given")
    return paths


def _types_mapper():
    import pandas as pd

    mapping = {pa.uint64(): pd.UInt64Dtype(), pa.binary(16): pd.ArrowDtype(pa.binary(16))}
    return mapping.get


def read_parquet(path, columns: list[str] | None = None):
    """Read parquet file(s) written by :func:`write_parquet`, restoring the specs.

    Parameters
    ----------
    path : str, path, directory or list of paths
        Several files are concatenated; their fingerprint columns must have equal specs.
    columns : list of str, optional

    Returns
    -------
    pandas.DataFrame
        Fingerprint columns as ``UInt64`` / ``binary[16][pyarrow]``; specs in
        ``attrs["simhash_spec"]``.

    Raises
    ------
    SpecMismatchError
        If two files hold fingerprints made with different specs (or one has a spec for
        a column and another none).
    ValueError
        If the files have incompatible columns.

    Examples
    --------
    >>> import pandas as pd, simhash_nb as sh, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> df = pd.DataFrame({"text": ["a", "b"]}).simhash.fingerprint()
    >>> sh.write_parquet(df.iloc[:1], os.path.join(d, "1.parquet"))
    >>> sh.write_parquet(df.iloc[1:], os.path.join(d, "2.parquet"))
    >>> len(sh.read_parquet(d))
    2
    """
    import pyarrow.parquet as pq

    paths = _parquet_paths(path)
    tables, specs, first = [], None, None
    for p in paths:
        table = pq.read_table(p, columns=columns, use_pandas_metadata=True)
        file_specs = specs_from_metadata(table.schema.metadata, p)
        if columns is not None:
            file_specs = {c: s for c, s in file_specs.items() if c in columns}
        if specs is None:
            specs, first = file_specs, p
        elif file_specs != specs:
            raise SpecMismatchError(_spec_diff(first, specs, p, file_specs))
        tables.append(table)
    if len(tables) == 1:
        table = tables[0]
    else:
        try:
            table = pa.concat_tables(tables, promote_options="default")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise ValueError(f"the files have incompatible columns: {e}") from None
    df = table.to_pandas(types_mapper=_types_mapper())
    df.attrs = {SPEC_ATTR: {c: s.to_json() for c, s in specs.items()}} if specs else {}
    return df


def _spec_diff(a_path, a, b_path, b) -> str:
    for col in sorted(set(a) | set(b)):
        sa, sb = a.get(col), b.get(col)
        if sa == sb:
            continue
        if sa is None or sb is None:
            has, lacks = (a_path, b_path) if sb is None else (b_path, a_path)
            return (f"column {col!r} has a fingerprint spec in {has} but none in {lacks}; "
                    "cannot tell whether the fingerprints are comparable")
        diffs = [f"{k}: {v!r} != {sb.to_dict()[k]!r}" for k, v in sa.to_dict().items()
                 if sb.to_dict()[k] != v]
        return (f"column {col!r} was fingerprinted with different specs in {a_path} and "
                f"{b_path} ({'; '.join(diffs)}); recompute one of them")
    return "the files have different fingerprint specs"


# --- streaming readers and writers (the command line) --------------------------------------


class _CountingFile:
    """An input file whose position shows how much has been read.

    ``stream`` is what the Arrow readers read: the file itself, or (gzip) a Python
    decompressor over it, whose position in the decompressed text tells the ratio of
    compressed to decompressed bytes.
    """

    def __init__(self, path, compression: str | None = None):
        self.size = os.path.getsize(path)
        self._gz = None
        if compression:
            import gzip

            self.file = open(path, "rb")  # noqa: SIM115 (closed in close)
            self._gz = gzip.GzipFile(fileobj=self.file, mode="rb")
            self.stream = pa.PythonFile(self._gz, mode="r")
        else:
            self.file = pa.OSFile(str(path), "rb")
            self.stream = self.file

    def position(self) -> int:
        # the Arrow readers close the file when they reach its end
        try:
            return self.size if self.file.closed else self.file.tell()
        except (OSError, ValueError):
            return self.size

    def ratio(self) -> float:
        """Bytes of the file per byte of the text read so far."""
        if self._gz is None:
            return 1.0
        try:
            inflated = self._gz.tell()
        except (OSError, ValueError):
            return 1.0
        return self.position() / inflated if inflated else 1.0

    def close(self) -> None:
        for f in (self.stream, self._gz, self.file):
            if f is not None:
                with contextlib.suppress(OSError, ValueError):
                    f.close()


class TableReader:
    """Record batches of a CSV, JSON Lines (optionally gzipped) or parquet file.

    Use as a context manager; iterate for ``pyarrow.RecordBatch`` objects. ``schema`` is
    known once open; :meth:`progress` and ``total`` measure bytes read (CSV, JSON Lines)
    or rows (parquet), in ``unit``.

    Parameters
    ----------
    path : str or path
    text_columns : sequence of str
        Columns read as strings whatever they look like (CSV: no type inference).
    batch_rows : int
        Rows per batch for parquet; CSV and JSON Lines batches are blocks of
        ``block_bytes``.
    block_bytes, max_block_bytes : int
        A CSV / JSON Lines row longer than a block makes the reader start again with
        blocks four times larger (the rows read are skipped), up to ``max_block_bytes``.

    Empty cells of the ``text_columns`` of a CSV file are missing values (null), as CSV
    cannot tell them apart. A CSV file whose last field opens a quote that is never
    closed (which would swallow the rest of the file) raises :class:`InputError`.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("id,text\\n1,hello\\n2,world\\n")
    >>> with TableReader(path, text_columns=["text"]) as r:
    ...     [b.num_rows for b in r], r.schema.field("text").type
    ([2], DataType(large_string))
    """

    def __init__(self, path, *, text_columns=(), batch_rows: int = 65536,
                 block_bytes: int = 8 << 20, max_block_bytes: int = 1 << 30) -> None:
        self.path = str(path)
        self.format, self.compression = table_format(path)
        self.text_columns = list(text_columns)
        self.batch_rows = int(batch_rows)
        self.block_bytes = int(block_bytes)
        self.max_block_bytes = max(int(max_block_bytes), self.block_bytes)
        self._blocks = 0
        self._pending = 0
        self._finished = False
        self.schema: pa.Schema | None = None
        self.specs: dict[str, FingerprintSpec] = {}
        self.unit = "rows" if self.format == "parquet" else "B"
        self.total: int | None = None
        self._raw = None
        self._reader = None
        self._rows = 0

    def _fail(self, e: Exception) -> InputError:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return InputError(f"cannot read {self.path} as {self.format}: {msg}")

    def __enter__(self) -> TableReader:
        if not os.path.isfile(self.path):
            raise InputError(f"{self.path}: no such file")
        try:
            self._open()
        except (pa.ArrowException, OSError, ValueError, EOFError) as e:
            self.close()
            if isinstance(e, (InputError, SpecMismatchError)):
                raise
            raise self._fail(e) from None
        return self

    def _open(self) -> None:
        if self.format == "parquet":
            import pyarrow.parquet as pq

            self._reader = pq.ParquetFile(self.path)
            self.schema = self._reader.schema_arrow
            self.total = self._reader.metadata.num_rows
            self.specs = specs_from_metadata(self.schema.metadata, self.path)
            return
        self.total = os.path.getsize(self.path)
        while True:
            try:
                self._open_text()
                break
            except pa.ArrowInvalid as e:
                if not self._grow(e):
                    raise
        self.schema = self._reader.schema

    def _open_text(self, schema: pa.Schema | None = None) -> None:
        """Open the CSV / JSON Lines stream (again, with ``schema`` once it is known)."""
        if self._raw is not None:
            self._raw.close()
        self._raw = _CountingFile(self.path, self.compression)
        self._blocks = 0
        stream = self._raw.stream
        if self.format == "csv":
            from pyarrow import csv

            types = {c: pa.large_string() for c in self.text_columns}  # absent ones: ignored
            if schema is not None:
                types = {f.name: f.type for f in schema}
            self._reader = csv.open_csv(
                stream,
                read_options=csv.ReadOptions(block_size=self.block_bytes),
                parse_options=csv.ParseOptions(newlines_in_values=True),
                convert_options=csv.ConvertOptions(column_types=types),
            )
        else:
            from pyarrow import json as pj

            self._reader = pj.open_json(
                stream, read_options=pj.ReadOptions(block_size=self.block_bytes),
                parse_options=pj.ParseOptions(explicit_schema=schema),
            )

    def _grow(self, e: Exception) -> bool:
        """After Arrow's "straddling object" error (a row longer than a block): a block
        four times larger, up to ``max_block_bytes``; False if it cannot grow."""
        if "straddl" not in str(e) or self.block_bytes >= self.max_block_bytes:
            return False
        self.block_bytes = min(self.block_bytes * 4, self.max_block_bytes)
        return True

    def require(self, *columns: str | None) -> None:
        """Raise :class:`InputError` naming any column the file lacks."""
        names = self.schema.names
        for c in columns:
            if c is not None and c not in names:
                shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
                raise InputError(f"{self.path} has no column {c!r} (columns: {shown})")

    def progress(self) -> int:
        """Bytes (CSV, JSON Lines) or rows (parquet) read so far."""
        if self.format == "parquet":
            return self._rows
        # Arrow reads ahead of the batches it returns: count the blocks parsed (one a
        # batch), in bytes of the file (compressed bytes for .gz)
        if self._finished:
            return self.total
        blocks = self._blocks - self._pending  # one batch is held back (see __iter__)
        done = int(blocks * self.block_bytes * self._raw.ratio())
        return min(done, self._raw.position(), self.total)

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        try:
            if self.format == "parquet":
                for batch in self._reader.iter_batches(batch_size=self.batch_rows):
                    self._rows += batch.num_rows
                    yield batch
                return
            # one batch held back: the last one is checked before it is handed out
            last = None
            for batch in self._text_batches():
                if self.format == "csv":
                    batch = self._null_empty_text(batch)
                if last is not None:
                    self._pending = 1
                    yield last
                last = batch
            self._pending = 0
            if last is not None:
                if self.format == "csv":
                    self._check_closed_quotes(last)
                yield last
            self._finished = True
        except (pa.ArrowException, OSError, ValueError, EOFError) as e:
            if isinstance(e, InputError):
                raise
            raise self._fail(e) from None

    def _text_batches(self) -> Iterator[pa.RecordBatch]:
        """CSV / JSON Lines batches; a row longer than a block makes the reader start
        again with a larger block (and the schema it found), skipping the rows read."""
        skip = 0
        while True:
            try:
                batch = self._reader.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowInvalid as e:
                if not self._grow(e):
                    raise
                skip = self._rows
                self._open_text(self.schema)
                continue
            self._blocks += 1
            if skip:
                if batch.num_rows <= skip:
                    skip -= batch.num_rows
                    continue
                batch, skip = batch.slice(skip), 0
            self._rows += batch.num_rows
            yield batch

    def _null_empty_text(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Empty cells of the text columns as missing values (CSV has no other null)."""
        import pyarrow.compute as pc

        for name in self.text_columns:
            i = batch.schema.get_field_index(name)
            if i < 0:
                continue
            col = batch.column(i)
            if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                continue
            empty = pc.equal(pc.utf8_length(col), 0)
            if pc.any(empty).as_py():
                col = pc.if_else(empty, pa.scalar(None, col.type), col)
                batch = batch.set_column(i, batch.schema.field(i), col)
        return batch

    def _check_closed_quotes(self, batch: pa.RecordBatch) -> None:
        """Refuse a CSV whose last field opens a quote that is never closed.

        Arrow then reads the rest of the file into that field (the following rows
        disappear) without an error; the field's value is the whole tail of the file.
        Checked on uncompressed files (the tail is read from disk).
        """
        if self.compression or batch.num_rows == 0 or batch.num_columns == 0:
            return
        col = batch.column(batch.num_columns - 1)
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            return
        value = col[batch.num_rows - 1].as_py()
        if not value:
            return
        tail = ('"' + value).encode("utf-8")
        if len(tail) > self.total:
            return
        with open(self.path, "rb") as f:
            f.seek(self.total - len(tail))
            if f.read() != tail:
                return
        raise InputError(
            f"cannot read {self.path} as csv: the quote opened in row {self._rows} "
            f"(column {batch.schema.names[-1]!r}, byte {self.total - len(tail)}) is never "
            "closed; it would swallow the rest of the file"
        )

    def close(self) -> None:
        if self._raw is not None:
            self._raw.close()
        if self.format == "parquet" and self._reader is not None:
            self._reader.close()

    def __exit__(self, *exc) -> None:
        self.close()


def _jsonable(v):
    if isinstance(v, bytes):
        return v.hex()
    return str(v)


class TableWriter:
    """Write record batches to CSV, JSON Lines (optionally gzipped) or parquet, atomically.

    The file appears under its name only when the ``with`` block succeeds; on any error
    the partial temporary file is removed.

    Parameters
    ----------
    path : str or path
        Format from the extension (see :func:`table_format`).
    schema : pyarrow.Schema
    specs : dict of column -> FingerprintSpec, optional
        Stored in parquet metadata (text formats have nowhere to keep them).

    Examples
    --------
    >>> import tempfile, os, pyarrow as pa
    >>> path = os.path.join(tempfile.mkdtemp(), "out.jsonl")
    >>> batch = pa.record_batch({"a": [1, 2]})
    >>> with TableWriter(path, batch.schema) as w:
    ...     w.write(batch)
    >>> open(path).read()
    '{"a": 1}\\n{"a": 2}\\n'
    """

    def __init__(self, path, schema: pa.Schema, specs=None) -> None:
        self.path = str(path)
        self.format, self.compression = table_format(path)
        self.schema = schema
        self.specs = dict(specs or {})
        self._tmp = ""
        self._sink = None
        self._raw = None
        self._writer = None
        self.rows = 0

    def __enter__(self) -> TableWriter:
        self._tmp = _temp_next_to(Path(self.path))
        try:
            self._open(self._tmp)
        except BaseException:
            self._discard()
            raise
        return self

    def _discard(self) -> None:
        with contextlib.suppress(OSError):
            self._close()
        with contextlib.suppress(OSError):
            os.unlink(self._tmp)

    def _open(self, tmp: str) -> None:
        if self.format == "parquet":
            import pyarrow.parquet as pq

            schema = self.schema.with_metadata({**(self.schema.metadata or {}),
                                                **specs_metadata(self.specs)})
            self._writer = pq.ParquetWriter(tmp, schema)
            return
        if self.format == "csv":
            from pyarrow import csv

            self._sink = (pa.CompressedOutputStream(tmp, self.compression)
                          if self.compression else pa.OSFile(tmp, "wb"))
            self._writer = csv.CSVWriter(self._sink, self.schema)
            return
        import gzip
        import io

        raw = open(tmp, "wb")  # noqa: SIM115 (closed in _close)
        self._sink = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if self.compression else raw
        self._raw = raw
        self._writer = io.TextIOWrapper(self._sink, encoding="utf-8", newline="\n")

    def write(self, batch: pa.RecordBatch) -> None:
        """Append a batch (its schema must equal ``schema``)."""
        if self.format == "jsonl":
            names = batch.schema.names
            cols = [c.to_pylist() for c in batch.columns]
            dumps = json.JSONEncoder(ensure_ascii=False, default=_jsonable).encode
            self._writer.writelines(
                dumps(dict(zip(names, row))) + "\n" for row in zip(*cols)
            )
        elif self.format == "parquet":
            self._writer.write_batch(batch)
        else:
            self._writer.write_batch(batch)
        self.rows += batch.num_rows

    def _close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        for f in (self._sink, self._raw):
            if f is not None and not f.closed:
                f.close()

    def __exit__(self, et, e, tb) -> None:
        if et is not None:
            self._discard()
            return
        try:
            self._close()
        except BaseException:
            self._discard()
            raise
        os.replace(self._tmp, self.path)
