"""Byte MinHash signatures of shingle sets, and the search of many stored signatures for
the new ones that share a band (LSH banding, Broder 1997; Indyk and Motwani 1998).

Value ``p`` of a document's signature (:data:`WIDTH` values) is the low byte of
``min_h mix32(lo32(h) ^ salts[p])`` over its shingle hashes ``h`` (``mix32``:
MurmurHash3's 32-bit finaliser, a bijection; one byte kept: b-bit minwise hashing, Li and
König 2010). For two sets with Jaccard ``J`` the minimum of a value lies in both with
probability ``J``, and then the values agree; otherwise they agree by chance (1 in 256).
An empty set's values are all 255. The 32-bit arithmetic vectorises (eight values an
AVX2 instruction): 0.16 s for 200k documents of 136 shingles on two threads, against
0.95 s for 64-bit ``splitmix64`` values (measured).

Band ``b`` of ``rows`` values is the key of bytes ``b * rows .. b * rows + rows - 1``.
:func:`band_pairs` lists each pair of a stored and a new signature that share a band
key and agree in at least ``least`` values, once (in the first band they share).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .popcount import popcount64
from .prange import PRANGE_ONLY

WIDTH = 64  # values (bytes) a signature
_WORDS = WIDTH // 8
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def byte_signatures(indptr, hashes, salts, out):
    """``out[d]``: the signature of hashes ``hashes[indptr[d]:indptr[d + 1]]``
    (``salts``: ``uint32[WIDTH]``; ``out``: ``uint8[n, WIDTH]``)."""
    for d in prange(indptr.shape[0] - 1):
        lo = indptr[d]
        size = indptr[d + 1] - lo
        low = np.empty(size, dtype=np.uint32)
        for f in range(size):
            low[f] = np.uint32(hashes[lo + f] & np.uint64(0xFFFFFFFF))
        for p in range(WIDTH):
            s = salts[p]
            least = np.uint32(0xFFFFFFFF)
            for f in range(size):  # over the shingles: eight lanes a step
                v = np.uint32(low[f] ^ s)
                v = np.uint32(v ^ np.uint32(v >> np.uint32(16)))
                v = np.uint32(v * np.uint32(0x85EBCA6B))
                v = np.uint32(v ^ np.uint32(v >> np.uint32(13)))
                v = np.uint32(v * np.uint32(0xC2B2AE35))
                v = np.uint32(v ^ np.uint32(v >> np.uint32(16)))
                least = min(least, v)
            out[d, p] = np.uint8(least & np.uint32(0xFF))
    return out


@njit(cache=True, nogil=True, inline="always")
def _key(sigs, row, band, rows):
    """The band's bytes of a signature, as one integer (``rows`` <= 8)."""
    key = np.uint64(0)
    for r in range(band * rows, band * rows + rows):
        key = (key << np.uint64(8)) | np.uint64(sigs[row, r])
    return key


@njit(cache=True, nogil=True, inline="always")
def _slot(key, hash_bits):
    return np.int64((key * _GOLDEN) >> np.uint64(64 - hash_bits))


@njit(cache=True, nogil=True, inline="always")
def agreeing_values(words_a, a, words_b, b):
    """Values (bytes) in which signatures ``a`` and ``b`` agree, of their uint64 views."""
    differ = 0
    for w in range(_WORDS):
        x = words_a[a, w] ^ words_b[b, w]
        differ += popcount64((((x & _LOW7) + _LOW7) | x) & _HIGH)
    return WIDTH - differ


@njit(cache=True, nogil=True)
def index_bands(sigs, bands, rows, hash_bits, keys, starts, members, seen):
    """Index the rows of ``sigs`` by each band's key: ``keys[b, i]`` the key of row ``i``;
    rows ``members[b, starts[b, s]:starts[b, s + 1]]`` are those whose key falls in
    slot ``s`` (``starts``: ``int32[bands, 2**hash_bits + 1]``); bit ``x`` of
    ``seen[b]`` (``uint64[bands, 2**(hash_bits + 3) // 64]``) is set where a key's
    ``hash_bits + 3``-bit slot is ``x`` (a look-up in eight bits a row, in cache, turns
    most stored keys away before the slots are read)."""
    n = sigs.shape[0]
    for b in range(bands):
        for s in range(starts.shape[1]):
            starts[b, s] = 0
        for w in range(seen.shape[1]):
            seen[b, w] = 0
        for i in range(n):
            keys[b, i] = _key(sigs, i, b, rows)
            x = _slot(keys[b, i], hash_bits + 3)
            seen[b, x >> 6] |= np.uint64(1) << np.uint64(x & 63)
            starts[b, (x >> 3) + 1] += 1
        for s in range(1, starts.shape[1]):
            starts[b, s] += starts[b, s - 1]
        fill = starts[b, :-1].copy()
        for i in range(n):
            s = _slot(keys[b, i], hash_bits)
            members[b, fill[s]] = i
            fill[s] += 1


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def band_pairs(stored, stored_words, new_words, keys, starts, members, seen, bands, rows,
               hash_bits, least, chunks, cap, left, right, agree, counts):
    """Pairs ``(new row, stored row)`` of signatures that share a band key (``keys``,
    ``starts``, ``members``, ``seen``: :func:`index_bands` of the new ones) and agree in
    at least ``least`` values (``agree``), each once (from the first band they share).
    Stored rows are cut into ``chunks`` tasks; task ``t`` writes at most ``cap`` pairs
    from ``t * cap`` of ``left``, ``right``, ``agree`` and counts all of its own in
    ``counts[t]`` (a count above ``cap``: run again with more room)."""
    n = stored.shape[0]
    for t in prange(chunks):
        lo = n * t // chunks
        hi = n * (t + 1) // chunks
        c = 0
        for b in range(bands):  # band by band: one band's look-up bits stay in cache
            for j in range(lo, hi):
                key = _key(stored, j, b, rows)
                x = _slot(key, hash_bits + 3)
                if not (seen[b, x >> 6] >> np.uint64(x & 63)) & np.uint64(1):
                    continue
                s = x >> 3
                for q in range(starts[b, s], starts[b, s + 1]):
                    i = members[b, q]
                    if keys[b, i] != key:
                        continue
                    first = True
                    for e in range(b):  # the pair's owner: the first band it shares
                        if keys[e, i] == _key(stored, j, e, rows):
                            first = False
                            break
                    if not first:
                        continue
                    same = agreeing_values(new_words, i, stored_words, j)
                    if same >= least:
                        if c < cap:
                            left[t * cap + c] = i
                            right[t * cap + c] = j
                            agree[t * cap + c] = same
                        c += 1
        counts[t] = c
    return counts
