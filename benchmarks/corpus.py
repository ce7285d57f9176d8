"""Real-like English corpora for the end-to-end benchmark (``bench_e2e``).

Recipe of ``real_like(n, seed)`` (deterministic for a given ``n``, ``seed`` and source):

1. **Base texts**: every text of ``../shared/data/fortunes_en.jsonl.gz`` (14,396 fortunes),
   ``kjv_verses.jsonl.gz`` (31,102 verses) and the paragraphs (split on blank lines, at
   least 20 characters) of ``spdx_2_5_1_texts.jsonl.gz`` (339 licences). Where
   ``../shared/data`` is absent (a user's clone), the bundled samples of the same
   corpora: ``sh.datasets.load_sample("fortunes" | "gospels" | "licences")``.
   The base texts carry their own natural near duplicates (the same quip in two fortune
   files, parallel Gospel passages, licence versions).
2. **Unique documents** (``1 - copy_share`` of ``n``, default 85%): each is 1 to 6
   base texts (uniform) drawn at random and joined by newlines, so unrelated documents
   often share a part and overlap partially, as real ones do. Documents of one part
   take the base texts in a random order without replacement (so they do not become
   exact copies of each other); once the base texts are used up, such documents get
   2 to 6 parts instead.
3. **Edited copies** (``copy_share`` of ``n``, default 15%): copies of random unique
   documents made by :func:`simhash_nb.datasets.make_near_duplicates` (word deletions,
   substitutions and insertions, 20% of copies with two sentences swapped, 20% with a
   boilerplate line), in 16 equal groups with edit rates ``0.3 * (g / 15) ** 2`` for
   ``g = 0..15`` (0 to 0.3, denser at small rates), so that the true Jaccard similarity
   of copy and original spreads across and around 0.7 (for word 3-grams, an edit rate
   of about 0.06 gives 0.7).
4. The documents are shuffled (copies among the originals).

The corpus is cached as gzip JSON lines under ``benchmarks/.cache/`` (gitignored), one
``{"text", "src", "edit_rate"}`` a line (``src``: position of the original a copy was
made from, else -1), because the peer libraries run in other processes and read files.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import sys
from pathlib import Path

import numpy as np

from ._common import ROOT, SHARED

CACHE = ROOT / "benchmarks" / ".cache"
COPY_SHARE = 0.15
GROUPS = 16
MAX_EDIT_RATE = 0.3
MAX_PARTS = 6


def shared_data() -> Path:
    """``../shared/data`` of the checkout (of a parent folder, for a git worktree)."""
    for parent in ROOT.parents:
        cand = parent / "shared" / "data"
        if (cand / "kjv_verses.jsonl.gz").exists():
            return cand
    return SHARED


def _paragraphs(texts) -> list[str]:
    out = []
    for t in texts:
        out += [p.strip() for p in re.split(r"\n\s*\n", t) if len(p.strip()) >= 20]
    return out


@functools.lru_cache(maxsize=1)
def base_texts() -> tuple[list[str], str]:
    """The base texts and where they came from (``"shared"`` or ``"bundled"``); do not
    modify the list (it is cached)."""
    names = ("fortunes_en.jsonl.gz", "kjv_verses.jsonl.gz", "spdx_2_5_1_texts.jsonl.gz")
    shared = shared_data()
    if all((shared / name).exists() for name in names):
        parts = []
        for name in names:
            with gzip.open(shared / name, "rt", encoding="utf-8") as f:
                texts = [json.loads(line)["text"] for line in f]
            parts.append(_paragraphs(texts) if name.startswith("spdx") else texts)
        source = "shared"
    else:
        import simhash_nb as sh

        print(f"note: {shared} lacks the corpora, using the bundled samples", file=sys.stderr)
        load = sh.datasets.load_sample
        parts = [load("fortunes")["text"].tolist(), load("gospels")["text"].tolist(),
                 _paragraphs(load("licences")["text"].tolist())]
        source = "bundled"
    texts = [t for part in parts for t in part if t and t.strip()]
    return texts, source


def edit_rates() -> np.ndarray:
    """The edit rate of each group of copies."""
    return MAX_EDIT_RATE * (np.arange(GROUPS) / (GROUPS - 1)) ** 2


def build(n: int, seed: int = 0, copy_share: float = COPY_SHARE) -> tuple[list[str], dict]:
    """The corpus (texts) and per-document metadata, not cached."""
    import simhash_nb as sh

    base, source = base_texts()
    rng = np.random.default_rng(seed)
    m = len(base)
    n_copies = int(round(n * copy_share)) if n > 1 else 0
    n_unique = n - n_copies
    k = rng.integers(1, MAX_PARTS + 1, size=n_unique)
    singles = np.flatnonzero(k == 1)
    if singles.size > m:  # base texts used up: the rest get 2..6 parts
        k[singles[m:]] = rng.integers(2, MAX_PARTS + 1, size=singles.size - m)
        singles = singles[:m]
    single_src = rng.permutation(m)[: singles.size]
    picks = rng.integers(0, m, size=int(k.sum()))
    starts = np.concatenate([[0], np.cumsum(k)])
    unique = ["\n".join(base[p] for p in picks[starts[d]:starts[d + 1]]) for d in range(n_unique)]
    for d, s in zip(singles, single_src):
        unique[d] = base[s]
    texts, src, rate = list(unique), [-1] * n_unique, [0.0] * n_unique
    sizes = np.diff(np.linspace(0, n_copies, GROUPS + 1).round().astype(int))
    for g, (count, r) in enumerate(zip(sizes, edit_rates())):
        if count == 0:
            continue
        nd = sh.datasets.make_near_duplicates(unique, n=int(count), edit_rate=float(r),
                                              random_state=seed * 1000 + g)
        texts += nd.texts[n_unique:]
        src += nd.labels[n_unique:].tolist()
        rate += [float(r)] * int(count)
    order = rng.permutation(len(texts))
    where = np.empty_like(order)
    where[order] = np.arange(order.size)  # new position of each old document
    texts = [texts[o] for o in order]
    src = [int(where[src[o]]) if src[o] >= 0 else -1 for o in order]
    rate = [rate[o] for o in order]
    meta = {"n": n, "seed": seed, "source": source, "base_texts": m, "copies": n_copies,
            "copy_share": copy_share, "edit_rates": edit_rates().round(4).tolist(),
            "src": src, "edit_rate": rate}
    return texts, meta


def path_for(n: int, seed: int = 0) -> Path:
    """The cache file of ``real_like(n, seed)``, built first if missing."""
    source = "shared" if (shared_data() / "kjv_verses.jsonl.gz").exists() else "bundled"
    path = CACHE / f"real_like_n{n}_s{seed}_{source}.jsonl.gz"
    if not path.exists():
        texts, meta = build(n, seed)
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as f:
            for t, s, r in zip(texts, meta["src"], meta["edit_rate"]):
                f.write(json.dumps({"text": t, "src": s, "edit_rate": r},
                                   ensure_ascii=False) + "\n")
        tmp.replace(path)
        meta = {k: v for k, v in meta.items() if k not in ("src", "edit_rate")}
        path.with_suffix(".meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return path


def load(path) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Texts, ``src`` and ``edit_rate`` of a cached corpus file."""
    texts, src, rate = [], [], []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            texts.append(d["text"])
            src.append(d.get("src", -1))
            rate.append(d.get("edit_rate", 0.0))
    return texts, np.array(src, dtype=np.int64), np.array(rate)


def real_like(n: int, seed: int = 0) -> list[str]:
    """``n`` real-like English texts (see the module docstring), cached on disk."""
    return load(path_for(n, seed))[0]


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["10000"]:
        p = path_for(int(float(arg)))
        print(p, p.stat().st_size / 1e6, "MB")
