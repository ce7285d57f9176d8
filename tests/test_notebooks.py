"""Execute every notebook in notebooks/ on the bundled data: no errors, plots appear."""

from __future__ import annotations

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ["quickstart", "tuning_english", "tuning_chinese"]


def test_all_notebooks_are_listed():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NAMES)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name, tmp_path):
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    for cell in book.cells:  # start from a clean notebook, whatever is stored
        if cell.cell_type == "code":
            cell.outputs = []
            assert "../shared" not in cell.source, "notebooks must use bundled data only"
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
