"""The pandas/Arrow form of fingerprints, shared by every face (accessors, io, CLI, Dask).

- **64 bits**: a nullable ``UInt64`` Series/array; a missing value is ``<NA>``.
- **128 bits**: Arrow ``fixed_size_binary(16)``: the 16 bytes are ``hi * 2**64 + lo`` in
  big-endian order (the core API's ``uint64[n, 2]`` holds ``lo, hi`` in each row).
- The :class:`~simhash_nb.FingerprintSpec` travels in ``attrs["simhash_spec"]`` (JSON),
  in records that make ``pd.concat`` / ``pd.merge`` of different specs raise.
- A ``"simhash"`` string column of 16 (or 32) hexadecimal digits a value, as the command
  line writes to CSV, holds fingerprints (:func:`as_fingerprints`).

Also the steps every face shares: fingerprint a text Series or read a fingerprint one
(:class:`Prints`), search pairs, cluster and dedupe over the rows that are present.
pandas is imported inside the functions that need it, so that ``import simhash_nb``
stays light.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._core.clusters import clusters, dedupe
from ._core.fingerprint import fingerprint_texts
from ._core.pairs import Pairs
from ._core.search import near_duplicates
from ._core.spec import FingerprintSpec, SpecMismatchError, check_compatible
from ._core.tokenizers import prepare, split_options  # the options, defined once there
from ._core.verified import cluster_texts, near_duplicate_texts


class InputError(ValueError):
    """A file cannot be read as the table it should be, or lacks a column."""


SPEC_ATTR = "simhash_spec"
"""Key of the fingerprint spec in ``Series.attrs`` / ``DataFrame.attrs``."""

FINGERPRINT_COLUMN = "simhash"
"""The fingerprint column's default name (the accessor's and ``simhash-nb``'s ``--out-column``)."""

# --- representation -----------------------------------------------------------------------


def fingerprint_kind(dtype) -> str | None:
    """``"text"``, ``"fp64"``, ``"fp128"`` or ``None`` for a pandas dtype."""
    import pandas as pd  # lazily: import simhash_nb does not import pandas
    if isinstance(dtype, pd.StringDtype):
        return "text"
    if isinstance(dtype, pd.ArrowDtype):
        t = dtype.pyarrow_dtype
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            return "text"
        if pa.types.is_uint64(t):
            return "fp64"
        if pa.types.is_fixed_size_binary(t) and t.byte_width == 16:
            return "fp128"
        return None
    if isinstance(dtype, pd.UInt64Dtype):
        return "fp64"
    if isinstance(dtype, pd.CategoricalDtype):
        return "text" if fingerprint_kind(dtype.categories.dtype) == "text" else None
    if isinstance(dtype, np.dtype):
        if dtype == np.uint64:
            return "fp64"
        if dtype.kind == "O":
            return "text"
    return None


def arrow_of(series):
    arr = series.array.__arrow_array__()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def binary16_to_words(arr) -> tuple[np.ndarray, np.ndarray]:
    """A pyarrow ``fixed_size_binary(16)`` array to ``(uint64[n, 2] lo/hi, valid)``."""
    n = len(arr)
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if n == 0:
        return np.zeros((0, 2), dtype=np.uint64), valid
    raw = np.frombuffer(arr.buffers()[1], dtype=">u8", count=2 * (arr.offset + n))
    fps = raw[2 * arr.offset:].reshape(n, 2)[:, ::-1].astype(np.uint64)
    fps[~valid] = 0
    return fps, valid


def words_to_binary16(fps: np.ndarray, valid: np.ndarray | None = None):
    """``uint64[n, 2]`` (lo, hi) fingerprints to a pyarrow ``fixed_size_binary(16)`` array."""
    n = fps.shape[0]
    data = pa.py_buffer(np.ascontiguousarray(fps[:, ::-1]).astype(">u8"))
    mask = None
    if valid is not None and not valid.all():
        mask = pa.array(valid, type=pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(pa.binary(16), n, [mask, data])


def fingerprint_array(fps: np.ndarray, valid: np.ndarray | None = None):
    """Core fingerprints (and validity) as a pandas array: ``UInt64`` or ``binary[16]``."""
    import pandas as pd  # lazily: import simhash_nb does not import pandas

    if valid is None:
        valid = np.ones(fps.shape[0], dtype=bool)
    if fps.ndim == 1:
        return pd.arrays.IntegerArray(np.asarray(fps, dtype=np.uint64), ~valid)
    return pd.arrays.ArrowExtensionArray(words_to_binary16(fps, valid))


def fingerprint_values(series) -> tuple[np.ndarray, np.ndarray]:
    """A fingerprint Series to core ``(fps, valid)``: ``uint64[n]`` or ``uint64[n, 2]``."""
    import pandas as pd  # lazily: import simhash_nb does not import pandas
    kind = fingerprint_kind(series.dtype)
    if kind == "fp128":
        return binary16_to_words(arrow_of(series))
    if kind != "fp64":
        raise TypeError(f"not a fingerprint column (dtype {series.dtype})")
    dtype = series.dtype
    if isinstance(dtype, np.dtype):
        return np.ascontiguousarray(series.to_numpy()), np.ones(len(series), dtype=bool)
    if isinstance(dtype, pd.ArrowDtype):
        arr = arrow_of(series)
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        return pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(np.uint64), valid
    valid = ~np.asarray(series.isna().to_numpy(), dtype=bool)
    return series.to_numpy(dtype=np.uint64, na_value=0), valid


# --- hexadecimal fingerprints in text columns (CSV, JSON Lines) ----------------------------
#
# simhash-nb writes fingerprints to CSV and JSON Lines as fixed-width hexadecimal text,
# which pandas reads back as strings. The rule that tells them from text: a column named
# FINGERPRINT_COLUMN whose every present value (not null, not "") is a string of exactly
# 16 hexadecimal digits (64 bits), or every one of exactly 32 (128 bits), holds
# fingerprints. The same column with only some such values is ambiguous and refused;
# other columns are text, but the methods that take text or fingerprints refuse one
# holding only such values rather than guess (``.simhash.from_hex()`` reads it).

_HEX_ANY = "^(?:[0-9A-Fa-f]{16}|[0-9A-Fa-f]{32})$"  # RE2: $ is the end of the text
_HEX_RE = re.compile("[0-9A-Fa-f]{16}|[0-9A-Fa-f]{32}")  # fullmatch


def _strings(series) -> pa.Array | None:
    """A string Series as an Arrow string array; None if its values are not all strings."""
    import pandas as pd  # lazily: import simhash_nb does not import pandas

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
    import pandas as pd  # lazily: import simhash_nb does not import pandas

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


# --- specs in attrs ---------------------------------------------------------------------
#
# pandas keeps ``attrs`` through most operations, and through ``pd.concat`` / ``pd.merge``
# only when every input's ``attrs`` compare equal (it compares them with ``==``); frames
# fingerprinted with different specs would lose their specs silently. The two records
# below compare like a str and a dict, except that two records of different specs for
# the same column raise SpecMismatchError: that comparison is pandas' own, so the
# concat or merge itself refuses to combine them.


def _spec_or_none(value) -> FingerprintSpec | None:
    if isinstance(value, FingerprintSpec):
        return value
    try:
        return FingerprintSpec.from_json(value)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _refuse_different(a, b, column) -> None:
    """Raise SpecMismatchError if ``a`` and ``b`` record different specs."""
    if isinstance(a, str) and isinstance(b, str) and str.__eq__(a, b):
        return
    sa, sb = _spec_or_none(a), _spec_or_none(b)
    if sa is None or sb is None:
        return
    try:
        check_compatible(sa, sb)
    except SpecMismatchError as e:
        where = "" if column is None else f"column {column!r}: "
        raise SpecMismatchError(
            f"cannot combine these (pd.concat, pd.merge): {where}{e}. Fingerprint both with one "
            f"spec (.simhash.fingerprint(spec=...)), or drop the fingerprint column and "
            f"its spec (df.attrs.pop({SPEC_ATTR!r})) before combining"
        ) from None


class SpecJSON(str):
    """A spec's JSON in ``Series.attrs``; two of different specs refuse to compare equal."""

    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, SpecJSON):
            _refuse_different(self, other, None)
        return str.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__


class ColumnSpecs(dict):
    """``{column: spec JSON}`` in ``DataFrame.attrs``; two that give one column different
    specs refuse to compare equal."""

    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, ColumnSpecs):
            for col in self.keys() & other.keys():
                _refuse_different(self[col], other[col], col)
        return dict.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None


def spec_record(spec: FingerprintSpec) -> SpecJSON:
    """The ``Series.attrs[SPEC_ATTR]`` value for ``spec``."""
    return SpecJSON(spec.to_json())


def column_specs(specs: Mapping) -> ColumnSpecs:
    """The ``DataFrame.attrs[SPEC_ATTR]`` value: ``{column: JSON}`` of specs or JSON."""
    return ColumnSpecs({col: s.to_json() if isinstance(s, FingerprintSpec) else str(s)
                        for col, s in specs.items()})


def spec_of(series) -> FingerprintSpec | None:
    """The spec recorded in a Series' attrs (its own, or its frame's entry for its name)."""
    got = series.attrs.get(SPEC_ATTR)
    if isinstance(got, dict):
        got = got.get(series.name)
    if got is None:
        return None
    if isinstance(got, FingerprintSpec):
        return got
    return FingerprintSpec.from_json(got)


@dataclass
class Prints:
    """Fingerprints of a Series: core array, validity, spec (None: unknown)."""

    fps: np.ndarray
    valid: np.ndarray
    spec: FingerprintSpec | None

    @property
    def positions(self) -> np.ndarray:
        return np.flatnonzero(self.valid)

    def present(self) -> np.ndarray:
        return self.fps if self.valid.all() else self.fps[self.valid]


def prints(series, kind: str, options: dict[str, Any], what: str = "Series") -> Prints:
    """Fingerprint a text Series (with ``options``) or read a fingerprint Series."""
    spec_options, run = split_options(dict(options))
    if kind == "text":
        spec, extras = prepare(**spec_options)
        fps, _, valid = fingerprint_texts(series, spec, run["n_jobs"], extras, run["progress"])
        return Prints(fps, np.asarray(valid, dtype=bool), spec)
    if spec_options:
        raise TypeError(
            f"the {what} holds fingerprints already; fingerprint options "
            f"{sorted(spec_options)} apply only to text"
        )
    fps, valid = fingerprint_values(series)
    return Prints(fps, valid, spec_of(series))


def fingerprint_series(series, p: Prints, name):
    import pandas as pd  # lazily: import simhash_nb does not import pandas

    out = pd.Series(fingerprint_array(p.fps, p.valid), index=series.index, name=name, copy=False)
    attrs = {k: v for k, v in series.attrs.items() if k != SPEC_ATTR}
    if p.spec is not None:
        attrs[SPEC_ATTR] = spec_record(p.spec)
    out.attrs = attrs
    return out


def unique_index(index, what: str) -> None:
    if not index.is_unique:
        dup = index[index.duplicated()][:3].tolist()
        raise ValueError(
            f"the {what} index has duplicate labels (for example {dup}), so pairs of labels "
            "would be ambiguous; call .reset_index() first"
        )


def pairs_frame(pairs, left_index, left_pos, right_index, right_pos):
    import pandas as pd  # lazily: import simhash_nb does not import pandas

    i = left_pos[pairs.i]
    j = right_pos[pairs.j]
    return pd.DataFrame(
        {"left": left_index.take(i), "right": right_index.take(j), "distance": pairs.distance}
    )


SEARCH_OPTIONS = ("similarity", "recall", "method", "blocks", "random_state")
"""Options of the search itself (passed to the core with ``k`` and ``max_pairs``)."""


def split_search(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(search options, the rest)`` of a face method's ``**options``."""
    search = {k: options[k] for k in SEARCH_OPTIONS if k in options}
    return search, {k: v for k, v in options.items() if k not in SEARCH_OPTIONS}


def search_pairs(p: Prints, q: Prints | None, n_jobs=None, **search):
    """Pairs of the present rows (positions among them), as :func:`near_duplicates`."""
    if not p.valid.any() or (q is not None and not q.valid.any()):
        if q is not None:
            check_compatible(p.spec, q.spec)
        return Pairs.empty()
    if q is None:
        return near_duplicates(p.present(), n_jobs=n_jobs, **search)
    check_compatible(p.spec, q.spec)
    return near_duplicates(p.present(), against=q.present(), n_jobs=n_jobs, **search)


def cluster_positions(p: Prints, n_jobs=None, **search) -> np.ndarray:
    """Cluster label per row: the position of its cluster's first row; -1 if missing."""
    pos = p.positions
    labels = np.full(p.fps.shape[0], -1, dtype=np.int64)
    if pos.shape[0]:
        got = clusters(p.present(), n_jobs=n_jobs, **search)
        labels[pos] = pos[np.asarray(got, dtype=np.int64)]
    return labels


def keep_mask(p: Prints, keep: str, n_jobs=None, **search) -> np.ndarray:
    mask = np.ones(p.fps.shape[0], dtype=bool)
    if p.valid.any():
        mask[p.valid] = np.asarray(dedupe(p.present(), keep=keep, n_jobs=n_jobs, **search),
                                   dtype=bool)
    return mask


def verified_pairs(series, threshold: float, options: dict[str, Any], how=near_duplicate_texts):
    """``(SimilarPairs among the present texts, their positions)``: the verified path
    (``how=cluster_texts``: cluster labels among the present texts instead)."""
    options = dict(options)
    recall = options.pop("recall", 0.99)
    spec_options, run = split_options(options)
    valid = ~series.isna().to_numpy()
    pos = np.flatnonzero(valid)
    texts = series if valid.all() else series.iloc[pos]
    got = how(texts, threshold, recall=recall, n_jobs=run["n_jobs"], **spec_options)
    return got, pos


def verified_labels(series, threshold: float, options: dict[str, Any]):
    """``(cluster labels among the present texts, their positions)``, by
    :func:`~simhash_nb.cluster_texts` (joined pairs are not verified again)."""
    return verified_pairs(series, threshold, options, how=cluster_texts)


def verified_frame(got, index, pos):
    import pandas as pd  # lazily: import simhash_nb does not import pandas

    return pd.DataFrame({"left": index.take(pos[got.i]), "right": index.take(pos[got.j]),
                         "jaccard": got.jaccard, "distance": got.distance})


def cluster_series(labels: np.ndarray, index, name: str = "cluster"):
    import pandas as pd  # lazily: import simhash_nb does not import pandas

    arr = pd.arrays.IntegerArray(labels, labels < 0)
    return pd.Series(arr, index=index, name=name, copy=False)


# --- fingerprints <-> Arrow ---------------------------------------------------------------


def fingerprints_to_arrow(fps: np.ndarray, valid: np.ndarray | None = None, *,
                          hex: bool = False) -> pa.Array:
    """Core fingerprints as an Arrow array: ``uint64`` / ``fixed_size_binary(16)``, or hex.

    Parameters
    ----------
    fps : ndarray of uint64, shape (n,) or (n, 2)
    valid : ndarray of bool, optional
        False marks a missing fingerprint (null).
    hex : bool, default False
        Fixed-width lowercase hexadecimal strings instead (16 or 32 digits).

    Examples
    --------
    >>> import numpy as np
    >>> fingerprints_to_arrow(np.array([255, 1], dtype=np.uint64), hex=True).to_pylist()
    ['00000000000000ff', '0000000000000001']
    """
    fps = np.asarray(fps, dtype=np.uint64)
    n = fps.shape[0]
    mask = None
    if valid is not None and not np.all(valid):
        mask = pa.array(np.asarray(valid, dtype=bool)).buffers()[1]
    if hex:
        words = 1 if fps.ndim == 1 else 2
        be = (fps.reshape(n, 1) if fps.ndim == 1 else fps[:, ::-1]).astype(">u8")
        data = be.tobytes().hex().encode("ascii")
        offsets = np.arange(n + 1, dtype=np.int32) * np.int32(16 * words)
        return pa.Array.from_buffers(pa.string(), n, [mask, pa.py_buffer(offsets),
                                                      pa.py_buffer(data)])
    if fps.ndim == 2:
        return words_to_binary16(fps, valid)
    return pa.Array.from_buffers(pa.uint64(), n, [mask, pa.py_buffer(np.ascontiguousarray(fps))])


def fingerprints_from_arrow(arr, name: str = "fingerprints") -> tuple[np.ndarray, np.ndarray]:
    """An Arrow column of fingerprints to core ``(fps, valid)``.

    Accepts ``uint64``, ``fixed_size_binary(16)`` and hexadecimal strings (16 or 32
    digits, all the same width).

    Examples
    --------
    >>> import pyarrow as pa
    >>> fps, valid = fingerprints_from_arrow(pa.array(["00000000000000ff", None]))
    >>> fps.tolist(), valid.tolist()
    ([255, 0], [True, False])
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if pa.types.is_uint64(t):
        return pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(np.uint64), valid
    if pa.types.is_fixed_size_binary(t) and t.byte_width == 16:
        return binary16_to_words(arr)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        # CSV cannot tell an empty field from a null: an empty string is a missing value
        arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, t), arr)
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        lengths = pc.utf8_length(arr.filter(pc.is_valid(arr))).to_numpy(zero_copy_only=False)
        widths = set(np.unique(lengths).tolist())
        if not widths <= {16} and not widths <= {32}:
            raise InputError(
                f"{name}: fingerprints as text must be 16 or 32 hexadecimal digits each "
                f"(found lengths {sorted(widths)[:5]})"
            )
        width = widths.pop() if widths else 16
        filled = pc.fill_null(arr, "0" * width)
        bad = np.flatnonzero(np.asarray(pc.invert(pc.match_substring_regex(
            filled, "^[0-9A-Fa-f]*$")).to_numpy(zero_copy_only=False), dtype=bool))
        if bad.size:  # bytes.fromhex would skip spaces, and non-ASCII would not encode
            raise InputError(f"{name}: fingerprints as text must be hexadecimal (row "
                             f"{int(bad[0])}: {filled[int(bad[0])].as_py()!r})")
        filled = filled.to_numpy(zero_copy_only=False)
        raw = np.asarray(filled, dtype=f"S{width}").tobytes()
        try:
            be = np.frombuffer(bytes.fromhex(raw.decode("ascii")), dtype=">u8")
        except (ValueError, UnicodeDecodeError):
            raise InputError(f"{name}: fingerprints as text must be hexadecimal") from None
        fps = be.astype(np.uint64)
        if width == 32:
            fps = np.ascontiguousarray(fps.reshape(-1, 2)[:, ::-1])
        return fps, valid
    raise InputError(
        f"{name} has type {t}; fingerprints must be uint64, fixed_size_binary(16) or hex text"
    )
