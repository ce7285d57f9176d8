"""Verified near-duplicates from texts at a Jaccard threshold: SimHash candidates from
sampled tables designed for a recall at that threshold, each verified by the exact
Jaccard similarity of the same shingles.

The path users of MinHash LSH (``MinHashLSH(threshold=0.7)``) expect. The shingles are
made once; their binary-weight 128-bit SimHash fingerprints estimate the angle between
the shingle sets, so the distance of a pair at the threshold follows a known
distribution, and the candidate search (:mod:`simhash_nb._core.candidates`) is designed
so that such a pair is a candidate with probability ``>= recall`` (a more similar one
more often). Every candidate is then verified exactly, so no pair below the threshold is
returned and precision does not decay with the corpus size.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Literal

import numpy as np

from .clusters import KEEP_DOCS, check_keep, components, dedupe, keep_from_labels
from .docstrings import shared_docs
from .pipeline import MemoryBudget, Shingler
from .pipeline.run import verified_labels, verified_pairs
from .progress import progress_bar, show_progress
from .search.design import check_recall
from .similarity import check_similarity

__all__ = ["VERIFIED_PARAMETERS", "SimilarPairs", "check_options", "cluster_texts",
           "dedupe_texts", "near_duplicate_texts"]


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
        return components(self.n, self.i, self.j)

    @shared_docs(**KEEP_DOCS)
    def dedupe(self, keep="first") -> np.ndarray:
        """Boolean mask keeping one row per cluster (as :func:`simhash_nb.dedupe`).

        Parameters
        ----------
        {{keep}}

        {{kept}}
        """
        return dedupe(np.zeros(self.n, dtype=np.uint64), keep=keep, pairs=(self.i, self.j))

    def to_frame(self):
        """A pandas DataFrame with columns ``i``, ``j``, ``jaccard``, ``distance``."""
        import pandas as pd  # faces' library: keeps `import simhash_nb` light

        return pd.DataFrame({"i": self.i, "j": self.j, "jaccard": self.jaccard,
                             "distance": self.distance})


def _block(*names: str) -> str:
    """The blocks of ``names`` one after the other (a slot for several parameters)."""
    return "\n".join(VERIFIED_PARAMETERS[name] for name in names)


# Numpydoc blocks of the verified path's parameters, one wording each, shared by its
# in-memory functions here and its Dask twins (:mod:`simhash_nb.distributed.verified`)
# through :func:`~simhash_nb._core.docstrings.shared_docs`. ``"verified"`` holds the
# search parameters every face takes (threshold to random_state), ``"in_memory"`` the
# ones of a run on one machine.
VERIFIED_PARAMETERS = {
    "threshold": """threshold : float, default 0.7
    Jaccard similarity of the shingle sets, in (0, 1].""",
    "recall": """recall : float, default 0.99
    Least probability of finding a pair at the threshold, in (0, 1): the candidate
    search's (a check of the documents' sketches before verification may lose at most
    ``config["verify_sketch_miss"]``, 1e-4, more).""",
    "bits": """bits : {128, 64}, default 128
    Fingerprint width of the candidate search (64 bits gives many more random
    candidates to verify at these thresholds).""",
    "shingles": """tokenizer, ngram, normalize, seed, spec, params
    The shingles, as in :func:`simhash_nb.features` (default: character 5-grams of
    normalised text). Weights are always binary: sets, as Jaccard sees them. On Dask,
    a callable tokenizer must pickle, to travel to the workers.""",
    "random_state": """random_state : int or None, default 0
    Seed of the sampled tables and of the sample of fingerprints that prices the
    candidates (``None`` draws both afresh, so two runs may differ).""",
    "max_pairs": """max_pairs : int, optional
    Refuse more pairs than this (default ``config["max_pairs"]``). Candidates are
    verified as the search finds them, table wave by wave, so however many there
    are, only the verified pairs are held.""",
    "n_jobs": """n_jobs : int, optional
    Threads.""",
    "progress": """progress : bool, optional
    A progress bar over the candidate search's tables on stderr (default: shown when
    stderr is a terminal and the search is modelled to take a while).""",
    "memory_limit": """memory_limit : int or str, optional
    The most memory the run may hold, the texts given included: bytes, or a size
    such as ``"2GB"`` (default: half the memory available). Texts are shingled in
    batches; the shingles that do not fit go to a temporary file, verified a block
    of candidates at a time. Raises :class:`MemoryLimitError` if the fingerprints
    alone do not fit, naming the least limit that does.""",
    "tmp_dir": """tmp_dir : str, optional
    Folder of that temporary file (default: the system's); removed when the call
    returns, fails or is interrupted.""",
}
VERIFIED_PARAMETERS["verified"] = _block("threshold", "recall", "bits", "shingles",
                                         "random_state")
VERIFIED_PARAMETERS["in_memory"] = _block("max_pairs", "n_jobs", "progress", "memory_limit",
                                          "tmp_dir")
_DOCS = dict(VERIFIED_PARAMETERS, **KEEP_DOCS, parameters="\n".join([
    "Parameters\n----------\ntexts : sequence of str",
    "    As for :func:`simhash_nb.fingerprint`.",
    VERIFIED_PARAMETERS["verified"], VERIFIED_PARAMETERS["in_memory"]]))


@shared_docs(**_DOCS)
def near_duplicate_texts(
        texts, threshold: float = 0.7, *, recall: float = 0.99, bits: int = 128,
        tokenizer=None, ngram: int | None = None, normalize=None, seed: int | None = None,
        spec=None, params=None, max_pairs: int | None = None,
        random_state: int | None = 0, n_jobs: int | None = None,
        progress: bool | None = None, memory_limit=None, tmp_dir=None) -> SimilarPairs:
    """Every pair of texts whose shingle sets have Jaccard similarity ``>= threshold``,
    verified exactly.

    SimHash finds candidates (128-bit fingerprints of the same shingles, with binary
    weights, searched at a threshold ``k`` calibrated for ``recall`` at ``threshold``
    through the angle relation); each candidate's exact Jaccard similarity decides.
    The result has no pair below the threshold; a pair at the threshold is missed with
    probability at most ``1 - recall`` (more similar pairs less often).

    {{parameters}}

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
    # the signature stays explicit (help(), editors, errors on a misspelt keyword);
    # its values travel on as one record
    run = _Run.make(**locals())
    with run.shingling_bar() as on_batch:
        got = verified_pairs(*run.arguments(on_batch is not None), **run.options,
                             on_batch=on_batch)
    return SimilarPairs(got.i, got.j, got.jaccard, got.distance, got.n, run.threshold,
                        run.recall, got.k, bits)


@shared_docs(**_DOCS)
def cluster_texts(  # the parameters of near_duplicate_texts
        texts, threshold: float = 0.7, *, recall: float = 0.99, bits: int = 128,
        tokenizer=None, ngram: int | None = None, normalize=None, seed: int | None = None,
        spec=None, params=None, max_pairs: int | None = None,
        random_state: int | None = 0, n_jobs: int | None = None,
        progress: bool | None = None, memory_limit=None, tmp_dir=None) -> np.ndarray:
    """Clusters of texts joined by pairs at Jaccard similarity ``>= threshold``.

    The connected components of :func:`near_duplicate_texts`' pairs, found without
    verifying every candidate or holding any pair: candidates are taken as the search
    finds them (pairs of identical fingerprints first, then each wave of tables',
    closest first), and a pair whose two texts are already in one cluster is not
    verified (in a group of ``m`` copies, about ``m`` verifications instead of
    ``m (m - 1) / 2``). The labels are those of the components of the verified pairs.

    {{parameters}}

    Returns
    -------
    ndarray of int64, shape (n,)
        The smallest row of each text's cluster (a text with no near-duplicate: itself).

    Raises
    ------
    ValueError
        As :func:`near_duplicate_texts`.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> sh.cluster_texts(["the cat sat on the mat", "the cat sat on the mat!",
    ...                   "something else entirely", "The cat sat on the mat."])
    array([0, 0, 2, 0])
    """
    return _labels(_Run.make(**locals()))


@shared_docs(**_DOCS)
def dedupe_texts(  # the parameters of near_duplicate_texts, and keep
        texts, threshold: float = 0.7, *, keep: Literal["first", "last", False] = "first",
        recall: float = 0.99, bits: int = 128, tokenizer=None, ngram: int | None = None,
        normalize=None, seed: int | None = None, spec=None, params=None,
        max_pairs: int | None = None, random_state: int | None = 0,
        n_jobs: int | None = None, progress: bool | None = None, memory_limit=None,
        tmp_dir=None) -> np.ndarray:
    """Boolean mask keeping one text per cluster of :func:`cluster_texts`.

    {{parameters}}
    {{keep}}

    {{kept}}
        Or as :func:`near_duplicate_texts`.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> sh.dedupe_texts(["the cat sat on the mat", "the cat sat on the mat!",
    ...                  "something else entirely"])
    array([ True, False,  True])
    """
    check_keep(keep)
    options = {name: value for name, value in locals().items() if name != "keep"}
    return keep_from_labels(_labels(_Run.make(**options)), keep)


def _labels(run: _Run) -> np.ndarray:
    """:func:`cluster_texts` of a checked run."""
    with run.shingling_bar() as on_batch:
        labels, _ = verified_labels(*run.arguments(on_batch is not None), **run.options,
                                    on_batch=on_batch)
    return labels


def check_options(threshold, recall, bits) -> tuple[float, float]:
    """The validated ``(threshold, recall)`` of the verified path (``bits`` 64 or 128)."""
    threshold = check_similarity(threshold, "threshold")
    recall = check_recall(recall)
    if recall >= 1.0:
        raise ValueError("recall must be below 1 (candidates come from a probabilistic "
                         "search); use sh.jaccard_pairs(..., candidates='all') for an "
                         "exhaustive join")
    if bits not in (64, 128) or isinstance(bits, bool):
        raise ValueError(f"bits must be 64 or 128, got {bits!r}")
    return threshold, recall


@dataclasses.dataclass(frozen=True)
class _Run:
    """The validated options of one call on in-memory texts."""

    texts: object
    threshold: float
    recall: float
    shingler: Shingler
    budget: MemoryBudget
    options: dict  # the runner's keywords: tmp_dir, max_pairs, random_state, ...

    @classmethod
    def make(cls, texts, threshold, recall, bits, memory_limit, tmp_dir, max_pairs,
             random_state, n_jobs, progress, **feature_options) -> _Run:
        threshold, recall = check_options(threshold, recall, bits)
        shingler = Shingler.make(bits, **feature_options)
        options = dict(tmp_dir=tmp_dir, max_pairs=max_pairs, random_state=random_state,
                       n_jobs=n_jobs, progress=progress)
        return cls(texts, threshold, recall, shingler, MemoryBudget.make(memory_limit),
                   options)

    def arguments(self, split: bool = False) -> tuple:
        """The runner's positional arguments: batches, shingler, threshold, recall, budget
        (``split``: in twenty batches at least, for a progress bar)."""
        return self.batches(split), self.shingler, self.threshold, self.recall, self.budget

    @contextlib.contextmanager
    def shingling_bar(self):
        """A progress bar over the texts shingled (the first stage; the search has its
        own), yielding its ``on_batch`` callback, or None when not shown: shown with
        ``progress=True``, or from ``BAR_TEXTS`` texts on when a person is watching
        (see :func:`~simhash_nb._core.progress.show_progress`)."""
        n = len(self.texts) if hasattr(self.texts, "__len__") else 0
        show = show_progress(self.options["progress"], n, BAR_TEXTS)
        # a refresh a batch (twenty or so): the bar moves however fast they go
        with progress_bar(show, n, desc="shingling", unit="text", mininterval=0,
                          miniters=1) as advance:
            yield None if advance is None else (lambda valid: advance(int(valid.shape[0])))

    def batches(self, split: bool = False):
        """Slices of the texts of about ``budget.batch_text_bytes`` each."""
        texts = self.texts
        if isinstance(texts, str) or not hasattr(texts, "__len__"):
            raise TypeError(f"texts must be a sequence of str, got {type(texts).__name__}")
        n = len(texts)
        step = max(1, int(self.budget.batch_text_bytes // _mean_bytes(texts)))
        if split:  # a bar that moves: twenty steps at least
            step = min(step, max(1, -(-n // 20)))
        if step >= n:
            yield texts
            return
        for lo in range(0, n, step):
            yield texts[lo:lo + step]


BAR_TEXTS = 200_000  # texts from which the shingling takes seconds: a bar on a terminal


def _mean_bytes(texts, sample: int = 2000) -> float:
    """Mean UTF-8 bytes of a text, from the first ``sample`` (at least 1)."""
    head = texts[:sample]
    if hasattr(head, "nbytes") and not hasattr(head, "dtype"):  # a pyarrow array
        return max(head.nbytes / max(len(head), 1), 1.0)
    sizes = [len(t) for t in head if isinstance(t, str)]
    return max(sum(sizes) / max(len(sizes), 1), 1.0) * 1.1  # a little for non-ASCII
