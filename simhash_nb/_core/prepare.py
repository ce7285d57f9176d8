"""Compile the Numba kernels ahead of time, so that no first call waits for the compiler.

Every kernel is compiled with ``cache=True``: the first call of a process compiles it
(seconds) and writes the machine code to Numba's cache (``__pycache__`` beside the
source, or ``NUMBA_CACHE_DIR``); later processes load it (milliseconds). :func:`prepare`
makes those first calls on tiny inputs, path by path, through the public functions (so
the kernels are compiled for exactly the argument types real calls give them), with the
size thresholds that send small inputs to numpy lowered so the kernels run too. See
``docs/user_guide/cold_start.md``: run it when a Docker image or a cluster's environment
is built, with ``NUMBA_CACHE_DIR`` set to a folder that ships with it.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from numba.core import event

from ..config import config
from .clusters import clusters, dedupe
from .evaluate import jaccard_pairs, threshold_table
from .features import features
from .fingerprint import fingerprint, fingerprint_features
from .hamming import hamming, hamming_matrix, pairs_within
from .index import SimhashIndex
from .pipeline import MemoryBudget, Shingler, ShingleStore, fingerprint_batches
from .pipeline.incremental import Stored, pairs_against
from .pipeline.run import verified_labels, verified_pairs
from .search import near_duplicates
from .verified import cluster_texts, near_duplicate_texts
from .windows import containment, window_fingerprints

__all__ = ["PATHS", "PrepareReport", "prepare"]

# ASCII and non-ASCII texts (accents, CJK, an emoji, full-width forms, punctuation)
_TEXTS = [
    "The quick brown fox jumps over the lazy dog, again and again.",
    "The quick brown fox jumped over the lazy dog, again and again!",
    "Crème brûlée, naïve café: ＦＵＬＬ width ４２ and 中文分词 测试 🙂.",
    "Crème brûlée, naïve café: full width 42 and 中文分词 测试.",
    "",
    "Another text entirely, about something else: 2024-01-01.",
]
# thresholds that send small inputs to numpy or one thread, lowered so kernels run
_KERNEL_SIZES = {"numpy_segment_bytes": 0, "numpy_group_rows": 0, "numpy_brute_pairs": 0,
                 "parallel_min_rows": 0}


def _fingerprints(bits: int, n: int = 64) -> np.ndarray:
    """``n`` fingerprints in pairs a few bits apart (so that searches find pairs)."""
    rng = np.random.default_rng(0)
    fps = rng.integers(0, 2**63, size=(n, bits // 64), dtype=np.uint64)
    fps[1::2] = fps[::2] ^ np.uint64(0b101)
    return fps[:, 0] if bits == 64 else fps


def _fingerprint_path() -> None:
    for tokenizer in ("char", "word"):
        for weights in ("binary", "tf"):
            fingerprint(_TEXTS, tokenizer=tokenizer, weights=weights, bits=128)
    fingerprint([t for t in _TEXTS if t.isascii()])  # the normaliser's ASCII-only variant


def _features_path() -> None:
    for tokenizer in ("char", "word"):
        for weights in ("binary", "tf"):
            fb = features(_TEXTS, tokenizer=tokenizer, weights=weights)
            fingerprint_features(fb, bits=64)
            fingerprint_features(fb, bits=128)


def _hamming_path() -> None:
    for bits in (64, 128):
        fps = _fingerprints(bits)
        hamming(fps[:1], fps[1:2], bits=bits)
        hamming_matrix(fps[:8])
        pairs_within(fps, 3)


def _search_path() -> None:
    for bits in (64, 128):
        fps = _fingerprints(bits)
        for method in ("tables", "dense", "brute"):
            near_duplicates(fps, 3, method=method)
        near_duplicates(fps, 3, recall=0.9, method="sampling")
        near_duplicates(fps[:32], 3, against=fps[32:])
        clusters(fps, 3)
        dedupe(fps, 3)


def _index_path() -> None:
    for bits in (64, 128):
        fps = _fingerprints(bits)
        index = SimhashIndex(k=3, bits=bits)
        index.add(fps[:32])
        index.add(fps[32:])
        index.query(fps[:8])


def _verified_path() -> None:
    near_duplicate_texts(_TEXTS, 0.5)
    cluster_texts(_TEXTS, 0.5)


def _streaming_path() -> None:
    """The verified path with its shingles in a file (what a run over shards does when
    they exceed its memory budget), and new documents against a stored corpus (a
    :class:`~simhash_nb.CorpusStore` query: the search by signatures, and by
    fingerprints for a store without them; reads of stored runs)."""
    shingler = Shingler.make(tokenizer="word", ngram=1)
    budget = MemoryBudget(1 << 30, 0)
    with tempfile.TemporaryDirectory(prefix="simhash_nb-prepare-") as tmp:
        for run in (verified_pairs, verified_labels):
            run([_TEXTS], shingler, 0.5, 0.99, budget, tmp_dir=tmp)
        for signed in (True, False):  # bands reach the recall at 0.7, not at 0.5
            with ShingleStore(0, 1 << 20, tmp, signed=signed) as old, \
                    ShingleStore(0, 1 << 20, tmp, signed=signed) as new:
                old_words = fingerprint_batches([_TEXTS], shingler, old, budget)
                new_words = fingerprint_batches([_TEXTS[:2]], shingler, new, budget)
                pairs_against(Stored(old_words, [(0, old)]), new, new_words,
                              0.7 if signed else 0.5, 0.99, budget)


def _evaluate_path() -> None:
    truth = jaccard_pairs(_TEXTS, 0.5)  # all pairs: what "auto" picks for few texts
    jaccard_pairs(_TEXTS, 0.5, candidates="minhash")  # and for many
    threshold_table(fingerprint(_TEXTS), truth)


def _windows_path() -> None:
    windows = window_fingerprints(_TEXTS, window=4, as_frame=False)
    containment(windows, windows, k=3)


PATHS: dict[str, Callable[[], None]] = {
    "fingerprint": _fingerprint_path,
    "features": _features_path,
    "hamming": _hamming_path,
    "search": _search_path,
    "index": _index_path,
    "verified": _verified_path,
    "streaming": _streaming_path,
    "evaluate": _evaluate_path,
    "windows": _windows_path,
}
"""The paths :func:`prepare` knows, by name, each a function that runs it on tiny inputs."""


@dataclass
class PrepareReport:
    """What :func:`prepare` compiled: seconds per path and per kernel.

    ``kernels`` lists ``(path, kernel, seconds)`` for each kernel compiled (the
    functions a kernel calls are counted in its seconds); a kernel already in Numba's
    cache is loaded, not compiled, and is not listed.

    Examples
    --------
    >>> report = PrepareReport({"search": 1.5}, [("search", "_kernels.radix.sort_table", 1.2)])
    >>> print(report)
    1 kernels compiled in 1.5 s
      search          1.5 s  1 kernels
    """

    paths: dict[str, float] = field(default_factory=dict)
    kernels: list[tuple[str, str, float]] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """Seconds of all paths together."""
        return sum(self.paths.values())

    def __str__(self) -> str:
        lines = [f"{len(self.kernels)} kernels compiled in {self.seconds:.1f} s"]
        for path, secs in self.paths.items():
            n = sum(1 for p, _, _ in self.kernels if p == path)
            lines.append(f"  {path:<12} {secs:6.1f} s  {n} kernels")
        return "\n".join(lines)


class _CompileLog(event.Listener):
    """Records each outermost Numba compile (a kernel, with the functions it calls)."""

    def __init__(self) -> None:
        self.started: list[float] = []
        self.done: list[tuple[str, float]] = []

    def on_start(self, ev: event.Event) -> None:
        self.started.append(time.perf_counter())

    def on_end(self, ev: event.Event) -> None:
        t0 = self.started.pop()
        if not self.started:
            func = ev.data["dispatcher"].py_func
            name = f"{func.__module__.removeprefix('simhash_nb.')}.{func.__qualname__}"
            self.done.append((name, time.perf_counter() - t0))


@contextlib.contextmanager
def _kernel_sizes() -> Iterator[None]:
    """Lower the size thresholds that keep small inputs off the kernels."""
    saved = {key: config[key] for key in _KERNEL_SIZES}
    config.update(_KERNEL_SIZES)
    try:
        yield
    finally:
        config.update(saved)


def path_names(paths) -> list[str]:
    """The names of ``paths`` (a name, "all" or a sequence of names), checked."""
    if isinstance(paths, str):
        paths = list(PATHS) if paths == "all" else [paths]
    names = list(paths)
    unknown = [p for p in names if p not in PATHS]
    if unknown:
        raise ValueError(f"unknown path {unknown[0]!r}: choose among {', '.join(PATHS)} "
                         "or 'all'")
    return names


def prepare(*, paths="all", progress: bool | None = None) -> PrepareReport:
    """Compile the kernels of the named paths now, into Numba's on-disk cache.

    A process's first call of a kernel compiles it (a first :func:`fingerprint` takes
    seconds); once compiled, it is loaded from Numba's cache by later processes. Run
    this once where the package is installed (a Docker image build, a cluster
    environment) with ``NUMBA_CACHE_DIR`` pointing at a folder that ships with it, or
    ``simhash-nb prepare`` from the shell. See ``docs/user_guide/cold_start.md``.

    Parameters
    ----------
    paths : str or sequence of str, default "all"
        Among ``"fingerprint"`` (texts to fingerprints), ``"features"`` (feature
        batches), ``"hamming"``, ``"search"`` (near_duplicates, clusters, dedupe),
        ``"index"`` (SimhashIndex), ``"verified"`` (near_duplicate_texts,
        cluster_texts), ``"streaming"`` (the same with the shingles in a file, and
        CorpusStore queries), ``"evaluate"`` (jaccard_pairs, threshold_table) and
        ``"windows"``; or ``"all"``.
    progress : bool, optional
        Print each path's seconds to stderr as it is done.

    Returns
    -------
    PrepareReport
        Seconds per path, and the kernels compiled (none when the cache was warm).

    Raises
    ------
    ValueError
        If a path is not one of those above.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> report = sh.prepare(paths="hamming")
    >>> list(report.paths)
    ['hamming']
    """
    names = path_names(paths)
    report = PrepareReport()
    log = _CompileLog()
    with event.install_listener("numba:compile", log), _kernel_sizes():
        for name in names:
            t0 = time.perf_counter()
            before = len(log.done)
            PATHS[name]()
            report.paths[name] = time.perf_counter() - t0
            report.kernels += [(name, k, s) for k, s in log.done[before:]]
            if progress:
                print(f"prepare: {name} {report.paths[name]:.1f} s "
                      f"({len(log.done) - before} kernels compiled)", file=sys.stderr)
    return report
