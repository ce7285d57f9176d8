"""Slow, obviously correct reference implementations of every kernel.

Pure Python on Python ints and strings: no numpy tricks, no Numba. Tests compare the
fast paths against these. Sections are grouped by kernel module.
"""

from __future__ import annotations

# --- hamming -------------------------------------------------------------------------


def fingerprint_int(fp) -> int:
    """A 64-bit (int) or 128-bit (sequence of 2 words, low first) fingerprint as one int."""
    if hasattr(fp, "__len__"):
        return sum(int(w) << (64 * n) for n, w in enumerate(fp))
    return int(fp)


def hamming(a, b) -> int:
    """Number of differing bits."""
    return bin(fingerprint_int(a) ^ fingerprint_int(b)).count("1")


def pairs_within(a, k, b=None):
    """Sorted list of (i, j, d) with d <= k; i < j for a self-join."""
    out = []
    if b is None:
        for i in range(len(a)):
            for j in range(i + 1, len(a)):
                d = hamming(a[i], a[j])
                if d <= k:
                    out.append((i, j, d))
    else:
        for i in range(len(a)):
            for j in range(len(b)):
                d = hamming(a[i], b[j])
                if d <= k:
                    out.append((i, j, d))
    return sorted(out)
