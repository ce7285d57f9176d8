"""Plots for threshold tuning with matplotlib (imported with this module, which
``import simhash_nb`` leaves out until ``simhash_nb.plotting`` is first used).

Every function draws on ``ax`` (a new figure when omitted) and returns the Axes, so
plots combine into subplots and compare several fingerprint settings on one Axes.

- :func:`plot_precision_recall` — precision against recall, one point per ``k``;
- :func:`plot_threshold_curves` — precision, recall and F1 against ``k``;
- :func:`plot_distance_histogram` — distances of duplicate and non-duplicate pairs;
- :func:`plot_cluster_sizes` — how many clusters of each size.

The first three read a :func:`simhash_nb.threshold_table`.
"""

from __future__ import annotations

import numbers

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ._core.docstrings import shared_docs
from ._core.evaluate.inputs import check_table

__all__ = [
    "plot_cluster_sizes",
    "plot_distance_histogram",
    "plot_precision_recall",
    "plot_threshold_curves",
]

_PARAMETERS = {
    "table": "table : pandas.DataFrame\n    From :func:`simhash_nb.threshold_table`.",
    "ax": "ax : matplotlib Axes, optional\n    Where to draw (default: a new figure).",
    "mark": "mark : int or Recommendation, optional\n    A threshold to mark (e.g. the result "
            "of :func:`simhash_nb.recommend_k`).",
}
"""The numpydoc entries every plot shares (``{{name}}`` lines of its docstring)."""

_DUP = "#1f77b4"
_NONDUP = "#d62728"


def _axes(ax, figsize=(6.4, 4.4)):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _finish(ax, title: str, xlabel: str, ylabel: str, *, grid: str = "both", xlim=None,
            ylim=None, **legend):
    """Axis labels and limits, grid, title and legend (font size 9): every plot's last step."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if xlim is not None:
        ax.set_xlim(*xlim)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(True, axis=grid, alpha=0.3)
    ax.set_title(title)
    ax.legend(fontsize=9, **legend)
    return ax


def _mark_k(mark, table) -> int | None:
    if mark is None:
        return None
    k = getattr(mark, "k", mark)  # a Recommendation or an int
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"mark must be a k (int) or a Recommendation, got {type(mark).__name__}")
    if int(k) not in set(table["k"].tolist()):
        raise ValueError(f"mark k={int(k)} is not a row of the table")
    return int(k)


def _last_k_shown(k: np.ndarray, row: int | None, margin: int) -> int:
    """The last ``k`` a plot shows by default: ``margin`` past ``k[row]`` (all of ``k``
    when ``row`` is None), at least 10, at most the table's last."""
    last = int(k[row]) + margin if row is not None else int(k.max())
    return min(max(last, 10), int(k.max()))


def _label_ks(ks: np.ndarray, recall: np.ndarray, precision: np.ndarray, at_most: int = 10,
              spacing: float = 0.07):
    """A few thresholds to write next to the curve, far enough apart to stay readable."""
    chosen: list[int] = []
    placed: list[tuple[float, float]] = []
    for x in range(ks.shape[0]):
        r, p = recall[x], precision[x]
        if np.isnan(r) or np.isnan(p):
            continue
        if all(np.hypot(r - a, p - b) >= spacing for a, b in placed):
            chosen.append(int(ks[x]))
            placed.append((r, p))
            if len(chosen) == at_most:
                break
    return set(chosen)


@shared_docs(**_PARAMETERS)
def plot_precision_recall(table, ax=None, *, mark=None, label=None, annotate=True):
    """Precision against recall, one point per Hamming threshold ``k``.

    Parameters
    ----------
    {{table}}
    {{ax}}
    {{mark}}
    label : str, optional
        Legend entry of the curve (to compare settings on one Axes).
    annotate : bool, default True
        Write a few ``k`` values next to their points.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0, 1, 7, 255], dtype=np.uint64)
    >>> table = sh.threshold_table(fps, [0, 0, 0, 1])
    >>> ax = sh.plotting.plot_precision_recall(table, mark=sh.recommend_k(table))
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('Recall', 'Precision')
    """
    check_table(table)
    ax = _axes(ax)
    k = table["k"].to_numpy()
    r = table["recall"].to_numpy(dtype=np.float64)
    p = table["precision"].to_numpy(dtype=np.float64)
    ok = ~(np.isnan(r) | np.isnan(p))
    (line,) = ax.plot(r[ok], p[ok], marker="o", markersize=3.5, linewidth=1.5,
                      label=label or "SimHash, one point per k")
    chosen = _mark_k(mark, table)
    if annotate:
        for kk in sorted(_label_ks(k, r, p) - {chosen}):
            x = int(np.flatnonzero(k == kk)[0])
            ax.annotate(f"k={kk}", (r[x], p[x]), textcoords="offset points", xytext=(4, 4),
                        fontsize=8, color=line.get_color())
    if chosen is not None:
        x = int(np.flatnonzero(k == chosen)[0])
        ax.plot([r[x]], [p[x]], marker="*", markersize=16, color="black", linestyle="none",
                label=f"chosen k = {chosen} (P {p[x]:.2f}, R {r[x]:.2f})", zorder=5)
        ax.annotate(f"k={chosen}", (r[x], p[x]), textcoords="offset points", xytext=(-10, -16),
                    fontsize=9, fontweight="bold", ha="right")
    return _finish(ax, "Precision and recall by Hamming threshold k", "Recall", "Precision",
                   xlim=(-0.02, 1.02), ylim=(-0.02, 1.05), loc="lower left")


@shared_docs(**_PARAMETERS)
def plot_threshold_curves(table, ax=None, *, mark=None, label=None, max_k=None):
    """Precision, recall and F1 against the Hamming threshold ``k``.

    Parameters
    ----------
    {{table}}
    {{ax}}
    {{mark}}
    label : str, optional
        Prefix of the legend entries (to compare settings on one Axes).
    max_k : int, optional
        Last threshold shown (default: a few past the first ``k`` with full recall).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> table = sh.threshold_table(np.array([0, 1, 7, 255], dtype=np.uint64), [0, 0, 0, 1])
    >>> ax = sh.plotting.plot_threshold_curves(table, mark=3)
    >>> [t.get_text() for t in ax.get_legend().get_texts()][:3]
    ['precision', 'recall', 'F1']
    """
    check_table(table)
    ax = _axes(ax)
    k = table["k"].to_numpy()
    if max_k is None:  # a few past the first k with full recall
        r = table["recall"].to_numpy(dtype=np.float64)
        full = np.flatnonzero(r >= np.nanmax(r) - 1e-12) if not np.isnan(r).all() else []
        max_k = _last_k_shown(k, full[0] if len(full) else None, 5)
    show = k <= max_k
    prefix = f"{label}: " if label else ""
    styles = (("precision", "-", "precision"), ("recall", "--", "recall"), ("f1", ":", "F1"))
    for column, style, name in styles:
        ax.plot(k[show], table[column].to_numpy(dtype=np.float64)[show], linestyle=style,
                linewidth=1.8, label=prefix + name)
    chosen = _mark_k(mark, table)
    if chosen is not None:
        ax.axvline(chosen, color="black", linewidth=1, alpha=0.7, label=f"chosen k = {chosen}")
    _finish(ax, "Precision, recall and F1 by threshold",
            "Hamming threshold k (pairs within k bits are duplicates)", "Score",
            xlim=(k.min() - 0.5, max_k + 0.5), ylim=(-0.02, 1.05), loc="best")
    _similarity_axis(ax, table.attrs.get("bits"))
    return ax


def _similarity_axis(ax, bits) -> None:
    """A top axis with the Jaccard similarity each k maps to (the angle relation of
    :func:`simhash_nb.k_for_similarity`)."""
    if bits not in (64, 128):
        return

    def to_sim(k):
        c = np.cos(np.pi * np.clip(np.asarray(k, dtype=np.float64), 0, bits / 2) / bits)
        return c / (2 - c)

    def to_k(s):
        s = np.clip(np.asarray(s, dtype=np.float64), 1e-9, 1.0)
        return bits * np.arccos(np.clip(2 * s / (1 + s), -1, 1)) / np.pi

    top = ax.secondary_xaxis("top", functions=(to_sim, to_k))
    top.set_xlabel("Jaccard similarity (equal-sized sets), from the angle relation", fontsize=8)


@shared_docs(**_PARAMETERS)
def plot_distance_histogram(table, ax=None, *, density=True, max_k=None, mark=None):
    """Hamming distances of duplicate and of non-duplicate pairs.

    Read from a :func:`simhash_nb.threshold_table`: the duplicates at distance exactly
    ``k`` are ``tp[k] - tp[k - 1]``, the non-duplicates ``fp[k] - fp[k - 1]``. The
    overlap of the two shapes is what no threshold can separate.

    Parameters
    ----------
    {{table}}
    {{ax}}
    density : bool, default True
        Plot each group's share of its pairs (the groups differ in size by orders of
        magnitude); False plots counts on a log scale.
    max_k : int, optional
        Last distance shown (default: the last one with a duplicate pair, plus a margin).
    {{mark}}

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> table = sh.threshold_table(np.array([0, 1, 7, 255], dtype=np.uint64), [0, 0, 0, 1])
    >>> ax = sh.plotting.plot_distance_histogram(table)
    >>> ax.get_xlabel()
    'Hamming distance between fingerprints'
    """
    check_table(table, ("k", "tp", "fp"))
    ax = _axes(ax)
    k = table["k"].to_numpy()
    dup = np.diff(table["tp"].to_numpy(), prepend=0)
    non = np.diff(table["fp"].to_numpy(), prepend=0)
    if max_k is None:  # a few past the last distance with a duplicate pair
        last = np.flatnonzero(dup)
        max_k = _last_k_shown(k, last[-1] if last.shape[0] else None, 6)
    show = k <= max_k
    k, dup, non = k[show], dup[show], non[show]
    n_dup, n_non = int(dup.sum()), int(non.sum())
    if density:
        y_dup = dup / max(n_dup, 1)
        y_non = non / max(n_non, 1)
        ylabel = "Share of the group's pairs"
    else:
        y_dup, y_non = dup, non
        ax.set_yscale("symlog", linthresh=1)
        ylabel = "Pairs"
    width = 0.42
    ax.bar(k - width / 2, y_dup, width=width, color=_DUP,
           label=f"duplicates ({n_dup:,} pairs)")
    ax.bar(k + width / 2, y_non, width=width, color=_NONDUP, alpha=0.8,
           label=f"non-duplicates ({n_non:,} pairs within {max_k} bits)")
    chosen = _mark_k(mark, table)
    if chosen is not None:
        ax.axvline(chosen + 0.5, color="black", linewidth=1, linestyle="--",
                   label=f"k = {chosen}: pairs to the left are reported")
    return _finish(ax, "Distances of duplicate and non-duplicate pairs",
                   "Hamming distance between fingerprints", ylabel, grid="y",
                   xlim=(-0.7, max_k + 0.7), loc="upper center", bbox_to_anchor=(0.5, -0.16),
                   ncol=1, frameon=False)


@shared_docs(**_PARAMETERS)
def plot_cluster_sizes(labels, ax=None, *, log=True):
    """How many clusters there are of each size.

    Parameters
    ----------
    labels : array_like
        One cluster label per document (e.g. from :func:`simhash_nb.clusters`).
    {{ax}}
    log : bool, default True
        Logarithmic count axis (singletons usually dominate).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``labels`` is empty, not one-dimensional, or has missing values.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> ax = sh.plotting.plot_cluster_sizes([0, 0, 0, 3, 4, 4])
    >>> ax.get_xlabel()
    'Cluster size (documents)'
    """

    values = pd.Series(labels) if not isinstance(labels, pd.Series) else labels
    if values.ndim != 1 or len(values) == 0:
        raise ValueError("labels must be a non-empty one-dimensional array")
    if values.isna().any():
        raise ValueError("labels must not be missing; give every document a cluster label")
    sizes = values.value_counts().to_numpy()
    size, count = np.unique(sizes, return_counts=True)
    ax = _axes(ax)
    ax.bar(size, count, width=0.8, color=_DUP,
           label=f"{len(values):,} documents in {sizes.shape[0]:,} clusters")
    if log:
        ax.set_yscale("log")
    if size.max() <= 30:
        ax.set_xticks(np.arange(1, size.max() + 1, max(1, int(size.max()) // 10)))
    return _finish(ax, "Cluster sizes", "Cluster size (documents)", "Number of clusters",
                   grid="y", loc="upper right")
