"""Whether Numba's on-disk cache holds the main kernels (so a first call compiles)."""

from __future__ import annotations

import os

from . import bitsums


def cache_is_cold() -> bool:
    """True when Numba's on-disk cache lacks the main kernels, so a first call compiles.

    Checks the cache index file of the fused fingerprint kernel (what every command
    runs; small searches use brute force, so the table kernels may never be compiled);
    False when this Numba keeps its cache elsewhere or differently (it then says
    nothing rather than guess).
    """
    try:
        paths = [kernel._cache._cache_file._index_path
                 for kernel in (bitsums.fingerprint_texts,)]
    except AttributeError:
        return False
    return not all(os.path.exists(p) for p in paths)
