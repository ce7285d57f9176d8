"""The verified path for new documents against a stored corpus: the pairs among the new
documents (the fingerprint search at the ``k`` of one run over stored + new documents)
and between new and stored ones (by the documents' MinHash bands where the store has
their signatures, :mod:`.signatures`; else by the fingerprints), each verified exactly:
the pairs one run over all documents finds, up to the recall of each search."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from ...config import config
from ..candidates import candidate_design, cross_design
from ..parallel import run_ahead, threads
from ..progress import progress_bar, show_progress
from ..search.api import candidate_waves
from ..search.cross import cross_waves
from ..search.engine import TooManyPairsError, check_max_pairs, design_family, pair_order
from ..search.groups import group_identical
from ..search.options import SearchOptions
from .budget import MemoryBudget
from .run import VerifiedPairs
from .signatures import band_design, band_pairs
from .stages import choose_k, verify_wave, worth_verifying
from .store import ShingleStore

__all__ = ["pairs_against"]


@dataclasses.dataclass
class Stored:
    """A stored corpus: fingerprints of all its rows and its segments' shingles, each
    with the first row it holds."""

    words: np.ndarray
    segments: list[tuple[int, ShingleStore]]

    @property
    def n(self) -> int:
        return int(self.words.shape[0])

    @property
    def shingles(self) -> int:
        return sum(s.total for _, s in self.segments)

    @property
    def signed(self) -> bool:
        """Whether every segment has its documents' signatures (:mod:`.signatures`)."""
        return all(s.signatures is not None for _, s in self.segments)


def _options(stored: Stored, new_words: np.ndarray, new_shingles: int, threshold: float,
             recall: float, budget: MemoryBudget, random_state, max_pairs, progress):
    """``(k, SearchOptions)``: the ``k`` of the one run over stored + new rows, and the
    new rows' self-join with tables designed for them (the same recall, fewer tables
    than for all rows); the search across new and stored rows has its own design
    (:func:`~simhash_nb._core.candidates.cross_design`), with that recall too."""
    combined = np.concatenate([stored.words, new_words]) if stored.n else new_words
    # the stored shingles are read from their files, as a run too big to hold them does
    k = choose_k(combined, stored.shingles + new_shingles, threshold, recall, random_state,
                 spilled=True)
    rows = max(group_identical(new_words).n_distinct, 2)  # the new rows' self-join
    n = combined.shape[0]
    bits = 64 * combined.shape[1]
    del combined
    lanes = budget.lanes_for(n, bits, numba.get_num_threads())
    opts = SearchOptions.make(bits, k, random_state=random_state,
                              max_pairs=check_max_pairs(max_pairs), progress=progress)
    design = candidate_design(rows, threshold, bits, recall, k=k)
    return k, dataclasses.replace(opts, designer=lambda _rows: design,
                                          memory_bytes=lanes * (n + 64) * (8 + 2 * bits // 8))


def pairs_against(stored: Stored, new: ShingleStore, new_words: np.ndarray, threshold: float,
                  recall: float, budget: MemoryBudget, *, random_state: int | None = 0,
                  max_pairs: int | None = None, n_jobs: int | None = None,
                  progress: bool | None = None) -> VerifiedPairs:
    """Verified pairs among the new documents and between new and stored ones, as
    rows of stored + new (stored rows first, new row ``r`` is ``stored.n + r``).

    Examples
    --------
    >>> from simhash_nb._core.pipeline import MemoryBudget, Shingler, fingerprint_batches
    >>> sh_ = Shingler.make(tokenizer="word", ngram=1)
    >>> budget = MemoryBudget(1 << 30, 0)
    >>> old = ShingleStore(1 << 20, 1 << 20)
    >>> old_words = fingerprint_batches([["a b c d", "x y z"]], sh_, old, budget)
    >>> new = ShingleStore(1 << 20, 1 << 20)
    >>> new_words = fingerprint_batches([["a b c d e", "p q r"]], sh_, new, budget)
    >>> got = pairs_against(Stored(old_words, [(0, old)]), new, new_words, 0.7, 0.99, budget)
    >>> got.i.tolist(), got.j.tolist(), got.jaccard.tolist()
    ([0], [2], [0.8])
    """
    limit = check_max_pairs(max_pairs)
    k, opts = _options(stored, new_words, new.total, threshold, recall, budget,
                       random_state, max_pairs, progress)
    parts, kept = [], 0
    with threads(n_jobs):
        waves = _waves(stored, new, new_words, threshold, recall, k, opts, random_state,
                       n_jobs)
        for across, (i, j, d) in run_ahead(waves) if config["search_ahead"] else waves:
            if across:
                part = _verify_cross(new, stored, i, j, d, threshold)
            else:
                part = verify_wave(new, i, j, d, threshold)
                part = (part[0] + stored.n, part[1] + stored.n, *part[2:])
            parts.append(part)
            kept = _count(kept, part, limit, threshold)
    n = stored.n + new_words.shape[0]
    if parts:
        i, j, d, sims = (np.concatenate(x) for x in zip(*parts, strict=True))
    else:
        i, j, d, sims = (np.empty(0, t) for t in (np.int64, np.int64, np.uint8, np.float64))
    order = pair_order(i, j)
    return VerifiedPairs(i[order], j[order], d[order], sims[order], n, k)


def _waves(stored: Stored, new: ShingleStore, new_words: np.ndarray, threshold: float,
           recall: float, k: int, opts: SearchOptions, random_state, n_jobs):
    """``(across, (i, j, d))``: the candidates among the new rows (``across`` False),
    then those of new rows against stored ones: by the documents' signatures where
    the store has them and a band design reaches the recall (:mod:`.signatures`),
    else by the fingerprints (stored rows scanned, not sorted)."""
    with threads(n_jobs):
        for wave in candidate_waves(new_words, opts):
            yield False, wave
        design = band_design(threshold, recall)
        if stored.n and design is not None and stored.signed and new.signatures is not None:
            yield from _band_waves(stored, new, new_words, design, opts.progress)
        elif stored.n:
            cross = cross_design(stored.n, new_words.shape[0], threshold,
                                 64 * new_words.shape[1], recall, k=k)
            family = design_family(cross, k, random_state)
            with opts.bar(cross) as bar:  # the stored rows' scan: the long part
                for wave in cross_waves(new_words, stored.words, family, k, progress=bar,
                                        memory_bytes=opts.memory_bytes):
                    yield True, wave


def _band_waves(stored: Stored, new: ShingleStore, new_words: np.ndarray, design,
                progress):
    """The pairs across new and stored rows that share a band of their signatures,
    with their distances, a slice of stored rows at a time."""
    sigs = new.signatures.read(0, new.n)
    show = show_progress(progress, stored.n, config["store_progress_rows"])
    with progress_bar(show, stored.n, desc="searching the store", unit="doc",
                      unit_scale=True) as advance:
        for start, seg in stored.segments:
            for i, j in band_pairs(sigs, seg.signatures.read, seg.n, design, advance):
                j = j + start
                d = np.bitwise_count(new_words[i] ^ stored.words[j]).sum(axis=1)
                yield True, (i, j, d.astype(np.uint8))


def _count(kept: int, part, limit: int, threshold: float) -> int:
    kept += int(part[0].shape[0])
    if kept > limit:
        raise TooManyPairsError(f"more than max_pairs={limit:,} pairs reach Jaccard >= "
                                f"{threshold}; raise max_pairs or the threshold")
    return kept


def _verify_cross(new: ShingleStore, stored: Stored, i, j, d, threshold: float):
    """Candidates (new row ``i``, stored row ``j``) verified against the segment that
    holds ``j``; returned as ``(stored row, stored.n + new row, d, jaccard)``."""
    out = []
    for start, seg in stored.segments:
        here = (j >= start) & (j < start + seg.n)
        if not here.any():
            continue
        a, b, dd = i[here], j[here] - start, d[here]
        ok = worth_verifying(new, a, seg, b, threshold)
        a, b, dd = a[ok], b[ok], dd[ok]
        sims = new.similarities_with(seg, a, b, threshold)
        keep = sims >= threshold
        out.append((b[keep] + start, a[keep] + stored.n, dd[keep], sims[keep]))
    if not out:
        e = np.empty(0, np.int64)
        return e, e.copy(), np.empty(0, np.uint8), np.empty(0, np.float64)
    return tuple(np.concatenate(x) for x in zip(*out, strict=True))
