"""Hexadecimal fingerprints in text columns (CSV, JSON Lines), told apart from text.

simhash-nb writes fingerprints to CSV and JSON Lines as fixed-width hexadecimal text,
which pandas reads back as strings. The rule that tells them from text: a column named
FINGERPRINT_COLUMN whose every present value (not null, not "") is a string of exactly
16 hexadecimal digits (64 bits), or every one of exactly 32 (128 bits), holds
fingerprints. The same column with only some such values is ambiguous and refused;
other columns are text, but the methods that take text or fingerprints refuse one
holding only such values rather than guess (``.simhash.from_hex()`` reads it).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .columns import (
    FINGERPRINT_COLUMN,
    fingerprint_array,
    fingerprint_kind,
    fingerprints_from_arrow,
)

_HEX_ANY = "^(?:[0-9A-Fa-f]{16}|[0-9A-Fa-f]{32})$"  # RE2: $ is the end of the text
_HEX_RE = re.compile("[0-9A-Fa-f]{16}|[0-9A-Fa-f]{32}")  # fullmatch


def _strings(series) -> pa.Array | None:
    """A string Series as an Arrow string array; None if its values are not all strings."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return None
    try:
        arr = pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_string_view(arr.type) or pa.types.is_null(arr.type):
        arr = arr.cast(pa.large_string())
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return arr


def _present(arr: pa.Array) -> pa.Array:
    return arr.filter(pc.and_(pc.is_valid(arr), pc.not_equal(arr, "")))


def _first_looks_hex(series) -> bool:
    present = np.flatnonzero(~np.asarray(series.isna(), dtype=bool))
    if not present.size:
        return False
    v = series.iloc[int(present[0])]
    return isinstance(v, str) and (v == "" or _HEX_RE.fullmatch(v) is not None)


def hex_width(series, *, strict: bool = False) -> int | None:
    """16 or 32 if every present value of a text Series is a hexadecimal string of that
    many digits (and one is present), else None.

    With ``strict``, a column where only some values are (or widths differ) raises
    ``ValueError`` naming it.
    """
    if fingerprint_kind(series.dtype) != "text" or not (strict or _first_looks_hex(series)):
        return None
    arr = _strings(series)
    if arr is None:
        return None
    arr = _present(arr)
    if len(arr) == 0:
        return None
    hexy = pc.match_substring_regex(arr, _HEX_ANY)
    n_hex = pc.sum(hexy).as_py() or 0
    if n_hex == 0:
        return None
    widths = sorted(pc.unique(pc.utf8_length(arr.filter(hexy))).to_pylist())
    if n_hex == len(arr) and len(widths) == 1:
        return int(widths[0])
    if not strict:
        return None
    if n_hex == len(arr):
        found = "mixes 16- and 32-digit hexadecimal fingerprints"
    else:
        other = arr.filter(pc.invert(hexy))[0].as_py()
        rest = len(arr) - n_hex
        found = (f"holds {n_hex:,} hexadecimal fingerprints and {rest:,} other "
                 f"{'value' if rest == 1 else 'values'} (for example {other[:40]!r})")
    raise ValueError(
        f"column {series.name!r} {found}, so it is neither fingerprints nor text: fix or "
        f"drop those rows, or rename the column to use it as text (a "
        f"{FINGERPRINT_COLUMN!r} column of strings holds fingerprints when every value "
        f"has 16 hexadecimal digits, or every one 32)"
    )


def parse_hex(series):
    """A Series of hexadecimal fingerprints as a fingerprint Series (same index, name,
    attrs); ``ValueError`` unless every present value has 16, or every one 32, digits."""
    arr = _strings(series) if fingerprint_kind(series.dtype) == "text" else None
    if arr is None:
        raise TypeError(f"hexadecimal fingerprints must be strings; {series.name!r} has "
                        f"dtype {series.dtype}")
    what = "the Series" if series.name is None else f"column {series.name!r}"
    fps, valid = fingerprints_from_arrow(arr, what)
    out = pd.Series(fingerprint_array(fps, valid), index=series.index, name=series.name,
                    copy=False)
    out.attrs = dict(series.attrs)
    return out


def as_fingerprints(series, *, guess: bool = False, what: str = "Series"):
    """``(series, kind)``, a column of hexadecimal fingerprints read as fingerprints.

    ``guess``: the caller takes text or fingerprints; a text Series of another name
    holding only hexadecimal fingerprints is then refused (``ValueError``), not guessed.
    """
    kind = fingerprint_kind(series.dtype)
    if kind != "text":
        return series, kind
    if series.name == FINGERPRINT_COLUMN:
        width = hex_width(series, strict=True)
        if width is not None:
            return parse_hex(series), "fp64" if width == 16 else "fp128"
    elif guess:
        width = hex_width(series)
        if width is not None:
            raise ValueError(
                f"the {what} {series.name!r} holds only {width}-digit hexadecimal strings, "
                f"as simhash-nb writes fingerprints to CSV; call .simhash.from_hex() on it "
                f"to use them as fingerprints (a {FINGERPRINT_COLUMN!r} column is read so "
                f"by itself), or .simhash.fingerprint() to fingerprint them as text"
            )
    return series, kind
