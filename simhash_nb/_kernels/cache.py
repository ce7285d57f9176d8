"""Whether Numba's on-disk cache holds the main kernels (so a first call compiles).

Numba names no API for a function's cache file; :func:`index_path` builds it from the
layout Numba documents (the index ``<module>.<qualname>-<line>.py<XY><abiflags>.nbi``, one
per function, in ``__pycache__`` beside the source, or under ``NUMBA_CACHE_DIR`` in
``<folder>_<sha1 of the folder's absolute path>``), reading no Numba internals.
``tests/test_kernel_cache.py`` compiles a throwaway cached function and checks that the
file named here is the one Numba writes, in both places, so a new layout fails a test.
"""

from __future__ import annotations

import hashlib
import os
import sys

from numba.core import config as numba_config

from . import bitsums


def index_path(kernel) -> str | None:
    """The cache index file Numba reads for ``kernel``, or None when it is not known.

    Parameters
    ----------
    kernel : numba dispatcher
        A function compiled with ``@njit(cache=True)`` (anything with ``py_func``).

    Returns
    -------
    str or None
        The path in Numba's documented layout: under ``NUMBA_CACHE_DIR`` when it is set,
        else in ``__pycache__`` beside the source. None without a source file, with
        ``NUMBA_CACHE_LOCATOR_CLASSES`` set or an unwritable source folder (Numba then
        chooses a place this function does not guess).
    """
    func = getattr(kernel, "py_func", None)
    if func is None or getattr(numba_config, "CACHE_LOCATOR_CLASSES", None):
        return None
    source = os.path.abspath(func.__code__.co_filename)
    if not os.path.isfile(source):
        return None
    folder = _cache_folder(source)
    if folder is None:
        return None
    stem = os.path.splitext(os.path.basename(source))[0]
    qualname = func.__qualname__.replace("<", "").replace(">", "")
    version = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    return os.path.join(folder, f"{stem}.{qualname}-{func.__code__.co_firstlineno}.{version}.nbi")


def _cache_folder(source: str) -> str | None:
    """The folder Numba caches functions of ``source`` (an absolute path) in, or None."""
    source_dir = os.path.dirname(source)
    if numba_config.CACHE_DIR:
        digest = hashlib.sha1(source_dir.encode()).hexdigest()
        return os.path.join(numba_config.CACHE_DIR, f"{os.path.basename(source_dir)}_{digest}")
    folder = os.path.join(source_dir, "__pycache__")
    if not os.access(folder if os.path.isdir(folder) else source_dir, os.W_OK):
        return None
    return folder


FIRST_KERNELS = (bitsums.fingerprint_chunks, bitsums.binary_features_fingerprints)
"""The fingerprint kernels a first command compiles: the fused one (``fingerprint`` and
the other fingerprinting commands) and the features-and-fingerprints one (``demo``, the
verified road, Jaccard ground truth)."""


def cache_is_cold() -> bool:
    """True when Numba's on-disk cache holds none of :data:`FIRST_KERNELS`: a first run,
    whose first call compiles.

    Small searches use brute force, so the table kernels may never be compiled: their
    absence is no first run. False when a file's place is not known (it then says
    nothing rather than guess).
    """
    paths = [index_path(kernel) for kernel in FIRST_KERNELS]
    if any(p is None for p in paths):
        return False
    return not any(os.path.exists(p) for p in paths)
