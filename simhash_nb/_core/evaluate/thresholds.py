"""Precision and recall per Hamming threshold: :func:`threshold_table` against a truth."""


from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from ...config import config
from ..arrays import sorted_unique
from ..docstrings import shared_docs
from ..hamming import distance_matrix
from ..pairs import Pairs, pandas_module
from ..parallel import threads
from ..progress import progress_bar, show_progress
from ..search import near_duplicates
from ..validation import as_fingerprints, bits_of
from .inputs import as_bool_labels, as_positions, n_pairs_of, pair_columns
from .shingle_jaccard import check_threshold

# --- ground truth for threshold tables ----------------------------------------------------


@dataclasses.dataclass
class _Truth:
    """Ground truth in one of three forms.

    ``labels``: cluster id per document (self-join: same id = duplicate);
    ``positives``: every duplicate pair (self-join: pairs not listed are not duplicates);
    ``labelled``: pairs with a True/False label (only they are evaluated).
    """

    kind: str
    labels: np.ndarray | None = None
    i: np.ndarray | None = None
    j: np.ndarray | None = None
    label: np.ndarray | None = None


def _labels_to_codes(labels, n: int) -> np.ndarray:
    pd = pandas_module()
    if len(labels) != n:
        raise ValueError(
            f"labels has {len(labels)} entries but there are {n} fingerprints; give one "
            "cluster id per document"
        )
    codes, _ = pd.factorize(pd.Series(labels) if not isinstance(labels, pd.Series) else labels)
    codes = np.asarray(codes, dtype=np.int64).copy()
    missing = codes < 0
    if missing.any():  # a document without a label is nobody's duplicate
        codes[missing] = codes.max(initial=-1) + 1 + np.arange(int(missing.sum()))
    return codes


def _parse_truth(truth, n: int, ids, threshold) -> _Truth:
    pd = pandas_module()
    n_docs = getattr(truth, "attrs", {}).get("n_documents") if isinstance(
        truth, pd.DataFrame) else None
    if n_docs is not None and n_docs != n:
        raise ValueError(
            f"the ground truth was computed for {n_docs} documents but there are {n} "
            "fingerprints; texts and fingerprints must be the same documents in the same order"
        )
    is_pair_table = isinstance(truth, (Pairs, pd.DataFrame)) or (
        isinstance(truth, tuple) and len(truth) in (2, 3) and all(np.ndim(t) == 1 for t in truth)
    ) or (isinstance(truth, np.ndarray) and truth.ndim == 2)
    if not is_pair_table:
        if isinstance(truth, (str, bytes)) or np.ndim(truth) != 1:
            raise TypeError(
                "truth must be cluster labels (one per document), a pair table "
                "(DataFrame with columns i, j and optionally duplicate/label or jaccard), "
                f"Pairs, or a tuple (i, j[, label]); got {type(truth).__name__}"
            )
        if threshold is not None:
            raise ValueError("threshold applies to a pair table with a 'jaccard' column")
        return _Truth("labels", labels=_labels_to_codes(truth, n))
    i, j, label, sim = pair_columns(truth)
    i = as_positions(i, n, ids, "i")
    j = as_positions(j, n, ids, "j")
    if i.shape != j.shape:
        raise ValueError(f"i and j differ in length: {i.shape[0]} and {j.shape[0]}")
    same = i == j
    if same.any():
        first = int(np.flatnonzero(same)[0])
        raise ValueError(f"pair {first} joins document {int(i[first])} with itself")
    if label is not None:
        if threshold is not None:
            raise ValueError("threshold applies to a 'jaccard' column, not to labelled pairs")
        return _Truth("labelled", i=i, j=j, label=as_bool_labels(label, i.shape[0]))
    if threshold is not None:
        if sim is None:
            raise ValueError("threshold needs a pair table with a 'jaccard' column")
        t = check_threshold(threshold)
        lowest = getattr(truth, "attrs", {}).get("threshold")
        if lowest is not None and t < lowest:
            raise ValueError(
                f"threshold={t} is below the threshold the pairs were collected at ({lowest}); "
                "pairs between them are not in the table: recompute with jaccard_pairs"
            )
        keep = np.asarray(sim, dtype=np.float64) >= t
        i, j = i[keep], j[keep]
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    packed = sorted_unique(lo.astype(np.uint64) * np.uint64(max(n, 1)) + hi.astype(np.uint64))
    i = (packed // np.uint64(max(n, 1))).astype(np.int64)
    j = (packed % np.uint64(max(n, 1))).astype(np.int64)
    return _Truth("positives", i=i, j=j)


def _distances(fps: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    d = np.bitwise_count(fps[i] ^ fps[j]).astype(np.int64)
    return d if d.ndim == 1 else d.sum(axis=1)


def _self_join_counts(fps, truth: _Truth, max_k: int | None, n_jobs, progress=None):
    """Per-distance counts ``(all pairs, true pairs)`` up to ``K`` and the total of true
    pairs; ``progress`` as in :func:`threshold_table`."""
    n = fps.shape[0]
    bits = bits_of(fps)
    top = bits if max_k is None else max_k
    codes = truth.labels
    if truth.kind == "labels":
        sizes = np.bincount(codes)
        n_true = int((sizes * (sizes - 1) // 2).sum())
    else:
        n_true = int(truth.i.shape[0])
    all_hist = np.zeros(top + 1, dtype=np.int64)
    pos_hist = np.zeros(top + 1, dtype=np.int64)
    if truth.kind == "positives" and n_true:
        d = _distances(fps, truth.i, truth.j)
        pos_hist += np.bincount(d[d <= top], minlength=top + 1)[: top + 1]
    if max_k is None:
        limit = int(config["evaluate_max_brute_pairs"])
        if n_pairs_of(n) > limit:
            raise ValueError(
                f"{n:,} fingerprints have {n_pairs_of(n):,} pairs, more than "
                f"config['evaluate_max_brute_pairs'] = {limit:,} to count at every distance; "
                "pass max_k= to count pairs up to that distance with near_duplicates"
            )
        show = show_progress(progress, n_pairs_of(n), config["progress_min_pairs"])
        _all_distances(fps, codes if truth.kind == "labels" else None, all_hist, pos_hist,
                       show)
    elif n >= 2:
        with threads(n_jobs):
            p = near_duplicates(fps, k=max_k, progress=progress)
        d = p.distance.astype(np.int64)
        all_hist += np.bincount(d, minlength=top + 1)[: top + 1]
        if truth.kind == "labels":
            same = codes[p.i] == codes[p.j]
            pos_hist += np.bincount(d[same], minlength=top + 1)[: top + 1]
    return all_hist, pos_hist, n_true


def _all_distances(fps, codes, all_hist, pos_hist, show: bool) -> None:
    """Add the distance of every pair (and, with cluster ``codes``, of every pair in one
    cluster) to the histograms; ``show``: a bar over the fingerprints done."""
    n, top = fps.shape[0], all_hist.shape[0] - 1
    chunk = max(1, (1 << 24) // max(n, 1))
    numpy = n * (n - 1) // 2 <= config["numpy_brute_pairs"]  # one choice for every block
    with progress_bar(show, n, desc="counting pairs", unit="fp", unit_scale=True) as advance:
        for s in range(0, n, chunk):
            e = min(n, s + chunk)
            m = distance_matrix(fps[s:e], fps[s:], numpy=numpy)
            upper = np.arange(n - s)[None, :] > np.arange(e - s)[:, None]
            all_hist += np.bincount(m[upper], minlength=top + 1)
            if codes is not None:
                same = upper & (codes[s:e, None] == codes[None, s:])
                pos_hist += np.bincount(m[same], minlength=top + 1)
            if advance is not None:
                advance(e - s)


@shared_docs(n_jobs_progress="""
    n_jobs : int, optional
        Threads.
    progress : bool, optional
        A tqdm progress bar on stderr over the counting (``True``), or none
        (``False``): over the fingerprints whose pairs are counted or, with ``max_k``,
        the search's (see :func:`simhash_nb.near_duplicates`, which also decides its
        default). Default without ``max_k``: shown in a terminal or notebook from
        ``config["progress_min_pairs"]`` pairs on.
    """)
def threshold_table(fps, truth, *, ids=None, threshold: float | None = None,
                    max_k: int | None = None, n_jobs: int | None = None,
                    progress: bool | None = None):
    """Precision, recall and F1 of SimHash at every Hamming threshold ``k``.

    At threshold ``k`` a pair is predicted a duplicate iff its fingerprints differ in at
    most ``k`` bits (``<= k``, as in :func:`simhash_nb.near_duplicates`).

    Parameters
    ----------
    fps : ndarray of uint64, shape (n,) or (n, 2)
        Fingerprints of the ``n`` documents.
    truth
        The ground truth, in one of three forms:

        - **cluster labels**, one id per document (array, list or Series of length
          ``n``): the same id, duplicates; a missing id (None, NaN), none. Self-join.
        - **duplicate pairs**: a DataFrame with columns ``i``, ``j`` (as from
          :func:`jaccard_pairs`), :class:`~simhash_nb.Pairs`, a tuple ``(i, j)`` or an
          int array ``(m, 2)``; a pair not listed is not a duplicate. Self-join.
        - **labelled pairs**: a DataFrame with columns ``i``, ``j`` and ``duplicate``
          (or ``label``), a tuple ``(i, j, label)`` or an array ``(m, 3)``: only these
          pairs are evaluated.
    ids : sequence, optional
        Document ids, one per fingerprint; pair tables then name documents by id.
    threshold : float, optional
        For a pair table with a ``jaccard`` column: pairs at or above this similarity
        are the duplicates (default: all listed pairs).
    max_k : int, optional
        Self-joins count all ``n (n - 1) / 2`` pairs at every distance (refused above
        ``config["evaluate_max_brute_pairs"]``); with ``max_k`` only those within
        ``max_k`` (found by :func:`simhash_nb.near_duplicates`), up to ``k = max_k``.
    {{n_jobs_progress}}

    Returns
    -------
    pandas.DataFrame
        One row per ``k = 0 .. bits`` (or ``max_k``): ``k``, ``predicted`` (pairs
        within ``k``), ``tp``, ``fp``, ``fn``, ``tn``, ``precision``, ``recall``, ``f1``
        and ``note``, which says why a ratio is NaN (undefined, never a division by
        zero). ``attrs``: ``mode`` ("self-join" or "labelled pairs"), ``n_documents``,
        ``n_pairs`` (pairs evaluated), ``n_duplicates``, ``bits``, ``max_k``, ``note``.

    Raises
    ------
    TypeError
        If ``max_k`` is not an integer, or ``truth`` is neither labels nor pairs.
    ValueError
        If ``max_k`` is not in ``[0, bits]``, ``truth`` does not match the fingerprints
        (length, document count, a pair of a document with itself), ``threshold`` does
        not apply to it, or a self-join without ``max_k`` has more than
        ``config["evaluate_max_brute_pairs"]`` pairs.

    See Also
    --------
    recommend_k : pick a threshold from this table.
    simhash_nb.plotting : plots of this table.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b0001, 0b0111, 0b1111_1111], dtype=np.uint64)
    >>> t = sh.threshold_table(fps, [0, 0, 0, 1])
    >>> t.loc[:3, ["k", "tp", "fp", "fn", "precision", "recall"]].round(2)
       k  tp  fp  fn  precision  recall
    0  0   0   0   3        NaN    0.00
    1  1   1   0   2        1.0    0.33
    2  2   2   0   1        1.0    0.67
    3  3   3   0   0        1.0    1.00
    """
    fps = as_fingerprints(fps, "fps")
    n, bits = fps.shape[0], bits_of(fps)
    max_k = _check_max_k(max_k, bits)
    t = _parse_truth(truth, n, ids, threshold)
    tp, fp, n_true, n_false, mode = _cumulative_counts(fps, t, max_k, n_jobs, progress)
    table = _table(tp, fp, n_true, n_false)
    table.attrs.update(mode=mode, n_documents=n, n_pairs=n_true + n_false, n_duplicates=n_true,
                       bits=bits, max_k=max_k, note=_truth_note(n_true))
    return table


def _cumulative_counts(fps, t: _Truth, max_k: int | None, n_jobs, progress=None):
    """``(tp, fp)`` per k (cumulative), the true and false totals, and the mode."""
    if t.kind == "labelled":
        return (*_labelled_counts(fps, t, max_k), "labelled pairs")
    all_hist, pos_hist, n_true = _self_join_counts(fps, t, max_k, n_jobs, progress)
    tp = np.cumsum(pos_hist)
    return tp, np.cumsum(all_hist) - tp, n_true, n_pairs_of(fps.shape[0]) - n_true, "self-join"


def _truth_note(n_true: int) -> str:
    return "" if n_true else (
        "the ground truth has no duplicate pairs: recall and F1 are undefined (NaN), and "
        "precision is 0 wherever pairs are predicted (each is a false positive)"
    )


def _check_max_k(max_k, bits: int) -> int | None:
    """``max_k`` as an int below ``bits``, or None (every distance)."""
    if max_k is None:
        return None
    if isinstance(max_k, bool) or not isinstance(max_k, numbers.Integral):
        raise TypeError(f"max_k must be an integer, got {type(max_k).__name__}")
    if not 0 <= max_k <= bits:
        raise ValueError(f"max_k must be in [0, {bits}], got {max_k}")
    return int(max_k) if max_k < bits else None


def _labelled_counts(fps, t: _Truth, max_k: int | None):
    """Cumulative ``(tp, fp)`` per k over labelled pairs, and the true and false totals."""
    bits = bits_of(fps)
    top = bits if max_k is None else max_k
    d = _distances(fps, t.i, t.j)
    pos = np.bincount(d[t.label], minlength=bits + 1)[: top + 1]
    neg = np.bincount(d[~t.label], minlength=bits + 1)[: top + 1]
    n_true = int(t.label.sum())
    return np.cumsum(pos), np.cumsum(neg), n_true, int(t.label.shape[0]) - n_true


def _table(tp: np.ndarray, fp: np.ndarray, n_true: int, n_false: int):
    """The threshold table from cumulative counts: ratios, NaN where undefined, notes."""
    pd = pandas_module()
    fn = n_true - tp
    tn = n_false - fp
    predicted = tp + fp
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, tp / np.maximum(predicted, 1), np.nan)
        recall = np.where(n_true > 0, tp / max(n_true, 1), np.nan)
        # 2 TP / (2 TP + FP + FN): defined whenever the truth has duplicates
        f1 = np.where(n_true > 0, 2 * tp / np.maximum(predicted + n_true, 1), np.nan)
    notes = np.full(tp.shape[0], "", dtype=object)
    none_predicted = predicted == 0
    if n_true == 0:
        notes[:] = "no duplicates in the truth: recall and F1 undefined"
        notes[none_predicted] = (
            "no duplicates in the truth and no pairs predicted: all ratios undefined"
        )
    else:
        notes[none_predicted] = "no pairs predicted: precision undefined"
    counts = {name: v.astype(np.int64) for name, v in
              (("predicted", predicted), ("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn))}
    return pd.DataFrame({"k": np.arange(tp.shape[0], dtype=np.int64), **counts,
                         "precision": precision, "recall": recall, "f1": f1,
                         "note": pd.Series(notes, dtype=object)})
