"""A corpus store: what the verified path needs to check new documents against a corpus
without its shards (fingerprints, ids and shingle hashes), appended to atomically.

Layout of the folder (format ``simhash_nb.CorpusStore``, version 1)::

    manifest.json          format, version, spec, bits, id type, segments (rows,
                           shingles, CRC-32 and size of each file)
    seg-000000-<token>/    fingerprints.npy (uint64[n, 2]), offsets.npy (int64[n + 1]),
                           shingles.u64 (uint64), ids.arrow (Arrow IPC, one column),
                           sketches.npy (uint64[n]), minhash.u8 (uint8[n, 64]: the
                           signatures a query searches, see
                           simhash_nb._core.pipeline.signatures)

An append writes a new segment folder, then replaces ``manifest.json`` (a rename, after
``fsync``): a crash leaves the previous manifest, and the store as it was. Appends take
a lock on ``.lock`` so that two writers cannot lose each other's segment. The files
hold numbers only: nothing is unpickled.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import sys
import threading
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core.pipeline import MemoryBudget, Shingler, ShingleStore, fingerprint_batches
from .._core.pipeline.incremental import Stored, pairs_against
from .._core.pipeline.signatures import MINHASH
from .._core.pipeline.store import SHINGLES
from .._core.spec import FingerprintSpec, SpecMismatchError
from .._core.verified import check_options
from ..io import InputError
from .bars import reading_bar
from .sources import check_unique_ids, make_source

__all__ = ["CorpusStore"]

FORMAT = "simhash_nb.CorpusStore"
VERSION = 1
_FILES = ("fingerprints.npy", "offsets.npy", SHINGLES, "ids.arrow")
# each document's sketch (the verified path's check before reading shingles): written
# by every segment since they came; a segment without one is verified without the check
SKETCHES = "sketches.npy"
# and its signatures (MINHASH, the search of a query): a segment without them (written
# before they came) makes a query search the stored fingerprints instead
_LATER = (SKETCHES, MINHASH)
_LARGE = (SHINGLES, MINHASH)  # checked in the background of a query (_BackgroundCheck)


def _files(seg: dict) -> tuple[str, ...]:
    """The files of a segment: all of ``_FILES``, and those of ``_LATER`` it has."""
    return _FILES + tuple(f for f in _LATER if f in seg["sizes"])


def _crc(path: Path, stop: threading.Event | None = None) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            if stop is not None and stop.is_set():
                return -1
            crc = zlib.crc32(chunk, crc)
    return crc


def _yield_to_the_query() -> None:
    """Give the calling thread the lowest CPU priority (nice 19), on Linux, where a
    thread has its own: the check then runs in the query's idle moments instead of
    taking a core from its kernels (its CRC-32 of 2 GB costs a core about 1 s)."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


class _BackgroundCheck:
    """CRC-32 of the stores' shingle and signature files in a thread (reading and
    ``zlib.crc32`` release the GIL) at the lowest priority (:func:`_yield_to_the_query`),
    while the query fingerprints and searches; :meth:`result` raises for a damaged file,
    :meth:`stop` abandons the check."""

    def __init__(self, store: CorpusStore):
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(store,), daemon=True)
        self._thread.start()

    def _run(self, store: CorpusStore) -> None:
        _yield_to_the_query()
        try:
            for seg in store.manifest["segments"]:
                store.check_segment(seg, tuple(f for f in _files(seg) if f in _LARGE),
                                    self._stop)
        except BaseException as e:  # noqa: BLE001 (re-raised by result())
            self._error = e

    def result(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _fsync_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class CorpusStore:
    """Fingerprints, ids, shingles and MinHash signatures of a corpus, to check new
    documents against it.

    Make one with :meth:`create`, fill it with :meth:`add` (or :meth:`query` with
    ``add=True``); open it later with :meth:`open`. The spec (shingles, bits) is fixed
    when it is created; a query with other options is refused. A query finds stored
    candidates by the documents' MinHash bands (64 bytes a document; a store written
    before them, by the fingerprints), and verifies each exactly.

    Parameters
    ----------
    path : str or path
        The store's folder.
    manifest : dict
        Its manifest, as :meth:`open` reads it (use :meth:`create` or :meth:`open`).

    Examples
    --------
    >>> import tempfile, os, pandas as pd, simhash_nb as sh
    >>> path = os.path.join(tempfile.mkdtemp(), "store")
    >>> store = sh.CorpusStore.create(path, tokenizer="word", ngram=1)
    >>> store.add(pd.DataFrame({"id": [1, 2], "text": ["a b c d", "x y z w"]}),
    ...           id_column="id")
    >>> new = pd.DataFrame({"id": [3, 4], "text": ["a b c d e", "p q r s"]})
    >>> sh.CorpusStore.open(path).query(new, 0.7, id_column="id")
       left  right  jaccard  distance
    0     1      3      0.8        25
    """

    def __init__(self, path, manifest: dict):
        self.path = Path(path)
        self.manifest = manifest
        self.spec = FingerprintSpec.from_json(manifest["spec"])
        self.bits = int(manifest["bits"])

    # --- making and opening ----------------------------------------------------------
    @classmethod
    def create(cls, path, *, bits: int = 128, tokenizer=None, ngram=None, normalize=None,
               seed=None, spec=None, params=None) -> CorpusStore:
        """An empty store at ``path`` (a new folder) for the shingles of these options.

        Parameters
        ----------
        path : str or path
            A folder that does not exist yet (or is empty).
        bits, tokenizer, ngram, normalize, seed, spec, params
            As in :func:`simhash_nb.near_duplicate_texts`; fixed for the store's life.
        """
        path = Path(path)
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise InputError(f"{path} exists already; a new store needs a new folder")
        shingler = Shingler.make(bits, tokenizer=tokenizer, ngram=ngram, normalize=normalize,
                                 seed=seed, spec=spec, params=params)
        if shingler.extras.get("func") is not None:
            raise ValueError("a store cannot record a callable tokenizer; use a built-in one")
        path.mkdir(parents=False, exist_ok=True)
        manifest = {"format": FORMAT, "version": VERSION, "spec": shingler.spec.to_dict(),
                    "bits": bits, "id_type": None, "segments": []}
        _fsync_write(path / "manifest.json", json.dumps(manifest, indent=1))
        return cls(path, manifest)

    @classmethod
    def open(cls, path) -> CorpusStore:
        """The store at ``path``, its manifest and files checked: format, version, the
        sizes of all files, the CRC-32 of fingerprints, offsets and ids. The shingle
        files, the bulk of a store, are checked by every :meth:`query` while it runs (a
        damaged one fails the query before it answers or appends) and by
        :meth:`verify`.

        Parameters
        ----------
        path : str or path
            A folder :meth:`create` made.
        """
        path = Path(path)
        try:
            manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"{path}: not a corpus store (no manifest.json)") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise InputError(f"{path}/manifest.json is damaged (not JSON)") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise InputError(f"{path}: not a simhash_nb corpus store")
        if manifest.get("version") != VERSION:
            raise InputError(f"{path}: corpus store version {manifest.get('version')!r} is "
                             f"not supported (this library reads version {VERSION})")
        store = cls(path, manifest)
        for seg in manifest["segments"]:
            store.check_segment(seg, tuple(f for f in _files(seg) if f not in _LARGE))
        return store

    def verify(self) -> None:
        """Check every file of every segment: sizes and CRC-32, shingles included.

        Raises
        ------
        simhash_nb.io.InputError
            Naming the first file that is missing, truncated or fails its checksum.
        """
        for seg in self.manifest["segments"]:
            self.check_segment(seg, _files(seg))

    def check_segment(self, seg: dict, names: tuple[str, ...],
                      stop: threading.Event | None = None) -> None:
        """Check the sizes of all files of a segment and the CRC-32 of some.

        Parameters
        ----------
        seg : dict
            The segment's entry in the manifest.
        names : tuple of str
            The files whose CRC-32 is checked (e.g. ``("shingles.u64",)``).
        stop : threading.Event, optional
            Once set, the check ends early and passes (a query that ended otherwise).

        Raises
        ------
        simhash_nb.io.InputError
            If a file is missing, truncated or fails its checksum.
        """
        for name in _files(seg):
            f = self.path / seg["name"] / name
            if not f.is_file() or f.stat().st_size != seg["sizes"][name]:
                raise InputError(f"{f} is missing or truncated; the store is damaged")
        for name in names:
            f = self.path / seg["name"] / name
            crc = _crc(f, stop)
            if crc != seg["crc32"][name] and crc != -1:
                raise InputError(f"{f} fails its checksum; the store is damaged")

    @property
    def n(self) -> int:
        """Documents stored."""
        return sum(s["rows"] for s in self.manifest["segments"])

    def ids(self) -> pa.Array:
        """The stored documents' ids (their row numbers where none were given).

        Returns
        -------
        pyarrow.Array
        """
        parts = [self._ids(s) for s in self.manifest["segments"]]
        return pa.chunked_array(parts).combine_chunks() if parts else pa.array([], pa.int64())

    def _ids(self, seg: dict) -> pa.Array:
        with pa.memory_map(str(self.path / seg["name"] / "ids.arrow")) as f:
            return pa.ipc.open_file(f).read_all().column(0).combine_chunks()

    def _stored(self, verify_bytes: int) -> Stored:
        words, segments, start = [], [], 0
        for seg in self.manifest["segments"]:
            folder = self.path / seg["name"]
            words.append(np.load(folder / "fingerprints.npy", allow_pickle=False))
            offsets = np.load(folder / "offsets.npy", allow_pickle=False)
            sketches = (np.load(folder / SKETCHES, allow_pickle=False)
                        if SKETCHES in seg["sizes"] else None)
            segments.append((start, ShingleStore.open(folder, offsets, verify_bytes,
                                                      sketches, MINHASH in seg["sizes"])))
            start += seg["rows"]
        w = np.concatenate(words) if words else np.empty((0, self.bits // 64), np.uint64)
        return Stored(w, segments)

    # --- querying and adding ---------------------------------------------------------
    def query(self, source, threshold: float = 0.7, *, text_column: str = "text",
              id_column: str | None = None, add: bool = False, memory_limit=None,
              tmp_dir=None, recall: float = 0.99, random_state: int | None = 0,
              max_pairs: int | None = None, n_jobs: int | None = None,
              progress: bool | None = None, **options) -> pd.DataFrame:
        """Verified pairs among the new documents of ``source`` and between them and the
        stored ones, at Jaccard ``threshold``; with ``add``, the new documents are then
        appended.

        Parameters
        ----------
        source, threshold, text_column, id_column, memory_limit, tmp_dir, recall, \
random_state, max_pairs, n_jobs, progress
            As in :func:`simhash_nb.near_duplicate_shards`.
        add : bool, default False
            Append the new documents to the store afterwards (atomically).
        **options
            Shingle options (``tokenizer``, ``ngram``, ...), if given: they must match
            the store's spec.

        Returns
        -------
        pandas.DataFrame
            ``left``, ``right`` (ids: a stored document comes first; new documents
            without ids are numbered on from the stored ones), ``jaccard``, ``distance``.

        Raises
        ------
        simhash_nb.SpecMismatchError
            If shingle options differ from the store's.
        simhash_nb.io.InputError
            As :func:`simhash_nb.near_duplicate_shards`, or if a new id is stored already.
        """
        threshold, recall = check_options(threshold, recall, self.bits)
        self._check_options(options)
        budget = MemoryBudget.make(memory_limit)
        with self._lock() if add else contextlib.nullcontext():
            if add:
                self._reload()
            staging = self._staging() if add else None
            try:
                check = _BackgroundCheck(self)
                try:
                    new, words, ids = self._read(source, text_column, id_column, budget,
                                                 tmp_dir, staging, n_jobs, progress)
                    got = self._pairs(new, words, threshold, recall, budget, random_state,
                                      max_pairs, n_jobs, progress)
                    check.result()
                finally:
                    check.stop()
                names = pa.chunked_array([self.ids(), ids]).combine_chunks() \
                    if self.n else ids
                if add:
                    self._commit(staging, words, new, ids)
            except BaseException:
                if staging is not None:
                    shutil.rmtree(staging, ignore_errors=True)
                raise
        take = pa.array
        return pd.DataFrame({"left": names.take(take(got.i)).to_pandas(),
                             "right": names.take(take(got.j)).to_pandas(),
                             "jaccard": got.jaccard, "distance": got.distance})

    def _pairs(self, new: ShingleStore, words, threshold, recall, budget, random_state,
               max_pairs, n_jobs, progress):
        stored = self._stored(budget.verify_bytes)
        try:
            return pairs_against(stored, new, words, threshold, recall, budget,
                                 random_state=random_state, max_pairs=max_pairs,
                                 n_jobs=n_jobs, progress=progress)
        finally:
            for _, seg in stored.segments:
                seg.close()
            new.close()

    def add(self, source, *, text_column: str = "text", id_column: str | None = None,
            memory_limit=None, tmp_dir=None, n_jobs: int | None = None,
            progress: bool | None = None) -> None:
        """Append the documents of ``source`` (no pairs are computed).

        Parameters
        ----------
        source, text_column, id_column, memory_limit, tmp_dir, n_jobs, progress
            As in :meth:`query` (the bar counts the documents read).
        """
        budget = MemoryBudget.make(memory_limit)
        with self._lock():
            self._reload()
            staging = self._staging()
            try:
                new, words, ids = self._read(source, text_column, id_column, budget, tmp_dir,
                                             staging, n_jobs, progress)
                new.close()
                self._commit(staging, words, new, ids)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise

    def _check_options(self, options: dict) -> None:
        if not options:
            return
        asked = Shingler.make(self.bits, **options).spec
        if asked != self.spec:
            raise SpecMismatchError(f"{self.path} stores shingles of {self.spec.to_json()}; "
                                    f"the query asked for {asked.to_json()}")

    def _read(self, source, text_column, id_column, budget, tmp_dir, staging, n_jobs,
              progress):
        """Shingles (into ``staging`` when adding), fingerprints and ids of the new
        documents, with a bar over the documents read (:func:`reading_bar`)."""
        shingler = Shingler(self.spec, self.bits)
        src = make_source(source, text_column, id_column, budget.batch_text_bytes)
        id_parts = []

        def batches():
            for texts, ids in src.batches():
                if ids is not None:
                    id_parts.append(ids)
                yield texts

        new = ShingleStore(budget.shingle_bytes, budget.verify_bytes, tmp_dir, folder=staging,
                           signed=True)
        with reading_bar(src, progress) as bar:
            words = fingerprint_batches(batches(), shingler, new, budget, missing="empty",
                                        n_jobs=n_jobs,
                                        on_batch=lambda valid: bar.update(valid.shape[0]))
        ids = self._new_ids(id_parts, id_column, words.shape[0])
        return new, words, ids

    def _new_ids(self, parts, id_column, n: int) -> pa.Array:
        if id_column is None:
            if self.manifest["id_type"] not in (None, "int64"):
                raise InputError(f"{self.path} names documents by {self.manifest['id_type']} "
                                 "ids: give the id column")
            return pa.array(np.arange(self.n, self.n + n), pa.int64())
        ids = pa.chunked_array(parts).combine_chunks() if parts else pa.array([], pa.int64())
        check_unique_ids(ids, id_column)
        kept = self.manifest["id_type"]
        if kept is not None and str(ids.type) != kept:
            raise InputError(f"id column {id_column!r} holds {ids.type}; {self.path} stores "
                             f"{kept} ids")
        if self.n:  # the new ids hashed (few), the stored ones looked up in them
            stored = self.ids()
            seen = pc.is_in(stored, value_set=ids)
            if pc.any(seen).as_py():
                again = pc.is_in(ids, value_set=stored.filter(seen))
                row = int(pc.index(again, True).as_py())
                raise InputError(f"id column {id_column!r}: row {row} has the id "
                                 f"{ids[row].as_py()!r}, which {self.path} stores already")
        return ids

    # --- appending ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _lock(self):
        with open(self.path / ".lock", "a+") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def _reload(self) -> None:
        self.manifest = json.loads((self.path / "manifest.json").read_text(encoding="utf-8"))

    def _staging(self) -> Path:
        folder = self.path / f".staging-{secrets.token_hex(6)}"
        folder.mkdir()
        return folder

    def _commit(self, staging: Path, words: np.ndarray, new: ShingleStore,
                ids: pa.Array) -> None:
        np.save(staging / "fingerprints.npy", words, allow_pickle=False)
        np.save(staging / "offsets.npy", new.offsets, allow_pickle=False)
        np.save(staging / SKETCHES, new.sketches, allow_pickle=False)
        for name in (SHINGLES, MINHASH):
            if not (staging / name).exists():
                (staging / name).write_bytes(b"")
        table = pa.table({"id": ids})
        with pa.OSFile(str(staging / "ids.arrow"), "wb") as sink, \
                pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
        files = (*_FILES, *_LATER)
        for name in files:
            with open(staging / name, "rb") as f:
                os.fsync(f.fileno())
        segs = self.manifest["segments"]
        name = f"seg-{len(segs):06d}-{secrets.token_hex(4)}"
        entry = {"name": name, "rows": int(words.shape[0]), "shingles": int(new.total),
                 "sizes": {f: (staging / f).stat().st_size for f in files},
                 "crc32": {f: _crc(staging / f) for f in files}}
        os.replace(staging, self.path / name)
        manifest = {**self.manifest, "segments": [*segs, entry],
                    "id_type": str(ids.type)}
        _fsync_write(self.path / "manifest.json", json.dumps(manifest, indent=1))
        self.manifest = manifest
