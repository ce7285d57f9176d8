"""The documentation: docstrings of the public API, and the built site (``make docs``).

- every public function (``simhash_nb.__all__``, the public submodules' ``__all__`` and the
  pandas accessors' methods) has a summary, Parameters matching its signature, Returns when
  it returns something, Raises naming each exception it raises itself, and an example
  (numpydoc validation; the examples run as doctests with the rest of the suite);
- every public class has a docstring with an example, and its public methods have their
  parameters documented;
- the built site has a page for every public name, and each of its internal links (file
  and anchor) resolves. ``make test`` builds the site beside the tests, and these tests
  run last and wait for it; run alone, they skip when there is no build.
"""

from __future__ import annotations

import ast
import builtins
import html.parser
import importlib
import inspect
import pathlib
import textwrap
import urllib.parse

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")
from numpydoc.docscrape import FunctionDoc  # noqa: E402
from numpydoc.docscrape_sphinx import get_doc_object  # noqa: E402

import simhash_nb  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
HTML = ROOT / "docs" / "_build" / "html"
SUBMODULES = ["sklearn", "distributed", "plotting", "datasets"]

# numpydoc codes checked for functions: no docstring, no summary, parameters missing from
# or unknown to the docstring, no Returns, no Examples
FUNCTION_CHECKS = {"GL08", "SS01", "PR01", "PR02", "RT01", "EX01"}
METHOD_CHECKS = {"GL08", "SS01", "PR01", "PR02"}
CLASS_CHECKS = {"GL08", "SS01", "EX01"}


def _public():
    """(public name, object) for every public name of the package."""
    out = [(f"simhash_nb.{n}", getattr(simhash_nb, n)) for n in simhash_nb.__all__]
    for mod in SUBMODULES:
        m = importlib.import_module(f"simhash_nb.{mod}")
        out += [(f"simhash_nb.{mod}.{n}", getattr(m, n)) for n in m.__all__]
    return out


def _accessors():
    import pandas as pd

    return [("pandas.Series.simhash", pd.Series.simhash),
            ("pandas.DataFrame.simhash", pd.DataFrame.simhash)]


def _members(name, cls):
    """Public methods defined by the class itself (not inherited)."""
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(value, (classmethod, staticmethod)):
            value = value.__func__
        if inspect.isfunction(value):
            yield f"{name}.{attr}", value


PUBLIC = _public()
FUNCTIONS = [(n, o) for n, o in PUBLIC if inspect.isfunction(o)]
FUNCTIONS += [m for n, cls in _accessors() for m in _members(n, cls)]
CLASSES = [(n, o) for n, o in PUBLIC if inspect.isclass(o)] + _accessors()
METHODS = [m for n, cls in CLASSES for m in _members(n, cls)
           if not n.startswith("pandas.")]  # accessor methods are checked as functions


def _errors(obj, checks):
    result = numpydoc_validate.validate(get_doc_object(obj))
    return [f"{code}: {msg}" for code, msg in result["errors"] if code in checks]


def _raised_names(func) -> set[str]:
    """Exceptions the function's own body raises by name (not nested functions)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    body = tree.body[0]
    names = set()
    todo = list(ast.iter_child_nodes(body))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name):
                names.add(exc.id)
            elif isinstance(exc, ast.Attribute):
                names.add(exc.attr)
        todo.extend(ast.iter_child_nodes(node))
    return names


def _resolve(func, name):
    value = func.__globals__.get(name, getattr(builtins, name, None))
    return value if inspect.isclass(value) else None


def test_public_names_are_found():
    assert len(FUNCTIONS) > 30 and len(CLASSES) > 10 and len(METHODS) > 20


@pytest.mark.parametrize("name,func", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_function_docstring(name, func):
    assert not _errors(func, FUNCTION_CHECKS), name
    assert ">>>" in (func.__doc__ or ""), f"{name}: the example has no >>> lines to run"


@pytest.mark.parametrize("name,func", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_function_documents_what_it_raises(name, func):
    raised = _raised_names(func)
    documented = FunctionDoc(func)["Raises"]
    types = " ".join(p.type for p in documented)
    doc_classes = [_resolve(func, w.strip(",.`~")) for w in types.replace(",", " ").split()]
    doc_classes = [c for c in doc_classes if c is not None]
    missing = []
    for exc in sorted(raised):
        cls = _resolve(func, exc)
        if cls is None and callable(func.__globals__.get(exc)):
            continue  # a helper that builds the exception: its type is not visible here
        if exc in types or (cls is not None and any(issubclass(cls, d) for d in doc_classes)):
            continue
        missing.append(exc)
    assert not missing, f"{name} raises {missing} without a Raises entry"


@pytest.mark.parametrize("name,cls", CLASSES, ids=[n for n, _ in CLASSES])
def test_class_docstring(name, cls):
    assert not _errors(cls, CLASS_CHECKS), name


@pytest.mark.parametrize("name,meth", METHODS, ids=[n for n, _ in METHODS])
def test_method_docstring(name, meth):
    assert not _errors(meth, METHOD_CHECKS), name


# --- the built site ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def built_site(docs_build):
    """The site, once ``make test``'s docs build has finished (tests/conftest.py); skip when
    there is no build (the tests run alone)."""
    if not (HTML / "index.html").exists():
        pytest.skip("no docs/_build/html: run `make docs` (make test does)")


needs_build = pytest.mark.usefixtures("built_site")


@needs_build
@pytest.mark.parametrize("name", [n for n, _ in PUBLIC] + [n for n, _ in _accessors()])
def test_every_public_name_has_a_page(name):
    page = HTML / "api" / "generated" / f"{name}.html"
    assert page.exists(), f"no reference page for {name}"
    text = page.read_text(encoding="utf-8")
    assert f'id="{name}"' in text, f"{name} is not documented on its page"


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "img", "link", "script"):
                self.links.append(a[key])


@needs_build
def test_internal_links_resolve():
    pages = {}
    for path in HTML.rglob("*.html"):
        if path.relative_to(HTML).parts[0] == "_static":  # theme templates, not pages
            continue
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path.resolve()] = parser
    broken = []
    for path, parser in pages.items():
        for link in parser.links:
            url = urllib.parse.urlsplit(link)
            if url.scheme or url.netloc or link.startswith("mailto:"):
                continue
            target = (path.parent / urllib.parse.unquote(url.path)).resolve() if url.path else path
            if not target.exists():
                broken.append(f"{path.relative_to(HTML)}: {link}")
            elif url.fragment and target.suffix == ".html" and target in pages:
                if url.fragment not in pages[target].ids:
                    broken.append(f"{path.relative_to(HTML)}: {link} (no such anchor)")
    assert len(pages) > 50
    assert not broken, "\n".join(broken[:50])


@needs_build
def test_site_has_no_external_assets():
    """The site works offline: no page loads scripts, styles or images from the network."""
    remote = []
    for path in HTML.rglob("*.html"):
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8"))
        remote += [f"{path.name}: {x}" for x in parser.links
                   if x.startswith(("http://", "https://", "//")) and x.endswith((".js", ".css"))]
    assert not remote, remote[:10]


@needs_build
def test_notebooks_rendered_with_outputs():
    for name in ["quickstart", "tuning_english", "tuning_chinese"]:
        text = (HTML / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
        assert text.count("<img") >= 2, f"{name}: no plots in the rendered notebook"
        assert "cell_output" in text, f"{name}: rendered without outputs"
