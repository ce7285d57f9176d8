"""Hamming distances between fingerprints: element-wise, all pairs, threshold joins."""

from __future__ import annotations

import numba
import numpy as np

from .._kernels import hamming as _hk
from ..config import config
from .pairs import Pairs
from .validation import as_fingerprints, as_words, bits_of, check_k, same_width

__all__ = ["hamming", "hamming_matrix", "pairs_within"]


def hamming(a, b, *, bits: int | None = None) -> np.ndarray:
    """Element-wise Hamming distance with numpy broadcasting.

    Parameters
    ----------
    a, b : array_like of uint64
        Fingerprints. 64-bit: any shape. 128-bit: shape ``(..., 2)``, the last axis holding
        the two words (low first), as :func:`fingerprint` returns them.
    bits : {64, 128}, optional
        Fingerprint width. By default an input with ``ndim >= 2`` and a last axis of
        length 2 is read as 128-bit; pass ``bits=64`` for a 2-column array of 64-bit
        fingerprints, or ``bits=128`` for a single 128-bit fingerprint of shape ``(2,)``.

    Returns
    -------
    numpy.ndarray of uint8
        Number of differing bits, with the broadcast shape (less the word axis for 128 bits).

    Raises
    ------
    TypeError
        If an input is not an array of uint64 fingerprints.
    ValueError
        If ``bits`` is not 64 or 128, or 128-bit fingerprints do not end in an axis of
        length 2.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> sh.hamming(np.uint64(0b1011), np.array([0, 1, 2**63], dtype=np.uint64))
    array([3, 2, 4], dtype=uint8)
    >>> a = np.array([[1, 1], [0, 0]], dtype=np.uint64)  # two 128-bit fingerprints
    >>> sh.hamming(a, np.zeros(2, dtype=np.uint64))
    array([2, 0], dtype=uint8)
    """
    a = np.asarray(a)
    b = np.asarray(b)
    for name, x in (("a", a), ("b", b)):
        if x.dtype != np.uint64:
            raise TypeError(f"{name} must be a uint64 array of fingerprints, got dtype {x.dtype}")
    if bits is None:
        wide = [x.ndim >= 2 and x.shape[-1] == 2 for x in (a, b)]
        bits = 128 if any(wide) else 64
    if bits not in (64, 128):
        raise ValueError(f"bits must be 64 or 128, got {bits!r}")
    d = np.bitwise_count(np.bitwise_xor(a, b))
    if bits == 128:
        if d.ndim == 0 or d.shape[-1] != 2:
            raise ValueError("128-bit fingerprints need a last axis of length 2 (two words)")
        d = d.sum(axis=-1)
    return d.astype(np.uint8)


def _pair_inputs(a, b):
    a = as_fingerprints(a, "a")
    if b is None:
        return a, a, True
    b = as_fingerprints(b, "b")
    same_width(a, b)
    return a, b, False


def _kernel_view(fps: np.ndarray) -> np.ndarray:
    return fps if fps.ndim == 1 else as_words(fps)


def hamming_matrix(a, b=None, *, max_bytes: int | None = None) -> np.ndarray:
    """All-pairs Hamming distances.

    Parameters
    ----------
    a : ndarray of uint64, shape (n,) or (n, 2)
    b : ndarray of uint64, shape (m,) or (m, 2), optional
        Defaults to ``a``.
    max_bytes : int, optional
        Refuse outputs larger than this (default ``config["max_matrix_bytes"]``, 1 GiB);
        for large inputs use :func:`pairs_within` or :func:`simhash_nb.near_duplicates`.

    Returns
    -------
    numpy.ndarray of uint8, shape (n, m)

    Raises
    ------
    MemoryError
        If the matrix would take more than ``max_bytes`` bytes.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> sh.hamming_matrix(np.array([0, 3, 7], dtype=np.uint64))
    array([[0, 2, 3],
           [2, 0, 1],
           [3, 1, 0]], dtype=uint8)
    """
    a, b, _ = _pair_inputs(a, b)
    limit = config["max_matrix_bytes"] if max_bytes is None else int(max_bytes)
    size = a.shape[0] * b.shape[0]
    if size > limit:
        raise MemoryError(
            f"a {a.shape[0]} x {b.shape[0]} distance matrix needs {size:,} bytes, over the "
            f"limit of {limit:,}; raise max_bytes, or use pairs_within / near_duplicates"
        )
    out = np.empty((a.shape[0], b.shape[0]), dtype=np.uint8)
    if size:
        _hk.hamming_matrix(_kernel_view(a), _kernel_view(b), out)
    return out


def pairs_within(a, k: int, b=None) -> Pairs:
    """Brute-force threshold join: every pair with Hamming distance ``<= k``.

    Compares all ``n * m`` pairs (``n * (n - 1) / 2`` for a self-join) in parallel. Use it
    for small sets or as ground truth; :func:`simhash_nb.near_duplicates` finds the same
    pairs much faster on large sets. This is the reference brute force:
    ``near_duplicates(fps, k, method="brute")`` runs its kernel (with the options and checks of
    the search, such as ``max_pairs``), and the tests prove every other method against it.

    Parameters
    ----------
    a : ndarray of uint64, shape (n,) or (n, 2)
    k : int
        Largest distance reported (inclusive), ``0 <= k < bits``.
    b : ndarray of uint64, optional
        Compare ``a`` against ``b``; when omitted, ``a`` is joined with itself and each
        pair is reported once with ``i < j``.

    Returns
    -------
    Pairs
        Arrays ``i``, ``j`` (int64 row positions) and ``distance`` (uint8), sorted by
        ``(i, j)``.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> p = sh.pairs_within(np.array([0, 1, 255, 0], dtype=np.uint64), k=1)
    >>> p.i, p.j, p.distance
    (array([0, 0, 1]), array([1, 3, 3]), array([1, 0, 1], dtype=uint8))
    """
    a, b, self_join = _pair_inputs(a, b)
    k = check_k(k, bits_of(a))
    n_tasks = max(1, min(a.shape[0], numba.get_num_threads() * 8))
    cap = config["pairs_initial_capacity"]
    ka, kb = _kernel_view(a), _kernel_view(b)
    if a.shape[0] == 0 or b.shape[0] == 0:
        return Pairs.empty()
    left, right, dist, counts = _hk.pairs_within(ka, kb, k, self_join, n_tasks, cap)
    if counts.max() > cap:
        cap = int(counts.max())
        left, right, dist, counts = _hk.pairs_within(ka, kb, k, self_join, n_tasks, cap)
    keep = np.zeros(left.shape[0], dtype=bool)
    starts = np.arange(n_tasks) * cap
    for t in range(n_tasks):  # n_tasks slices, not one per pair
        keep[starts[t] : starts[t] + counts[t]] = True
    return Pairs(left[keep], right[keep], dist[keep]).sorted()
