"""Streaming tables for the command line: :class:`TableReader` and :class:`TableWriter`
(CSV, JSON Lines, both optionally gzipped, and parquet, in record batches)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import secrets
import zlib
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow import csv
from pyarrow import json as pj

from .._core.spec import FingerprintSpec, SpecMismatchError
from .._frames.columns import InputError
from .formats import specs_from_metadata, specs_metadata, table_format

# --- streaming readers and writers (the command line) --------------------------------------


class _CountingFile:
    """An input file whose position shows how much has been read.

    ``stream`` is what the Arrow readers read: the file itself, or (gzip) Arrow's own
    decompressing stream over it. Arrow reads ahead in a thread of its own, so nothing
    it reads calls back into Python: a Python decompressor there (``gzip.GzipFile``
    through ``pa.PythonFile``) made a process exiting mid-read abort or hang.

    :meth:`position` is the offset in the file itself (compressed bytes for gzip).
    Arrow's stream does not say how much text it has inflated, so :meth:`ratio`
    (bytes of the file per byte of text) is measured once, on the head of the file.
    """

    _SAMPLE_IN = 1 << 20  # compressed bytes inflated at most to measure the ratio
    _SAMPLE_OUT = 16 << 20  # ... stopping once this much text came out

    def __init__(self, path, compression: str | None = None):
        self.size = os.path.getsize(path)
        self.file = pa.OSFile(str(path), "rb")
        self._ratio = 1.0
        if compression:
            self._ratio = self._sample_ratio(path)
            self.stream = pa.CompressedInputStream(self.file, compression)
        else:
            self.stream = self.file

    @classmethod
    def _sample_ratio(cls, path) -> float:
        """Compressed / inflated bytes over the head of a gzip file (members in
        sequence); 1.0 when it cannot tell (a damaged file: Arrow's reader says why)."""
        used = made = 0
        inflate = zlib.decompressobj(wbits=31)
        try:
            with open(path, "rb") as f:
                while used < cls._SAMPLE_IN and made < cls._SAMPLE_OUT:
                    chunk = f.read(1 << 16)
                    if not chunk:
                        break
                    used += len(chunk)
                    while chunk:
                        made += len(inflate.decompress(chunk, cls._SAMPLE_OUT))
                        chunk = inflate.unconsumed_tail
                        if inflate.eof:  # the next gzip member, if any
                            chunk = inflate.unused_data + chunk
                            inflate = zlib.decompressobj(wbits=31)
                        if made >= cls._SAMPLE_OUT:
                            used -= len(chunk)
                            break
        except (OSError, zlib.error):
            return 1.0
        return used / made if used and made else 1.0

    def position(self) -> int:
        # the Arrow readers may close the file when they reach its end
        try:
            return self.size if self.file.closed else self.file.tell()
        except (OSError, ValueError):
            return self.size

    def ratio(self) -> float:
        """Bytes of the file per byte of text (measured on the head of a gzip file)."""
        return self._ratio

    def close(self) -> None:
        for f in (self.stream, self.file):
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
        # the temporary file is created inside the try that removes it: a signal the
        # moment it appears (Ctrl-C, SIGTERM) leaves no ``.part`` file behind
        try:
            self._create_temp()
            self._open(self._tmp)
        except BaseException:
            self._discard()
            raise
        return self

    def _create_temp(self) -> None:
        """As ``formats.temp_next_to``, but ``_tmp`` names the file before it exists, so
        that :meth:`_discard` knows it whenever an exception comes."""
        path = Path(self.path)
        if not path.parent.is_dir():
            raise FileNotFoundError(f"{path}: the folder {path.parent} does not exist")
        for _ in range(100):
            self._tmp = str(path.parent / f".{path.name}.{secrets.token_hex(4)}.part")
            try:
                fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                self._tmp = ""  # someone else's: not ours to remove
                continue
            os.close(fd)
            return
        raise FileExistsError(f"cannot create a temporary file next to {path}")

    def _discard(self) -> None:
        with contextlib.suppress(OSError):
            self._close()
        if self._tmp:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)

    def _open(self, tmp: str) -> None:
        if self.format == "parquet":
            schema = self.schema.with_metadata({**(self.schema.metadata or {}),
                                                **specs_metadata(self.specs)})
            self._writer = pq.ParquetWriter(tmp, schema)
            return
        if self.format == "csv":
            self._sink = (pa.CompressedOutputStream(tmp, self.compression)
                          if self.compression else pa.OSFile(tmp, "wb"))
            self._writer = csv.CSVWriter(self._sink, self.schema)
            return

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
