"""Windowed fingerprints of long documents, and containment between documents.

One fingerprint per long document hides a quoted paragraph or a partial copy: the rest
of the text outvotes it. Fingerprinting overlapping windows of ``window`` tokens (every
``stride`` tokens) finds them: two documents share text where their windows are within
``k`` bits, and the *containment* of ``a`` in ``b`` is the share of ``a``'s windows
with a near match among ``b``'s.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._kernels import bitsums as _bk
from .._kernels import windows as _wk
from .._kernels.signatures import read_only
from .features import check_document_sizes, check_missing, raise_missing
from .pairs import pandas_module
from .parallel import balanced_chunks, deferred_interrupt, threads
from .search import near_duplicates
from .similarity import resolve_k
from .spec import FingerprintSpec
from .text import text_buffers
from .tokenizers import is_fast, kernel_classes, prepare
from .validation import as_fingerprints, bits_of, same_width

__all__ = ["Windows", "window_fingerprints", "containment"]


class Windows(NamedTuple):
    """Windows of a batch of documents (row ``r`` is window ``window[r]`` of ``doc[r]``).

    ``start``/``end`` are token positions (end exclusive); ``fingerprints`` is
    ``uint64[m]`` or ``uint64[m, 2]``. :func:`window_fingerprints` returns it with
    ``as_frame=False``.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> w = sh.window_fingerprints(["one two three four five six"], window=4, stride=2,
    ...                            as_frame=False)
    >>> isinstance(w, sh.Windows), w.start.tolist(), w.fingerprints.shape
    (True, [0, 2], (2,))
    """

    doc: np.ndarray
    window: np.ndarray
    start: np.ndarray
    end: np.ndarray
    fingerprints: np.ndarray


def _window_counts(tokens: np.ndarray, window: int, stride: int) -> np.ndarray:
    over = np.maximum(tokens - window, 0)
    n = -(-over // stride) + 1
    return np.where(tokens > 0, n, 0).astype(np.int64)


def window_fingerprints(
    texts,
    *,
    window: int = 50,
    stride: int | None = None,
    bits: int | None = None,
    tokenizer: str | None = "word",
    ngram: int | None = None,
    weights: str | None = None,
    normalize=None,
    seed: int | None = None,
    spec: FingerprintSpec | None = None,
    as_frame: bool = True,
    missing: str = "raise",
    n_jobs: int | None = None,
):
    """Fingerprints of overlapping token windows of each text.

    Window ``j`` of a text with ``T`` tokens covers tokens ``[s, s + window)`` with
    ``s = min(j * stride, T - window)``: windows start every ``stride`` tokens and the
    last one ends at the last token, so every token is in some window. A text with at
    most ``window`` tokens has one window (all of it); an empty text has none.
    Features are made inside each window only (n-grams do not cross its edges), with
    the built-in Numba tokenizers.

    Parameters
    ----------
    texts : sequence of str
    window : int, default 50
        Tokens per window: words for ``tokenizer="word"``, code points for ``"char"``.
    stride : int, optional
        Tokens between window starts (default ``window // 2``; ``window`` for no overlap).
    bits, tokenizer, ngram, weights, normalize, seed, spec
        As in :func:`simhash_nb.fingerprint` (tokenizer "char" or "word"; weights "tf"
        or "binary"). Default tokenizer here: "word".
    as_frame : bool, default True
        A pandas DataFrame (columns ``doc``, ``window``, ``start``, ``end`` and
        ``fingerprint``, or ``fingerprint_lo``/``fingerprint_hi`` for 128 bits), else
        a :class:`Windows` tuple of arrays.
    missing : {"raise", "skip"}, default "raise"
        What a missing text (None, NaN, pd.NA) gets: an error naming its position, or
        no windows.
    n_jobs : int, optional

    Returns
    -------
    pandas.DataFrame or Windows

    Raises
    ------
    ValueError
        If ``window`` or ``stride`` is not an integer >= 1, or the spec's tokenizer is not
        "char" or "word" or its weights not "tf" or "binary".

    See Also
    --------
    containment

    Examples
    --------
    >>> import simhash_nb as sh
    >>> w = sh.window_fingerprints(["one two three four five six"], window=4, stride=2)
    >>> w[["doc", "window", "start", "end"]].values.tolist()
    [[0, 0, 0, 4], [0, 1, 2, 6]]
    """
    window, stride = _check_window(window, stride)
    check_missing(missing, ("raise", "skip"))
    spec = _window_spec(bits, tokenizer, ngram, weights, normalize, seed, spec)
    got = _windows(texts, spec, window, stride, missing == "raise", n_jobs)
    return _window_frame(got, spec) if as_frame else got


def _windows(texts, spec: FingerprintSpec, window: int, stride: int, refuse_missing: bool,
             n_jobs) -> Windows:
    """The kernels' work of :func:`window_fingerprints`: spans, then their fingerprints."""
    classes = kernel_classes(spec)
    with threads(n_jobs) as n_threads, deferred_interrupt():
        buf = text_buffers(texts, spec.normalize, n_threads)
        if refuse_missing:
            raise_missing(buf.valid, "missing='skip' to give them no windows")
        check_document_sizes(buf.offsets)
        chunks = balanced_chunks(buf.offsets)
        tokens = _wk.unit_counts(buf.data, buf.offsets, chunks, classes)
        counts = _window_counts(tokens, window, stride)
        win_indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        lo, hi, first = _wk.window_spans(buf.data, buf.offsets, chunks, classes, window,
                                         stride, win_indptr)
        data, offsets = _wk.gather_spans(buf.data, lo, hi)
        wchunks = balanced_chunks(offsets)
        out, _ = _bk.fingerprint_texts(read_only(data), offsets, wchunks, spec.ngram,
                                       np.uint64(spec.seed), classes,
                                       spec.weights == "binary", spec.words)
    doc = np.repeat(np.arange(len(buf), dtype=np.int64), counts)
    widx = np.arange(doc.shape[0], dtype=np.int64) - np.repeat(win_indptr[:-1], counts)
    end = np.minimum(first + window, tokens[doc])
    return Windows(doc, widx, first, end, out[:, 0] if spec.bits == 64 else out)


def _check_window(window, stride) -> tuple[int, int]:
    """``(window, stride)`` as integers >= 1 (stride defaults to half the window)."""
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    stride = max(1, int(window) // 2) if stride is None else stride
    if isinstance(stride, bool) or not isinstance(stride, (int, np.integer)) or stride < 1:
        raise ValueError(f"stride must be an integer >= 1, got {stride!r}")
    return int(window), int(stride)


def _window_spec(bits, tokenizer, ngram, weights, normalize, seed, spec) -> FingerprintSpec:
    """The spec of the windows; only the built-in Numba tokenizers make windows."""
    if spec is not None:
        tokenizer = None
    spec, _ = prepare(bits=bits, tokenizer=tokenizer, ngram=ngram, weights=weights,
                      normalize=normalize, seed=seed, spec=spec)
    if not is_fast(spec):
        raise ValueError(
            "window_fingerprints supports tokenizer 'char' or 'word' with weights 'tf' or "
            f"'binary', got tokenizer={spec.tokenizer!r}, weights={spec.weights!r}; for "
            "Chinese use tokenizer='char', ngram=2")
    return spec


def _window_frame(w: Windows, spec: FingerprintSpec):
    """The windows as a DataFrame, the spec's JSON in ``attrs["spec"]``."""
    pd = pandas_module()
    cols = {"doc": w.doc, "window": w.window, "start": w.start, "end": w.end}
    if spec.bits == 64:
        cols["fingerprint"] = w.fingerprints
    else:
        cols["fingerprint_lo"] = np.ascontiguousarray(w.fingerprints[:, 0])
        cols["fingerprint_hi"] = np.ascontiguousarray(w.fingerprints[:, 1])
    frame = pd.DataFrame(cols)
    frame.attrs["spec"] = spec.to_json()
    return frame


def _pairs(a: np.ndarray, k: int, b: np.ndarray | None):
    return near_duplicates(a, k, against=b)


def _frame_fps(w) -> tuple[np.ndarray, np.ndarray]:
    """(doc ids, fingerprints) of a window frame, a Windows tuple or a fingerprint array."""
    if isinstance(w, Windows):
        return np.asarray(w.doc, dtype=np.int64), as_fingerprints(w.fingerprints)
    if hasattr(w, "columns"):
        if "fingerprint" in w.columns:
            fps = w["fingerprint"].to_numpy()
        elif "fingerprint_lo" in w.columns:
            fps = np.stack([w["fingerprint_lo"].to_numpy(), w["fingerprint_hi"].to_numpy()],
                           axis=1)
        else:
            raise ValueError("a window frame needs a 'fingerprint' column "
                             "(as made by window_fingerprints)")
        return w["doc"].to_numpy().astype(np.int64), as_fingerprints(fps, "window fingerprints")
    return None, as_fingerprints(w, "window fingerprints")


def containment(a_windows, b_windows=None, k: int | None = None):
    """Share of ``a``'s windows that have a window of ``b`` within ``k`` bits.

    With two fingerprint arrays (the windows of one document each) it returns one
    number: 1.0 when every window of ``a`` is nearly found in ``b`` (``a`` is quoted in
    full), 0.0 when none is, NaN when ``a`` has no windows. It is not symmetric: a
    paragraph quoted in a long text is contained in it, not the other way round.

    A quote need not start where one of ``b``'s windows starts: make ``b``'s windows
    with ``stride=1`` (every start) and each window of the quote has an exact twin in
    ``b`` at any offset. With a coarser stride the windows are shifted against each
    other by up to ``stride - 1`` tokens; measured on a 300-word quote in
    ``window=50`` windows, ``b`` at ``stride=25`` gave 1.0, 1.0, 0.83, 0.75 at offsets
    100, 101, 107, 112 (k = 12) and ``stride=1`` gave 1.0 at all four.

    With window frames (or :class:`Windows`) of many documents it returns, for every
    pair of documents ``(a_doc, b_doc)`` with at least one near window, a DataFrame with
    ``matched`` (windows of ``a_doc`` with a near window in ``b_doc``), ``windows``
    (windows of ``a_doc``) and ``containment = matched / windows``. Without
    ``b_windows`` the frame is compared with itself, skipping a document against
    itself.

    Parameters
    ----------
    a_windows, b_windows : array of fingerprints, DataFrame or Windows
    k : int, optional
        Hamming threshold (``<= k``); by default from ``config["default_similarity"]``
        as in :func:`simhash_nb.near_duplicates` (12 of 64 bits, 25 of 128).

    Returns
    -------
    float or pandas.DataFrame

    Raises
    ------
    TypeError
        If one argument is a window frame and the other a fingerprint array, or
        fingerprint arrays are given without ``b_windows``.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> quote = "it was the best of times it was the worst of times"
    >>> essay = "as dickens wrote " + quote + " and so on about other things entirely"
    >>> a = sh.window_fingerprints([quote], window=6, stride=3, as_frame=False)
    >>> b = sh.window_fingerprints([essay], window=6, stride=3, as_frame=False)
    >>> sh.containment(a.fingerprints, b.fingerprints, k=0)
    1.0
    """
    a_doc, a = _frame_fps(a_windows)
    self_join = b_windows is None
    if self_join:
        b_doc, b = a_doc, a
    else:
        b_doc, b = _frame_fps(b_windows)
        same_width(a, b, ("a_windows", "b_windows"))
    k = resolve_k(k, None, bits_of(a))
    if a_doc is None or b_doc is None:
        if a_doc is not None or b_doc is not None:
            raise TypeError("pass two fingerprint arrays or two window frames, not one of each")
        if self_join:
            raise TypeError("containment of fingerprint arrays needs b_windows")
        return _array_containment(a, b, k)
    return _frame_containment(a_doc, a, b_doc, None if self_join else b, k)


def _array_containment(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """Share of the windows ``a`` with a window of ``b`` within ``k`` bits."""
    if a.shape[0] == 0:
        return float("nan")
    if b.shape[0] == 0:
        return 0.0
    p = _pairs(a, k, b)
    return float(np.unique(np.asarray(p.i)).shape[0] / a.shape[0])


def _frame_containment(a_doc, a, b_doc, b, k: int):
    """Per pair of documents: matched windows, windows, containment (``b`` None: self)."""
    pd = pandas_module()
    self_join = b is None
    p = _pairs(a, k, b)
    i = np.asarray(p.i, dtype=np.int64)
    j = np.asarray(p.j, dtype=np.int64)
    if self_join:  # pairs come once (i < j); containment needs both directions
        i, j = np.concatenate((i, j)), np.concatenate((j, i))
    da, db = a_doc[i], b_doc[j]
    keep = da != db if self_join else np.ones(da.shape[0], dtype=bool)
    frame = pd.DataFrame({"a_doc": da[keep], "b_doc": db[keep], "a_window": i[keep]})
    frame = frame.drop_duplicates()
    n_windows = pd.Series(a_doc).value_counts()
    out = frame.groupby(["a_doc", "b_doc"], sort=True).size().rename("matched").reset_index()
    out["windows"] = n_windows.reindex(out["a_doc"]).to_numpy().astype(np.int64)
    out["containment"] = out["matched"] / out["windows"]
    return out
