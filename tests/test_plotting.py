"""Plots: each saves to a real PNG, has labelled axes, draws its data, and accepts ax=."""

from __future__ import annotations

import subprocess
import sys

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import simhash_nb as sh  # noqa: E402
from simhash_nb import plotting  # noqa: E402

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def table():
    # 40 clusters of 3 noisy copies of fingerprints near one root: duplicates at small
    # distances, non-duplicates further, with some overlap
    rng = np.random.default_rng(0)
    root = np.uint64(rng.integers(0, 2**63))
    fps, labels = [], []
    for c in range(40):
        b = root ^ np.uint64(sum(1 << int(f) for f in rng.choice(64, size=6, replace=False)))
        for _ in range(3):
            flips = rng.choice(64, size=rng.integers(0, 6), replace=False)
            fps.append(b ^ np.uint64(sum(1 << int(f) for f in flips)))
            labels.append(c)
    return sh.threshold_table(np.array(fps, dtype=np.uint64), labels)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _save(ax, path):
    ax.figure.savefig(path, dpi=80)
    data = path.read_bytes()
    assert data[:8] == _PNG_MAGIC
    assert len(data) > 8_000  # a real drawing, not an empty canvas
    img = plt.imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert img[..., :3].std() > 0.05  # not a blank image
    return img


def _legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_precision_recall(table, tmp_path):
    rec = sh.recommend_k(table)
    ax = plotting.plot_precision_recall(table, mark=rec)
    _save(ax, tmp_path / "pr.png")
    assert ax.get_xlabel() == "Recall" and ax.get_ylabel() == "Precision" and ax.get_title()
    curve = ax.get_lines()[0]
    ok = table[["recall", "precision"]].dropna()
    np.testing.assert_allclose(curve.get_xdata(), ok["recall"])
    np.testing.assert_allclose(curve.get_ydata(), ok["precision"])
    star = ax.get_lines()[1]
    assert star.get_xdata()[0] == pytest.approx(rec.recall)
    assert any(f"k = {rec.k}" in t for t in _legend_texts(ax))
    assert any(t.get_text() == "k=0" for t in ax.texts)


def test_compare_on_one_axes(table, tmp_path):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    out = plotting.plot_precision_recall(table, ax=axes[0], label="char 4-grams")
    assert out is axes[0]
    plotting.plot_precision_recall(table.assign(precision=table["precision"] * 0.9),
                                   ax=axes[0], label="words")
    assert _legend_texts(axes[0]) == ["char 4-grams", "words"]
    assert plotting.plot_threshold_curves(table, ax=axes[1], label="a") is axes[1]
    fig.savefig(tmp_path / "both.png")
    assert (tmp_path / "both.png").read_bytes()[:8] == _PNG_MAGIC


def test_threshold_curves(table, tmp_path):
    ax = plotting.plot_threshold_curves(table, mark=4, max_k=20)
    _save(ax, tmp_path / "curves.png")
    assert ax.get_xlabel().startswith("Hamming threshold k") and ax.get_ylabel() == "Score"
    assert _legend_texts(ax) == ["precision", "recall", "F1", "chosen k = 4"]
    f1 = ax.get_lines()[2]
    np.testing.assert_array_equal(f1.get_xdata(), np.arange(21))
    np.testing.assert_allclose(f1.get_ydata(), table["f1"].iloc[:21])
    assert ax.get_lines()[3].get_xdata()[0] == 4


def test_distance_histogram(table, tmp_path):
    ax = plotting.plot_distance_histogram(table, max_k=20)
    _save(ax, tmp_path / "hist.png")
    assert ax.get_xlabel() == "Hamming distance between fingerprints"
    assert ax.get_ylabel() == "Share of the group's pairs"
    dup, non = ax.containers
    heights = np.array([b.get_height() for b in dup])
    tp = table["tp"].to_numpy()
    want = np.diff(tp, prepend=0)[:21]
    np.testing.assert_allclose(heights, want / want.sum())
    assert sum(b.get_height() for b in non) == pytest.approx(1.0)
    assert _legend_texts(ax)[0].startswith(f"duplicates ({int(want.sum()):,} pairs")
    counts = plotting.plot_distance_histogram(table, density=False, mark=3)
    _save(counts, tmp_path / "hist_counts.png")
    assert counts.get_ylabel() == "Pairs" and counts.get_yscale() == "symlog"


def test_cluster_sizes(tmp_path):
    labels = np.r_[np.zeros(5), np.ones(2), np.arange(2, 30)]
    ax = plotting.plot_cluster_sizes(labels)
    _save(ax, tmp_path / "clusters.png")
    assert ax.get_xlabel() == "Cluster size (documents)"
    assert ax.get_ylabel() == "Number of clusters" and ax.get_yscale() == "log"
    bars = {int(round(b.get_x() + b.get_width() / 2)): b.get_height() for b in ax.patches}
    assert bars == {1: 28, 2: 1, 5: 1}
    assert "35 documents in 30 clusters" in _legend_texts(ax)[0]


def test_bad_input(table):
    with pytest.raises(TypeError, match="DataFrame"):
        plotting.plot_precision_recall(table.to_numpy())
    with pytest.raises(ValueError, match="lacks columns"):
        plotting.plot_threshold_curves(table.drop(columns="f1"))
    with pytest.raises(ValueError, match="not a row"):
        plotting.plot_precision_recall(table, mark=200)
    with pytest.raises(TypeError, match="mark"):
        plotting.plot_precision_recall(table, mark="4")
    with pytest.raises(ValueError, match="missing"):
        plotting.plot_cluster_sizes([0, None, 1])


def test_import_stays_light():
    code = "import sys, simhash_nb; print('matplotlib' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "False"
