"""File formats by extension, spec metadata in a schema, and files written
atomically (a temporary file next to the target, renamed when complete)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._core.spec import FingerprintSpec
from .._frames.columns import InputError

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

def spec_map(specs: Mapping[str, Any]) -> dict[str, FingerprintSpec]:
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


def temp_next_to(path: Path) -> str:
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
    tmp = temp_next_to(Path(path))
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

