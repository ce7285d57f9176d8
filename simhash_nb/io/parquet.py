"""Parquet that remembers its FingerprintSpec: :func:`write_parquet`, :func:`read_parquet`."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .._core.spec import FingerprintSpec, SpecMismatchError
from .._frames.attrs import SPEC_ATTR, column_specs
from .._frames.columns import fingerprint_kind
from .formats import atomic_path, spec_map, specs_from_metadata, specs_metadata

# --- parquet with specs -------------------------------------------------------------------


def _frame_specs(df, spec) -> dict[str, FingerprintSpec]:
    fp_cols = [c for c in df.columns if fingerprint_kind(df[c].dtype) in ("fp64", "fp128")]
    if spec is None:
        recorded = df.attrs.get(SPEC_ATTR) or {}
        if isinstance(recorded, (str, FingerprintSpec)):
            recorded = {c: recorded for c in fp_cols}
        specs = {c: s for c, s in spec_map(recorded).items() if c in df.columns}
        unknown = [c for c in fp_cols if c not in specs]
        if unknown:
            warnings.warn(
                f"no fingerprint spec is known for column(s) {unknown}, so the file will not "
                f"say how they were made and read_parquet cannot check them against others. "
                f"pandas drops DataFrame.attrs, where the spec is kept, in pd.concat and "
                f"pd.merge when the inputs' attrs differ (a frame without a spec, say). "
                f"Pass spec= to record it, or spec={{}} to write without a spec",
                UserWarning, stacklevel=3)
        return specs
    if isinstance(spec, FingerprintSpec):
        if not fp_cols:
            raise ValueError("spec given but the DataFrame has no fingerprint column "
                             "(UInt64 or binary[16][pyarrow])")
        spec = {c: spec for c in fp_cols}
    if not isinstance(spec, Mapping):
        raise TypeError(f"spec must be a FingerprintSpec or a dict of them, got {type(spec)}")
    specs = spec_map(spec)
    for col, s in specs.items():
        if col not in df.columns:
            raise KeyError(f"spec given for column {col!r}, which is not in the DataFrame")
        kind = fingerprint_kind(df[col].dtype)
        if kind not in ("fp64", "fp128") or (kind == "fp128") != (s.bits == 128):
            raise ValueError(f"column {col!r} (dtype {df[col].dtype}) does not hold "
                             f"{s.bits}-bit fingerprints")
    return specs


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
        accessor and :func:`read_parquet`, kept by ``pd.concat`` of frames with equal
        specs), with a ``UserWarning`` for a fingerprint column (``UInt64``,
        ``binary[16]``) whose spec is not known: pandas drops ``attrs`` when it combines
        frames whose ``attrs`` differ, and a file without its spec cannot be checked
        later. A single spec applies to every fingerprint column; ``{}`` writes them
        without a spec, silently.
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

    Warns
    -----
    UserWarning
        If ``spec`` is not given and a fingerprint column has no known spec.

    Notes
    -----
    Combining frames fingerprinted with different specs (``pd.concat``, ``pd.merge``,
    one column name in both) raises :class:`~simhash_nb.SpecMismatchError` in pandas'
    own comparison of their ``attrs``, before anything is written.

    Examples
    --------
    >>> import pandas as pd, simhash_nb as sh, tempfile, os
    >>> df = pd.DataFrame({"text": ["a b", "c d"]}).simhash.fingerprint(tokenizer="word")
    >>> path = os.path.join(tempfile.mkdtemp(), "fps.parquet")
    >>> sh.write_parquet(df, path)
    >>> sh.read_parquet(path).simhash.near_duplicates(k=64 - 1).shape
    (1, 3)
    """
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
    df.attrs = {SPEC_ATTR: column_specs(specs)} if specs else {}
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
