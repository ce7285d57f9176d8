"""The memory budget of the verified path: sizes given as ``"2GB"``, a safe default
from the machine's available memory, and how the budget splits between the stages."""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import numbers
import os
import re

__all__ = ["MemoryBudget", "MemoryLimitError", "available_memory", "parse_size",
           "return_free_memory"]

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9,
          "gb": 10**9, "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40}
VERIFY_BYTES_LEAST = 16 << 20  # the smallest block of candidates' shingles read at once
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*$")


class MemoryLimitError(ValueError):
    """The memory limit is too small for what must be held at once (the message says
    the least that would do). A subclass of ``ValueError``.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> try:
    ...     sh.near_duplicate_texts(["a b c"] * 3, memory_limit=1000)
    ... except sh.MemoryLimitError as e:
    ...     print(str(e)[:40])
    memory_limit=1 kB is too small for 3 doc
    """


def parse_size(value, name: str = "memory_limit") -> int:
    """Bytes of a size given as a number of bytes or a string with a unit.

    Units as Dask reads them: ``kB``, ``MB``, ``GB``, ``TB`` are powers of 1000,
    ``KiB``, ``MiB``, ``GiB``, ``TiB`` powers of 1024 (case ignored).

    Examples
    --------
    >>> parse_size("2GB"), parse_size("1.5 GiB"), parse_size(512)
    (2000000000, 1610612736, 512)
    """
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a size such as '2GB' or a number of bytes, "
                        f"got {value!r}")
    if isinstance(value, numbers.Real):
        size = float(value)
    elif isinstance(value, str):
        m = _SIZE.match(value)
        unit = m.group(2).lower() if m else None
        if m is None or unit not in _UNITS:
            raise ValueError(f"{name} must be a size such as '2GB', '512MB' or '1.5GiB', "
                             f"got {value!r}")
        size = float(m.group(1)) * _UNITS[unit]
    else:
        raise TypeError(f"{name} must be a size such as '2GB' or a number of bytes, "
                        f"got {type(value).__name__}")
    if not size > 0 or size != size:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return int(size)


def format_size(n: float) -> str:
    """``1.25 GB``-style text of a byte count (powers of 1000, as :func:`parse_size`)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def available_memory() -> int:
    """Bytes of memory the machine can give now (Linux ``MemAvailable``; elsewhere the
    free physical pages), or 4 GB when neither can be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 * 10**9


def resident_memory() -> int:
    """Bytes this process holds in memory now (0 where it cannot be read)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _malloc_trim():
    """glibc's ``malloc_trim`` (None elsewhere)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None).malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _malloc_trim()


def return_free_memory() -> None:
    """Hand the heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere). Freed small arrays stay in the heap otherwise, counted in the process's
    resident memory until reused: after shingling a corpus, that was about 60 MB at 2M
    documents (measured)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


@dataclasses.dataclass(frozen=True)
class MemoryBudget:
    """How a memory limit splits between the stages of the verified path.

    ``limit`` is the whole process's peak; ``base`` is what the process already held
    when the run began (the interpreter, the libraries, the caller's data). What is left
    goes to: a batch of texts being shingled (about ten bytes of working memory a byte
    of text), the shingles held in memory (half; beyond them, in a temporary file), the
    pages of that file touched while verifying a block of candidates, and what every
    document costs through the search (fingerprints, offsets, search tables: see
    :meth:`per_document`).

    Examples
    --------
    >>> b = MemoryBudget.make("1GB", base=200_000_000)
    >>> b.free, b.batch_text_bytes, b.shingle_bytes
    (700000000, 7000000, 350000000)
    """

    limit: int
    base: int

    @classmethod
    def make(cls, memory_limit=None, base: int | None = None) -> MemoryBudget:
        """The budget of ``memory_limit`` (default: half the available memory)."""
        if memory_limit is None:
            limit = max(available_memory() // 2, 256 * 10**6)
        else:
            limit = parse_size(memory_limit)
        base = resident_memory() if base is None else int(base)
        return cls(limit, base)

    @property
    def reserve(self) -> int:
        """Kept apart for what the run loads and makes besides its arrays (libraries
        imported on first use, Python objects, allocator slack): an eighth of what the
        limit leaves beyond the process's own start, at least 32 MB (the slack grows
        with what the run allocates, not with what the process held before it)."""
        return max((self.limit - self.base) // 8, 32 << 20)

    @property
    def free(self) -> int:
        return max(self.limit - self.base - self.reserve, 0)

    @property
    def batch_text_bytes(self) -> int:
        """Bytes of text shingled at once: a tenth of the budget at ten bytes a byte."""
        return int(min(max(self.free // 100, 1 << 20), 64 << 20))

    @property
    def shingle_bytes(self) -> int:
        """Shingles held in memory before they go to a temporary file: half of what is
        free (verifying from the file costs a read of each candidate's documents, far
        slower than comparing them in place)."""
        return self.free // 2

    @property
    def verify_bytes(self) -> int:
        """Pages of the shingle file touched by one block of candidates (the shingles
        are in that file then, not in memory): a quarter of what is free, at most
        (see :meth:`verify_bytes_for`)."""
        return max(self.free // 4, VERIFY_BYTES_LEAST)

    def verify_bytes_for(self, n_docs: int, bits: int) -> int:
        """:attr:`verify_bytes` once ``n_docs`` documents are held: what their search
        leaves, when that is less (at least 16 MB)."""
        left = self.free - n_docs * self.per_document(bits, 1)
        return min(self.verify_bytes, max(left, VERIFY_BYTES_LEAST))

    @staticmethod
    def per_document(bits: int, lanes: int) -> int:
        """Bytes a document costs from the fingerprint stage to the end: fingerprint,
        shingle offset and count, sketch, id or cluster label, the grouping of
        identical rows (where each distinct row's group lies, and a copy of the
        distinct rows), and ``lanes`` sampled tables sorted side by side (a key and a
        fingerprint, twice, each). Measured at 2M documents before the sketches: 182
        bytes (1 lane, 128 bits) against 136 here then; the rest is allocator slack,
        in :attr:`reserve`."""
        words = bits // 64
        return 8 * words + 8 + 8 + 8 + 8 + (40 + 8 * words) + lanes * (8 + 16 * words)

    def lanes_for(self, n_docs: int, bits: int, threads: int) -> int:
        """Tables sorted side by side that fit with ``n_docs`` documents (at least 1)."""
        for lanes in range(max(threads, 1), 0, -1):
            if n_docs * self.per_document(bits, lanes) <= self.free - self.verify_bytes:
                return lanes
        return 1

    def check_documents(self, n_docs: int, bits: int, where: str = "") -> None:
        """Raise :class:`MemoryLimitError` when ``n_docs`` documents cannot be searched
        within the budget, naming the least limit that would do."""
        need = n_docs * self.per_document(bits, 1) + VERIFY_BYTES_LEAST
        if need > self.free:
            least = self.base + need + max(need >> 3, 32 << 20) + self.reserve
            raise MemoryLimitError(
                f"memory_limit={format_size(self.limit)} is too small for {n_docs:,} "
                f"documents{where}: their fingerprints and the search need about "
                f"{format_size(need)} beyond the {format_size(self.base)} this process "
                f"already holds; give at least {format_size(least)}")
