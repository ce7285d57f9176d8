"""Hamming distances between fingerprints: element-wise, all pairs, threshold joins."""

from __future__ import annotations

import numba
import numpy as np

from .._kernels import hamming as _hk
from ..config import config
from .pairs import Pairs
from .parallel import deferred_interrupt, sliced_pairs
from .validation import (
    as_fingerprints,
    as_uint64,
    as_words,
    bits_of,
    check_bits,
    check_k,
    same_width,
)

__all__ = ["distance_matrix", "hamming", "hamming_matrix", "pairs_within"]


def hamming(a, b, *, bits: int | None = None) -> np.ndarray:
    """Element-wise Hamming distance with numpy broadcasting.

    Parameters
    ----------
    a, b : array_like of uint64, or Python ints
        Fingerprints. 64-bit: any shape. 128-bit: shape ``(..., 2)``, the last axis holding
        the two words (low first), as :func:`fingerprint` returns them. Python ints
        (and lists of them) in ``[0, 2**64)`` are accepted; signed numpy arrays are not
        (see :func:`simhash_nb._core.validation.as_uint64`).
    bits : {64, 128}, optional
        Fingerprint width. When omitted it is read from the shapes, and only where they
        cannot be confused:

        - 128 bits when both inputs have a last axis of length 2 and one of them is at
          least 2-D (the ``(n, 2)`` arrays :func:`fingerprint` returns, against each
          other or against one fingerprint of shape ``(2,)``);
        - 64 bits when either input has a last axis of another length, or neither has
          one of length 2 (so ``hamming(a[:, None], b[None, :])`` over 64-bit ``a``
          and ``b`` is 64-bit whatever ``len(b)`` is);
        - otherwise ``ValueError``, pass ``bits``: two 1-D inputs of length 2 (pairs
          of 64-bit fingerprints, or two rows ``fps[0]``, ``fps[1]`` of a 128-bit
          batch), or a 0-d input against a 128-bit-looking one.

        ``bits=128`` needs a last axis of length 2 on both inputs.

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
    >>> int(sh.hamming(0xDEADBEEF, 0xDEADBEAD))
    2
    >>> a = np.array([[1, 1], [0, 0]], dtype=np.uint64)  # two 128-bit fingerprints
    >>> sh.hamming(a, np.zeros(2, dtype=np.uint64))
    array([2, 0], dtype=uint8)
    >>> int(sh.hamming(a[0], a[1], bits=128))  # two rows of a 128-bit batch: say so
    2
    """
    a = as_uint64(a, "a")
    b = as_uint64(b, "b")
    if bits is None:
        bits = _width(a, b)
    bits = check_bits(bits)
    if bits == 128 and (a.ndim == 0 or b.ndim == 0 or a.shape[-1] != 2 or b.shape[-1] != 2):
        raise ValueError(
            "128-bit fingerprints need a last axis of length 2 (two words) on both inputs, "
            f"got shapes {a.shape} and {b.shape}"
        )
    d = np.bitwise_count(np.bitwise_xor(a, b))
    if bits == 128:
        d = d.sum(axis=-1)
    return d.astype(np.uint8)


def _width(a: np.ndarray, b: np.ndarray) -> int:
    """The fingerprint width of two inputs given without ``bits`` (see :func:`hamming`)."""
    last = [x.shape[-1] if x.ndim else None for x in (a, b)]
    wide = [x.ndim >= 2 and n == 2 for x, n in zip((a, b), last, strict=True)]
    if any(wide):
        if all(n == 2 for n in last):
            return 128
        if None not in last:
            return 64  # the other input's last axis cannot hold two words
    elif last != [2, 2]:
        return 64
    raise ValueError(
        f"cannot tell 64-bit from 128-bit fingerprints with shapes {a.shape} and {b.shape}; "
        "pass bits=64 or bits=128"
    )


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
    return distance_matrix(_kernel_view(a), _kernel_view(b),
                           numpy=size <= config["numpy_brute_pairs"])


_NUMPY_BLOCK = 1 << 20  # distances numpy computes at once (8 MB of XOR words)


def distance_matrix(a: np.ndarray, b: np.ndarray, *, numpy: bool) -> np.ndarray:
    """``uint8[n, m]`` distances of the checked kernel views ``a`` and ``b``: in numpy,
    rows a block at a time (small inputs: no kernel to compile), or by the parallel
    kernel. A caller that computes one large matrix in blocks decides once for all of
    them (:func:`simhash_nb._core.evaluate.thresholds.threshold_table`)."""
    out = np.empty((a.shape[0], b.shape[0]), dtype=np.uint8)
    if out.size == 0:
        return out
    if not numpy:
        with deferred_interrupt():  # see deferred_interrupt: boxing the result must finish
            _hk.hamming_matrix(a, b, out)
        return out
    step = max(1, _NUMPY_BLOCK // b.shape[0])
    for s in range(0, a.shape[0], step):
        x = a[s:s + step]
        if a.ndim == 1:
            out[s:s + step] = np.bitwise_count(x[:, None] ^ b[None, :])
            continue
        d = np.bitwise_count(x[:, None, 0] ^ b[None, :, 0])
        for w in range(1, a.shape[1]):  # 128 bits: the second word's count added
            d += np.bitwise_count(x[:, None, w] ^ b[None, :, w])
        out[s:s + step] = d
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
    if a.shape[0] == 0 or b.shape[0] == 0:
        return Pairs.empty()
    i, j, d, _ = brute_pairs(_kernel_view(a), _kernel_view(b), k, self_join)
    return Pairs(i, j, d).sorted()


def brute_pairs(a, b, k: int, self_join: bool, limit: int = 2**62):
    """Every pair ``(i, j, d)`` of rows of ``a`` and ``b`` (kernel views; ``i < j`` in a
    self-join) within ``k``, and their count, by the brute-force kernel a timed slice of
    ``a``'s rows a call (:func:`~._core.parallel.sliced_pairs`: Ctrl-C is answered
    between slices). Past ``limit`` pairs none are kept: empty arrays, with the count."""
    if a.shape[0] * b.shape[0] <= config["numpy_brute_pairs"]:
        return _numpy_pairs(a, b, k, self_join, limit)
    n_tasks = max(1, min(a.shape[0], numba.get_num_threads() * 8))

    def run(lo, hi, cap):
        return _hk.pairs_within(a, b, lo, hi, k, self_join, n_tasks, cap)

    return sliced_pairs(run, a.shape[0], int(config["pairs_initial_capacity"]),
                        first=max(1, (1 << 20) // max(1, b.shape[0])), limit=limit)


def _numpy_pairs(a, b, k: int, self_join: bool, limit: int):
    """:func:`brute_pairs` of small inputs in numpy (no kernel to compile): the pairs in
    row order."""
    d = distance_matrix(a, b, numpy=True)
    near = d <= k
    if self_join:
        near = np.triu(near, 1)
    i, j = np.nonzero(near)
    if i.shape[0] > limit:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8), i.shape[0]
    return i.astype(np.int64), j.astype(np.int64), d[i, j], i.shape[0]
