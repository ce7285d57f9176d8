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

from .._frames.columns import InputError, fingerprints_from_arrow, fingerprints_to_arrow
from .formats import SPEC_KEY, atomic_path, specs_from_metadata, specs_metadata, table_format
from .parquet import read_parquet, read_specs, write_parquet
from .tables import TableReader, TableWriter

__all__ = [
    "InputError",
    "atomic_path",
    "specs_from_metadata",
    "specs_metadata",
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
