"""The search of a corpus store for new documents: byte MinHash signatures
(:mod:`simhash_nb._kernels.minhash_bytes`, 64 bytes a document, kept with the store's
shingles as ``minhash.u8``) and LSH bands over them.

Why not the fingerprints: at the verified path's ``k`` (37 bits of 128 for Jaccard 0.7
with word 3-grams) a table of sampled bits keeps only 11 of them, so 200k new rows
against 1.8M stored ones met 17 billion times by chance over the 87 tables the recall
needs: 16 s of CPU for 905k candidates (measured). Unrelated documents share no
shingle, so their MinHash bands never meet: with bands of 3 values the same search
meets about the related pairs only (5M meetings), 0.6-0.8 s on two threads. Each pair
that shares a band is kept when its signatures agree in at least
:func:`~.sketches.least_agreeing` of 64 values (a pair at the threshold agrees in fewer
with probability 1e-4), then verified exactly.

The bands are chosen per query (:func:`band_design`) from the stored values: the most
values a band (fewest chance meetings) whose bands reach the recall at the threshold. A
threshold too low for bands of three values (below 0.59 at recall 0.99), or a store
written before the signatures, is searched by its fingerprints instead.
"""

from __future__ import annotations

import dataclasses
import os

import numba
import numpy as np

from ..._kernels import minhash_bytes as _mb
from ...config import config
from ..parallel import SLICE_SECONDS, check_cancelled, deferred_interrupt, task_pairs
from ..search.pace import Pace
from .sketches import least_agreeing

__all__ = ["MINHASH", "WIDTH", "BandDesign", "SignatureColumn", "band_design", "band_pairs",
           "signatures"]

WIDTH = _mb.WIDTH
MINHASH = "minhash.u8"  # a store segment's signatures: uint8[rows, WIDTH], row-major
_MAX_ROWS = 8  # values a band key holds (one uint64)
# and at least: keys of one or two bytes meet by chance too often (1 pair in 256 or in
# 65,536 a band: 200k new rows against 1.8M stored ones, 176M meetings in 32 bands)
_MIN_ROWS = 3
_FIRST_ROWS = 1 << 15  # stored rows of the first slice of a search
_MOST_ROWS = 1 << 19  # and of any slice: their signatures, read at once, take 32 MB


def _salts() -> np.ndarray:
    """The 64 salts of the signature's values: the low 32 bits of the first 64 outputs
    of splitmix64 from a fixed seed. Part of the format of ``minhash.u8`` (computed
    here, not drawn from a generator whose stream could change)."""
    out, state, mask = [], 0x5111_4A54_0000_0001, (1 << 64) - 1
    for _ in range(WIDTH):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append((z ^ (z >> 31)) & 0xFFFFFFFF)
    return np.array(out, dtype=np.uint32)


SALTS = _salts()


def signatures(indptr: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """The byte MinHash signature of each document of a CSR of shingle hashes.

    Examples
    --------
    >>> import numpy as np
    >>> sig = signatures(np.array([0, 3, 6, 6]), np.arange(6, dtype=np.uint64) % 3)
    >>> sig.shape, bool((sig[0] == sig[1]).all()), sig[2].tolist() == [255] * 64
    ((3, 64), True, True)
    """
    out = np.empty((indptr.shape[0] - 1, WIDTH), dtype=np.uint8)
    with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
        return _mb.byte_signatures(np.asarray(indptr, np.int64), hashes, SALTS, out)


class SignatureColumn:
    """The signatures of a store's documents, as they are appended: in memory, or (with
    ``path``) written to that file as they come, so that a segment being saved holds
    none of them.

    Examples
    --------
    >>> import numpy as np
    >>> col = SignatureColumn()
    >>> col.append(np.array([0, 2, 3]), np.array([5, 6, 5], dtype=np.uint64))
    >>> col.seal()
    >>> col.n, col.read(0, 2).shape
    (2, (2, 64))
    """

    def __init__(self, path: str | None = None):
        self.path = path
        self._parts: list[np.ndarray] = []
        self._file = None
        self._held: np.ndarray | None = None
        self.n = 0

    @classmethod
    def open(cls, path: str, n: int) -> SignatureColumn:
        """The sealed signatures of ``n`` documents in file ``path``."""
        size = os.path.getsize(path)
        if size != n * WIDTH:
            raise ValueError(f"{path} holds {size:,} bytes, not the {n * WIDTH:,} of "
                             f"{n:,} signatures")
        col = cls(path)
        col.n = n
        return col

    def append(self, indptr: np.ndarray, hashes: np.ndarray) -> None:
        sig = signatures(indptr, hashes)
        self.n += sig.shape[0]
        if self.path is None:
            self._parts.append(sig)
            return
        try:
            if self._file is None:
                self._file = open(self.path, "wb")  # noqa: SIM115 (closed by seal or close)
            self._file.write(sig.data)
        except OSError as e:
            raise OSError(e.errno, f"cannot write the signatures to {self.path}: "
                          f"{e.strerror or e}") from None

    def seal(self) -> None:
        if self.path is None:
            self._held = (np.concatenate(self._parts) if self._parts else
                          np.empty((0, WIDTH), np.uint8))
            self._parts = []
            return
        if self._file is None:
            open(self.path, "wb").close()
        self.close()

    def read(self, lo: int, hi: int) -> np.ndarray:
        """The signatures of documents ``lo .. hi - 1``."""
        if self._held is not None:
            return self._held[lo:hi]
        count = max(0, hi - lo) * WIDTH
        got = np.fromfile(self.path, dtype=np.uint8, count=count, offset=lo * WIDTH)
        if got.shape[0] != count:
            raise OSError(f"cannot read the signatures of {self.path} (rows {lo}..{hi})")
        return got.reshape(-1, WIDTH)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclasses.dataclass(frozen=True)
class BandDesign:
    """``bands`` bands of ``rows`` values; a pair at the threshold shares one with
    probability ``recall``; a pair that does is kept when ``least`` values agree."""

    bands: int
    rows: int
    recall: float
    least: int


def band_design(threshold: float, recall: float) -> BandDesign | None:
    """The bands for ``recall`` at Jaccard ``threshold``: the most values a band (3 to
    8) whose bands (the fewest that do, within 64 values) reach the recall; None when
    no design does.

    Examples
    --------
    >>> band_design(0.7, 0.99)
    BandDesign(bands=11, rows=3, recall=0.990..., least=31)
    >>> band_design(0.9, 0.99).rows, band_design(0.5, 0.99)
    (7, None)
    """
    for rows in range(_MAX_ROWS, _MIN_ROWS - 1, -1):
        hit = threshold**rows
        for bands in range(1, WIDTH // rows + 1):
            found = 1.0 - (1.0 - hit) ** bands
            if found >= recall:
                return BandDesign(bands, rows, found, least_agreeing(threshold, bins=WIDTH))
    return None


@dataclasses.dataclass
class _BandIndex:
    """The new signatures indexed by each band's key (:func:`_mb.index_bands`)."""

    words: np.ndarray  # the signatures as uint64[m, WIDTH // 8]
    keys: np.ndarray
    starts: np.ndarray
    members: np.ndarray
    seen: np.ndarray
    hash_bits: int

    @classmethod
    def make(cls, new: np.ndarray, design: BandDesign) -> _BandIndex:
        m = new.shape[0]
        hash_bits = max(1, (m - 1).bit_length())
        index = cls(new.view(np.uint64), np.empty((design.bands, m), dtype=np.uint64),
                    np.empty((design.bands, (1 << hash_bits) + 1), dtype=np.int32),
                    np.empty((design.bands, m), dtype=np.int32),
                    np.empty((design.bands, max(1, (1 << (hash_bits + 3)) // 64)),
                             dtype=np.uint64), hash_bits)
        with deferred_interrupt():
            _mb.index_bands(new, design.bands, design.rows, hash_bits, index.keys,
                            index.starts, index.members, index.seen)
        return index

    def pairs(self, rows: np.ndarray, design: BandDesign, cap: int):
        """``(i, j, agreeing values, counts)`` of stored ``rows``, four tasks a thread,
        task ``t`` at ``t * cap`` (:func:`~simhash_nb._core.parallel.task_pairs`)."""
        chunks = int(max(1, min(4 * numba.get_num_threads(), rows.shape[0] // 1024)))
        left = np.empty(chunks * cap, dtype=np.int64)
        right = np.empty(chunks * cap, dtype=np.int64)
        agree = np.empty(chunks * cap, dtype=np.int64)
        counts = np.zeros(chunks, dtype=np.int64)
        with deferred_interrupt():  # Ctrl-C waits for the slice (see deferred_interrupt)
            _mb.band_pairs(rows, rows.view(np.uint64), self.words, self.keys, self.starts,
                           self.members, self.seen, design.bands, design.rows,
                           self.hash_bits, design.least, chunks, cap, left, right, agree,
                           counts)
        return left, right, agree, counts


def band_pairs(new: np.ndarray, stored, n_stored: int, design: BandDesign, progress=None):
    """Pairs ``(i, j)`` of a new signature ``new[i]`` and a stored one (row ``j`` of
    ``stored(lo, hi)``, which returns rows ``lo..hi - 1``) that share a band and agree
    in at least ``design.least`` values, each once; yielded a slice of stored rows at a
    time (Ctrl-C is answered between two). ``progress``: called with the rows done.

    Examples
    --------
    >>> import numpy as np
    >>> sigs = signatures(np.array([0, 4, 8, 12]),
    ...                   np.array([1, 2, 3, 4, 1, 2, 3, 5, 7, 8, 9, 10], dtype=np.uint64))
    >>> got = band_pairs(sigs[:1], lambda lo, hi: sigs[lo:hi], 3, band_design(0.6, 0.99))
    >>> sorted((int(i), int(j)) for a, b in got for i, j in zip(a, b))
    [(0, 0), (0, 1)]
    """
    if new.shape[0] == 0 or n_stored == 0:
        return
    index = _BandIndex.make(new, design)
    cap = int(config["pairs_initial_capacity"])
    pace = Pace(_FIRST_ROWS, SLICE_SECONDS, _MOST_ROWS)
    for lo, hi in pace.ranges(n_stored):
        check_cancelled()  # a run_ahead producer whose caller stopped ends here
        rows = np.ascontiguousarray(stored(lo, hi), dtype=np.uint8)
        out = index.pairs(rows, design, cap)
        most = int(out[3].max(initial=0))
        if most > cap:  # a task overflowed: the slice again, with room for all
            cap = most
            out = index.pairs(rows, design, cap)
        i, j, _ = task_pairs(*out, cap)
        if i.shape[0]:
            yield i, j + lo
        if progress is not None:
            progress(hi - lo)
