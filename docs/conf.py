"""Sphinx configuration for the simhash_nb documentation.

Everything the site shows is made during the build from the installed package:

- the API reference (``api/index.rst``) is written from ``simhash_nb.__all__`` and the
  public submodules' ``__all__`` (plus the pandas accessors), so a new public name gets a
  page without editing the docs;
- the three notebooks are copied from ``notebooks/`` without their stored outputs and
  executed by myst-nb;
- the CLI help is the output of ``python -m simhash_nb ... --help``;
- the gallery and the plots in the user guide are drawn by matplotlib's plot directive
  from the bundled corpora.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import pathlib
import re
import runpy
import sys

import simhash_nb

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
GENERATED = HERE / "_generated"

project = "simhash_nb"
author = "simhash_nb developers"
copyright = "simhash_nb developers, BSD-3-Clause"
release = version = simhash_nb.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "sphinx_design",
    "sphinx_copybutton",
    "matplotlib.sphinxext.plot_directive",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_generated", "**.ipynb_checkpoints", "README.md"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["custom.css"]

html_theme = "pydata_sphinx_theme"
html_title = f"simhash_nb {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "getting_started": []}
html_show_sourcelink = False

# --- API reference ----------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()  # tests/test_docs.py validates; the build only renders
add_module_names = False
# Every cross-reference must resolve (with -W a broken one fails the build), except the
# docstrings' references to helpers outside the public API, which have no page.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(simhash_nb\.)?(jieba_features|_\w+)(\..*)?"),
    (r"py:.*", r"Simhash(Series|DataFrame)Accessor\..*"),
    (r"py:.*", r"(NORMALIZERS|FORMAT_VERSION|Windows|minhash_bands|invalid_weight_error)"),
    (r"py:func", r"vocabulary_hashes"),  # resolves on simhash_nb.sklearn's own page
]

# --- notebooks ---------------------------------------------------------------------------
# Executed by this file on every build (see setup below), in parallel with the rest of the
# build; myst-nb renders the executed copies.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3

# --- plots -------------------------------------------------------------------------------
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]
plot_rcparams = {"figure.figsize": (6.4, 4.4)}
plot_pre_code = "import numpy as np\nimport matplotlib.pyplot as plt\nimport simhash_nb as sh\n"

suppress_warnings = ["mystnb.unknown_mime_type"]

# Public submodules whose __all__ is documented (module name, title).
SUBMODULES = [
    ("sklearn", "scikit-learn"),
    ("distributed", "Dask"),
    ("plotting", "Plotting"),
    ("datasets", "Sample data"),
]
# Sections of the top-level API. Names not listed here land in "Other" (never dropped);
# a listed name that ``simhash_nb`` gives (lazily, say) outside ``__all__`` is listed too.
SECTIONS = [
    ("Fingerprints", ["fingerprint", "fingerprint_features", "features", "FeatureBatch",
                      "FingerprintSpec", "make_spec", "check_compatible", "SpecMismatchError",
                      "fit_idf", "IdfTable", "window_fingerprints", "containment",
                      "Windows"]),
    ("Distances and search", ["hamming", "hamming_matrix", "pairs_within", "near_duplicates",
                              "table_design", "TableDesign", "Pairs", "TooManyPairsError"]),
    ("Index", ["SimhashIndex", "Matches"]),
    ("Clusters and dedupe", ["clusters", "dedupe", "ChainingWarning"]),
    ("Verified near-duplicates from texts", ["near_duplicate_texts", "cluster_texts",
                                             "dedupe_texts", "SimilarPairs"]),
    ("Corpora larger than memory", ["near_duplicate_shards", "cluster_shards",
                                    "dedupe_shards", "CorpusStore", "MemoryLimitError"]),
    ("Choosing k", ["jaccard", "jaccard_pairs", "threshold_table", "recommend_k",
                    "Recommendation"]),
    ("pandas and parquet", ["read_parquet", "write_parquet"]),
    ("scikit-learn", ["SimhashVectorizer", "fingerprint_sparse"]),
    ("Configuration", ["config", "reset_config"]),
    ("Cold start", ["prepare", "PrepareReport"]),
]
ACCESSORS = ["pandas.Series.simhash", "pandas.DataFrame.simhash"]


def _config_doc() -> str:
    import pprint

    table = pprint.pformat(dict(simhash_nb.config))  # the defaults, in a fresh process
    body = "\n".join("   " + line for line in table.splitlines())
    return ("Current settings of the tunables, a dict: change entries in place, restore the "
            "defaults with :func:`~simhash_nb.reset_config`. The defaults:\n\n::\n\n" + body)


# Text for public names that are data (no docstring of their own), by template data.rst
autosummary_context = {"data_docs": {"simhash_nb.config": _config_doc()}}


def _autosummary(names, current: str) -> str:
    body = "\n".join(f"   {n}" for n in names)
    return (f".. currentmodule:: {current}\n\n.. autosummary::\n   :toctree: generated/\n\n"
            f"{body}\n\n")


def _write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # unchanged files keep Sphinx's cache
        path.write_text(text)


def write_accessor_page(name: str) -> None:
    """A page for ``pandas.Series.simhash``-style accessors, with each public member."""
    import inspect

    import pandas as pd

    _, owner, attr = name.split(".")
    cls = getattr(getattr(pd, owner), attr)
    from numpydoc.docscrape_sphinx import SphinxClassDoc

    # autoclass would call the accessor an "alias of" its class: write the class entry
    # under its public name, with the docstring rendered by numpydoc
    doc = str(SphinxClassDoc(cls, config={"show_class_members": False}))
    body = "\n".join(f"   {line}" if line.strip() else "" for line in doc.splitlines())
    lines = [name, "=" * len(name), "", ".. py:class:: " + f"{owner}.{attr}",
             "   :module: pandas", "", body, ""]
    for member, value in vars(cls).items():
        if member.startswith("_"):
            continue
        if isinstance(value, property):
            lines += [f".. autoproperty:: {name}.{member}", ""]
        elif inspect.isfunction(value):
            lines += [f".. automethod:: {name}.{member}", ""]
    _write(HERE / "api" / "generated" / f"{name}.rst", "\n".join(lines))


def write_api_index() -> None:
    top = list(simhash_nb.__all__)
    listed = {n for _, ns in SECTIONS for n in ns}
    out = ["API reference", "=============", "",
           "Every public name has a page, generated from its docstring. Import the package as",
           "``import simhash_nb as sh``; the submodules below load on first use.", ""]
    for title, ns in SECTIONS:
        ns = [n for n in ns if n in top or hasattr(simhash_nb, n)]
        if ns:
            out += [title, "-" * len(title), "", _autosummary(ns, "simhash_nb")]
    other = [n for n in top if n not in listed]
    if other:
        out += ["Other", "-----", "", _autosummary(other, "simhash_nb")]
    out += ["pandas accessors", "----------------", "",
            "Registered as ``Series.simhash`` and ``DataFrame.simhash`` by ``import simhash_nb``.",
            "", ".. toctree::", "   :maxdepth: 1", ""]
    out += [f"   {name} <generated/{name}>" for name in ACCESSORS]
    out += [""]
    for name in ACCESSORS:
        write_accessor_page(name)
    for mod, title in SUBMODULES:
        m = importlib.import_module(f"simhash_nb.{mod}")
        head = f"{title}: ``simhash_nb.{mod}``"
        out += [head, "-" * len(head), "", f".. automodule:: simhash_nb.{mod}",
                "   :no-members:", "",
                _autosummary(list(m.__all__), f"simhash_nb.{mod}")]
    _write(HERE / "api" / "index.rst", "\n".join(out))


def copy_notebooks() -> None:
    """Copy notebooks/*.ipynb without outputs, as the pages' sources (executed in setup)."""
    dest = HERE / "notebooks"
    dest.mkdir(exist_ok=True)
    for src in sorted((ROOT / "notebooks").glob("*.ipynb")):
        book = json.loads(src.read_text())
        for cell in book["cells"]:
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
        text = json.dumps(book, indent=1, ensure_ascii=False) + "\n"
        _write(dest / src.name, text)


def write_cli_help() -> None:
    """The ``--help`` of ``python -m simhash_nb`` and each command, run in this process."""
    GENERATED.mkdir(exist_ok=True)
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        for cmd in ["", "fingerprint", "pairs", "dedupe", "clusters", "tune", "fit-idf", "demo"]:
            out = io.StringIO()
            argv, sys.argv = sys.argv, ["simhash-nb", *([cmd] if cmd else []), "--help"]
            try:
                with contextlib.redirect_stdout(out):
                    runpy.run_module("simhash_nb", run_name="__main__", alter_sys=False)
            except SystemExit as stop:
                if stop.code not in (0, None):
                    raise RuntimeError(f"simhash-nb {cmd} --help exited with {stop.code}") from None
            finally:
                sys.argv = argv
            _write(GENERATED / f"cli_{cmd or 'main'}.txt", out.getvalue())
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


# --- notebooks: executed on every build, while Sphinx reads the other pages ---------------
_EXECUTED: dict = {}


# Each executed copy is also written to <outdir>/_notebooks/<name>.ipynb with the SHA-256 of
# its source in its metadata: tests/test_notebooks.py checks that copy instead of executing
# the notebook a second time when it is newer than the package's code (make test builds the
# docs beside the tests, and that test waits for the build).
EXECUTED_DIR = "_notebooks"


def _execute_notebook(src: pathlib.Path, outdir: pathlib.Path) -> str:
    import hashlib
    import tempfile

    import nbclient
    import nbformat

    book = nbformat.read(src, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    with tempfile.TemporaryDirectory() as tmp:  # outside the repository, like a user
        nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": tmp}}).execute()
    text = nbformat.writes(book)
    book.metadata["simhash_nb"] = {"source_sha256": hashlib.sha256(src.read_bytes()).hexdigest()}
    (outdir / EXECUTED_DIR).mkdir(parents=True, exist_ok=True)
    (outdir / EXECUTED_DIR / src.name).write_text(nbformat.writes(book), encoding="utf-8")
    return text


def _start_notebooks(app) -> None:
    from concurrent.futures import ThreadPoolExecutor

    books = sorted((ROOT / "notebooks").glob("*.ipynb"))
    pool = ThreadPoolExecutor(max_workers=max(1, len(books)))
    for src in books:
        _EXECUTED[f"notebooks/{src.stem}"] = pool.submit(_execute_notebook, src,
                                                         pathlib.Path(app.outdir))
    pool.shutdown(wait=False)


def _always_read_notebooks(app, env, added, changed, removed):
    return [name for name in _EXECUTED if name not in added and name not in changed]


def _notebooks_last(app, env, docnames) -> None:
    docnames.sort(key=lambda name: name in _EXECUTED)


def _executed_source(app, docname, source) -> None:
    if docname in _EXECUTED:
        source[0] = _EXECUTED[docname].result()  # a failing cell fails the build here


def _title_breaks(app, pagename, templatename, context, doctree) -> None:
    """Let the qualified name that titles an API page wrap after its dots (``<wbr>``), so a
    narrow page breaks ``simhash_nb.distributed.threads_per_task`` between its parts, not
    inside a word."""
    body = context.get("body")
    if pagename.startswith("api/generated/") and body:
        context["body"] = re.sub(r"(<h1>)([^<]+)",
                                 lambda m: m.group(1) + m.group(2).replace(".", ".<wbr>"),
                                 body, count=1)


def setup(app):
    app.connect("html-page-context", _title_breaks)
    app.connect("builder-inited", _start_notebooks)
    app.connect("env-get-outdated", _always_read_notebooks)
    app.connect("env-before-read-docs", _notebooks_last)
    app.connect("source-read", _executed_source)
    return {"parallel_read_safe": False}


def write_default_spec() -> None:
    GENERATED.mkdir(exist_ok=True)
    spec = json.loads(simhash_nb.FingerprintSpec.from_options().to_json())
    (GENERATED / "default_spec.json").write_text(json.dumps(spec, indent=2) + "\n")


write_api_index()
write_default_spec()
copy_notebooks()
write_cli_help()
