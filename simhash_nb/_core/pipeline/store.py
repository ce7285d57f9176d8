"""Each document's distinct shingle hashes, for exact verification: held in memory up to
a byte budget, beyond it in a temporary file from which each block of candidates reads
the documents it names (``pread``) into a small buffer.

Not a memory map: this kernel (Linux 6.x, ext4) maps whole large page-cache folios on a
read fault, so 450 random reads of 8 bytes in a mapped 400 MB file made 327 MB resident
(measured); reading the documents' bytes costs a system call each and holds only them.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
import weakref

import numpy as np
from numba import njit, prange

from ..._kernels import jaccard as _jk
from ..._kernels.jaccard_parts import parts_similarities_above, typed_parts
from ..._kernels.prange import PRANGE_ONLY
from ..._kernels.verify_blocks import block_ends
from ..arrays import sorted_unique
from ..parallel import deferred_interrupt
from .signatures import MINHASH, SignatureColumn
from .sketches import sketch

__all__ = ["SHINGLES", "ShingleStore"]

_ITEM = 8  # bytes of one shingle hash
SHINGLES = "shingles.u64"  # the file name of spilled shingles

_libc = ctypes.CDLL(None, use_errno=True)
_pread = _libc.pread
_pread.argtypes = (ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_ssize_t)
_pread.restype = ctypes.c_ssize_t


@njit(parallel=PRANGE_ONLY, cache=True, nogil=True)
def _read_runs(pread, fd, address, starts, lengths):
    """Read ``lengths[r]`` hashes from hash ``starts[r]`` of file ``fd`` for each run,
    one after another into the buffer at ``address``, the runs spread over the threads
    (a run's place: the lengths of those before it); the first run not read in full (-1
    when all were). ``pread`` is libc's, as a ctypes function: an argument, so that its
    address is the calling process's own and the compiled kernel can be cached (a
    global would be baked into it)."""
    n = starts.shape[0]
    pos = np.empty(n, dtype=np.int64)
    total = 0
    for r in range(n):
        pos[r] = total
        total += lengths[r] * 8
    short = np.zeros(n, dtype=np.bool_)
    for r in prange(n):
        want = lengths[r] * 8
        short[r] = pread(fd, address + pos[r], want, starts[r] * 8) != want
    for r in range(n):
        if short[r]:
            return r
    return -1


class ShingleStore:
    """Append-only CSR of shingle hashes (``offsets``, ``hashes``) that spills to disk.

    Append batches with :meth:`append`, then :meth:`seal`; then :meth:`similarities`
    and :meth:`at_least` compare pairs of documents. Use as a context manager (or call
    :meth:`close`): the temporary folder goes on close, on error and at exit.

    Parameters
    ----------
    memory_bytes : int
        Shingle bytes held in memory; past them, all go to a file.
    verify_bytes : int
        Bytes of the file's pages that one block of candidates may touch.
    tmp_dir : str, optional
        Where the temporary folder is made (default: the system's).
    folder : str, optional
        Instead, spill every shingle (whatever ``memory_bytes``) into this existing
        folder, and keep it on close (a corpus store's segment).
    signed : bool, default False
        Also keep each document's byte MinHash signature (:mod:`.signatures`; in
        ``folder``, if given, as ``minhash.u8``): what a corpus store is searched by.

    Examples
    --------
    >>> import numpy as np
    >>> with ShingleStore(memory_bytes=0, verify_bytes=1 << 20) as s:
    ...     s.append(np.array([0, 2, 3]), np.array([1, 2, 2], dtype=np.uint64))
    ...     s.seal()
    ...     s.spilled, s.similarities(np.array([0]), np.array([1]), 0.0).tolist()
    (True, [0.5])
    """

    def __init__(self, memory_bytes: int, verify_bytes: int, tmp_dir=None, folder=None, *,
                 signed: bool = False):
        self.memory_bytes = -1 if folder is not None else int(memory_bytes)
        self.verify_bytes = int(verify_bytes)
        self.tmp_dir = tmp_dir
        self.folder: str | None = None if folder is None else str(folder)
        self._own_folder = folder is None
        self._chunks: list[np.ndarray] = []  # in memory: each batch's hashes, not copied
        self._chunk_docs: list[int] = []  # documents of each chunk
        self._parts: list[tuple[int, np.ndarray, np.ndarray]] = []  # sealed chunks
        self._held = 0
        self._ends: list[np.ndarray] = []
        self.total = 0
        self._file = None
        self._fd = -1  # the sealed file, read with pread
        self.offsets: np.ndarray | None = None
        self.n_features: np.ndarray | None = None  # shingles of each document
        self.hashes: np.ndarray | None = None
        self._cleanup = None
        self._block_marks: np.ndarray | None = None  # see _blocks
        self._next_block = 1
        self._sketch_parts: list[np.ndarray] = []
        self.sketches: np.ndarray | None = None  # each document's (pipeline.sketches)
        self.signatures: SignatureColumn | None = None
        if signed:
            self.signatures = SignatureColumn(
                None if folder is None else os.path.join(self.folder, MINHASH))

    # --- writing -------------------------------------------------------------------
    @property
    def spilled(self) -> bool:
        return self._file is not None or self._fd >= 0

    @property
    def n(self) -> int:
        return sum(e.shape[0] for e in self._ends) if self.offsets is None else \
            self.offsets.shape[0] - 1

    def append(self, indptr: np.ndarray, hashes: np.ndarray) -> None:
        """Add a batch: ``hashes[indptr[d]:indptr[d + 1]]`` are document ``d``'s."""
        used = hashes[: int(indptr[-1])]
        self._sketch_parts.append(sketch(indptr, used))
        if self.signatures is not None:
            self.signatures.append(indptr, used)
        self._ends.append(np.asarray(indptr[1:], dtype=np.int64) + self.total)
        self.total += int(used.shape[0])
        if self._file is None and self._held + used.nbytes > self.memory_bytes:
            self._spill()
        if self._file is not None:
            self._write(np.ascontiguousarray(used, dtype=np.uint64).data)
        else:
            owner = used if used.base is None else used.base
            size = getattr(owner, "nbytes", used.nbytes)
            if size > 1.5 * used.nbytes:  # a view would hold a much larger buffer
                used, size = used.copy(), used.nbytes
            self._chunks.append(used)
            self._chunk_docs.append(int(self._ends[-1].shape[0]))
            self._held += size

    def _spill(self) -> None:
        if self._own_folder:
            self.folder = tempfile.mkdtemp(prefix="simhash-nb-", dir=self.tmp_dir)
            self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)
        self._file = open_spill(os.path.join(self.folder, SHINGLES))
        for chunk in self._chunks:
            self._write(np.ascontiguousarray(chunk).data)
        self._chunks, self._chunk_docs, self._held = [], [], 0

    def _write(self, data) -> None:
        try:
            self._file.write(data)
        except OSError as e:
            raise OSError(e.errno, f"cannot write the shingles to {self.folder}: "
                          f"{e.strerror or e}; give a temporary folder with room for about "
                          "8 bytes a shingle (tmp_dir= / --tmp-dir)") from None

    def seal(self) -> None:
        """End the writing: the offsets, and the hashes in memory or mapped."""
        self.offsets = np.concatenate([np.zeros(1, np.int64), *self._ends])
        self._ends = []
        self.n_features = np.diff(self.offsets)
        self.sketches = (np.concatenate(self._sketch_parts) if self._sketch_parts else
                         np.empty(0, np.uint64))
        self._sketch_parts = []
        if self.signatures is not None:
            self.signatures.seal()
        if self._file is None:  # the batches' arrays stay as they are: no copy
            start = 0
            for chunk, docs in zip(self._chunks, self._chunk_docs, strict=True):
                local = self.offsets[start:start + docs + 1] - self.offsets[start]
                self._parts.append((start, local, chunk))
                start += docs
            if len(self._parts) == 1:
                self.hashes = self._parts[0][2]
            elif not self._parts:
                self.hashes = np.empty(0, np.uint64)
            self._chunks, self._chunk_docs = [], []
            return
        path = self._file.name
        self._file.close()
        self._file = None
        self._fd = os.open(path, os.O_RDONLY)

    @classmethod
    def open(cls, folder, offsets: np.ndarray, verify_bytes: int,
             sketches: np.ndarray | None = None, signed: bool = False) -> ShingleStore:
        """The sealed store of a folder that a store with ``folder=`` wrote (its
        ``offsets`` and its documents' ``sketches``, if known, kept apart; ``signed``:
        it has their signatures); the folder stays on close."""
        store = cls(0, verify_bytes, folder=folder)
        store.sketches = sketches
        store.offsets = np.asarray(offsets, dtype=np.int64)
        store.n_features = np.diff(store.offsets)
        store.total = int(store.offsets[-1])
        path = os.path.join(store.folder, SHINGLES)
        if os.path.getsize(path) != store.total * _ITEM:
            raise ValueError(f"{path} holds {os.path.getsize(path):,} bytes, not the "
                             f"{store.total * _ITEM:,} its offsets name")
        if signed:
            store.signatures = SignatureColumn.open(os.path.join(store.folder, MINHASH),
                                                    store.offsets.shape[0] - 1)
        store._fd = os.open(path, os.O_RDONLY)
        return store

    # --- reading -------------------------------------------------------------------
    def _blocks(self, i: np.ndarray, j: np.ndarray, other: ShingleStore | None = None,
                counts: tuple[np.ndarray, np.ndarray] | None = None):
        """Slices of the pairs whose distinct documents fit ``verify_bytes`` together,
        each document counted once a block (``j`` in ``other``, if given; ``counts``:
        the most hashes each pair's documents read, if not all their shingles); one
        slice when nothing is on disk."""
        other = self if other is None else other
        m = i.shape[0]
        if not (self.spilled or other.spilled) or m == 0:
            yield slice(0, m)
            return
        ca, cb = (self.n_features[i], other.n_features[j]) if counts is None else counts
        block = max(self._next_block, other._next_block)
        with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
            ends, after = block_ends(i, j, (ca + 1) * _ITEM, (cb + 1) * _ITEM, self._marks(),
                                     other._marks(), block, self.verify_bytes)
        self._next_block = other._next_block = after
        lo = 0
        for hi in ends.tolist():
            yield slice(lo, hi)
            lo = hi

    def _marks(self) -> np.ndarray:
        """For each document, the last block that counted it (see :meth:`_blocks`)."""
        if self._block_marks is None:
            self._block_marks = np.zeros(self.n, dtype=np.int32)
        return self._block_marks

    def gather(self, docs: np.ndarray, counts: np.ndarray | None = None):
        """``(indptr, hashes)`` of the documents ``docs`` (sorted, distinct), in order:
        all their shingles, or the first ``counts[d]`` (the smallest hashes) of each."""
        counts = self.n_features[docs] if counts is None else counts
        indptr = np.zeros(docs.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        if not self.spilled:
            if self.hashes is not None:
                return indptr, self.hashes[_ranges(self.offsets[docs], counts)]
            out = []
            for start, local, hashes in self._parts:
                mine = (docs >= start) & (docs < start + local.shape[0] - 1)
                out.append(hashes[_ranges(local[docs[mine] - start], counts[mine])])
            return indptr, np.concatenate(out)
        out = np.empty(int(indptr[-1]), dtype=np.uint64)
        keep = counts > 0
        if out.shape[0]:
            starts, lengths = self.offsets[docs][keep], counts[keep]
            with deferred_interrupt():  # see deferred_interrupt
                bad = _read_runs(_pread, self._fd, out.ctypes.data, starts, lengths)
            if bad >= 0:
                raise OSError(f"cannot read the shingles of {self.folder} (run {bad}: "
                              f"{self._read_error(starts[bad], lengths[bad])})")
        return indptr, out

    def _read_error(self, start: int, length: int) -> str:
        """Why a run could not be read: read again in this thread, whose ``errno`` it
        sets (the kernel's threads each have their own)."""
        try:
            got = len(os.pread(self._fd, int(length) * _ITEM, int(start) * _ITEM))
        except OSError as e:
            return e.strerror or str(e)
        return f"{got} of {int(length) * _ITEM} bytes"

    def _local(self, i, j, other: ShingleStore | None = None, lengths=None):
        """The documents of pairs ``(i, j)`` gathered into one small CSR: ``(indptr,
        hashes, local i, local j)``; ``lengths``: the hashes of each pair's two
        documents needed (the longest of a document's pairs is read), if not all."""
        m = i.shape[0]
        if other is None:
            docs, inv = np.unique(np.concatenate([i, j]), return_inverse=True)
            counts = None if lengths is None else _longest(inv, np.concatenate(lengths),
                                                            docs.shape[0])
            indptr, hashes = self.gather(docs, counts)
            return indptr, hashes, inv[:m], inv[m:]
        da, ia = np.unique(i, return_inverse=True)
        db, ib = np.unique(j, return_inverse=True)
        ca = None if lengths is None else _longest(ia, lengths[0], da.shape[0])
        cb = None if lengths is None else _longest(ib, lengths[1], db.shape[0])
        pa_, ha = self.gather(da, ca)
        pb, hb = other.gather(db, cb)
        indptr = np.concatenate([pa_, pb[1:] + pa_[-1]])
        return indptr, np.concatenate([ha, hb]), ia, ib + da.shape[0]

    def prefixes_meet(self, i: np.ndarray, j: np.ndarray, threshold: float,
                      other: ShingleStore | None = None) -> np.ndarray:
        """Whether each pair ``(i, j)`` (``j`` of ``other``, if given) passes the prefix
        filter of exact set-similarity joins (Chaudhuri et al. 2006): documents with
        Jaccard ``>= threshold`` share at least ``alpha`` shingles (see
        :func:`prefix_lengths`), so their ``n - alpha + 1`` smallest hashes meet. Only
        those prefixes are read: a pair that fails is below the threshold, exactly."""
        other = self if other is None else other
        na, nb = self.n_features[i], other.n_features[j]
        la, lb = prefix_lengths(na, nb, threshold)
        sims = np.empty(i.shape[0], dtype=np.float64)
        # a document's blocks count the longest prefix any partner may need
        most = (longest_prefix(na, threshold), longest_prefix(nb, threshold))
        for s in self._blocks(i, j, other, most):
            # J of the prefixes > 0 exactly when they share a hash
            self._block_similarities(i[s], j[s], _ANY_SHARED, sims[s],
                                     None if other is self else other, (la[s], lb[s]))
        return sims > 0.0

    def _block_similarities(self, i, j, threshold: float, out: np.ndarray,
                            other: ShingleStore | None = None, lengths=None) -> None:
        """``pair_similarities_above`` of one block of pairs into ``out``, their documents
        read here (:meth:`_local`) and freed when it returns: before the next block is
        read, not beside it (:attr:`MemoryBudget.verify_bytes` is one block; a loop
        variable holding it kept two: 1.01-1.06 GB against 0.87 at 2M documents and 1GB)."""
        indptr, hashes, li, lj = self._local(i, j, other, lengths)
        with deferred_interrupt():  # see deferred_interrupt
            _jk.pair_similarities_above(indptr, hashes, li, lj, threshold, out)

    def similarities(self, i: np.ndarray, j: np.ndarray, threshold: float) -> np.ndarray:
        """Exact Jaccard similarity of each pair ``(i, j)``; pairs below ``threshold``
        may stop early and get any value below it."""
        out = np.empty(i.shape[0], dtype=np.float64)
        if not self.spilled:
            if self.hashes is not None:
                with deferred_interrupt():  # boxing the result must finish
                    return _jk.pair_similarities_above(self.offsets, self.hashes, i, j,
                                                       threshold, out)
            return self._across_parts(i, j, threshold, out)
        order = np.argsort(i, kind="stable")  # a block's pairs share documents
        i, j = i[order], j[order]
        if self._prefix_first(self):
            got = np.full(i.shape[0], -1.0)
            meet = np.flatnonzero(self.prefixes_meet(i, j, threshold))
            got[meet] = self._read_similarities(i[meet], j[meet], threshold)
        else:
            got = self._read_similarities(i, j, threshold)
        out[order] = got
        return out

    def _read_similarities(self, i, j, threshold: float) -> np.ndarray:
        """:meth:`similarities` of spilled pairs, their documents read a block at a time."""
        sims = np.empty(i.shape[0], dtype=np.float64)
        for s in self._blocks(i, j):
            self._block_similarities(i[s], j[s], threshold, sims[s])
        return sims

    def _across_parts(self, i, j, threshold: float, out: np.ndarray) -> np.ndarray:
        """:meth:`similarities` over batches held apart: one kernel over all pairs, each
        document named by its batch and its row there."""
        offsets, hashes, pi, ri = self._as_parts(i)
        _, _, pj, rj = self._as_parts(j)
        with deferred_interrupt():  # boxing the typed lists and the result must finish
            return parts_similarities_above(typed_parts(offsets), typed_parts(hashes), pi,
                                            ri, pj, rj, threshold, out)

    def similarities_with(self, other: ShingleStore, i: np.ndarray, j: np.ndarray,
                          threshold: float) -> np.ndarray:
        """:meth:`similarities` of documents ``i`` of this store and ``j`` of ``other``."""
        if not (self.spilled or other.spilled) or not self._prefix_first(other):
            return self._similarities_with(other, i, j, threshold)
        out = np.full(i.shape[0], -1.0)
        meet = np.flatnonzero(self.prefixes_meet(i, j, threshold, other))
        out[meet] = self._similarities_with(other, i[meet], j[meet], threshold)
        return out

    def _prefix_first(self, other: ShingleStore) -> bool:
        """Whether spilled candidates are read prefix first (:meth:`prefixes_meet`):
        only where a store lacks its documents' sketches. The candidates that pass the
        sketches' check are nearly all related documents whose prefixes meet (97% at
        2M documents): a prefix pass would add a read of each document and save
        almost none."""
        return self.sketches is None or other.sketches is None

    def _similarities_with(self, other: ShingleStore, i, j, threshold: float) -> np.ndarray:
        out = np.empty(i.shape[0], dtype=np.float64)
        for s in self._blocks(i, j, other):
            self._block_with(other, i[s], j[s], threshold, out[s])
        return out

    def _block_with(self, other: ShingleStore, i, j, threshold: float,
                    out: np.ndarray) -> None:
        """One block of :meth:`_similarities_with` into ``out``; its documents freed when
        it returns (see :meth:`_block_similarities`)."""
        offs_a, hash_a, pi, ri = self._as_parts(i)
        offs_b, hash_b, pj, rj = other._as_parts(j)
        with deferred_interrupt():  # boxing the typed lists must finish
            parts_similarities_above(typed_parts(offs_a + offs_b), typed_parts(hash_a + hash_b),
                                     pi, ri, pj + len(offs_a), rj, threshold, out)

    def _as_parts(self, docs: np.ndarray):
        """``(offsets list, hashes list, part, row)`` naming documents ``docs`` in CSR
        parts: the batches in place when in memory, else those documents read from the
        file into one part."""
        if not self.spilled:
            if self.hashes is not None and len(self._parts) <= 1:
                return [self.offsets], [self.hashes], np.zeros_like(docs), docs
            starts = np.array([p[0] for p in self._parts], dtype=np.int64)
            part = np.searchsorted(starts, docs, "right") - 1
            return ([p[1] for p in self._parts], [p[2] for p in self._parts], part,
                    docs - starts[part])
        distinct = sorted_unique(docs)
        indptr, hashes = self.gather(distinct)
        return [indptr], [hashes], np.zeros_like(docs), np.searchsorted(distinct, docs)

    def at_least(self, i: np.ndarray, j: np.ndarray, todo: np.ndarray,
                 threshold: float) -> np.ndarray:
        """Whether each listed pair ``(i[todo], j[todo])`` reaches ``threshold``."""
        if not self.spilled:
            if self.hashes is None:  # batches held apart
                return self.similarities(i[todo], j[todo], threshold) >= threshold
            ok = np.empty(todo.shape[0], dtype=np.bool_)
            with deferred_interrupt():  # boxing the result must finish
                return _jk.listed_at_least(self.offsets, self.hashes, i, j, todo, threshold,
                                           ok)
        return self.similarities(i[todo], j[todo], threshold) >= threshold

    # --- closing -------------------------------------------------------------------
    def close(self) -> None:
        """Drop the hashes and remove the temporary folder."""
        self.hashes = None
        self._chunks, self._parts = [], []
        if self._file is not None:
            self._file.close()
            self._file = None
        if self.signatures is not None:
            self.signatures.close()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._cleanup is not None:
            self._cleanup()

    def discard(self) -> None:
        """Close, and remove the folder too (also one given as ``folder=``)."""
        self.close()
        if self.folder is not None and os.path.isdir(self.folder):
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> ShingleStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_spill(path: str):
    """The file the shingles spill to (a function of its own: tests stand in a full
    disk here)."""
    return open(path, "wb")  # noqa: SIM115 (closed by the store)


_ANY_SHARED = 1e-12  # a Jaccard threshold that any shared hash passes


def prefix_lengths(size_a: np.ndarray, size_b: np.ndarray,
                   threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The prefix lengths of :meth:`ShingleStore.prefixes_meet`: sets of ``size_a`` and
    ``size_b`` (non-empty) with Jaccard ``>= t`` share ``alpha >= t (a + b) / (1 + t)``
    elements, so their smallest ``a - alpha + 1`` and ``b - alpha + 1`` meet.

    Examples
    --------
    >>> import numpy as np
    >>> [x.tolist() for x in prefix_lengths(np.array([100, 10]), np.array([100, 8]), 0.7)]
    [[18, 3], [18, 1]]
    """
    a = np.asarray(size_a, dtype=np.int64)
    b = np.asarray(size_b, dtype=np.int64)
    # a hair of slack makes alpha smaller, never larger: longer prefixes, still exact
    alpha = np.ceil(threshold / (1.0 + threshold) * (a + b) * (1.0 - 1e-9)).astype(np.int64)
    alpha = np.maximum(alpha, 1)
    return np.clip(a - alpha + 1, 1, np.maximum(a, 1)), np.clip(b - alpha + 1, 1,
                                                                np.maximum(b, 1))


def longest_prefix(size: np.ndarray, threshold: float) -> np.ndarray:
    """The longest prefix of :func:`prefix_lengths` that a set of ``size`` hashes reads
    against any partner that passes the size filter (:func:`~.stages.may_reach`): the
    smallest partner, ``floor(threshold * size)`` hashes or more, needs the longest.

    Examples
    --------
    >>> import numpy as np
    >>> longest_prefix(np.array([100, 10, 1]), 0.7).tolist()
    [31, 4, 1]
    """
    size = np.asarray(size, dtype=np.int64)
    return prefix_lengths(size, np.floor(threshold * size).astype(np.int64), threshold)[0]


def _longest(inverse: np.ndarray, lengths: np.ndarray, n: int) -> np.ndarray:
    """For each of ``n`` documents, the longest of the ``lengths`` its pairs need."""
    out = np.zeros(n, dtype=np.int64)
    np.maximum.at(out, inverse, lengths)
    return out


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The positions ``starts[r] .. starts[r] + counts[r] - 1`` of every run, in order."""
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    run_start = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return run_start + np.arange(total)
