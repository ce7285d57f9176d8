"""The runner of the verified path: batches of texts in, verified pairs or cluster labels
out, within a :class:`MemoryBudget` (the in-memory functions of
:mod:`simhash_nb._core.verified` and the streaming faces both run it)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator

import numba
import numpy as np

from ..._kernels import unionfind as _uf
from ...config import config
from ..candidates import candidate_design
from ..parallel import deferred_interrupt, run_ahead, threads
from ..search.api import candidate_waves
from ..search.engine import TooManyPairsError, check_max_pairs, pair_order
from ..search.options import SearchOptions
from .budget import MemoryBudget
from .stages import Shingler, choose_k, fingerprint_batches, verify_wave, worth_verifying
from .store import ShingleStore

__all__ = ["Candidates", "VerifiedPairs", "candidates_of", "verified_labels", "verified_pairs"]


@dataclasses.dataclass
class Candidates:
    """The fingerprints and shingles of a corpus, and its candidate search."""

    store: ShingleStore
    words: np.ndarray
    k: int
    opts: SearchOptions
    n_jobs: int | None

    @property
    def n(self) -> int:
        return int(self.words.shape[0])

    def waves(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Candidate pairs ``(i, j, d)``, wave by wave, as the search finds them: the
        next wave is searched in a background thread while the caller verifies this
        one (``config["search_ahead"]``)."""
        with threads(self.n_jobs):  # the caller's verification, in this thread
            if config["search_ahead"]:
                yield from run_ahead(self._search())
            else:
                yield from self._search()

    def _search(self):
        with threads(self.n_jobs):
            yield from candidate_waves(self.words, self.opts)


@contextlib.contextmanager
def candidates_of(batches: Iterable, shingler: Shingler, threshold: float, recall: float,
                  budget: MemoryBudget, *, tmp_dir=None, random_state: int | None = 0,
                  max_pairs: int | None = None, n_jobs: int | None = None,
                  progress: bool | None = None, missing: str = "raise",
                  on_batch: Callable[[np.ndarray], None] | None = None) -> Iterator[Candidates]:
    """Shingle and fingerprint ``batches`` (shingles held within ``budget``, beyond it in
    a temporary folder under ``tmp_dir``, removed on exit), then design the candidate
    search: ``k`` for ``recall`` at ``threshold``, sampled tables seeded by
    ``random_state``, as many sorted side by side as the budget allows."""
    bits = shingler.bits
    with ShingleStore(budget.shingle_bytes, budget.verify_bytes, tmp_dir) as store:
        with threads(n_jobs):
            words = fingerprint_batches(batches, shingler, store, budget, missing=missing,
                                        n_jobs=None, on_batch=on_batch)
            k = choose_k(words, store.total, threshold, recall, random_state,
                         spilled=store.spilled)
        n = words.shape[0]
        store.verify_bytes = budget.verify_bytes_for(n, bits)
        lanes = budget.lanes_for(n, bits, numba.get_num_threads())
        opts = SearchOptions.make(bits, k, random_state=random_state,
                                  max_pairs=check_max_pairs(max_pairs), progress=progress)
        opts = dataclasses.replace(
            opts, memory_bytes=lanes * (n + 64) * (8 + 2 * bits // 8),
            designer=lambda rows: candidate_design(max(rows, 2), threshold, bits, recall, k=k))
        yield Candidates(store, words, k, opts, n_jobs)


@dataclasses.dataclass(frozen=True)
class VerifiedPairs:
    """Verified pairs ``i < j`` sorted by ``(i, j)``, with their Jaccard similarity and
    fingerprint distance, among ``n`` documents, found at candidate threshold ``k``."""

    i: np.ndarray
    j: np.ndarray
    distance: np.ndarray
    jaccard: np.ndarray
    n: int
    k: int

    def __len__(self) -> int:
        return int(self.i.shape[0])


def verified_pairs(batches: Iterable, shingler: Shingler, threshold: float, recall: float,
                   budget: MemoryBudget, **options) -> VerifiedPairs:
    """Every candidate pair whose shingle sets reach Jaccard ``threshold``, verified
    wave by wave (only verified pairs are held; ``max_pairs`` bounds them). Options as
    in :func:`candidates_of`.

    Examples
    --------
    >>> got = verified_pairs([["a b c d", "a b c d e"], ["x y z"]],
    ...                      Shingler.make(tokenizer="word", ngram=1), 0.7, 0.99,
    ...                      MemoryBudget(1 << 30, 0))
    >>> got.i.tolist(), got.j.tolist(), got.jaccard.tolist()
    ([0], [1], [0.8])
    """
    limit = check_max_pairs(options.get("max_pairs"))
    parts = []
    kept = 0
    with candidates_of(batches, shingler, threshold, recall, budget, **options) as c:
        for i, j, d in c.waves():
            part = verify_wave(c.store, i, j, d, threshold)
            kept += part[0].shape[0]
            if kept > limit:
                raise TooManyPairsError(
                    f"more than max_pairs={limit:,} pairs reach Jaccard >= {threshold}; "
                    "raise max_pairs or the threshold, or cluster / dedupe instead, which "
                    "hold no pairs")
            parts.append(part)
        n, k = c.n, c.k
    if parts:
        i, j, d, sims = (np.concatenate(x) for x in zip(*parts, strict=True))
    else:
        i, j, d, sims = (np.empty(0, t) for t in (np.int64, np.int64, np.uint8, np.float64))
    order = pair_order(i, j)
    return VerifiedPairs(i[order], j[order], d[order], sims[order], n, k)


def verified_labels(batches: Iterable, shingler: Shingler, threshold: float, recall: float,
                    budget: MemoryBudget, **options) -> tuple[np.ndarray, int]:
    """``(labels, k)``: the smallest row of each document's cluster under the verified
    pairs, found without holding them: a candidate whose documents are already in one
    cluster is not verified. Options as in :func:`candidates_of`.

    Examples
    --------
    >>> labels, k = verified_labels([["a b c d", "a b c d e", "x y z", "a b c d"]],
    ...                             Shingler.make(tokenizer="word", ngram=1), 0.7, 0.99,
    ...                             MemoryBudget(1 << 30, 0))
    >>> labels.tolist()
    [0, 0, 2, 0]
    """
    with candidates_of(batches, shingler, threshold, recall, budget, **options) as c:
        parent = np.arange(c.n, dtype=np.int64)
        todo = np.empty(int(config["verify_batch"]), dtype=np.int64)
        for i, j, d in c.waves():
            join_wave(parent, c.store, i, j, d, threshold, todo)
        k = c.k
    with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
        return _uf.resolve(parent), k


def join_wave(parent: np.ndarray, store: ShingleStore, i, j, d, threshold: float,
              todo: np.ndarray) -> None:
    """Join the clusters (union-find ``parent``) of each candidate pair that reaches
    ``threshold``, closest pairs first; pairs already in one cluster are not verified."""
    ok = worth_verifying(store, i, store, j, threshold)
    i, j, d = i[ok], j[ok], d[ok]
    order = np.argsort(d, kind="stable")  # likely pairs first: they join early
    i, j = i[order], j[order]
    batch = todo.shape[0]
    for lo in range(0, i.shape[0], batch):
        c = _uf.unjoined(parent, i, j, lo, min(lo + batch, i.shape[0]), todo)
        ok = store.at_least(i, j, todo[:c], threshold)
        _uf.join_where(parent, i, j, todo[:c], ok)
