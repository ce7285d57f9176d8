"""simhash_nb/_kernels/cache.py names Numba's cache files from the documented layout; these
tests compile a throwaway cached function and fail when Numba writes somewhere else."""

from __future__ import annotations

import importlib.util
import os
import sys
import types

import numba
import pytest

from simhash_nb._kernels import bitsums, cache

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT,
                                reason="no dispatchers under NUMBA_DISABLE_JIT")

_SOURCE = '''
import numba


@numba.njit(cache=True)
def twice(x):
    return 2 * x


class Holder:
    @staticmethod
    @numba.njit(cache=True)
    def thrice(x):
        return 3 * x
'''


def _compile_throwaway(folder, name):
    """Import a module written to ``folder``, call its cached functions: Numba writes
    their cache files."""
    path = folder / f"{name}.py"
    path.write_text(_SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        assert module.twice(2) == 4 and module.Holder.thrice(2) == 6
    finally:
        del sys.modules[name]
    return module


def _cache_files(root):
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".nbi")}


def test_in_tree_layout_is_what_numba_writes(tmp_path, monkeypatch):
    """Without NUMBA_CACHE_DIR: ``__pycache__`` beside the source."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    module = _compile_throwaway(tmp_path, "throwaway_in_tree")
    named = {cache.index_path(module.twice), cache.index_path(module.Holder.thrice)}
    assert all(p.startswith(str(tmp_path / "__pycache__")) for p in named)
    assert named == _cache_files(tmp_path)


def test_numba_cache_dir_layout_is_what_numba_writes(tmp_path, monkeypatch):
    """With NUMBA_CACHE_DIR: ``<folder>_<sha1>`` under it, nothing beside the source."""
    source, cache_dir = tmp_path / "src", tmp_path / "cache"
    source.mkdir()
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(cache_dir))
    module = _compile_throwaway(source, "throwaway_cache_dir")
    named = {cache.index_path(module.twice), cache.index_path(module.Holder.thrice)}
    assert all(p.startswith(str(cache_dir)) for p in named)
    assert named == _cache_files(cache_dir)
    assert not _cache_files(source)


def test_once_fingerprints_are_computed_the_cache_is_warm():
    """The package's own kernel: its index file is where :func:`cache.index_path` says."""
    import simhash_nb as sh

    sh.fingerprint(["a first text", "and a second one"])
    path = cache.index_path(bitsums.fingerprint_chunks)
    if path is not None:  # None: an unwritable install, Numba's user-wide cache
        assert os.path.isfile(path)
        assert cache.cache_is_cold() is False


def test_without_a_source_file_the_place_is_unknown():
    assert cache.index_path(types.SimpleNamespace()) is None
    assert cache.index_path(types.SimpleNamespace(py_func=eval("lambda: 0"))) is None


def test_cold_until_one_of_the_first_kernels_is_cached(tmp_path, monkeypatch):
    """``demo`` compiles the features-and-fingerprints kernel, ``fingerprint`` the fused
    one: after either, a run is no first run."""
    files = {k: tmp_path / f"{k.py_func.__name__}.nbi" for k in cache.FIRST_KERNELS}
    monkeypatch.setattr(cache, "index_path", lambda kernel: str(files[kernel]))
    assert cache.cache_is_cold() is True
    for file in files.values():
        file.touch()
        assert cache.cache_is_cold() is False
        file.unlink()


def test_unknown_place_says_warm(monkeypatch):
    monkeypatch.setattr(cache, "index_path", lambda kernel: None)
    assert cache.cache_is_cold() is False
