"""SimhashIndex: a persistent near-duplicate index with batch add, query and remove.

Layout
------
Fingerprints, ids and a live flag are kept in *slots* (insertion order). Slots are covered by
*runs*, contiguous slot ranges each with its own permutation tables (sorted words, see
:mod:`simhash_nb._kernels.tables`) and its ids sorted for lookup. An ``add`` makes a new run
from the batch and merges it into the previous run while that one is at most
``config["index_merge_factor"]`` times larger (size tiers, as in an LSM tree), so each
fingerprint is re-sorted ``O(log n)`` times over the life of the index and an add never rebuilds
everything. ``remove`` clears the live flag; when more than ``config["index_compact_fraction"]``
of the slots are dead the index is rebuilt from the live ones.

File format (version 1)
-----------------------
An uncompressed ``.npz`` (zip) archive, read with ``allow_pickle=False``, holding:

``header``
    UTF-8 JSON as a ``uint8`` array: ``{"format": "simhash_nb.SimhashIndex",
    "version": 1, "k", "bits", "blocks", "next_id", "count", "spec"`` (the
    :class:`~simhash_nb.FingerprintSpec` as a dict, or null)``, "sha256"}``.

``fingerprints`` (``<u8``, shape ``(count, bits // 64)``, low word first) and ``ids``
(``<i8``, shape ``(count,)``).

``sha256``: of the header's canonical JSON without it, then the bytes of ``fingerprints``
and ``ids``; a truncated or altered file fails to load (``ValueError``). Only live entries
are written; the tables are rebuilt on load (a radix sort per table).
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import tempfile
import threading
import zipfile
from typing import Any, NamedTuple

import numpy as np

from .._kernels import tables as _tk
from ..config import config
from .index_runs import Run
from .index_search import query_runs
from .matches import Matches
from .parallel import deferred_interrupt, threads
from .search.design import check_blocks, check_recall
from .search.groups import threads_for
from .similarity import resolve_k
from .spec import FingerprintSpec, SpecMismatchError, check_compatible
from .validation import as_fingerprints, as_words, bits_of, check_bits, check_k

__all__ = ["Matches", "SimhashIndex"]

FILE_FORMAT = "simhash_nb.SimhashIndex"
FILE_VERSION = 1


class _State(NamedTuple):
    """One consistent version of an index's contents, never changed once published.

    ``fps``, ``ids`` and ``alive`` have room for more slots than ``total``; a writer
    may fill slots at ``total`` and beyond (no published state reads them) but copies
    ``alive`` before clearing flags of slots below ``total``.
    """

    fps: np.ndarray
    ids: np.ndarray
    alive: np.ndarray
    total: int  # slots in use
    live: int
    next_id: int
    runs: tuple[Run, ...]


class SimhashIndex:
    """An index of fingerprints for near-duplicate queries within ``k`` bits.

    Parameters
    ----------
    k : int, optional
        Largest distance a query can ask for; tables are built for it. By default from
        ``similarity``, as in :func:`simhash_nb.near_duplicates`: 12 at 64 bits, 25 at
        128 (``config["default_similarity"]`` 0.7).
    bits : {64, 128}, optional
        Fingerprint width; defaults to ``spec.bits``, else 64.
    spec : FingerprintSpec, optional
        How the fingerprints were made. When set, ``add``/``query`` calls that pass a
        different ``spec`` are refused, and it is saved with the index. An index made
        without one adopts the spec of the first batch added with one.
    similarity : float, optional
        Instead of ``k``: the Jaccard similarity of shingle sets the index is built for,
        through the angle relation (see :func:`simhash_nb.k_for_similarity`).
    blocks : int, optional
        Blocks per fingerprint (``k < blocks <= bits``); by default each sorted run
        picks the cheapest design for its size (see :func:`simhash_nb.table_design`).
    recall : float, optional
        Use sampled tables (bit-sampling LSH) that find a match at distance ``k`` with
        probability at least ``recall`` (closer ones more often), as in
        :func:`simhash_nb.near_duplicates`: far fewer tables than the exact pigeonhole at
        large ``k`` (memory is 8 bytes per fingerprint per table).
    random_state : int or None, default 0
        Seed of the sampled tables.
    n_jobs : int, optional
        Threads for the kernels (default: Numba's setting).

    Notes
    -----
    Thread safety: any number of threads may call :meth:`query`, :meth:`save`, ``len``,
    ``in``, :attr:`ids` and :attr:`fingerprints` while one or more others call :meth:`add`
    and :meth:`remove`. Readers never block: each call works on the version of the index
    that was current when it started, and sees every batch added or removed before that, and
    none of one still in progress. Writers are serialised by a lock, and each publishes its
    batch as one atomic swap (copy on write), so a concurrent query never sees a half-merged
    run or a half-removed batch.

    Memory: ``8 * (words + 2 + tables)`` bytes per fingerprint. At a million 64-bit
    fingerprints the exact tables number 10 at ``k = 3``, 1,820 at the default 12
    (``recall=0.99``: 93; see :func:`simhash_nb.table_design`). Layout and file format:
    the module documentation.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> index = sh.SimhashIndex()               # k = 12 at 64 bits (similarity 0.7)
    >>> index.k
    12
    >>> index = sh.SimhashIndex(k=3)            # only close matches: fewer tables
    >>> index.add(np.array([0, 2**63 - 1, 0xFFFF], dtype=np.uint64))
    >>> len(index), 1 in index
    (3, True)
    >>> index.query(np.array([0b11], dtype=np.uint64)).id
    array([0])
    >>> index.remove([0])
    >>> len(index.query(np.array([0b11], dtype=np.uint64)))
    0
    """

    def __init__(
        self,
        k: int | None = None,
        bits: int | None = None,
        spec: FingerprintSpec | None = None,
        *,
        similarity: float | None = None,
        blocks: int | None = None,
        recall: float | None = None,
        random_state: int | None = 0,
        n_jobs: int | None = None,
    ):
        if spec is not None and not isinstance(spec, FingerprintSpec):
            raise TypeError(f"spec must be a FingerprintSpec or None, got {type(spec).__name__}")
        if bits is None:
            bits = spec.bits if spec is not None else 64
        bits = check_bits(bits)
        if spec is not None and spec.bits != bits:
            raise ValueError(f"bits={bits} does not match spec.bits={spec.bits}")
        self.k = resolve_k(k, similarity, bits)
        self.bits = int(bits)
        self.spec = spec
        self.blocks = None if blocks is None else check_blocks(blocks, self.k, self.bits)
        recall = check_recall(recall)
        self.recall = None if recall >= 1.0 else recall
        if self.recall is not None and blocks is not None:
            raise ValueError("blocks= sets pigeonhole tables; recall= uses sampled ones: "
                             "pass one of them")
        if random_state is not None and (isinstance(random_state, bool)
                                         or not isinstance(random_state, numbers.Integral)):
            raise TypeError(f"random_state must be an int or None, got {random_state!r}")
        self.random_state = random_state
        self.n_jobs = n_jobs
        self._lock = threading.RLock()  # serialises writers; readers take self._state
        self._state = self._empty_state()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]  # a lock cannot be pickled (copy, multiprocessing, joblib)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def _empty_state(self, next_id: int = 0) -> _State:
        words = self.bits // 64
        return _State(np.empty((0, words), dtype=np.uint64), np.empty(0, dtype=np.int64),
                      np.empty(0, dtype=np.bool_), 0, 0, next_id, ())

    # read-only views of the current state
    _fps = property(lambda self: self._state.fps)
    _ids = property(lambda self: self._state.ids)
    _alive = property(lambda self: self._state.alive)
    _total = property(lambda self: self._state.total)
    _live = property(lambda self: self._state.live)
    _next_id = property(lambda self: self._state.next_id)
    _runs = property(lambda self: self._state.runs)

    # --- basics --------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._state.live

    def __contains__(self, id_: object) -> bool:
        if isinstance(id_, bool) or not isinstance(id_, numbers.Integral):
            return False
        if not -(2**63) <= int(id_) < 2**63:
            return False
        return bool(self._slots_of(np.array([int(id_)], dtype=np.int64))[0] >= 0)

    def __repr__(self) -> str:
        return (
            f"SimhashIndex(k={self.k}, bits={self.bits}, size={len(self)}, "
            + (f"recall={self.recall}, " if self.recall is not None else "")
            + f"runs={len(self._runs)})"
        )

    @property
    def ids(self) -> np.ndarray:
        """Ids of the indexed fingerprints, in insertion order."""
        st = self._state
        return st.ids[: st.total][st.alive[: st.total]]

    @property
    def fingerprints(self) -> np.ndarray:
        """The indexed fingerprints, in insertion order (aligned with :attr:`ids`)."""
        st = self._state
        fps = st.fps[: st.total][st.alive[: st.total]]
        return fps[:, 0].copy() if self.bits == 64 else fps

    # --- checks --------------------------------------------------------------------------

    def _check_fps(self, fps: Any, spec: FingerprintSpec | None, name: str) -> np.ndarray:
        if spec is not None and not isinstance(spec, FingerprintSpec):
            raise TypeError(f"spec must be a FingerprintSpec or None, got {type(spec).__name__}")
        check_compatible(self.spec, spec)
        if spec is not None and spec.bits != self.bits:
            raise SpecMismatchError(
                f"spec is for {spec.bits}-bit fingerprints but this index holds "
                f"{self.bits}-bit ones"
            )
        a = as_fingerprints(fps, name)
        if bits_of(a) != self.bits:
            raise ValueError(
                f"{name} are {bits_of(a)}-bit fingerprints but this index holds "
                f"{self.bits}-bit ones"
            )
        return as_words(a)

    def _check_ids(self, ids: Any, n: int, st: _State) -> np.ndarray:
        if ids is None:
            return np.arange(st.next_id, st.next_id + n, dtype=np.int64)
        arr = np.asarray(ids)
        if arr.ndim != 1:
            raise ValueError(f"ids must be one-dimensional, got shape {arr.shape}")
        if arr.shape[0] != n:
            raise ValueError(f"got {arr.shape[0]} ids for {n} fingerprints")
        if n == 0:
            return np.empty(0, dtype=np.int64)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"ids must be integers, got dtype {arr.dtype}")
        if arr.dtype.kind == "u" and arr.max() >= 2**63:
            raise ValueError("ids must fit in int64")
        arr = arr.astype(np.int64)
        sorted_ids = np.sort(arr)
        dup = sorted_ids[1:][sorted_ids[1:] == sorted_ids[:-1]]
        if dup.size:
            raise ValueError(f"ids are duplicated within the batch: {np.unique(dup)[:10].tolist()}")
        present = arr[self._slots_of(arr, st) >= 0]
        if present.size:
            raise ValueError(f"ids already in the index: {np.sort(present)[:10].tolist()}")
        return arr

    def _slots_of(self, ids: np.ndarray, st: _State | None = None) -> np.ndarray:
        """Live slot of each id in state ``st`` (default: the current one), or -1."""
        st = self._state if st is None else st
        out = np.full(ids.shape[0], -1, dtype=np.int64)
        with threads_for(ids.shape[0]):
            for run in st.runs:
                with deferred_interrupt():  # see parallel.deferred_interrupt
                    _tk.lookup_ids(run.id_sorted, run.id_slot, st.alive, ids, out)
        return out

    # --- add / remove --------------------------------------------------------------------

    def add(self, fps: Any, ids: Any = None, *, spec: FingerprintSpec | None = None) -> None:
        """Add a batch of fingerprints.

        Parameters
        ----------
        fps : ndarray of uint64, shape (n,) or (n, 2)
        ids : array_like of int, optional
            One id per fingerprint, unique and not already in the index. By default
            the next ``n`` integers after the largest id given so far (0, 1, ...).
        spec : FingerprintSpec, optional
            The spec of ``fps``; refused (:class:`~simhash_nb.SpecMismatchError`) if it
            differs from the index's. An index without a spec adopts it: later batches
            with another spec are refused, and :meth:`save` stores it.
        """
        a = self._check_fps(fps, spec, "fps")
        n = a.shape[0]
        with self._lock, threads(self.n_jobs):
            check_compatible(self.spec, spec)  # again: another writer may have adopted one
            st = self._state
            ids = self._check_ids(ids, n, st)
            if n == 0:
                if self.spec is None:
                    self.spec = spec
                return
            st = self._append(st, a, ids)
            runs = [*st.runs, Run(self, st.fps, st.ids, st.total - n, st.total)]
            factor = config["index_merge_factor"]
            while len(runs) >= 2 and runs[-2].size <= factor * runs[-1].size:
                b = runs.pop()
                a_run = runs.pop()
                runs.append(Run(self, st.fps, st.ids, a_run.lo, b.hi))
            next_id = max(st.next_id, int(ids.max()) + 1)
            if self.spec is None and spec is not None:
                self.spec = spec
            self._state = st._replace(runs=tuple(runs), next_id=next_id)  # publish

    @staticmethod
    def _append(st: _State, fps: np.ndarray, ids: np.ndarray) -> _State:
        """``st`` with the slots of a batch filled (its runs not yet covering them)."""
        n = fps.shape[0]
        need = st.total + n
        slot_fps, slot_ids, alive = st.fps, st.ids, st.alive
        if need > slot_fps.shape[0]:
            cap = max(need, 2 * slot_fps.shape[0], 1024)
            slot_fps = np.empty((cap, fps.shape[1]), dtype=np.uint64)
            slot_fps[: st.total] = st.fps[: st.total]
            slot_ids = np.empty(cap, dtype=np.int64)
            slot_ids[: st.total] = st.ids[: st.total]
            alive = np.zeros(cap, dtype=np.bool_)
            alive[: st.total] = st.alive[: st.total]
        # slots from st.total on are read by no published state
        slot_fps[st.total : need] = fps
        slot_ids[st.total : need] = ids
        alive[st.total : need] = True
        return st._replace(fps=slot_fps, ids=slot_ids, alive=alive, total=need,
                           live=st.live + n)

    def remove(self, ids: Any) -> None:
        """Remove fingerprints by id.

        Parameters
        ----------
        ids : int or array-like of int
            Ids given to :meth:`add`.

        Raises
        ------
        KeyError
            If an id is not in the index; nothing is removed then.
        """
        arr = np.unique(np.asarray(ids).ravel())
        if arr.size == 0:
            return
        if arr.dtype.kind not in "iu":
            raise TypeError(f"ids must be integers, got dtype {arr.dtype}")
        if arr.dtype.kind == "u" and arr.max() >= 2**63:
            raise KeyError(f"ids not in the index: {arr[arr >= 2**63][:10].tolist()}")
        arr = arr.astype(np.int64)
        with self._lock, threads(self.n_jobs):
            st = self._state
            slots = self._slots_of(arr, st)
            missing = arr[slots < 0]
            if missing.size:
                raise KeyError(f"ids not in the index: {missing[:10].tolist()}")
            alive = st.alive.copy()  # published states keep their flags
            alive[slots] = False
            st = st._replace(alive=alive, live=st.live - int(slots.shape[0]))
            if st.total - st.live > config["index_compact_fraction"] * st.total:
                st = self._compact(st)
            self._state = st  # publish

    def _compact(self, st: _State) -> _State:
        """``st`` rebuilt from its live slots only (new arrays, new runs)."""
        keep = st.alive[: st.total]
        fps, ids = st.fps[: st.total][keep], st.ids[: st.total][keep]
        new = self._empty_state(st.next_id)
        if fps.shape[0]:
            new = self._append(new, fps, ids)
            new = new._replace(runs=(Run(self, new.fps, new.ids, 0, new.total),))
        return new

    # --- query ---------------------------------------------------------------------------

    def query(self, fps: Any, k: int | None = None, *,
              spec: FingerprintSpec | None = None, progress: bool | None = None) -> Matches:
        """Indexed fingerprints within ``k`` bits of each query row.

        Parameters
        ----------
        fps : ndarray of uint64, shape (m,) or (m, 2)
            Query fingerprints, of the index's width.
        k : int, optional
            Largest distance reported, at most the index's ``k`` (the default).
        spec : FingerprintSpec, optional
            The spec of ``fps``; refused if it differs from the index's.
        progress : bool, optional
            A tqdm progress bar on stderr over the query rows (``True``), or none
            (``False``); default: shown in a terminal or notebook from
            ``config["progress_min_probes"]`` query rows times tables on.

        Returns
        -------
        Matches
            ``query`` (row of ``fps``), ``id`` and ``distance`` of every match; use
            :meth:`Matches.split` for per-query arrays.
        """
        q = self._check_fps(fps, spec, "fps")
        if k is None:
            k = self.k
        k = check_k(k, self.bits)
        if k > self.k:
            raise ValueError(
                f"this index was built for k <= {self.k}; cannot query k={k} (build an "
                f"index with k={k}, or use sh.near_duplicates(fps, k, against=...))"
            )
        st = self._state  # one consistent version for the whole query
        qi, slot, dist = query_runs(st, q, k, self.n_jobs, progress)
        ids = st.ids[slot]
        order = np.lexsort((ids, dist, qi))
        return Matches(qi[order], ids[order], dist[order], q.shape[0])

    # --- persistence ---------------------------------------------------------------------

    def _header(self, count: int, next_id: int) -> dict[str, Any]:
        return {
            "format": FILE_FORMAT,
            "version": FILE_VERSION,
            "k": self.k,
            "bits": self.bits,
            "blocks": self.blocks,
            "recall": self.recall,
            "random_state": self.random_state,
            "next_id": next_id,
            "count": count,
            "spec": None if self.spec is None else self.spec.to_dict(),
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the index to ``path`` (format in the module documentation).

        The file is written to a temporary file in the same directory and renamed over
        ``path`` only when complete, so a failed save leaves any previous file intact.

        Parameters
        ----------
        path : str or os.PathLike
            File to write (replaced if it exists).
        """
        path = os.fspath(path)
        st = self._state  # one consistent version, whatever writers do meanwhile
        keep = st.alive[: st.total]
        fps = np.ascontiguousarray(st.fps[: st.total][keep], dtype="<u8")
        ids = np.ascontiguousarray(st.ids[: st.total][keep], dtype="<i8")
        header = self._header(int(ids.shape[0]), st.next_id)
        header["sha256"] = _checksum(header, fps, ids)
        blob = np.frombuffer(json.dumps(header, sort_keys=True).encode("utf-8"), dtype=np.uint8)
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".simhash-index-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, header=blob, fingerprints=fps, ids=ids)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    @classmethod
    def load(cls, path: str | os.PathLike, *, n_jobs: int | None = None) -> SimhashIndex:
        """Read an index written by :meth:`save`.

        Parameters
        ----------
        path : str or os.PathLike
            A file written by :meth:`save`.
        n_jobs : int, optional
            Threads of the loaded index, as in the constructor.

        Returns
        -------
        SimhashIndex

        Raises
        ------
        ValueError
            If the file is not a simhash_nb index, is of another format version, is
            truncated, or fails its checksum. Nothing is loaded then.
        """
        path = os.fspath(path)
        with open(path, "rb") as f:  # FileNotFoundError, IsADirectoryError as they are
            magic = f.read(4)
        if magic != b"PK\x03\x04":
            raise ValueError(f"cannot read a SimhashIndex from {path!r}: not a simhash_nb "
                             "SimhashIndex file (not a zip archive)")
        try:
            with np.load(path, allow_pickle=False) as z:
                names = set(z.files)
                if not {"header", "fingerprints", "ids"} <= names:
                    raise ValueError(f"missing arrays (found {sorted(names)})")
                header = json.loads(z["header"].tobytes().decode("utf-8"))
                _check_header(header)
                fps = z["fingerprints"]
                ids = z["ids"]
        except FileNotFoundError:
            raise
        except Exception as exc:  # a damaged zip fails in many ways (zipfile, numpy, json)
            raise ValueError(f"cannot read a SimhashIndex from {path!r}: "
                             f"{_load_reason(exc)}") from exc
        count, words = header["count"], header["bits"] // 64
        if fps.dtype != np.dtype("<u8") or fps.shape != (count, words):
            raise ValueError(f"{path!r}: fingerprints array has the wrong type or shape")
        if ids.dtype != np.dtype("<i8") or ids.shape != (count,):
            raise ValueError(f"{path!r}: ids array has the wrong type or shape")
        expected = header.pop("sha256")
        if _checksum(header, fps, ids) != expected:
            raise ValueError(f"{path!r}: checksum mismatch; the file is damaged or was altered")
        spec = None if header["spec"] is None else FingerprintSpec.from_json(header["spec"])
        index = cls(header["k"], header["bits"], spec, blocks=header["blocks"],
                    recall=header.get("recall"), random_state=header.get("random_state", 0),
                    n_jobs=n_jobs)
        if count:
            fps = fps.astype(np.uint64)
            index.add(fps if words == 2 else fps[:, 0], ids.astype(np.int64))
        st = index._state
        index._state = st._replace(next_id=max(st.next_id, int(header["next_id"])))
        return index


def _checksum(header: dict[str, Any], fps: np.ndarray, ids: np.ndarray) -> str:
    h = hashlib.sha256()
    body = {key: value for key, value in header.items() if key != "sha256"}
    h.update(json.dumps(body, sort_keys=True).encode("utf-8"))
    h.update(b"\0")
    for arr in (fps, ids):
        h.update(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
    return h.hexdigest()


def _load_reason(exc: Exception) -> str:
    """Why a file failed to load, in words that never suggest unpickling it."""
    text = str(exc)
    if "pickle" in text or "allow_pickle" in text:
        return "it holds pickled (object) data, which an index file never does"
    if isinstance(exc, (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError)):
        return f"the file is damaged or truncated ({type(exc).__name__}: {text})"
    return text


def _check_header(header: Any) -> None:
    if not isinstance(header, dict) or header.get("format") != FILE_FORMAT:
        raise ValueError("not a simhash_nb SimhashIndex file")
    version = header.get("version")
    if version != FILE_VERSION:
        raise ValueError(
            f"index file format version {version!r} is not supported (this library reads "
            f"version {FILE_VERSION})"
        )
    for key, kinds in (
        ("k", int), ("bits", int), ("next_id", int), ("count", int), ("sha256", str),
        ("blocks", (int, type(None))), ("spec", (dict, type(None))),
    ):
        if key not in header or not isinstance(header[key], kinds) or header[key] is True:
            raise ValueError(f"bad or missing header field {key!r}")
    if header["bits"] not in (64, 128) or header["count"] < 0:
        raise ValueError("bad header: bits or count out of range")
