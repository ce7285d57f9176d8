"""Stand-ins for the retired module paths of the flat layout (``simhash_nb.spec``, ...).

Before ``_core/`` the package had flat modules ``simhash_nb.spec``, ``.features``,
``.fingerprint``, ``.evaluate``, ``.hamming``, ``.pairs``, ``.index``, ``.clusters`` and
``.search``. Four of these names are also public functions of the package
(``simhash_nb.features``, ``.fingerprint``, ``.hamming``, ``.clusters``), so the paths
could not stay modules. Each old path now imports a :class:`RetiredModule`: it forwards
every name to the module that holds it today and warns with a
``DeprecationWarning`` saying where the name went.
"""

from __future__ import annotations

import importlib
import types
import warnings

__all__ = ["RetiredModule"]


class RetiredModule(types.ModuleType):
    """A retired module path ``simhash_nb.<old>``: forwards to ``simhash_nb._core.<old>``.

    Parameters
    ----------
    old : str
        The old module's name (``"spec"``, ``"features"``, ...).
    """

    def __init__(self, old: str):
        super().__init__(f"simhash_nb.{old}")
        self.__dict__["_target"] = f"simhash_nb._core.{old}"

    def __getattr__(self, name: str):
        if name.startswith("__"):  # tools probing dunders (inspect, doctest, pickle)
            raise AttributeError(name)
        target = self.__dict__["_target"]
        module = importlib.import_module(target)
        value = getattr(module, name)  # AttributeError as the module would raise it
        package = importlib.import_module("simhash_nb")
        if name in package.__all__ and getattr(package, name, None) is value:
            where = f"simhash_nb.{name} (sh.{name})"
        else:
            where = f"{target}.{name} (internal; not a public name)"
        warnings.warn(f"{self.__name__} is a retired module path: use {where}",
                      DeprecationWarning, stacklevel=2)
        return value

    def __dir__(self):
        return dir(importlib.import_module(self.__dict__["_target"]))
