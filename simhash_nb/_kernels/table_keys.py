"""Table keys: the 64-bit words ``key | extra | row`` a table sorts, and pair ownership."""

from __future__ import annotations

import numpy as np
from numba import njit

ONE = np.uint64(1)  # the uint64 one of bit masks (``ONE << b``), shared by the table kernels
_SEED = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SIXTY_FOUR = np.uint64(64)


@njit(cache=True, inline="always")
def mix64(z):
    """splitmix64 finaliser: a bijective scramble of a ``uint64``."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _finish_key(lo, hi, hashed, key_bits):
    if hashed:
        return mix64(lo ^ mix64(hi ^ _SEED)) >> np.uint64(64 - key_bits)
    return lo


@njit(cache=True)
def is_owner(a, i, b, j, sel, block_masks):
    """Whether the table selecting ``sel`` owns the pair (row i of a, row j of b):
    whether ``sel`` is the first ``len(sel)`` blocks on which the rows agree."""
    c = 0
    nsel = sel.shape[0]
    for blk in range(block_masks.shape[0]):
        agree = True
        for w in range(block_masks.shape[1]):
            if ((a[i, w] ^ b[j, w]) & block_masks[blk, w]) != 0:
                agree = False
                break
        if agree:
            if sel[c] != blk:
                return False
            c += 1
            if c == nsel:
                return True
    return False


@njit(inline="always", cache=True)
def row_key(fps, i, kp, ep, hashed, key_bits):
    """Table key and stored extra bits of row ``i``, gathered from its pieces.

    A piece ``(word, shift, mask, at)`` takes ``(fps[i, word] >> shift) & mask`` to bit
    ``at`` of the 128-bit raw key (of the extra bits for ``ep``).
    """
    klo = np.uint64(0)
    khi = np.uint64(0)
    for p in range(kp.shape[0]):
        v = (fps[i, kp[p, 0]] >> kp[p, 1]) & kp[p, 2]
        if kp[p, 3] >= _SIXTY_FOUR:
            khi |= v << (kp[p, 3] - _SIXTY_FOUR)
        else:
            klo |= v << kp[p, 3]
    ev = np.uint64(0)
    for p in range(ep.shape[0]):
        ev |= ((fps[i, ep[p, 0]] >> ep[p, 1]) & ep[p, 2]) << ep[p, 3]
    return _finish_key(klo, khi, hashed, key_bits), ev


@njit(cache=True, nogil=True)
def make_words(
    fps, lo, hi, kp, ep, hashed, key_bits, extra_bits, row_bits, out, hist, tshift, tmask
):
    """Words of rows ``[lo, hi)`` into ``out[lo:hi]``, counting their top key digits
    (``(word >> tshift) & tmask``) in ``hist``."""
    low = np.uint64(extra_bits + row_bits)
    rb = np.uint64(row_bits)
    if fps.shape[1] == 1 and not hashed:  # 64-bit fingerprints, exact keys: the fast path
        for i in range(lo, hi):
            x = fps[i, 0]
            key = np.uint64(0)
            for p in range(kp.shape[0]):
                key |= ((x >> kp[p, 1]) & kp[p, 2]) << kp[p, 3]
            ev = np.uint64(0)
            for p in range(ep.shape[0]):
                ev |= ((x >> ep[p, 1]) & ep[p, 2]) << ep[p, 3]
            out[i] = (key << low) | (ev << rb) | np.uint64(i)
    else:
        for i in range(lo, hi):
            key, ev = row_key(fps, i, kp, ep, hashed, key_bits)
            out[i] = (key << low) | (ev << rb) | np.uint64(i)
    for i in range(lo, hi):
        hist[(out[i] >> tshift) & tmask] += 1
