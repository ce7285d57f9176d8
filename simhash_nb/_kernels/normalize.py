"""Punctuation and white-space normalisation over UTF-8 buffers, in Numba.

Code point classes come from the shipped table (see ``tools/make_unicode_table.py``):
3 = punctuation or symbol, 4 = white space.

- ``punct``: every punctuation or symbol code point becomes one space;
- ``whitespace``: every run of white space (and, with ``punct``, of punctuation) becomes
  one space, and leading and trailing ones are dropped.

The pyarrow steps (NFKC, lowercase, digits) are per-code-point maps, except that NFKC
composes a character with the combining marks after it. No ASCII character composes
with what comes before it, so a text splits before each ASCII character into pieces
that normalise independently: :func:`nonascii_segments` finds the pieces that hold a
non-ASCII code point (with the ASCII character before them), pyarrow normalises only
those, and :func:`squeeze_chunks` maps the ASCII bytes by a table (a branch-free loop) and
puts the normalised pieces in place while it replaces punctuation and collapses white
space.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .prange import PRANGE_ONLY
from .shingles import decode_cp, next_cp_start

PUNCT = 3
SPACE = 4


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def nonascii_segments(data, offsets, chunks):
    """The pieces of the documents that hold non-ASCII code points.

    A piece is a maximal run of bytes ``>= 0x80`` with the ASCII byte before it when
    that byte is in the same document. Returns ``(starts, ends)``: int64 positions in
    ``data``, in order; the bytes between pieces are ASCII.
    """
    n = offsets.shape[0] - 1
    counts = np.zeros(n, dtype=np.int64)
    for c in prange(chunks.shape[0] - 1):
        for i in range(chunks[c], chunks[c + 1]):
            start, end = offsets[i], offsets[i + 1]
            acc = np.uint8(0)
            for p in range(np.uint64(start), np.uint64(end)):  # unsigned: vectorised
                acc |= data[p]
            if acc < np.uint8(0x80):
                continue  # most documents are ASCII
            k = 0
            for p in range(start, end):
                if data[p] >= np.uint8(0x80) and (p == start or data[p - 1] < np.uint8(0x80)):
                    k += 1
            counts[i] = k
    first = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        first[i + 1] = first[i] + counts[i]
    starts = np.empty(first[n], dtype=np.int64)
    ends = np.empty(first[n], dtype=np.int64)
    for c in prange(chunks.shape[0] - 1):
        for i in range(chunks[c], chunks[c + 1]):
            if counts[i] == 0:
                continue
            k = first[i]
            start, end = offsets[i], offsets[i + 1]
            p = start
            while p < end:
                if data[p] < np.uint8(0x80):
                    p += 1
                    continue
                starts[k] = p - 1 if p > start else p
                while p < end and data[p] >= np.uint8(0x80):
                    p += 1
                ends[k] = p
                k += 1
    return starts, ends


@njit(inline="always", cache=True, nogil=True)
def _ascii_range(src, p, end, table, out, o, run):
    """Normalise the ASCII bytes ``src[p:end]`` into ``out[o:]``; returns ``(o, run)``.

    ``run`` is 1 after a separator (or at the start of a text): with ``collapse``, a
    separator keeps its space only when ``run`` is 0 (the caller takes back a trailing
    one). ``table[b]``: the output byte of ``b``, plus 256 for a separator. The byte is
    written either way and kept by moving ``o``: no branches, unsigned indices (no
    wraparound checks).
    """
    o = np.uint64(o)
    run = np.uint64(run)
    for q in range(np.uint64(p), np.uint64(end)):
        e = table[src[q]]
        sep = e >> np.uint64(8)
        out[o] = np.uint8(e & np.uint64(0xFF))
        o += np.uint64(1) - (sep & run)
        run = sep
    return np.int64(o), np.int64(run)


@njit(inline="always", cache=True, nogil=True)
def _utf8_range(src, p, end, table, classes, punct, collapse, out, o, run):
    """:func:`_ascii_range` for any UTF-8 ``src[p:end]``, one code point at a time."""
    while p < end:
        b0 = src[p]
        if b0 < 0x80:
            e = table[b0]
            sep = np.int64(e >> np.uint64(8))
            out[o] = np.uint8(e & np.uint64(0xFF))
            o += 1 - (sep & run)
            run = sep
            p += 1
            continue
        q = next_cp_start(src, p, end)
        c = classes[decode_cp(src, p)]
        is_punct = punct and c == PUNCT
        if collapse and (c == SPACE or is_punct):
            out[o] = 32
            o += 1 - run
            run = 1
        elif is_punct:
            out[o] = 32
            o += 1
            run = 0
        else:
            for r in range(p, q):
                out[o] = src[r]
                o += 1
            run = 0
        p = q
    return o, run


@njit(cache=True, nogil=True)
def squeeze_chunks(data, offsets, chunks, c0, c1, classes, punct, collapse, seg_starts,
                   seg_ends, pieces, piece_offsets, plan):
    """Normalise the documents of chunks ``c0..c1-1`` into ``plan`` (``(table, seg_first,
    tmp_start, tmp, lengths)``: see :func:`simhash_nb._core.text.text_buffers`).

    ``seg_starts`` and ``seg_ends`` (:func:`nonascii_segments`) cut the documents into
    ASCII runs and pieces; piece ``s`` is replaced by
    ``pieces[piece_offsets[s]:piece_offsets[s + 1]]`` (itself, or its pyarrow
    normalisation). ASCII bytes are mapped by the plan's table; then punctuation and
    white space are handled as the module says. Each chunk writes compacted into its own
    stretch of ``tmp``, and each document's length into ``lengths``. Chunks write apart:
    threads may run them at once (the GIL is released).

    ``classes`` is None for texts without pieces (all ASCII): the argument's type prunes
    the pieces' branch when Numba compiles, so a first call on ASCII texts compiles no
    UTF-8 decoding (as :func:`~simhash_nb._kernels.shingles.doc_hashes` does).
    """
    table, seg_first, tmp_start, tmp, lengths = plan
    n_segs = seg_starts.shape[0]
    for c in range(c0, c1):
        o = tmp_start[c]
        s = seg_first[c]
        for i in range(chunks[c], chunks[c + 1]):
            o0 = o
            run = 1  # the start of the text counts as a run: no leading space
            p, end = offsets[i], offsets[i + 1]
            if classes is None:
                o, run = _ascii_range(data, p, end, table, tmp, o, run)
            else:
                while True:
                    stop = seg_starts[s] if s < n_segs and seg_starts[s] < end else end
                    o, run = _ascii_range(data, p, stop, table, tmp, o, run)
                    if stop == end:
                        break
                    o, run = _utf8_range(pieces, piece_offsets[s], piece_offsets[s + 1],
                                         table, classes, punct, collapse, tmp, o, run)
                    p = seg_ends[s]
                    s += 1
            if collapse and run == 1 and o > o0:
                o -= 1  # the trailing run's space
            lengths[i] = o - o0


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
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
