"""Every documented module path imports as a module; retired flat paths warn and say where.

``import simhash_nb.features as f`` used to give the *function* ``features``: the
package put its old flat modules into ``sys.modules`` under names that its own
attributes shadow. Those paths are retired (see ``simhash_nb/_retired.py``); the module
paths the docs name are real modules, and every ``simhash_nb.<dotted>`` reference of a
docstring or docs page resolves to something that exists.
"""

from __future__ import annotations

import ast
import importlib
import re
import types
import warnings
from pathlib import Path

import pytest

import simhash_nb as sh

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "simhash_nb"

# module paths users are told to import (docs/conf.py's SUBMODULES, the guides, README)
DOCUMENTED_MODULES = ["simhash_nb.sklearn", "simhash_nb.distributed", "simhash_nb.plotting",
                      "simhash_nb.datasets", "simhash_nb.io", "simhash_nb.cli",
                      "simhash_nb.jieba_features", "simhash_nb.accessors"]
RETIRED = ["spec", "features", "fingerprint", "evaluate", "hamming", "pairs", "index",
           "clusters", "search"]
# names that are both a documented object and a module of the same path
NOT_MODULES = {
    # the documented ``simhash_nb.config`` is the tunables object (a data page in the API
    # reference); its module is imported as ``from simhash_nb.config import config``
    "simhash_nb.config",
    # the documented ``simhash_nb.cli.main`` is the CLI's entry function (cli/ is owned
    # elsewhere; its module keeps the name ``main``)
    "simhash_nb.cli.main",
}
# files whose docstrings this session may not edit (owned elsewhere) with a stale reference
STALE_REFERENCES_ALLOWED: set[str] = set()
ROLE = re.compile(r"(?::(?:func|class|mod|meth|attr|data|obj|exc):|\{(?:func|class|mod|meth|attr"
                  r"|data|obj|exc)\})`(?:[^`<]*<)?~?(simhash_nb(?:\.\w+)+)>?`")


def _import_as(path: str):
    """What ``import <path> as m`` binds: the attribute chain after the import."""
    importlib.import_module(path)
    obj = importlib.import_module(path.split(".")[0])
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _references():
    files = sorted(PKG.rglob("*.py")) + sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    for path in files:
        if "_build" in path.parts or "generated" in path.parts:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for match in ROLE.finditer(path.read_text("utf-8")):
            yield rel, match.group(0), match.group(1)


def _resolve(dotted: str):
    parts = dotted.split(".")
    obj = None
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        rest = parts[i:]
        break
    for part in rest:
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("path", DOCUMENTED_MODULES)
def test_documented_module_paths_are_modules(path):
    pytest.importorskip("pandas")
    if path == "simhash_nb.distributed":
        pytest.importorskip("dask.dataframe")
    if path == "simhash_nb.sklearn":
        pytest.importorskip("sklearn")
    module = _import_as(path)
    assert isinstance(module, types.ModuleType), (path, module)
    assert module.__name__ == path
    assert module is importlib.import_module(path)


def test_every_package_module_imports_as_itself():
    """``import simhash_nb.x.y as m`` gives the module simhash_nb.x.y, for every file."""
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if name in NOT_MODULES or name.split(".")[1:2] in (["distributed"], ["sklearn"]):
            continue  # the optional faces are checked above (they need dask / sklearn)
        if name == "simhash_nb.__main__":
            continue  # running it is the CLI
        obj = _import_as(name)
        if not isinstance(obj, types.ModuleType) or obj.__name__ != name:
            bad.append(f"import {name} gives {obj!r}")
    assert not bad, bad


@pytest.mark.parametrize("old", RETIRED)
def test_retired_flat_paths_warn_and_say_where(old):
    module = importlib.import_module(f"simhash_nb.{old}")
    assert isinstance(module, types.ModuleType)
    public = [n for n in dir(module) if not n.startswith("_") and n in sh.__all__]
    name = public[0] if public else next(n for n in dir(module) if not n.startswith("_"))
    with pytest.warns(DeprecationWarning, match=rf"simhash_nb\.{old} is a retired module path: "
                                                 r"use simhash_nb\."):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(f"simhash_nb._core.{old}"), name)


def test_retired_paths_leave_the_public_functions_alone():
    for name in ("features", "fingerprint", "hamming", "clusters"):
        importlib.import_module(f"simhash_nb.{name}")
        assert callable(getattr(sh, name)) and not isinstance(getattr(sh, name), types.ModuleType)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from simhash_nb import FeatureBatch, features  # noqa: F401  (no warning on the new paths)


def test_docstring_and_docs_references_resolve():
    bad = []
    for rel, text, dotted in _references():
        if rel in STALE_REFERENCES_ALLOWED:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            try:
                obj = _resolve(dotted)
            except (AttributeError, DeprecationWarning) as exc:
                bad.append(f"{rel}: {text} ({type(exc).__name__}: {exc})")
                continue
        if text.startswith((":mod:", "{mod}")) and not isinstance(obj, types.ModuleType):
            bad.append(f"{rel}: {text} is not a module")
    assert not bad, "\n".join(bad)


def test_module_docstrings_name_modules_that_exist():
    """``simhash_nb.x.y`` written in ``code`` inside docstrings: not a retired path."""
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in STALE_REFERENCES_ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            for old in RETIRED:
                if re.search(rf"\bsimhash_nb\.{old}\.\w", node.value):
                    bad.append(f"{rel}:{node.lineno} names the retired simhash_nb.{old}.<name>")
    assert not bad, bad
