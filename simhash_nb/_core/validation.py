"""Input checks shared by the core API."""

from __future__ import annotations

import numbers

import numpy as np


def _position(name: str, shape: tuple[int, ...], flat: int) -> str:
    if len(shape) == 0:
        return name
    return f"{name}[{', '.join(str(int(i)) for i in np.unravel_index(flat, shape))}]"


def _ints_to_uint64(a, name: str) -> np.ndarray:
    """Python ints (or nested lists of them) to uint64, exactly, naming a bad position."""
    obj = np.array(a, dtype=object)
    flat = obj.reshape(-1)
    for pos, x in enumerate(flat):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
            kind = "float" if isinstance(x, numbers.Real) and not isinstance(x, bool) else None
            why = ("floats cannot hold 64-bit fingerprints exactly" if kind else
                   "fingerprints are non-negative integers")
            raise TypeError(f"{_position(name, obj.shape, pos)} is a {type(x).__name__} "
                            f"({x!r:.40}); {why}")
        if not 0 <= x < 2**64:
            raise ValueError(
                f"{_position(name, obj.shape, pos)} is {x}; fingerprint words must be in "
                "[0, 2**64) (a 128-bit fingerprint is two uint64 words, low first)"
            )
    return np.array(flat.tolist(), dtype=np.uint64).reshape(obj.shape)


def as_uint64(a, name: str = "fingerprints") -> np.ndarray:
    """Fingerprint words as a ``uint64`` array of any shape.

    Accepted: uint64 arrays of either byte order (and pandas objects of them; a
    big-endian array is converted, its values unchanged), Python ints and (nested)
    lists or tuples of Python ints, each in ``[0, 2**64)``; lists of ints of 2**63 and
    more stay exact. Refused, naming the argument: bools, floats (``TypeError``),
    negative or too large Python ints (``ValueError`` naming the position), narrower
    unsigned arrays such as uint32 (``TypeError``: 32-bit hashes or halves of words are
    not fingerprints), and signed numpy arrays (``TypeError``): an ``int64`` column is
    usually uint64 fingerprints reinterpreted, so convert it explicitly
    (``.view(np.uint64)``).
    """
    if not isinstance(a, (np.ndarray, np.generic)) and not hasattr(a, "dtype"):
        if isinstance(a, (str, bytes, dict, set, frozenset)):
            raise TypeError(f"{name} must be uint64 fingerprints, got {type(a).__name__}")
        try:
            arr = np.asarray(a)
        except ValueError:  # ragged nesting
            raise ValueError(f"{name} must be a rectangular array of fingerprints") from None
        if arr.dtype.kind in "iuOf":  # Python ints (numpy may read big ones as float)
            return _ints_to_uint64(a, name)
        if arr.dtype == np.bool_:
            raise TypeError(f"{name} holds bools; fingerprints are non-negative integers")
    else:
        arr = np.asarray(a)
    if arr.dtype == np.uint64:
        return arr
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8:  # another byte order: same values
        return arr.astype(np.uint64)
    if arr.dtype.kind == "u":
        raise TypeError(
            f"{name} has dtype {arr.dtype}; fingerprints are 64-bit words (uint64). A "
            f"{arr.dtype.itemsize * 8}-bit array is not widened silently: it may hold other "
            "hashes or pieces of fingerprints; convert with .astype(np.uint64) if each value "
            "is a whole fingerprint"
        )
    raise TypeError(
        f"{name} must be a uint64 array (as made by simhash_nb.fingerprint) or Python "
        f"ints, got dtype {arr.dtype}; a signed int64 array of fingerprints converts "
        "exactly with .view(np.uint64)"
    )


def as_fingerprints(a, name: str = "fingerprints") -> np.ndarray:
    """Check and return a fingerprint array: ``uint64[n]`` (64 bits) or ``uint64[n, 2]`` (128).

    Values are read as :func:`as_uint64` reads them (uint64 arrays, or Python ints);
    signed, float or object arrays are refused rather than reinterpreted.
    """
    arr = as_uint64(a, name)
    if arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 2):
        return np.ascontiguousarray(arr)
    raise ValueError(
        f"{name} must have shape (n,) for 64-bit or (n, 2) for 128-bit fingerprints, "
        f"got shape {arr.shape}"
    )


def check_fraction(value, name: str) -> float:
    """A number in ``(0, 1]`` (a similarity, recall, precision or threshold), as a float.

    ``TypeError`` for a bool or a non-number, ``ValueError`` outside ``(0, 1]``; both name
    the argument.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1], got {value!r}")
    v = float(value)
    if not 0.0 < v <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return v


def check_raise_or_zero(missing) -> None:
    """Refuse a ``missing=`` other than ``"raise"`` or ``"zero"``, the choices of the
    functions that give a missing text or fingerprint the value 0."""
    if missing not in ("raise", "zero"):
        raise ValueError(f"missing must be 'raise' or 'zero', got {missing!r}")


def check_bits(bits, name: str = "bits") -> int:
    """A fingerprint width: the integer 64 or 128 (not a bool or a float such as 64.0)."""
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral):
        raise TypeError(f"{name} must be the integer 64 or 128, got {type(bits).__name__} "
                        f"{bits!r}")
    if bits not in (64, 128):
        raise ValueError(f"{name} must be 64 or 128, got {bits!r}")
    return int(bits)


def bits_of(fps: np.ndarray) -> int:
    """Fingerprint width of a checked fingerprint array."""
    return 64 if fps.ndim == 1 else 128


def as_words(fps: np.ndarray) -> np.ndarray:
    """2-D ``uint64[n, words]`` view of a checked fingerprint array."""
    return fps.reshape(fps.shape[0], 1) if fps.ndim == 1 else fps


def same_width(a: np.ndarray, b: np.ndarray, names=("a", "b")) -> None:
    """Refuse to compare 64-bit with 128-bit fingerprints."""
    if bits_of(a) != bits_of(b):
        raise ValueError(
            f"{names[0]} has {bits_of(a)}-bit and {names[1]} {bits_of(b)}-bit fingerprints; "
            "they cannot be compared"
        )


def check_k(k, bits: int) -> int:
    """A Hamming threshold: an integer with 0 <= k < bits."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    k = int(k)
    if not 0 <= k < bits:
        raise ValueError(f"k must be in [0, {bits - 1}] for {bits}-bit fingerprints, got {k}")
    return k
