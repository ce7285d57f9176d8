"""A held-out corpus of parquet shards for the out-of-core benchmark (``bench_out_of_core``).

Recipe of ``build(n, seed)`` (deterministic for a given ``n``, ``seed`` and source):

1. **Sentences**: the English texts of the bundled samples
   (``sh.datasets.load_sample("fortunes" | "gospels" | "licences")``) and, where
   ``../shared/data`` has them, of ``fortunes_en``, ``kjv_verses`` and
   ``spdx_2_5_1_texts`` (``benchmarks/corpus.py`` finds them), split into sentences
   (on ``.!?`` + white space and on line breaks), stripped, at least 4 words and 20
   characters, each kept once. The Chinese corpora (``debian_zh``, ``fortunes_zh``) are
   left out: word 3-grams of unsegmented text are another regime.
2. **Unique documents** (85% of ``n``): each joins ``K`` random sentences with a space,
   ``K`` uniform in ``[k_lo, k_hi]``, chosen so that a document has about
   :data:`TARGET_BYTES` (750) bytes on average (2M documents: ~1.5 GB of text). The
   sentences of unique document ``u`` come from a generator seeded by ``(seed, u //
   BLOCK)``, so any document can be made again without keeping the texts.
3. **Edited copies** (9%): :func:`simhash_nb.datasets.make_near_duplicates` of random
   unique documents (word deletions, substitutions, insertions; 20% with two sentences
   swapped, 20% with a boilerplate line), in 16 groups of edit rates
   ``0.01 + 0.24 * (g / 15) ** 2`` (1% to 25%, denser at small rates).
4. **Exact copies** (6%): unique documents repeated verbatim.
5. Shuffled (a permutation of all ``n``), then cut into shards of consecutive rows
   (``shards/part-00000.parquet``, ...; columns ``id`` int64, ``text`` string). Ids are
   ``row * 0x9E3779B97F4A7C15 mod 2**63``: unique, not row numbers.

Generation streams: one shard is made and written at a time; what stays in memory is
the permutation and the copies' plan (a few bytes a document, 10M: ~0.2 GB).

``planted.parquet`` lists every copy with its original (ids, rows, kind, edit rate).
The truth, ``truth.parquet`` (``left``, ``right`` ids with ``left < right``, and their
``jaccard``): every pair with exact Jaccard of word 3-grams (simhash_nb's shingles,
``tokenizer="word", ngram=3``) >= 0.7, found as the union of
``sh.jaccard_pairs(texts, 0.7, candidates="minhash", bands=(32, 4))`` (recall of a pair
at J = 0.7 above 0.9998; every candidate verified exactly) and the planted pairs checked
by ``sh.jaccard``. It holds all texts in memory, so it is made only for ``n <=``
:data:`TRUTH_MAX` (2M; ~4 GB there); larger corpora have no truth.

Cache: ``benchmarks/.cache/ooc/<n>/`` (``<n>-s<seed>`` for another seed; gitignored),
with ``meta.json`` written last. Run ``python -m benchmarks.ooc_corpus 200000`` to make
one ahead.
"""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from ._common import ROOT
from .corpus import base_texts

CACHE = ROOT / "benchmarks" / ".cache" / "ooc"
TARGET_BYTES = 750
EXACT_SHARE = 0.06
EDIT_SHARE = 0.09
GROUPS = 16
BLOCK = 4096
ROWS_PER_SHARD = 50_000
MIN_SHARDS = 10  # so that the incremental case has 10% of the shards to add
TRUTH_MAX = 2_000_000
THRESHOLD = 0.7
WORD3 = {"tokenizer": "word", "ngram": 3}
ID_MULT = 0x9E3779B97F4A7C15
VERSION = 1
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def edit_rates() -> np.ndarray:
    return 0.01 + 0.24 * (np.arange(GROUPS) / (GROUPS - 1)) ** 2


@functools.lru_cache(maxsize=1)
def sentences() -> tuple[tuple[str, ...], str]:
    """The sentence pool and where its texts came from."""
    import simhash_nb as sh

    texts = []
    for name in ("fortunes", "gospels", "licences"):
        texts += sh.datasets.load_sample(name)["text"].tolist()
    shared, source = base_texts()
    if source == "shared":
        texts += shared
    seen = {}
    for t in texts:
        for s in _SPLIT.split(t):
            s = " ".join(s.split())
            if len(s) >= 20 and len(s.split()) >= 4:
                seen.setdefault(s, None)
    return tuple(seen), "bundled+shared" if source == "shared" else "bundled"


def _k_range(pool) -> tuple[int, int]:
    mean = float(np.mean([len(s.encode("utf-8")) for s in pool])) + 1
    k = max(1.0, TARGET_BYTES / mean)
    lo = max(1, int(round(k / 2)))
    return lo, max(lo, int(round(2 * k - lo)))


class _Uniques:
    """Unique document ``u`` made again from its block's generator (an LRU of blocks)."""

    def __init__(self, pool, seed: int, k_lo: int, k_hi: int):
        self.pool, self.seed, self.k = pool, seed, (k_lo, k_hi)
        self.block = functools.lru_cache(maxsize=512)(self._block)

    def _block(self, b: int):
        rng = np.random.default_rng([self.seed, 1, b])
        counts = rng.integers(self.k[0], self.k[1] + 1, size=BLOCK)
        picks = rng.integers(0, len(self.pool), size=int(counts.sum()))
        return np.concatenate([[0], np.cumsum(counts)]), picks

    def text(self, u: int) -> str:
        starts, picks = self.block(u // BLOCK)
        r = u % BLOCK
        return " ".join(self.pool[p] for p in picks[starts[r]:starts[r + 1]])


def _ids(rows: np.ndarray) -> np.ndarray:
    """Unique int64 ids of rows: row * ID_MULT mod 2**63 (odd multiplier: a bijection)."""
    with np.errstate(over="ignore"):
        x = rows.astype(np.uint64) * np.uint64(ID_MULT)
    return (x & np.uint64((1 << 63) - 1)).astype(np.int64)


def plan(n: int, seed: int = 0) -> dict:
    """The layout: which item each row holds, and the copies' originals and groups."""
    n_exact = int(round(n * EXACT_SHARE))
    n_edit = int(round(n * EDIT_SHARE))
    n_unique = n - n_exact - n_edit
    if n_unique < 1:
        raise ValueError(f"n={n} is too small")
    order = np.random.default_rng([seed, 2]).permutation(n).astype(np.int64)
    orig = np.random.default_rng([seed, 3]).integers(0, n_unique, size=n_edit + n_exact)
    # row of each unique document (to give a copy's original its id)
    where = np.empty(n, np.int64)
    where[order] = np.arange(n)
    return {"n": n, "n_unique": n_unique, "n_edit": n_edit, "n_exact": n_exact,
            "order": order, "orig": orig, "row_of_unique": where[:n_unique]}


def folder_for(n: int, seed: int = 0) -> Path:
    return CACHE / (str(n) if seed == 0 else f"{n}-s{seed}")


def shards_for(n: int) -> int:
    return max(MIN_SHARDS, math.ceil(n / ROWS_PER_SHARD))


def build(n: int, seed: int = 0, folder: Path | None = None, shards: int | None = None,
          progress: bool = True) -> Path:
    """Write the corpus of ``n`` documents as parquet shards (see the module docstring)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import simhash_nb as sh

    folder = Path(folder or folder_for(n, seed))
    shards = shards or shards_for(n)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "shards").mkdir(parents=True)
    pool, source = sentences()
    k_lo, k_hi = _k_range(pool)
    uniq = _Uniques(pool, seed, k_lo, k_hi)
    p = plan(n, seed)
    U, E = p["n_unique"], p["n_edit"]
    rates = edit_rates()
    bounds = np.linspace(0, n, shards + 1).round().astype(np.int64)
    planted = {k: [] for k in ("left_row", "right_row", "kind", "edit_rate")}
    n_bytes, t0 = 0, time.perf_counter()
    for s in range(shards):
        rows = np.arange(bounds[s], bounds[s + 1])
        items = p["order"][rows]
        texts = [None] * len(rows)
        for r, it in enumerate(items.tolist()):
            if it < U:
                texts[r] = uniq.text(it)
            elif it >= U + E:  # exact copy
                o = int(p["orig"][it - U])
                texts[r] = uniq.text(o)
                planted["left_row"].append(int(rows[r]))
                planted["right_row"].append(int(p["row_of_unique"][o]))
                planted["kind"].append("exact")
                planted["edit_rate"].append(0.0)
        edit_pos = np.flatnonzero((items >= U) & (items < U + E))
        groups = (items[edit_pos] - U) % GROUPS
        for g in range(GROUPS):
            pos = edit_pos[groups == g]
            if not len(pos):
                continue
            cand = p["orig"][items[pos] - U]
            nd = sh.datasets.make_near_duplicates(
                [uniq.text(int(o)) for o in cand], n=len(pos), edit_rate=float(rates[g]),
                random_state=np.random.default_rng([seed, 4, s, g]))
            for r, text, lab in zip(pos.tolist(), nd.texts[len(cand):],
                                    nd.labels[len(cand):].tolist()):
                texts[r] = text
                planted["left_row"].append(int(rows[r]))
                planted["right_row"].append(int(p["row_of_unique"][int(cand[lab])]))
                planted["kind"].append("edit")
                planted["edit_rate"].append(float(rates[g]))
        n_bytes += sum(len(t.encode("utf-8")) for t in texts)
        pq.write_table(pa.table({"id": _ids(rows), "text": pa.array(texts, pa.string())}),
                       tmp / "shards" / f"part-{s:05d}.parquet")
        if progress:
            done = s + 1
            eta = (time.perf_counter() - t0) / done * (shards - done)
            print(f"\r[ooc_corpus] n={n:,}: shard {done}/{shards}, {n_bytes / 1e6:,.0f} MB, "
                  f"ETA {eta:.0f} s ", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    left = np.array(planted["left_row"], np.int64)
    right = np.array(planted["right_row"], np.int64)
    pq.write_table(pa.table({"left": _ids(left), "right": _ids(right), "left_row": left,
                             "right_row": right, "kind": planted["kind"],
                             "edit_rate": planted["edit_rate"]}), tmp / "planted.parquet")
    meta = {"version": VERSION, "n": n, "seed": seed, "shards": shards, "bytes": n_bytes,
            "source": source, "sentences": len(pool), "k_range": [k_lo, k_hi],
            "unique": U, "edited_copies": E, "exact_copies": p["n_exact"],
            "edit_rates": rates.round(4).tolist(), "build_s": round(time.perf_counter() - t0, 1)}
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def ensure(n: int, seed: int = 0, truth: bool = True) -> Path:
    """The cached corpus folder (built if missing or from another version)."""
    folder = folder_for(n, seed)
    meta = folder / "meta.json"
    if not (meta.exists() and json.loads(meta.read_text()).get("version") == VERSION):
        build(n, seed)
    if truth and n <= TRUTH_MAX and not (folder / "truth.parquet").exists():
        make_truth(folder)
    return folder


def shard_paths(folder: Path) -> list[Path]:
    return sorted((Path(folder) / "shards").glob("part-*.parquet"))


def read(folder: Path, shards: list[Path] | None = None) -> tuple[np.ndarray, list[str]]:
    """(ids, texts) of the shards (all of them by default), in order."""
    import pyarrow.parquet as pq

    ids, texts = [], []
    for f in shards if shards is not None else shard_paths(folder):
        t = pq.read_table(f, columns=["id", "text"])
        ids.append(t.column("id").to_numpy())
        texts += t.column("text").to_pylist()
    return np.concatenate(ids), texts


def make_truth(folder: Path) -> Path:
    """``truth.parquet``: every pair of ``folder``'s corpus at word-3-gram J >= 0.7."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import simhash_nb as sh

    t0 = time.perf_counter()
    ids, texts = read(folder)
    found = sh.jaccard_pairs(texts, THRESHOLD, candidates="minhash", bands=(32, 4), **WORD3)
    i, j = found["i"].to_numpy(), found["j"].to_numpy()
    jac = found["jaccard"].to_numpy()
    planted = pq.read_table(folder / "planted.parquet").to_pandas()
    pi, pj = planted["left_row"].to_numpy(), planted["right_row"].to_numpy()
    pjac = sh.jaccard(texts, (pi, pj), **WORD3)
    keep = pjac >= THRESHOLD
    rows_i = np.concatenate([i, np.minimum(pi, pj)[keep]])
    rows_j = np.concatenate([j, np.maximum(pi, pj)[keep]])
    jac = np.concatenate([jac, pjac[keep]])
    key, first = np.unique(np.minimum(rows_i, rows_j) * len(texts) + np.maximum(rows_i, rows_j),
                           return_index=True)
    a, b = ids[rows_i[first]], ids[rows_j[first]]
    out = pa.table({"left": np.minimum(a, b), "right": np.maximum(a, b), "jaccard": jac[first]})
    pq.write_table(out, folder / "truth.parquet")
    meta = json.loads((folder / "meta.json").read_text())
    meta["truth"] = {"pairs": int(len(key)), "planted_at_threshold": int(keep.sum()),
                     "planted": int(len(pi)), "minhash_pairs": int(len(i)),
                     "minhash_candidates": int(found.attrs.get("n_candidates", -1)),
                     "minhash_bands": [32, 4], "seconds": round(time.perf_counter() - t0, 1)}
    (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return folder / "truth.parquet"


def truth_pairs(folder: Path) -> np.ndarray | None:
    """The truth as an (m, 2) int64 array of ids (left < right), or None if not made."""
    import pyarrow.parquet as pq

    path = Path(folder) / "truth.parquet"
    if not path.exists():
        return None
    t = pq.read_table(path, columns=["left", "right"])
    return np.stack([t.column("left").to_numpy(), t.column("right").to_numpy()], axis=1)


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["5000"]:
        f = ensure(int(float(arg)))
        print(f, json.loads((f / "meta.json").read_text()))
