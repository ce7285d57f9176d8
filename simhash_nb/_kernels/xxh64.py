"""xxh64 (Yann Collet's xxHash, 64-bit) over byte slices, in Numba.

Checked bit for bit against the ``xxhash`` package in ``tests/test_xxh64.py``.
Also ``splitmix64``, the fixed mixer that derives a feature's second 64 hash bits
for 128-bit fingerprints (see :mod:`simhash_nb._core.fingerprint`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_P1 = np.uint64(11400714785074694791)
_P2 = np.uint64(14029467366897019727)
_P3 = np.uint64(1609587929392839161)
_P4 = np.uint64(9650029242287828579)
_P5 = np.uint64(2870177450012600261)


@njit(cache=True)
def _rotl(x, r):
    # ``r`` is a uint64 (not an int literal): one compiled function for every amount
    return (x << r) | (x >> (np.uint64(64) - r))


@njit(cache=True)
def _read32(buf, p):
    # Unsigned indices: no negative-index wraparound code, so LLVM fuses the byte loads
    # into one load (and the two halves of _read64 into one 64-bit load).
    q = np.uint64(p)
    return (
        np.uint64(buf[q])
        | (np.uint64(buf[q + np.uint64(1)]) << np.uint64(8))
        | (np.uint64(buf[q + np.uint64(2)]) << np.uint64(16))
        | (np.uint64(buf[q + np.uint64(3)]) << np.uint64(24))
    )


@njit(cache=True)
def _read64(buf, p):
    q = np.uint64(p)  # _read32 is compiled for one index type: uint64
    return _read32(buf, q) | (_read32(buf, q + np.uint64(4)) << np.uint64(32))


@njit(cache=True)
def _round(acc, lane):
    acc = acc + lane * _P2
    acc = _rotl(acc, np.uint64(31))
    return acc * _P1


@njit(cache=True)
def _merge(acc, val):
    acc = acc ^ _round(np.uint64(0), val)
    return acc * _P1 + _P4


@njit(cache=True, nogil=True)
def _stripes(buf, start, end, seed):
    """The 32-byte stripes of ``buf[start:end]`` (``end - start >= 32``): ``(h, next p)``."""
    p = start
    v1 = seed + _P1 + _P2
    v2 = seed + _P2
    v3 = seed
    v4 = seed - _P1
    limit = end - 32
    while p <= limit:
        v1 = _round(v1, _read64(buf, p))
        v2 = _round(v2, _read64(buf, p + 8))
        v3 = _round(v3, _read64(buf, p + 16))
        v4 = _round(v4, _read64(buf, p + 24))
        p += 32
    h = (_rotl(v1, np.uint64(1)) + _rotl(v2, np.uint64(7))
         + _rotl(v3, np.uint64(12)) + _rotl(v4, np.uint64(18)))
    h = _merge(h, v1)
    h = _merge(h, v2)
    h = _merge(h, v3)
    h = _merge(h, v4)
    return h, p


@njit(inline="always", cache=True, nogil=True)
def xxh64(buf, start, end, seed):
    """xxh64 of ``buf[start:end]`` (uint8) with a uint64 ``seed``.

    Inlined where it is called (Numba IR): a call per feature of a compiled function
    costs as much again as the hash of a short feature. The 32-byte stripes of long
    features are a call (:func:`_stripes`): less IR to inline, so a faster compile.
    """
    seed = np.uint64(seed)
    length = end - start
    if length >= 32:
        h, p = _stripes(buf, start, end, seed)
    else:
        h = seed + _P5
        p = start
    h = h + np.uint64(length)
    while p + 8 <= end:
        h = h ^ _round(np.uint64(0), _read64(buf, p))
        h = _rotl(h, np.uint64(27)) * _P1 + _P4
        p += 8
    if p + 4 <= end:
        h = h ^ (_read32(buf, np.uint64(p)) * _P1)
        h = _rotl(h, np.uint64(23)) * _P2 + _P3
        p += 4
    while p < end:
        h = h ^ (np.uint64(buf[p]) * _P5)
        h = _rotl(h, np.uint64(11)) * _P1
        p += 1
    h = h ^ (h >> np.uint64(33))
    h = h * _P2
    h = h ^ (h >> np.uint64(29))
    h = h * _P3
    h = h ^ (h >> np.uint64(32))
    return h


@njit(cache=True, nogil=True)
def xxh64_many(buf, offsets, seed):
    """xxh64 of each slice ``buf[offsets[i]:offsets[i + 1]]``."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = xxh64(buf, offsets[i], offsets[i + 1], seed)
    return out


@njit(cache=True, nogil=True)
def splitmix64(x):
    """The splitmix64 finaliser (Steele, Lea, Flood 2014): a fixed 64-bit bijection."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))
