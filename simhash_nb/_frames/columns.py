"""The pandas/Arrow form of fingerprints: dtypes, validity, and the Arrow column types.

- **64 bits**: a nullable ``UInt64`` Series/array; a missing value is ``<NA>``.
- **128 bits**: Arrow ``fixed_size_binary(16)``: the 16 bytes are ``hi * 2**64 + lo`` in
  big-endian order (the core API's ``uint64[n, 2]`` holds ``lo, hi`` in each row).
- Files: ``uint64``, ``fixed_size_binary(16)`` or fixed-width hexadecimal text
  (:func:`fingerprints_to_arrow`, :func:`fingerprints_from_arrow`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


class InputError(ValueError):
    """A file cannot be read as the table it should be, or lacks a column."""


FINGERPRINT_COLUMN = "simhash"
"""The fingerprint column's default name (the accessor's and ``simhash-nb``'s ``--out-column``)."""


def fingerprint_kind(dtype) -> str | None:
    """``"text"``, ``"fp64"``, ``"fp128"`` or ``None`` for a pandas dtype."""
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
        if dtype.kind == "u" and dtype.itemsize == 8:  # uint64 of either byte order
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
    if valid is None:
        valid = np.ones(fps.shape[0], dtype=bool)
    if fps.ndim == 1:
        return pd.arrays.IntegerArray(np.asarray(fps, dtype=np.uint64), ~valid)
    return pd.arrays.ArrowExtensionArray(words_to_binary16(fps, valid))


def fingerprint_values(series) -> tuple[np.ndarray, np.ndarray]:
    """A fingerprint Series to core ``(fps, valid)``: ``uint64[n]`` or ``uint64[n, 2]``."""
    kind = fingerprint_kind(series.dtype)
    if kind == "fp128":
        return binary16_to_words(arrow_of(series))
    if kind != "fp64":
        raise TypeError(f"not a fingerprint column (dtype {series.dtype})")
    dtype = series.dtype
    if isinstance(dtype, np.dtype):
        fps = np.ascontiguousarray(series.to_numpy(), dtype=np.uint64)  # native byte order
        return fps, np.ones(len(series), dtype=bool)
    if isinstance(dtype, pd.ArrowDtype):
        arr = arrow_of(series)
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        return pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(np.uint64), valid
    valid = ~np.asarray(series.isna().to_numpy(), dtype=bool)
    return series.to_numpy(dtype=np.uint64, na_value=0), valid


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
