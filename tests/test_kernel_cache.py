"""simhash_nb/_kernels/cache.py reads one Numba internal; these tests fail when Numba moves it."""

from __future__ import annotations

import types

import numba
import pytest

from simhash_nb._kernels import bitsums, cache

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT,
                                reason="no dispatchers under NUMBA_DISABLE_JIT")


def test_numba_still_exposes_the_cache_index_path():
    """If this fails, Numba changed its cache internals: update ``cache.index_path``."""
    kernel = bitsums.fingerprint_texts
    path = kernel._cache._cache_file._index_path
    assert isinstance(path, str) and path.endswith(".nbi")
    assert cache.index_path(kernel) == path


@pytest.mark.skipif(bool(numba.config.CACHE_DIR), reason="NUMBA_CACHE_DIR moves the cache")
def test_documented_layout_matches_numba():
    """The fallback (Numba's documented ``__pycache__`` layout) names the same file."""
    kernel = bitsums.fingerprint_texts
    assert cache.documented_index_path(kernel) == kernel._cache._cache_file._index_path


def test_without_the_internal_attribute_the_documented_layout_is_used():
    stand_in = types.SimpleNamespace(py_func=bitsums.fingerprint_texts.py_func)
    assert cache.index_path(stand_in) == cache.documented_index_path(stand_in)
    assert cache.index_path(types.SimpleNamespace()) is None


def test_unknown_place_says_warm(monkeypatch):
    monkeypatch.setattr(cache, "index_path", lambda kernel: None)
    assert cache.cache_is_cold() is False
