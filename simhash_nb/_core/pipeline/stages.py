"""The stages of the verified path between reading and the result: shingle and
fingerprint a stream of batches, choose the candidate threshold, verify a wave."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

import numpy as np

from ...config import config
from ..candidates import background_pmf, candidate_design
from ..fingerprint import binary_shingles
from ..parallel import threads
from ..spec import FingerprintSpec
from ..tokenizers import prepare
from .budget import MemoryBudget, return_free_memory
from .sketches import sketches_agree
from .store import ShingleStore

__all__ = ["Shingler", "choose_k", "fingerprint_batches", "k_for", "may_reach",
           "sampled_rows", "verify_wave", "worth_verifying"]


@dataclasses.dataclass(frozen=True)
class Shingler:
    """The shingles of the verified path (a binary-weight :class:`FingerprintSpec` and
    the objects it stands for) and the width of their fingerprints.

    Examples
    --------
    >>> s = Shingler.make(128, tokenizer="word", ngram=3)
    >>> s.spec.tokenizer, s.spec.ngram, s.spec.weights, s.bits
    ('word', 3, 'binary', 128)
    """

    spec: FingerprintSpec
    bits: int
    extras: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def make(cls, bits: int = 128, *, tokenizer=None, ngram=None, normalize=None, seed=None,
             spec: FingerprintSpec | None = None, params=None) -> Shingler:
        """From the options of :func:`simhash_nb.features` (or a spec); weights binary."""
        spec, extras = prepare(tokenizer=tokenizer, ngram=ngram, normalize=normalize,
                               seed=seed, weights=None if spec is not None else "binary",
                               spec=spec, params=params)
        if spec.weights != "binary":
            raise ValueError(f"the verified path compares shingle sets: the spec must have "
                             f"weights='binary', got {spec.weights!r}")
        return cls(spec, bits, extras)

    def __call__(self, texts, n_jobs: int | None = None):
        """``(FeatureBatch, fingerprints uint64[n, bits // 64], validity)``."""
        fb, fps, valid = binary_shingles(texts, self.spec, self.extras, self.bits, n_jobs)
        return fb, fps.reshape(fps.shape[0], self.bits // 64), valid


def fingerprint_batches(batches: Iterable, shingler: Shingler, store: ShingleStore,
                        budget: MemoryBudget, *, missing: str = "raise",
                        n_jobs: int | None = None,
                        on_batch: Callable[[np.ndarray], None] | None = None) -> np.ndarray:
    """Shingle and fingerprint each batch of texts, their shingles into ``store``.

    Returns the fingerprints of all documents, ``uint64[n, bits // 64]``. A missing
    text (None, NaN, NA) raises ``ValueError`` naming its position with
    ``missing="raise"``; with ``"empty"`` it has no shingles (so it is in no pair).
    ``on_batch(validity)`` is called after each batch with its texts' validity.
    Raises :class:`MemoryLimitError` as soon as the documents seen cannot be searched
    within ``budget``.

    Examples
    --------
    >>> store = ShingleStore(1 << 20, 1 << 20)
    >>> fps = fingerprint_batches([["a b c", "a b d"], ["x y z"]],
    ...                           Shingler.make(tokenizer="word", ngram=1), store,
    ...                           MemoryBudget(1 << 30, 0))
    >>> fps.shape, store.n_features.tolist()
    ((3, 2), [3, 3, 3])
    >>> store.close()
    """
    parts = []
    n = 0
    for texts in batches:
        fb, fps, valid = shingler(texts, n_jobs)
        if missing == "raise" and not valid.all():
            pos = n + int(np.flatnonzero(~valid)[0])
            raise ValueError(f"texts[{pos}] is missing (None/NaN/NA); drop missing texts "
                             "first")
        store.append(fb.indptr, fb.hashes)
        parts.append(fps)
        n += fps.shape[0]
        budget.check_documents(n, shingler.bits)
        if on_batch is not None:
            on_batch(valid)
    store.seal()
    return_free_memory()  # the batches' working memory, before the search needs room
    if not parts:
        return np.empty((0, shingler.bits // 64), dtype=np.uint64)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def sampled_rows(n: int, random_state: int | None, sample: int = 3000) -> np.ndarray:
    """The rows (sorted) whose fingerprints :func:`choose_k` compares: the draw of
    :func:`~simhash_nb._core.candidates.background_pmf`, so that a runner holding the
    fingerprints elsewhere (Dask) can fetch just these.

    Examples
    --------
    >>> sampled_rows(5, 0).tolist()
    [0, 1, 2, 3, 4]
    """
    rows = np.random.default_rng(random_state).choice(n, min(n, sample), replace=False)
    return np.sort(rows)


def k_for(n: int, features: int, threshold: float, recall: float, bits: int,
          sample_words: np.ndarray | None = None, *, spilled: bool = False) -> int:
    """The candidate threshold of :func:`choose_k` for ``n`` documents of ``features``
    shingles in all, given the fingerprints of the :func:`sampled_rows` (needed from
    ``config["verify_sample_rows"]`` documents on; ignored below). ``spilled``: the
    shingles are read from a file to verify a candidate, which costs more
    (``config["search_cost_read_feature"]``), so fewer candidates pay.

    Examples
    --------
    >>> k_for(10, 100, 0.7, 0.99, 128)
    39
    """
    rows = max(n, 2)
    if n >= config["verify_sample_rows"]:
        if sample_words is None:
            raise ValueError(f"{n:,} documents: give the fingerprints of sampled_rows()")
        background = background_pmf(sample_words, sample=sample_words.shape[0], seed=0)
        per_feature = config["search_cost_verify_feature"] + (
            config["search_cost_read_feature"] if spilled else 0.0)
        cost = 2.0 * features / rows * per_feature
        return candidate_design(rows, threshold, bits, recall, background=background,
                                verify_cost=cost).k
    return candidate_design(rows, threshold, bits, recall).k


def choose_k(words: np.ndarray, features: int, threshold: float, recall: float,
             random_state: int | None, *, spilled: bool = False) -> int:
    """The candidate threshold ``k`` for ``recall`` at Jaccard ``threshold``: with the
    corpus's own distances (the :func:`background_pmf` of a sample) and the cost of
    verifying its documents (``features`` shingles in all) from 50,000 rows on, else
    from the recall alone (:func:`candidate_design`); see :func:`k_for`.

    Examples
    --------
    >>> import numpy as np
    >>> choose_k(np.zeros((10, 2), np.uint64), 100, 0.7, 0.99, 0)
    39
    """
    n, words_per_row = words.shape
    sample = None
    if n >= config["verify_sample_rows"]:
        sample = words[sampled_rows(n, random_state)]
    return k_for(n, features, threshold, recall, 64 * words_per_row, sample,
                 spilled=spilled)


def verify_wave(store: ShingleStore, i: np.ndarray, j: np.ndarray, d: np.ndarray,
                threshold: float, n_jobs: int | None = None):
    """The candidates ``(i, j, d)`` whose shingle sets reach Jaccard ``threshold``, as
    ``(i, j, d, jaccard)``; documents without shingles are in no pair.

    Examples
    --------
    >>> import numpy as np
    >>> with ShingleStore(1 << 20, 1 << 20) as s:
    ...     s.append(np.array([0, 2, 4, 4]), np.array([1, 2, 1, 3], dtype=np.uint64))
    ...     s.seal()
    ...     got = verify_wave(s, np.array([0, 0]), np.array([1, 2]), np.array([3, 5]), 0.3)
    >>> [x.tolist() for x in got]
    [[0], [1], [3], [0.3333333333333333]]
    """
    ok = worth_verifying(store, i, store, j, threshold)
    i, j, d = i[ok], j[ok], d[ok]
    with threads(n_jobs):
        sims = store.similarities(i, j, threshold)
    ok = sims >= threshold
    return i[ok], j[ok], d[ok], sims[ok]


def worth_verifying(store_a: ShingleStore, i: np.ndarray, store_b: ShingleStore,
                    j: np.ndarray, threshold: float) -> np.ndarray:
    """Whether each candidate, document ``i`` of ``store_a`` and ``j`` of ``store_b``,
    is worth verifying: it passes the size filter (:func:`may_reach`, exact) and, where
    both stores know their documents' sketches, their check
    (:func:`~.sketches.sketches_agree`, which turns a pair at the threshold away with
    probability at most ``config["verify_sketch_miss"]``).

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.sort(np.random.default_rng(0).integers(0, 2**64, (2, 64), np.uint64))
    >>> with ShingleStore(1 << 20, 1 << 20) as s:  # a, a again, and b: 64 hashes each
    ...     s.append(np.array([0, 64, 128, 192]), np.concatenate([a, a, b]))
    ...     s.seal()
    ...     worth_verifying(s, np.array([0, 0]), s, np.array([1, 2]), 0.7).tolist()
    [True, False]
    """
    ok = may_reach(store_a.n_features[i], store_b.n_features[j], threshold)
    if store_a.sketches is not None and store_b.sketches is not None:
        ok &= sketches_agree(store_a.sketches[i], store_b.sketches[j], threshold)
    return ok


def may_reach(size_a: np.ndarray, size_b: np.ndarray, threshold: float) -> np.ndarray:
    """Whether sets of ``size_a`` and ``size_b`` shingles can reach Jaccard
    ``threshold``: both non-empty and ``min >= threshold * max`` (the size filter:
    ``J <= min / max``). Exact, and free before reading any shingle (a spilled
    candidate's documents are read from disk only when it passes).

    Examples
    --------
    >>> import numpy as np
    >>> may_reach(np.array([10, 10, 0]), np.array([7, 6, 0]), 0.7).tolist()
    [True, False, False]
    """
    small = np.minimum(size_a, size_b)
    large = np.maximum(size_a, size_b)
    # a hair of slack: rounding never drops a pair that the exact test would keep
    return (small > 0) & (small >= threshold * large - 1e-6)
