"""``simhash-nb demo``: the whole job on the bundled sample corpora."""


from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import datasets
from .._core.evaluate import jaccard_pairs, recommend_k, threshold_table
from .._core.fingerprint import features_and_fingerprints
from .._core.spec import FingerprintSpec
from .._frames import SPEC_ATTR, column_specs, fingerprint_array
from ..io import write_parquet
from ..plotting import plot_threshold_curves
from .parser import DEMO_NORMALIZE

# --- demo ---------------------------------------------------------------------------------


def _window(a: str, b: str, width: int) -> tuple[str, str]:
    """Both texts (white space collapsed) cut to ``width``, from just before they differ."""
    a, b = " ".join(str(a).split()), " ".join(str(b).split())
    same = 0
    for x, y in zip(a, b):
        if x != y:
            break
        same += 1
    start = max(0, same - width // 3)

    def cut(t: str) -> str:
        t = ("…" + t[start + 1:]) if start else t
        return t if len(t) <= width else t[: width - 1] + "…"

    return cut(a), cut(b)


def _examples(pairs, n: int):
    """Up to ``n`` pairs spread over the distances (largest first), one per left row."""
    pairs = pairs.drop_duplicates("left")
    groups = [g for _, g in sorted(pairs.groupby("distance"), key=lambda kv: -kv[0])]
    rows = []
    for r in range(max((len(g) for g in groups), default=0)):
        rows += [g.iloc[r] for g in groups if r < len(g)]
        if len(rows) >= n:
            break
    return rows[:n]


def _side_by_side(rows, texts, width: int = 46) -> list[str]:
    lines = []
    for row in rows:
        a, b = _window(texts[row["left"]], texts[row["right"]], width)
        lines.append(f"  d={int(row['distance'])}  {a:<{width}} | {b}")
    return lines


class _Corpus(NamedTuple):
    """What the demo found in one corpus."""

    k: int
    pairs: pd.DataFrame  # with the corpus name and both texts
    clusters: pd.DataFrame  # every text, its cluster's first id and the cluster's size
    fingerprints: pd.DataFrame  # id, simhash, corpus
    nearest: np.ndarray  # each text's Hamming distance to its nearest other text
    tuned: tuple | None  # (threshold table, recommendation, ground-truth pairs) if tuned


def cmd_demo(args) -> int:
    """``simhash-nb demo``: the whole job on the bundled corpora, with a summary and plot."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    spec = FingerprintSpec.from_options(normalize=DEMO_NORMALIZE)
    corpora = {"licences": datasets.load_licences(), "fortunes": datasets.load_fortunes()}
    how = (f"within k={args.k} bits" if args.k is not None else
           "within k bits, k chosen per corpus: the best F1 against exact Jaccard "
           f">= {args.jaccard}")
    print(f"simhash_nb demo: 64-bit SimHash of character {spec.ngram}-grams after "
          f"{'+'.join(spec.normalize)} normalisation; near duplicates {how}\n")
    found = {name: _run_corpus(name, df, spec, args) for name, df in corpora.items()}
    pairs, clusters = _write_tables(found, out)
    figures = f"{out}/nearest_neighbour_distance.png"
    _plot_nearest(found, out / "nearest_neighbour_distance.png")
    tuned = {name: c.tuned for name, c in found.items() if c.tuned is not None}
    if tuned:
        _plot_tuning(tuned, args.jaccard, out / "threshold_curves.png")
        figures = f"{out}/threshold_curves.png, " + figures
    print(f"wrote {out}/pairs.csv ({len(pairs):,} pairs), {out}/clusters.csv "
          f"({len(clusters):,} texts in clusters), {out}/fingerprints.parquet, {figures}")
    return 0


def _fingerprinted(df, spec):
    """``(df.simhash.fingerprint(spec=spec), the texts' features)`` from one tokenising
    pass: the ground truth's features and the fingerprints come from one kernel, so a
    first (cold) demo compiles it alone, not the fused fingerprint kernel as well."""
    features, fps = features_and_fingerprints(df["text"], bits=spec.bits, spec=spec)
    out = df.assign(simhash=fingerprint_array(fps, np.ones(len(df), dtype=bool)))
    out.attrs = {**df.attrs, SPEC_ATTR: column_specs({"simhash": spec})}
    return out, features


def _tune(name: str, df, features, jaccard: float) -> tuple:
    """The tuning workflow: ground truth, threshold table, recommendation (printed)."""
    truth = jaccard_pairs(features, threshold=jaccard)
    table = threshold_table(df["simhash"].simhash.to_numpy(), truth)
    rec = recommend_k(table)
    print(f"{name}: k={rec.k} ({len(truth):,} pairs with Jaccard >= {jaccard}; at k={rec.k} "
          f"precision {rec.precision:.2f}, recall {rec.recall:.2f}, F1 {rec.f1:.2f})")
    return table, rec, len(truth)


def _run_corpus(name: str, df, spec, args) -> _Corpus:
    """Fingerprint a corpus, choose k (unless given), find its pairs and clusters; print
    a summary and example pairs."""
    t0 = time.perf_counter()
    df = df.set_index("id", drop=False).rename_axis(None)
    df, features = _fingerprinted(df, spec)
    tuned = _tune(name, df, features, args.jaccard) if args.k is None else None
    k = args.k if tuned is None else tuned[1].k
    pairs = df.simhash.near_duplicates(k=k)
    labels = df.simhash.clusters(k=k)
    elapsed = time.perf_counter() - t0
    sizes = labels.value_counts()
    texts = df["text"]
    print(f"{name}: {len(df):,} texts, {len(pairs):,} near-duplicate pairs within {k} bits, "
          f"{int((sizes > 1).sum()):,} clusters of 2+ texts (largest {int(sizes.max())}), "
          f"{len(df) - len(sizes):,} texts redundant; {elapsed * 1000:.0f} ms")
    print("\n".join(_side_by_side(_examples(pairs, args.examples), texts)) + "\n")
    pairs.insert(0, "corpus", name)
    pairs["left_text"] = texts.loc[pairs["left"]].to_numpy()
    pairs["right_text"] = texts.loc[pairs["right"]].to_numpy()
    first_id = df["id"].to_numpy()[labels.to_numpy()]
    clusters = pd.DataFrame({
        "corpus": name, "id": df["id"].to_numpy(), "cluster": first_id,
        "cluster_size": labels.map(sizes).to_numpy(), "text": texts.to_numpy()})
    fps = df[["id", "simhash"]].assign(corpus=name).reset_index(drop=True)
    return _Corpus(k, pairs, clusters, fps, _nearest(df["simhash"].simhash.to_numpy()), tuned)


def _nearest(fps: np.ndarray, block: int = 512) -> np.ndarray:
    """Each 64-bit fingerprint's Hamming distance to its nearest other one (255 for a
    lone text), a block of rows against all at a time: numpy for the demo's few thousand
    texts, so that its first (cold) run compiles no kernel for it."""
    n = fps.shape[0]
    out = np.full(n, 255, dtype=np.uint8)
    for s in range(0, n, block):
        d = np.bitwise_count(fps[s:s + block, None] ^ fps[None, :])
        rows = np.arange(d.shape[0])
        d[rows, rows + s] = 255
        out[s:s + block] = d.min(axis=1, initial=255)
    return out


def _write_tables(found: dict, out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``pairs.csv``, ``clusters.csv`` (texts in clusters of 2+) and
    ``fingerprints.parquet`` of every corpus; the pairs and clusters written."""
    pairs = pd.concat([c.pairs for c in found.values()], ignore_index=True)
    clusters = pd.concat([c.clusters for c in found.values()], ignore_index=True)
    clusters = clusters[clusters["cluster_size"] > 1].sort_values(["corpus", "cluster", "id"])
    pairs.to_csv(out / "pairs.csv", index=False)
    clusters.to_csv(out / "clusters.csv", index=False)
    all_fps = [c.fingerprints for c in found.values()]
    fps = pd.concat(all_fps, ignore_index=True)
    fps.attrs = all_fps[0].attrs
    write_parquet(fps, out / "fingerprints.parquet")
    return pairs, clusters


def _plot_nearest(found: dict, path: Path) -> None:
    """Each corpus's histogram of the distance of each text to its nearest neighbour,
    the near duplicates (within its k) in colour."""
    fig = Figure(figsize=(11, 4))
    for ax, (name, c) in zip(fig.subplots(1, 2), found.items()):
        d, k = c.nearest, c.k
        bins = np.arange(0, min(int(d.max()), 40) + 2) - 0.5
        near = d <= k
        ax.hist(d[~near], bins=bins, color="#8aa1b1", label="other texts")
        ax.hist(d[near], bins=bins, color="#d1495b", label=f"near duplicate (≤ {k} bits)")
        ax.axvline(k + 0.5, color="black", linestyle="--", linewidth=1)
        ax.set_title(f"{name}: {len(d):,} texts")
        ax.set_xlabel("Hamming distance to the nearest other text")
        ax.set_ylabel("texts")
        ax.legend(frameon=False)
    fig.suptitle("SimHash (64 bits): distance of each text to its nearest neighbour")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _plot_tuning(tuned: dict, jaccard: float, path: Path) -> None:
    """Precision, recall and F1 against k per corpus, the chosen k marked: the figure a
    tuning run is for (``threshold_curves.png``)."""
    fig = Figure(figsize=(5.5 * len(tuned), 4))
    axes = fig.subplots(1, len(tuned), squeeze=False)
    for ax, (name, (table, rec, n_truth)) in zip(axes[0], tuned.items()):
        plot_threshold_curves(table, ax=ax, mark=rec, max_k=32)
        ax.set_title(f"{name}: {n_truth:,} pairs with Jaccard >= {jaccard}; "
                     f"best k = {rec.k} (F1 {rec.f1:.2f})", fontsize=10)
    fig.suptitle("SimHash (64 bits): precision, recall and F1 of 'within k bits' against "
                 f"exact Jaccard >= {jaccard}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
