"""Whether Numba's on-disk cache holds the main kernels (so a first call compiles).

Numba documents where its cache lives (``__pycache__`` beside the source file, or under
``NUMBA_CACHE_DIR``; an index file ``<module>.<function>-<line>.py<version>.nbi`` per
function) but no API that names the file. :func:`index_path` asks the dispatcher's cache
object first (``_cache._cache_file._index_path``: Numba internals, checked on every
Numba by ``tests/test_kernel_cache.py``) and falls back to the documented layout.
"""

from __future__ import annotations

import os
import sys

from numba.core import config as numba_config

from . import bitsums


def index_path(kernel) -> str | None:
    """The cache index file Numba reads for ``kernel``, or None when it is not known.

    Parameters
    ----------
    kernel : numba dispatcher
        A function compiled with ``@njit(cache=True)``.

    Returns
    -------
    str or None
        The path from the dispatcher's cache object when this Numba has one; else the
        documented ``__pycache__`` layout; None under ``NUMBA_CACHE_DIR`` or an unwritable
        source folder (Numba then chooses a place this function does not guess).
    """
    cache_file = getattr(getattr(kernel, "_cache", None), "_cache_file", None)
    path = getattr(cache_file, "_index_path", None)
    if isinstance(path, str):
        return path
    return documented_index_path(kernel)


def documented_index_path(kernel) -> str | None:
    """The index file of ``kernel`` in Numba's documented ``__pycache__`` layout, or None."""
    func = getattr(kernel, "py_func", None)
    if func is None or numba_config.CACHE_DIR:
        return None
    source = func.__code__.co_filename
    folder = os.path.join(os.path.dirname(os.path.abspath(source)), "__pycache__")
    if not os.access(os.path.dirname(folder), os.W_OK):
        return None
    stem = os.path.splitext(os.path.basename(source))[0]
    version = f"py{sys.version_info[0]}{sys.version_info[1]}"
    name = f"{stem}.{func.__qualname__}-{func.__code__.co_firstlineno}.{version}.nbi"
    return os.path.join(folder, name)


def cache_is_cold() -> bool:
    """True when Numba's on-disk cache lacks the main kernels, so a first call compiles.

    Checks the cache index file of the fused fingerprint kernel (what every command
    runs; small searches use brute force, so the table kernels may never be compiled);
    False when the file's place is not known (it then says nothing rather than guess).
    """
    paths = [index_path(kernel) for kernel in (bitsums.fingerprint_chunks,)]
    if any(p is None for p in paths):
        return False
    return not all(os.path.exists(p) for p in paths)
