"""Verified near-duplicates from texts at a Jaccard threshold: SimHash candidates at a
calibrated k, each verified by the exact Jaccard similarity of the same shingles.

The path users of MinHash LSH (``MinHashLSH(threshold=0.7)``) expect. The shingles are
made once; their binary-weight 128-bit SimHash fingerprints estimate the angle between
the shingle sets (:mod:`simhash_nb._core.similarity`), so a pair at Jaccard ``t`` (in
the worst case, sets of equal size) differs in ``Binomial(bits, q)`` bits with
``q = arccos(2 t / (1 + t)) / pi``. The candidate threshold ``k`` is the smallest with
``P(Binomial(bits, q) <= k) >= sqrt(recall)``, and the search finds pairs at distance
``k`` with probability ``>= sqrt(recall)`` (sampled tables, more often when closer):
a pair at the threshold is a candidate with probability ``>= recall``, a more similar
one more often. Every candidate is then verified exactly, so no pair below the
threshold is returned and precision does not decay with the corpus size.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._kernels import jaccard as _jk
from .._kernels import unionfind as _uf
from .clusters import dedupe
from .fingerprint import features_and_fingerprints
from .parallel import threads
from .search.api import near_duplicates
from .search.design import check_recall
from .similarity import check_similarity

__all__ = ["SimilarPairs", "near_duplicate_texts"]


@dataclasses.dataclass(frozen=True)
class SimilarPairs:
    """Pairs of documents whose shingle sets have Jaccard similarity ``>= threshold``.

    Unpacks as ``i, j, jaccard = pairs``.

    Attributes
    ----------
    i, j : ndarray of int64
        Row positions, ``i < j``, sorted by ``(i, j)``.
    jaccard : ndarray of float64
        Exact Jaccard similarity of the two documents' shingle sets.
    distance : ndarray of uint8
        Hamming distance of their fingerprints.
    n : int
        Number of documents.
    threshold, recall : float
        The similarity threshold, and the probability (at least) that a pair at the
        threshold was found (more similar pairs: more often).
    k, bits : int
        Candidate threshold and fingerprint width used.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> p = sh.near_duplicate_texts(["the cat sat on the mat", "the cat sat on the mat!",
    ...                              "something else entirely"], threshold=0.7)
    >>> p.i, p.j, p.jaccard
    (array([0]), array([1]), array([1.]))
    >>> p.clusters(), p.dedupe()
    (array([0, 0, 2]), array([ True, False,  True]))
    """

    i: np.ndarray
    j: np.ndarray
    jaccard: np.ndarray
    distance: np.ndarray
    n: int
    threshold: float
    recall: float
    k: int
    bits: int

    def __len__(self) -> int:
        return int(self.i.shape[0])

    def __iter__(self):
        return iter((self.i, self.j, self.jaccard))

    def clusters(self) -> np.ndarray:
        """Connected components of the pairs: the smallest row of each row's cluster."""
        return _uf.components(self.n, self.i, self.j)

    def dedupe(self, keep="first") -> np.ndarray:
        """Boolean mask keeping one row per cluster (``keep`` as in
        :func:`simhash_nb.dedupe`).

        Parameters
        ----------
        keep : {"first", "last", False}, default "first"
            Keep the smallest row of each cluster, the largest, or (``False``) only rows
            in no pair.

        Returns
        -------
        ndarray of bool, shape (n,)

        Raises
        ------
        ValueError
            If ``keep`` is not "first", "last" or False.
        """
        return dedupe(np.zeros(self.n, dtype=np.uint64), keep=keep, pairs=(self.i, self.j))

    def to_frame(self):
        """A pandas DataFrame with columns ``i``, ``j``, ``jaccard``, ``distance``."""
        import pandas as pd  # faces' library: keeps `import simhash_nb` light

        return pd.DataFrame({"i": self.i, "j": self.j, "jaccard": self.jaccard,
                             "distance": self.distance})


def candidate_threshold(threshold: float, bits: int, recall: float) -> int:
    """Smallest ``k`` with ``P(Binomial(bits, q) <= k) >= recall`` for a pair at Jaccard
    ``threshold`` (equal-sized sets: ``q = arccos(2 t / (1 + t)) / pi``)."""
    q = math.acos(min(1.0, 2.0 * threshold / (1.0 + threshold))) / math.pi
    cdf = 0.0
    for k in range(bits):
        cdf += math.comb(bits, k) * q**k * (1.0 - q) ** (bits - k)
        if cdf >= recall:
            return k
    return bits - 1


def near_duplicate_texts(
    texts,
    threshold: float = 0.7,
    *,
    recall: float = 0.99,
    bits: int = 128,
    tokenizer=None,
    ngram: int | None = None,
    normalize=None,
    seed: int | None = None,
    spec=None,
    params=None,
    max_pairs: int | None = None,
    random_state: int | None = 0,
    n_jobs: int | None = None,
) -> SimilarPairs:
    """Every pair of texts whose shingle sets have Jaccard similarity ``>= threshold``,
    verified exactly.

    SimHash finds candidates (128-bit fingerprints of the same shingles, with binary
    weights, searched at a threshold ``k`` calibrated for ``recall`` at ``threshold``
    through the angle relation); each candidate's exact Jaccard similarity decides.
    The result has no pair below the threshold; a pair at the threshold is missed with
    probability at most ``1 - recall`` (more similar pairs less often).

    Parameters
    ----------
    texts : sequence of str
        As for :func:`simhash_nb.fingerprint`.
    threshold : float, default 0.7
        Jaccard similarity of the shingle sets, in (0, 1].
    recall : float, default 0.99
        Least probability of finding a pair at the threshold, in (0, 1).
    bits : {128, 64}, default 128
        Fingerprint width of the candidate search (64 bits gives many more random
        candidates to verify at these thresholds).
    tokenizer, ngram, normalize, seed, spec, params
        The shingles, as in :func:`simhash_nb.features` (default: character 5-grams of
        normalised text). Weights are always binary: sets, as Jaccard sees them.
    max_pairs : int, optional
        Refuse more candidate pairs than this (default ``config["max_pairs"]``).
    random_state : int or None, default 0
        Seed of the sampled tables.
    n_jobs : int, optional
        Threads.

    Returns
    -------
    SimilarPairs
        ``i < j``, exact ``jaccard``, fingerprint ``distance``; ``.clusters()`` and
        ``.dedupe()`` group them. Documents without shingles (empty texts) are in no
        pair.

    Raises
    ------
    ValueError
        On a threshold or recall out of range, or a missing text (None, NaN, pd.NA:
        drop them first, as :meth:`pandas.Series.simhash.near_duplicates` does).

    See Also
    --------
    simhash_nb.jaccard_pairs : the ground-truth join (exact or MinHash candidates).
    simhash_nb.near_duplicates : pairs of fingerprints within ``k`` bits (no verification).

    Examples
    --------
    >>> import simhash_nb as sh
    >>> texts = ["The quick brown fox jumps over the lazy dog.",
    ...          "The quick brown fox jumped over the lazy dog!", "Lorem ipsum dolor."]
    >>> p = sh.near_duplicate_texts(texts, threshold=0.5, tokenizer="word", ngram=1)
    >>> p.i.tolist(), p.j.tolist(), p.jaccard.round(2).tolist()
    ([0], [1], [0.78])
    """
    threshold = check_similarity(threshold, "threshold")
    recall = check_recall(recall)
    if recall >= 1.0:
        raise ValueError("recall must be below 1 (candidates come from a probabilistic "
                         "search); use sh.jaccard_pairs(..., candidates='all') for an "
                         "exhaustive join")
    if bits not in (64, 128) or isinstance(bits, bool):
        raise ValueError(f"bits must be 64 or 128, got {bits!r}")
    fb, fps = features_and_fingerprints(texts, bits, tokenizer=tokenizer, ngram=ngram,
                                        normalize=normalize, seed=seed, spec=spec,
                                        params=params, n_jobs=n_jobs)
    n = len(fb)
    part = math.sqrt(recall)
    k = candidate_threshold(threshold, bits, part)
    empty = fb.n_features == 0
    cand = near_duplicates(fps, k, recall=part, max_pairs=max_pairs, random_state=random_state,
                           n_jobs=n_jobs)
    keep = ~(empty[cand.i] | empty[cand.j])
    i, j, d = cand.i[keep], cand.j[keep], cand.distance[keep]
    sims = np.empty(i.shape[0], dtype=np.float64)
    with threads(n_jobs):
        if i.shape[0]:
            _jk.pair_similarities(fb.indptr, fb.hashes, i, j, sims)
    ok = sims >= threshold
    return SimilarPairs(i[ok], j[ok], sims[ok], d[ok], n, threshold, recall, k, bits)
