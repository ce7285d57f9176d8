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


# --- xxh64 ---------------------------------------------------------------------------

_M64 = (1 << 64) - 1
_P1, _P2, _P3, _P4, _P5 = (
    11400714785074694791,
    14029467366897019727,
    1609587929392839161,
    9650029242287828579,
    2870177450012600261,
)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc, lane):
    acc = (acc + lane * _P2) & _M64
    return (_rotl(acc, 31) * _P1) & _M64


def xxh64(data: bytes, seed: int = 0) -> int:
    """xxh64 from the specification, on Python ints."""
    n = len(data)
    p = 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed, (seed - _P1) & _M64]
        while p + 32 <= n:
            for lane in range(4):
                lane_bytes = data[p + 8 * lane : p + 8 * lane + 8]
                v[lane] = _round(v[lane], int.from_bytes(lane_bytes, "little"))
            p += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
        for lane in range(4):
            h ^= _round(0, v[lane])
            h = (h * _P1 + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while p + 8 <= n:
        h ^= _round(0, int.from_bytes(data[p : p + 8], "little"))
        h = (_rotl(h, 27) * _P1 + _P4) & _M64
        p += 8
    if p + 4 <= n:
        h ^= (int.from_bytes(data[p : p + 4], "little") * _P1) & _M64
        h = (_rotl(h, 23) * _P2 + _P3) & _M64
        p += 4
    while p < n:
        h ^= (data[p] * _P5) & _M64
        h = (_rotl(h, 11) * _P1) & _M64
        p += 1
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    h ^= h >> 32
    return h


def splitmix64(x: int) -> int:
    z = (x + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


# --- shingles ------------------------------------------------------------------------

_CJK = [
    (0x3040, 0x309F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
    (0x20000, 0x2FA1F), (0x30000, 0x323AF), (0x30A0, 0x30FF),
]


def char_class(ch: str) -> int:
    """0 separator, 1 word character, 2 CJK ideograph or kana (Unicode 14, as shipped)."""
    import unicodedata

    cat = unicodedata.category(ch)
    if cat[0] not in "LMN" and cat != "Pc":
        return 0
    cp = ord(ch)
    return 2 if any(lo <= cp <= hi for lo, hi in _CJK) else 1


def words(text: str) -> list[str]:
    out, cur = [], ""
    for ch in text:
        c = char_class(ch)
        if c == 1:
            cur += ch
            continue
        if cur:
            out.append(cur)
            cur = ""
        if c == 2:
            out.append(ch)
    if cur:
        out.append(cur)
    return out


def shingles(text: str, tokenizer: str, n: int) -> list[str]:
    """Features of one text, in text order, as strings."""
    units = list(text) if tokenizer == "char" else words(text)
    sep = "" if tokenizer == "char" else " "
    if not units:
        return []
    if len(units) < n:
        return [sep.join(units)]
    return [sep.join(units[i : i + n]) for i in range(len(units) - n + 1)]


def feature_hashes(text: str, tokenizer: str, n: int, seed: int = 0) -> list[int]:
    return [xxh64(s.encode("utf-8"), seed) for s in shingles(text, tokenizer, n)]


# --- fingerprints --------------------------------------------------------------------


def simhash(hashes, weights=None, bits: int = 64) -> int:
    """Bit b is 1 iff sum(+w if bit b of the feature's hash else -w) > 0."""
    weights = [1.0] * len(hashes) if weights is None else [float(w) for w in weights]
    fp = 0
    for word in range(bits // 64):
        sums = [0.0] * 64
        for h, w in zip(hashes, weights):
            hw = int(h) if word == 0 else splitmix64(int(h))
            for b in range(64):
                sums[b] += w if (hw >> b) & 1 else -w
        for b in range(64):
            if sums[b] > 0:
                fp |= 1 << (64 * word + b)
    return fp


def fingerprint_text(text: str, tokenizer="char", n=4, bits=64, weights="tf", seed=0) -> int:
    """Fingerprint of an already normalised text, as one int (128 bits: low word low)."""
    hs = feature_hashes(text, tokenizer, n, seed)
    if weights == "binary":
        hs = sorted(set(hs))
    return simhash(hs, None, bits)


# --- jaccard -------------------------------------------------------------------------


def jaccard(a, b) -> float:
    """|A & B| / |A | B| of two collections of hashes; two empty sets are identical (1)."""
    a, b = {int(x) for x in a}, {int(x) for x in b}
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def minhash(hashes, salts) -> list[int]:
    """Signature entry p: min over features h of splitmix64(h ^ salts[p]); 2**64 - 1 if empty."""
    return [min((splitmix64(int(h) ^ int(s)) for h in hashes), default=_M64) for s in salts]


def band_keys(sig, bands: int, rows: int) -> list[int]:
    """Key of band b: splitmix64 chained over its rows, starting from b."""
    keys = []
    for b in range(bands):
        key = b
        for r in range(b * rows, (b + 1) * rows):
            key = splitmix64(key ^ int(sig[r]))
        keys.append(key)
    return keys


def bucket_pairs(keys) -> set[tuple[int, int]]:
    """All (i, j), i < j, with keys[i] == keys[j]."""
    return {
        (i, j)
        for i in range(len(keys))
        for j in range(i + 1, len(keys))
        if keys[i] == keys[j]
    }


def threshold_counts(dist, truth, k: int) -> tuple[int, int, int]:
    """(tp, fp, fn) at threshold k: dist and truth map each evaluated pair to its
    distance and to whether it is a duplicate."""
    tp = sum(1 for p, d in dist.items() if d <= k and truth[p])
    fp = sum(1 for p, d in dist.items() if d <= k and not truth[p])
    fn = sum(1 for p, d in dist.items() if d > k and truth[p])
    return tp, fp, fn


# --- windows -------------------------------------------------------------------------


def token_spans(text: str, tokenizer: str) -> list[tuple[int, int]]:
    """(start, end) character positions of each token: code points or words."""
    if tokenizer == "char":
        return [(i, i + 1) for i in range(len(text))]
    spans, start = [], None
    for i, ch in enumerate(text):
        c = char_class(ch)
        if c == 1:
            if start is None:
                start = i
            continue
        if start is not None:
            spans.append((start, i))
            start = None
        if c == 2:
            spans.append((i, i + 1))
    if start is not None:
        spans.append((start, len(text)))
    return spans


def windows(text: str, tokenizer: str, window: int, stride: int) -> list[tuple[int, int, str]]:
    """(first token, end token, text of the window) of each window of one text."""
    spans = token_spans(text, tokenizer)
    t = len(spans)
    if t == 0:
        return []
    starts = list(range(0, max(t - window, 0) + 1, stride))
    if starts[-1] + window < t:
        starts.append(t - window)
    out = []
    for s in starts:
        e = min(s + window, t)
        out.append((s, e, text[spans[s][0] : spans[e - 1][1]]))
    return out


# --- search / clusters ---------------------------------------------------------------


def clusters(n, pairs):
    """Label of each of n items = smallest item of its connected component (union-find)."""
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for i, j, *_ in pairs:
        a, b = find(int(i)), find(int(j))
        if a != b:
            parent[max(a, b)] = min(a, b)
    return [find(x) for x in range(n)]


def dedupe(labels, keep="first"):
    """Mask keeping one item per label: the first, the last, or (keep=False) singletons."""
    n = len(labels)
    members = {}
    for x, lab in enumerate(labels):
        members.setdefault(lab, []).append(x)
    if keep is False:
        return [len(members[lab]) == 1 for lab in labels]
    chosen = {lab: (xs[0] if keep == "first" else xs[-1]) for lab, xs in members.items()}
    return [chosen[labels[x]] == x for x in range(n)]


def index_query(stored, ids, queries, k):
    """Sorted (query, id, distance) of every stored fingerprint within k of a query."""
    out = []
    for q, fq in enumerate(queries):
        for fs, id_ in zip(stored, ids):
            d = hamming(fq, fs)
            if d <= k:
                out.append((q, int(id_), d))
    return sorted(out, key=lambda t: (t[0], t[2], t[1]))


# --- normalize (punct, whitespace) ---------------------------------------------------


def nonascii_segments(doc: bytes) -> list[tuple[int, int]]:
    """(start, end) in ``doc`` of each run of bytes >= 0x80, with the ASCII byte before it."""
    import re

    return [(m.start(), m.end()) for m in re.finditer(rb"[\x00-\x7f]?[\x80-\xff]+", doc)]



def squeeze(text: str, punct: bool, collapse: bool) -> str:
    """punct: P*/S* (not Pc) to a space; collapse: runs of spaces (and punct) to one, trimmed."""
    import unicodedata

    def is_punct(ch):
        cat = unicodedata.category(ch)
        return not ch.isspace() and cat[0] in "PS" and cat != "Pc"

    if punct:
        text = "".join(" " if is_punct(ch) else ch for ch in text)
    if collapse:
        text = " ".join(text.split())  # str.split splits on str.isspace characters
    return text


def table_pairs(fps, masks, k, n_left=-1):
    """Pairs found by a family of key-mask tables, each reported by its first table.

    The twin of ``_kernels.dense_tables.search_dense`` with the mask rule: table ``t``
    (``masks[t]``: a Python int over all bits) reports a pair iff the two fingerprints
    agree on every bit of ``masks[t]``, are within ``k`` bits, and agree on no earlier
    mask. ``fps`` are Python ints; cross join when ``n_left >= 0`` (rows below it on
    the left; the right row reported as ``row - n_left``).
    Returns ``{(i, j): (distance, table)}``.
    """
    out = {}
    n = len(fps)
    for x in range(n):
        for y in range(x + 1, n):
            if n_left >= 0 and not (x < n_left <= y):
                continue
            diff = fps[x] ^ fps[y]
            d = bin(diff).count("1")
            if d > k:
                continue
            first = next((t for t, m in enumerate(masks) if diff & m == 0), None)
            if first is not None:
                out[(x, y - n_left) if n_left >= 0 else (x, y)] = (d, first)
    return out


def cross_sampled_pairs(new, stored, family, k):
    """Pairs of a new row and a stored row found by the tables of ``family``, each
    reported by its first table: the twin of ``_core.search.cross.cross_waves``.

    ``new``, ``stored``: fingerprints as ints or sequences of words (low first);
    ``family.masks[t]`` (two words, low first) is table ``t``'s key mask. A pair
    ``(i, j)`` is kept iff it is within ``k`` bits and agrees on every bit of some mask;
    its table is the first such mask. Returns ``{(i, j): (distance, table)}``.
    """
    masks = [int(lo) | (int(hi) << 64) for lo, hi in family.masks]
    out = {}
    for i, a in enumerate(new):
        for j, b in enumerate(stored):
            diff = fingerprint_int(a) ^ fingerprint_int(b)
            d = bin(diff).count("1")
            if d > k:
                continue
            first = next((t for t, m in enumerate(masks) if diff & m == 0), None)
            if first is not None:
                out[(i, j)] = (d, first)
    return out


# --- verify_blocks -------------------------------------------------------------------


def block_ends(i, j, need_i, need_j, limit, same_store=False):
    """Greedy blocks of pairs, in order: a pair joins the open block while the bytes of
    the block's distinct documents (each side's documents apart, unless ``same_store``)
    stay within ``limit``; a block holds at least one pair. The ends, exclusive."""
    ends, docs, used = [], set(), 0
    for p in range(len(i)):
        a = (0, i[p]) if same_store else ("i", i[p])
        b = (0, j[p]) if same_store else ("j", j[p])
        extra = (need_i[p] if a not in docs else 0) + (need_j[p] if b not in docs else 0)
        if a == b:
            extra = need_i[p] + need_j[p] if a not in docs else 0
        if docs and used + extra > limit:
            ends.append(p)
            docs, used = set(), 0
            extra = need_i[p] + need_j[p]
        docs |= {a, b}
        used += extra
    if len(i):
        ends.append(len(i))
    return ends


# --- sketches --------------------------------------------------------------------------


def oph_sketch(hashes) -> list[int]:
    """The 16 four-bit bins of a set of 64-bit hashes: 0 where no hash has those top
    four bits, else 1 + (the smallest such hash) % 15."""
    bins = [0] * 16
    for b in range(16):
        inside = [h for h in hashes if h >> 60 == b]
        if inside:
            bins[b] = 1 + min(inside) % 15
    return bins


def agreeing_bins(a: list[int], b: list[int]) -> int:
    """Bins equal in both, or empty (0) in either."""
    return sum(1 for x, y in zip(a, b) if x == y or x == 0 or y == 0)


# --- byte MinHash signatures and bands (minhash_bytes) ------------------------------------


def mix32(x: int) -> int:
    """MurmurHash3's 32-bit finaliser."""
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & 0xFFFFFFFF
    return x ^ (x >> 16)


def byte_signature(hashes, salts) -> list[int]:
    """Value ``p``: the low byte of the least ``mix32(low 32 bits of h ^ salt p)``."""
    out = []
    for s in salts:
        least = min((mix32((int(h) & 0xFFFFFFFF) ^ int(s)) for h in hashes), default=2**32 - 1)
        out.append(least & 0xFF)
    return out


def band_pairs(new, stored, bands: int, rows: int, least: int) -> list[tuple[int, int]]:
    """Every ``(i, j)`` whose signatures share the bytes of a band and agree in at least
    ``least`` values, sorted."""
    out = []
    for i, a in enumerate(new):
        for j, b in enumerate(stored):
            shared = any(a[x * rows:(x + 1) * rows] == b[x * rows:(x + 1) * rows]
                         for x in range(bands))
            if shared and sum(p == q for p, q in zip(a, b, strict=True)) >= least:
                out.append((i, j))
    return sorted(out)
