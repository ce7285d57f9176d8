"""Execute every notebook in notebooks/ on the bundled data: no errors, plots appear.

``make test`` builds the docs beside the tests (this test runs last and waits for the
build, tests/conftest.py), and the docs build executes every notebook (see
``docs/conf.py``) and keeps each executed copy, with the SHA-256 of its source, in
``docs/_build/html/_notebooks/``. A copy of the notebook as it is now, written after the
package's code last changed, is checked here instead of executing the notebook a second
time; otherwise (run alone, or after an edit) the notebook is executed.
"""

from __future__ import annotations

import hashlib
import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
EXECUTED = ROOT / "docs" / "_build" / "html" / "_notebooks"  # written by `make docs`
NAMES = ["quickstart", "tuning_english", "tuning_chinese"]


def test_all_notebooks_are_listed():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NAMES)


def executed_by_the_docs_build(name: str, folder: pathlib.Path = EXECUTED):
    """The docs build's executed copy of the notebook, if it ran the notebook as it is now
    after the package's code last changed; else None."""
    path = folder / f"{name}.ipynb"
    if not path.exists():
        return None
    book = nbformat.read(path, as_version=4)
    source = hashlib.sha256((NOTEBOOKS / f"{name}.ipynb").read_bytes()).hexdigest()
    if book.metadata.get("simhash_nb", {}).get("source_sha256") != source:
        return None
    code = max(p.stat().st_mtime for p in (ROOT / "simhash_nb").rglob("*.py"))
    return book if path.stat().st_mtime > code else None


def test_executed_copy_is_used_only_when_current(tmp_path):
    assert executed_by_the_docs_build("quickstart", tmp_path) is None  # no copy
    book = nbformat.v4.new_notebook()
    book.metadata["simhash_nb"] = {"source_sha256": "0" * 64}
    nbformat.write(book, tmp_path / "quickstart.ipynb")
    assert executed_by_the_docs_build("quickstart", tmp_path) is None  # another source
    source = hashlib.sha256((NOTEBOOKS / "quickstart.ipynb").read_bytes()).hexdigest()
    book.metadata["simhash_nb"] = {"source_sha256": source}
    nbformat.write(book, tmp_path / "quickstart.ipynb")
    assert executed_by_the_docs_build("quickstart", tmp_path) is not None
    old = (ROOT / "simhash_nb" / "__init__.py").stat().st_mtime - 1
    os.utime(tmp_path / "quickstart.ipynb", (old, old))  # older than the code
    assert executed_by_the_docs_build("quickstart", tmp_path) is None


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name, tmp_path, docs_build):
    source = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    for cell in source.cells:
        if cell.cell_type == "code":
            assert "../shared" not in cell.source, "notebooks must use bundled data only"
    book = executed_by_the_docs_build(name)
    if book is None:  # not executed by a docs build of this code: execute it here
        book = source
        for cell in book.cells:  # start from a clean notebook, whatever is stored
            if cell.cell_type == "code":
                cell.outputs = []
        client = nbclient.NotebookClient(
            book, timeout=300, kernel_name="python3",
            # run outside the repository, so only the installed package and its data are used
            resources={"metadata": {"path": str(tmp_path)}},
        )
        client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 2, f"{name}: expected plots, got {len(images)} images"
    assert all(len(o["data"]["image/png"]) > 10_000 for o in images)
