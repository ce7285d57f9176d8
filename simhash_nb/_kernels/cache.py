"""Whether Numba's on-disk cache holds the main kernels (so a first call compiles)."""

from __future__ import annotations

import os

from . import bitsums, tables


def cache_is_cold() -> bool:
    """True when Numba's on-disk cache lacks the main kernels, so a first call compiles.

    Checks the cache index files of the fused fingerprint kernel and the table search
    (what every command runs); False when this Numba keeps its cache elsewhere or
    differently (it then says nothing rather than guess).
    """
    try:
        paths = [kernel._cache._cache_file._index_path
                 for kernel in (bitsums.fingerprint_texts, tables.search_tables)]
    except AttributeError:
        return False
    return not all(os.path.exists(p) for p in paths)
