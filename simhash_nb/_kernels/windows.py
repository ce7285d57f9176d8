"""Token windows of long documents, as byte spans into the document buffer.

A document with ``T`` tokens (code points when ``classes`` is None, else words; see
:func:`.shingles.doc_hashes`) has windows of ``w`` tokens starting every ``s`` tokens; the last
window ends at the last token (it starts at ``T - w``), so every token is in a window.
Window ``j`` starts at token ``min(j * s, T - w)``; there are ``ceil((T - w) / s) + 1``
windows when ``T > w``, one window of all tokens when ``0 < T <= w``, none when ``T == 0``.
The span of a window runs from its first token's first byte to its last token's end, so
tokenising the span gives exactly the window's tokens.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .bitsums import max_doc_len
from .prange import PRANGE_ONLY
from .shingles import next_cp_start, word_bounds


@njit(cache=True, nogil=True)
def unit_bounds(data, start, end, classes, ustart, uend):
    """Start and end byte of each token of ``data[start:end]``; returns the count."""
    if classes is not None:
        return word_bounds(data, start, end, classes, ustart, uend)
    c = 0
    p = start
    while p < end:
        q = next_cp_start(data, p, end)
        ustart[c] = p
        uend[c] = q
        c += 1
        p = q
    return c


@njit(cache=True, nogil=True)
def _unit_scratch(offsets, lo, hi):
    """Token start and end buffers for the documents ``lo..hi-1``."""
    size = max_doc_len(offsets, lo, hi) + 1
    return np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def unit_counts(data, offsets, chunks, classes):
    """Number of tokens of each document."""
    ndocs = offsets.shape[0] - 1
    out = np.zeros(ndocs, dtype=np.int64)
    for c in prange(chunks.shape[0] - 1):
        ustart, uend = _unit_scratch(offsets, chunks[c], chunks[c + 1])
        for i in range(chunks[c], chunks[c + 1]):
            out[i] = unit_bounds(data, offsets[i], offsets[i + 1], classes, ustart, uend)
    return out


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def window_spans(data, offsets, chunks, classes, window, stride, win_indptr):
    """Byte span and first token of every window; windows of doc ``i`` are
    ``win_indptr[i]:win_indptr[i + 1]``. Returns ``(lo, hi, first_token)``."""
    ndocs = offsets.shape[0] - 1
    total = win_indptr[ndocs]
    lo_out = np.empty(total, dtype=np.int64)
    hi_out = np.empty(total, dtype=np.int64)
    tok_out = np.empty(total, dtype=np.int64)
    for c in prange(chunks.shape[0] - 1):
        ustart, uend = _unit_scratch(offsets, chunks[c], chunks[c + 1])
        for i in range(chunks[c], chunks[c + 1]):
            t = unit_bounds(data, offsets[i], offsets[i + 1], classes, ustart, uend)
            last = max(t - window, 0)
            for j in range(win_indptr[i + 1] - win_indptr[i]):
                s = min(j * stride, last)
                e = min(s + window, t)
                k = win_indptr[i] + j
                lo_out[k] = ustart[s]
                hi_out[k] = uend[e - 1]
                tok_out[k] = s
    return lo_out, hi_out, tok_out


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def gather_spans(data, lo, hi):
    """Copy the byte spans ``data[lo[k]:hi[k]]`` back to back; returns ``(bytes, offsets)``."""
    n = lo.shape[0]
    offsets = np.zeros(n + 1, dtype=np.int64)
    for k in range(n):
        offsets[k + 1] = offsets[k] + (hi[k] - lo[k])
    out = np.empty(offsets[n], dtype=np.uint8)
    for k in prange(n):
        base = offsets[k] - lo[k]
        for p in range(lo[k], hi[k]):
            out[base + p] = data[p]
    return out, offsets
