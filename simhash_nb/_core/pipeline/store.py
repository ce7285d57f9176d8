"""Each document's distinct shingle hashes, for exact verification: held in memory up to
a byte budget, beyond it in a temporary file read through a memory map, a block of
candidates at a time, whose pages are handed back to the system after each block (so
they never count against the process's resident memory for long)."""

from __future__ import annotations

import mmap
import os
import shutil
import tempfile
import weakref

import numpy as np

from ..._kernels import jaccard as _jk

__all__ = ["SHINGLES", "ShingleStore"]

_ITEM = 8  # bytes of one shingle hash
SHINGLES = "shingles.u64"  # the file name of spilled shingles
_PAGE = mmap.PAGESIZE


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

    Examples
    --------
    >>> import numpy as np
    >>> with ShingleStore(memory_bytes=0, verify_bytes=1 << 20) as s:
    ...     s.append(np.array([0, 2, 3]), np.array([1, 2, 2], dtype=np.uint64))
    ...     s.seal()
    ...     s.spilled, s.similarities(np.array([0]), np.array([1]), 0.0).tolist()
    (True, [0.5])
    """

    def __init__(self, memory_bytes: int, verify_bytes: int, tmp_dir=None, folder=None):
        self.memory_bytes = -1 if folder is not None else int(memory_bytes)
        self.verify_bytes = int(verify_bytes)
        self.tmp_dir = tmp_dir
        self.folder: str | None = None if folder is None else str(folder)
        self._own_folder = folder is None
        self._chunks: list[np.ndarray] = []
        self._held = 0
        self._ends: list[np.ndarray] = []
        self.total = 0
        self._file = None
        self._map: mmap.mmap | None = None
        self.offsets: np.ndarray | None = None
        self.n_features: np.ndarray | None = None  # shingles of each document
        self.hashes: np.ndarray | None = None
        self._cleanup = None

    # --- writing -------------------------------------------------------------------
    @property
    def spilled(self) -> bool:
        return self._file is not None or self._map is not None

    @property
    def n(self) -> int:
        return sum(e.shape[0] for e in self._ends) if self.offsets is None else \
            self.offsets.shape[0] - 1

    def append(self, indptr: np.ndarray, hashes: np.ndarray) -> None:
        """Add a batch: ``hashes[indptr[d]:indptr[d + 1]]`` are document ``d``'s."""
        used = hashes[: int(indptr[-1])]
        self._ends.append(np.asarray(indptr[1:], dtype=np.int64) + self.total)
        self.total += int(used.shape[0])
        if self._file is None and self._held + used.nbytes > self.memory_bytes:
            self._spill()
        if self._file is not None:
            self._file.write(np.ascontiguousarray(used, dtype=np.uint64).data)
        else:
            self._chunks.append(np.array(used, dtype=np.uint64))  # a copy: not the buffer
            self._held += used.nbytes

    def _spill(self) -> None:
        if self._own_folder:
            self.folder = tempfile.mkdtemp(prefix="simhash-nb-", dir=self.tmp_dir)
            self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)
        self._file = open(os.path.join(self.folder, SHINGLES), "wb")  # noqa: SIM115
        for chunk in self._chunks:
            self._file.write(chunk.data)
        self._chunks, self._held = [], 0

    def seal(self) -> None:
        """End the writing: the offsets, and the hashes in memory or mapped."""
        self.offsets = np.concatenate([np.zeros(1, np.int64), *self._ends])
        self._ends = []
        self.n_features = np.diff(self.offsets)
        if self._file is None:
            self.hashes = (np.concatenate(self._chunks) if self._chunks
                           else np.empty(0, np.uint64))
            self._chunks = []
            return
        path = self._file.name
        self._file.close()
        self._file = None
        self._map_file(path)

    def _map_file(self, path: str) -> None:
        if self.total == 0:
            self.hashes = np.empty(0, np.uint64)
            return
        with open(path, "rb") as f:
            # a private map: writable for the kernels' signatures, never written
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        self.hashes = np.frombuffer(self._map, dtype=np.uint64)

    @classmethod
    def open(cls, folder, offsets: np.ndarray, verify_bytes: int) -> ShingleStore:
        """The sealed store of a folder that a store with ``folder=`` wrote (its
        ``offsets`` kept apart); the folder stays on close."""
        store = cls(0, verify_bytes, folder=folder)
        store.offsets = np.asarray(offsets, dtype=np.int64)
        store.n_features = np.diff(store.offsets)
        store.total = int(store.offsets[-1])
        path = os.path.join(store.folder, SHINGLES)
        if os.path.getsize(path) != store.total * _ITEM:
            raise ValueError(f"{path} holds {os.path.getsize(path):,} bytes, not the "
                             f"{store.total * _ITEM:,} its offsets name")
        store._map_file(path)
        return store

    # --- reading -------------------------------------------------------------------
    def _blocks(self, i: np.ndarray, j: np.ndarray, other: ShingleStore | None = None):
        """Slices of the pairs whose documents' pages fit ``verify_bytes`` together
        (``j`` in ``other``, if given)."""
        other = self if other is None else other
        m = i.shape[0]
        if (self._map is None and other._map is None) or m == 0:
            yield slice(0, m)
            return
        sizes = (self.n_features[i] + other.n_features[j]) * _ITEM + 4 * _PAGE  # pages
        ends = np.cumsum(sizes)
        lo = 0
        while lo < m:
            hi = int(np.searchsorted(ends, ends[lo] - sizes[lo] + self.verify_bytes, "right"))
            hi = max(hi, lo + 1)
            yield slice(lo, hi)
            lo = hi

    def similarities_with(self, other: ShingleStore, i: np.ndarray, j: np.ndarray,
                          threshold: float) -> np.ndarray:
        """:meth:`similarities` of documents ``i`` of this store and ``j`` of ``other``."""
        out = np.empty(i.shape[0], dtype=np.float64)
        for s in self._blocks(i, j, other):
            _jk.cross_similarities_above(self.offsets, self.hashes, other.offsets,
                                         other.hashes, i[s], j[s], threshold, out[s])
            self._release()
            other._release()
        return out

    def _release(self) -> None:
        if self._map is not None:
            self._map.madvise(mmap.MADV_DONTNEED)  # the pages stay in the page cache

    def similarities(self, i: np.ndarray, j: np.ndarray, threshold: float) -> np.ndarray:
        """Exact Jaccard similarity of each pair ``(i, j)``; pairs below ``threshold``
        may stop early and get any value below it."""
        out = np.empty(i.shape[0], dtype=np.float64)
        for s in self._blocks(i, j):
            _jk.pair_similarities_above(self.offsets, self.hashes, i[s], j[s], threshold,
                                        out[s])
            self._release()
        return out

    def at_least(self, i: np.ndarray, j: np.ndarray, todo: np.ndarray,
                 threshold: float) -> np.ndarray:
        """Whether each listed pair ``(i[todo], j[todo])`` reaches ``threshold``."""
        ok = np.empty(todo.shape[0], dtype=np.bool_)
        for s in self._blocks(i[todo], j[todo]):
            _jk.listed_at_least(self.offsets, self.hashes, i, j, todo[s], threshold, ok[s])
            self._release()
        return ok

    # --- closing -------------------------------------------------------------------
    def close(self) -> None:
        """Drop the hashes and remove the temporary folder."""
        self.hashes = None
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a caller still holds a view: the map goes with it
                pass
            self._map = None
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
