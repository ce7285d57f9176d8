"""Registering the accessors when pandas is imported (a one-shot import hook), so
``import simhash_nb`` does not import pandas."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading

__all__ = ["install", "register"]

# --- registration -------------------------------------------------------------------------

_registered = False
_lock = threading.Lock()


def register() -> None:
    """Register ``Series.simhash`` and ``DataFrame.simhash`` (imports pandas; idempotent).

    The accessor modules import pandas, and the first import of pandas registers them
    (the hook). When that first import comes from one of them, half imported, this
    returns at once; each accessor module calls it again on its last line, and the
    second one done registers both.
    """
    global _registered
    # pandas and the accessors (which import it) load here, once pandas is imported (the
    # hook) or on demand, so that ``import simhash_nb`` does not import pandas; outside
    # the lock, as importing pandas runs the hook, which registers
    import pandas as pd

    from . import frame, series

    accessors = (getattr(series, "SimhashSeriesAccessor", None),
                 getattr(frame, "SimhashDataFrameAccessor", None))
    if None in accessors:  # one of them is half imported: it calls this when done
        return
    with _lock:
        if _registered:
            return
        pd.api.extensions.register_series_accessor("simhash")(accessors[0])
        pd.api.extensions.register_dataframe_accessor("simhash")(accessors[1])
        _registered = True


class _LoaderWrapper(importlib.abc.Loader):
    """Runs the real loader of pandas, then registers the accessors."""

    def __init__(self, loader) -> None:
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        register()

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _PandasHook(importlib.abc.MetaPathFinder):
    """One-shot finder: wraps the loader of ``pandas`` the first time it is imported."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "pandas":
            return None
        _remove_hook()
        spec = importlib.util.find_spec("pandas")
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _LoaderWrapper(spec.loader)
        return spec


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PandasHook)]


def install() -> None:
    """Register now if pandas is imported, else as soon as it is (without importing it)."""
    pd = sys.modules.get("pandas")
    if pd is not None and hasattr(pd, "api"):
        register()
    elif not any(isinstance(f, _PandasHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _PandasHook())

