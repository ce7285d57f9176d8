"""Input checks shared by the core API."""

from __future__ import annotations

import numbers

import numpy as np


def as_fingerprints(a, name: str = "fingerprints") -> np.ndarray:
    """Check and return a fingerprint array: ``uint64[n]`` (64 bits) or ``uint64[n, 2]`` (128).

    Signed, float or object arrays are refused rather than reinterpreted.
    """
    arr = np.asarray(a)
    if arr.dtype != np.uint64:
        raise TypeError(
            f"{name} must be a uint64 array (as made by simhash_nb.fingerprint), got dtype "
            f"{arr.dtype}; convert explicitly with .astype(np.uint64) only if the values are "
            "really unsigned 64-bit fingerprints"
        )
    if arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 2):
        return np.ascontiguousarray(arr)
    raise ValueError(
        f"{name} must have shape (n,) for 64-bit or (n, 2) for 128-bit fingerprints, "
        f"got shape {arr.shape}"
    )


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
