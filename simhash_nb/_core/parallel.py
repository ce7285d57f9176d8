"""Thread settings and work partitioning for the parallel kernels."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
from collections.abc import Iterator

import numba
import numpy as np

from ..config import config


@contextlib.contextmanager
def threads(n_jobs: int | None) -> Iterator[int]:
    """Run Numba kernels with ``n_jobs`` threads (``None`` or -1: all; -2: all but one)."""
    available = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        n = numba.get_num_threads()
    else:
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
            raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
        n = int(n_jobs) if n_jobs > 0 else available + 1 + int(n_jobs)
        n = max(1, min(n, available))
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(previous)


def balanced_chunks(offsets: np.ndarray, n_threads: int | None = None) -> np.ndarray:
    """Boundaries splitting items into chunks of about equal size.

    ``offsets`` is an int64 prefix array (``offsets[i + 1] - offsets[i]`` is item ``i``'s
    size); each item also counts as one unit so runs of empty items are split too.
    Returns int64 boundaries ``0 = c[0] < c[1] < ... < c[-1] = n``.
    """
    n = offsets.shape[0] - 1
    if n <= 0:
        return np.zeros(1, dtype=np.int64)
    nt = numba.get_num_threads() if n_threads is None else n_threads
    n_chunks = max(1, min(n, nt * config["chunks_per_thread"]))
    cost = (offsets - offsets[0]) + np.arange(n + 1)
    targets = np.linspace(0, cost[-1], n_chunks + 1)
    bounds = np.searchsorted(cost, targets, side="left")
    bounds[0], bounds[-1] = 0, n
    return np.unique(bounds).astype(np.int64)


class _HeldInterrupt:
    """The SIGINT handler inside :func:`deferred_interrupt`: it records the signal."""

    def __init__(self) -> None:
        self.frames: list = []

    def __call__(self, signum, frame) -> None:
        self.frames.append(frame)


def interrupt_deferred() -> bool:
    """Whether this thread runs inside :func:`deferred_interrupt` (Ctrl-C held): every
    kernel that returns an array must be called so from the main thread.

    Examples
    --------
    >>> with deferred_interrupt():
    ...     inside = interrupt_deferred()
    >>> inside, interrupt_deferred()
    (True, False)
    """
    return isinstance(signal.getsignal(signal.SIGINT), _HeldInterrupt)


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) until the block ends, then act on it as usual.

    A Numba kernel that returns arrays calls back into Python (``_numba_unpickle``)
    to box them; a ``KeyboardInterrupt`` raised in that call is not handled by the
    compiled code, which then fails with ``SystemError`` or crashes the interpreter
    (a segfault that kills a notebook kernel). Around a block of kernel calls the
    signal is recorded instead, and the previous handler runs when the block ends
    (``KeyboardInterrupt`` by default). Keep blocks short (one slice of a batch) so
    Ctrl-C still answers quickly. Outside the main thread this does nothing (Python
    delivers signals to the main thread only).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:  # a handler not installed from Python: leave it alone
        yield
        return
    held = _HeldInterrupt()
    signal.signal(signal.SIGINT, held)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held.frames:
            if callable(previous):
                previous(signal.SIGINT, held.frames[0])
            elif previous == signal.SIG_DFL:
                os.kill(os.getpid(), signal.SIGINT)


SLICE_SECONDS = 0.15  # work between two looks for Ctrl-C: well under a second


def timed_slices(n: int, first: int = 1 << 15,
                 seconds: float = SLICE_SECONDS) -> Iterator[tuple[int, int]]:
    """Ranges ``[lo, hi)`` covering ``[0, n)`` in order, each sized from the rate of the
    work done so far between two of them to take about ``seconds`` (``first`` rows to
    begin, growing at most fourfold a step): a kernel called once a range returns to
    Python, where Ctrl-C is answered, several times a second whatever the machine.

    Examples
    --------
    >>> list(timed_slices(10, first=4))[0]
    (0, 4)
    >>> sum(hi - lo for lo, hi in timed_slices(100_000))
    100000
    """
    lo, size = 0, max(1, first)
    while lo < n:
        hi = min(n, lo + size)
        start = time.perf_counter()
        yield lo, hi
        took = time.perf_counter() - start
        fit = (hi - lo) * seconds / max(took, 1e-6)
        size = int(max(1, min(4 * size, fit)))
        lo = hi


def sliced_pairs(run, n: int, cap: int, first: int = 1, limit: int = 2**62):
    """The pairs of a task kernel over ``n`` rows, run a timed slice of rows a call.

    ``run(lo, hi, cap)`` returns ``(left, right, value, counts)`` for the rows in
    ``[lo, hi)``, task ``t`` at ``[t * cap, t * cap + min(counts[t], cap))``, counting
    past ``cap``; a slice whose tasks overflowed runs again with room for all. Each
    call holds Ctrl-C (:func:`deferred_interrupt`) and Python answers it between calls.
    Returns ``(left, right, value, total)``; past ``limit`` pairs none are kept (empty
    arrays, with the total).
    """
    slices, total, empty = [], 0, None
    for lo, hi in timed_slices(n, first=first):
        with deferred_interrupt():  # see deferred_interrupt: boxing the result must finish
            out = run(lo, hi, cap)
        most, total = int(out[3].max(initial=0)), total + int(out[3].sum())
        empty = tuple(x[:0] for x in out[:3])
        kept = task_pairs(*out, cap) if most <= cap and total <= limit else None
        slices.append((lo, hi, most, kept))
    parts = []
    for lo, hi, most, part in slices if total <= limit else ():
        if part is None:  # a task overflowed: this slice again, with room for all
            with deferred_interrupt():
                part = task_pairs(*run(lo, hi, most), most)
        parts.append(part)
    if not parts:
        return (*(empty or (np.empty(0, np.int64),) * 3), total)
    return (*(np.concatenate(x) for x in zip(*parts, strict=True)), total)


def task_pairs(left, right, value, counts, cap: int):
    """The pairs tasks wrote (task ``t``: ``[t * cap, t * cap + min(counts[t], cap))``),
    copied out of a kernel's output buffers."""
    keep = np.zeros(left.shape[0], dtype=bool)
    for t in np.flatnonzero(counts).tolist():  # a slice a task, not one per pair
        keep[t * cap : t * cap + min(int(counts[t]), cap)] = True
    return left[keep], right[keep], value[keep]


_END = object()
_PRODUCER = threading.local()  # .stop: the Event of the run_ahead producing in this thread


class Cancelled(Exception):
    """Raised by :func:`check_cancelled` in a :func:`run_ahead` producer whose caller
    has stopped; the producer ends quietly."""


def check_cancelled() -> None:
    """Raise :class:`Cancelled` when this thread is a :func:`run_ahead` producer whose
    caller has stopped (a break, an error, Ctrl-C): long work that runs in timed slices
    calls it between two, so that the producer ends within a slice instead of finishing
    the item it is making. Does nothing in any other thread.

    Examples
    --------
    >>> check_cancelled()  # not a producer: nothing to do
    """
    stop = getattr(_PRODUCER, "stop", None)
    if stop is not None and stop.is_set():
        raise Cancelled


def run_ahead(items: Iterator, depth: int = 1) -> Iterator:
    """The items of ``items``, produced up to ``depth`` ahead in a background thread.

    While the caller works on one item (verifying a wave of candidates: reads of a
    temporary file, one thread), the next is being made (the next table's search),
    so the two overlap; the items and their order are those of ``items``. An
    exception in the producer is raised here; Ctrl-C is answered here at once
    (the main thread only waits), and when the caller stops early the producer stops
    after the item it is making, or within a slice of it where that work calls
    :func:`check_cancelled`, and closes ``items`` in its own thread.

    Examples
    --------
    >>> list(run_ahead(iter(range(5))))
    [0, 1, 2, 3, 4]
    """
    q: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def offer(entry) -> bool:
        while not stop.is_set():
            try:
                q.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        _PRODUCER.stop = stop  # check_cancelled() in this thread answers to it
        try:
            for item in items:
                if not offer((None, item)):
                    break
            else:
                offer((None, _END))
        except Cancelled:  # the caller stopped while an item was being made
            pass
        except BaseException as e:  # noqa: BLE001 (raised again in the caller's thread)
            offer((e, None))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    worker = threading.Thread(target=produce, name="simhash-nb-ahead", daemon=True)
    worker.start()
    try:
        while True:
            error, item = q.get()
            if error is not None:
                raise error
            if item is _END:
                return
            yield item
    finally:
        stop.set()
