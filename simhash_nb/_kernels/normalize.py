"""Punctuation and white-space normalisation over UTF-8 buffers, in Numba.

Code point classes come from the shipped table (see ``tools/make_unicode_table.py``):
3 = punctuation or symbol, 4 = white space.

- ``punct``: every punctuation or symbol code point becomes one space;
- ``whitespace``: every run of white space (and, with ``punct``, of punctuation) becomes
  one space, and leading and trailing ones are dropped.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .shingles import _decode, _next_cp_start

PUNCT = 3
SPACE = 4


@njit(inline="always", cache=True)
def squeeze_doc(data, start, end, classes, punct, collapse, out, o):
    """Normalise ``data[start:end]`` into ``out[o:]``; returns the number of bytes written.

    With ``collapse``, a separator run writes its space when it starts (never at the
    start of the text) and a trailing one is taken back at the end.
    """
    o0 = o
    in_run = True  # the start of the text counts as a run: no leading space
    p = start
    while p < end:
        b0 = data[p]
        if b0 < 0x80:
            c = classes[b0]
            is_punct = punct and c == PUNCT
            if collapse and (c == SPACE or is_punct):
                if not in_run:
                    out[o] = 32
                    o += 1
                in_run = True
            else:
                out[o] = 32 if is_punct else b0
                o += 1
                in_run = False
            p += 1
            continue
        q = _next_cp_start(data, p, end)
        c = classes[_decode(data, p)]
        is_punct = punct and c == PUNCT
        if collapse and (c == SPACE or is_punct):
            if not in_run:
                out[o] = 32
                o += 1
            in_run = True
        elif is_punct:
            out[o] = 32
            o += 1
            in_run = False
        else:
            for r in range(p, q):
                out[o] = data[r]
                o += 1
            in_run = False
        p = q
    if collapse and in_run and o > o0:
        o -= 1  # the trailing run's space
    return o - o0


@njit(parallel=True, cache=True, nogil=True)
def squeeze(data, offsets, chunks, classes, punct, collapse):
    """Normalise every document; returns ``(data, offsets)`` of the result (never longer)."""
    n = offsets.shape[0] - 1
    base = offsets[0]
    tmp = np.empty(max(offsets[n] - base, 1), dtype=np.uint8)
    lengths = np.zeros(n, dtype=np.int64)
    for c in prange(chunks.shape[0] - 1):
        for i in range(chunks[c], chunks[c + 1]):
            lengths[i] = squeeze_doc(data, offsets[i], offsets[i + 1], classes, punct,
                                     collapse, tmp, offsets[i] - base)
    new_offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        new_offsets[i + 1] = new_offsets[i] + lengths[i]
    out = np.empty(max(new_offsets[n], 1), dtype=np.uint8)
    for c in prange(chunks.shape[0] - 1):
        for i in range(chunks[c], chunks[c + 1]):
            src = offsets[i] - base
            dst = new_offsets[i]
            for r in range(lengths[i]):
                out[dst + r] = tmp[src + r]
    return out[: new_offsets[n]], new_offsets


@njit(parallel=True, cache=True, nogil=True)
def ascii_lower(data, n_chunks):
    """A lowercase copy of an all-ASCII byte buffer."""
    n = data.shape[0]
    out = np.empty(n, dtype=np.uint8)
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        for i in range(c * step, min(n, (c + 1) * step)):
            b = data[i]
            out[i] = b | np.uint8(32) if np.uint8(65) <= b <= np.uint8(90) else b
    return out
