"""Features of texts: built-in shingles, jieba or a callable tokenizer to a FeatureBatch."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._kernels import bitsums as _bk
from ..config import config
from . import jieba as jf
from .batch import FeatureBatch
from .idf import IdfTable, apply_idf
from .parallel import balanced_chunks, deferred_interrupt, threads
from .progress import chunk_steps, progress_bar, show_progress
from .spec import FingerprintSpec
from .text import over_chunks, text_buffers
from .tokenizers import MODES, kernel_classes, prepare

__all__ = ["FeatureBatch", "features", "fit_idf"]


def text_features(texts, spec: FingerprintSpec, n_jobs: int | None = None,
                  return_valid: bool = False, progress: bool | None = None):
    """Built-in char/word shingles of ``texts`` as a FeatureBatch (distinct sorted hashes).

    With ``return_valid`` also the validity mask (False for missing texts). ``progress``
    as in :func:`simhash_nb.features` (a bar over the texts; with weights other than
    binary it moves once, when the one parallel pass ends).
    """
    if spec.weights == "binary":  # one hashing pass (the fused kernel, no fingerprints)
        fb, _, valid = binary_features(texts, spec, 0, n_jobs, progress=progress)
        return (fb, valid) if return_valid else fb
    n = len(texts) if hasattr(texts, "__len__") else None
    show = show_progress(progress, n or 0, config["progress_min_texts"])
    with threads(n_jobs) as n_threads, deferred_interrupt(), progress_bar(
            show, n, desc="shingling", unit="text", unit_scale=True) as advance:
        buf = text_buffers(texts, spec.normalize, n_threads)
        chunks = balanced_chunks(buf.offsets)
        args = (buf.data, buf.offsets, chunks, spec.ngram, np.uint64(spec.seed),
                kernel_classes(spec))
        counts = _bk.feature_counts_texts(*args)
        counts[~buf.valid] = 0
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        hashes, weights = _bk.features_texts(*args, indptr)
        if advance is not None:
            advance(len(buf))
    fb = FeatureBatch(indptr, hashes, weights)
    return (fb, buf.valid) if return_valid else fb


def binary_features(texts, spec: FingerprintSpec, bits: int, n_jobs: int | None = None, *,
                    shared_weights: bool = False, progress: bool | None = None):
    """Binary-weight shingles of ``texts`` and their ``bits``-wide fingerprints, in one pass.

    Returns ``(FeatureBatch, uint64[n, bits // 64], validity)``: the batch
    :func:`text_features` gives with ``weights="binary"`` and the fingerprints
    :func:`simhash_nb.fingerprint_features` gives of it, bit for bit, from one
    tokenising pass (built-in tokenizers only); ``bits=0`` computes no fingerprints.
    ``shared_weights``: the weights are one read-only 1.0 seen by every feature (no
    memory; for callers that read only the hashes). ``progress`` as in
    :func:`simhash_nb.features`: a bar over the texts, advanced as the chunks of the
    hashing pass finish.
    """
    n = len(texts) if hasattr(texts, "__len__") else None
    show = show_progress(progress, n or 0, config["progress_min_texts"])
    desc = "fingerprinting" if bits else "shingling"
    with threads(n_jobs) as n_threads, deferred_interrupt(), progress_bar(
            show, n, desc=desc, unit="text", unit_scale=True) as advance:
        buf = text_buffers(texts, spec.normalize, n_threads)
        check_document_sizes(buf.offsets)
        buffer, indptr, fps = _binary_kernels(buf, spec, bits // 64, n_threads, advance)
    hashes = buffer[:indptr[-1]]
    if buffer.shape[0] > 1.5 * hashes.shape[0] + 1024:
        hashes = hashes.copy()  # the buffer is mostly within-document repeats: release it
    nnz = hashes.shape[0]
    weights = np.broadcast_to(np.float64(1.0), (nnz,)) if shared_weights else np.ones(nnz)
    return FeatureBatch(indptr, hashes, weights), fps, buf.valid


def _binary_kernels(buf, spec: FingerprintSpec, words: int, n_threads: int, advance=None):
    """The binary features kernels on ``n_threads`` threads: ``(buffer uint64[>= nnz],
    indptr int64[ndocs + 1], fingerprints uint64[ndocs, words])``.

    A counting pass (no hashing) sizes each chunk's region of the buffer by its feature
    occurrences; chunks write their documents' distinct hashes there, and the regions
    are then moved together, left, in order. The buffer's unused tail (past
    ``nnz = indptr[-1]``) is the within-document repeats. ``advance(texts)`` (a progress
    bar's update) as the chunks of the hashing pass finish.
    """
    chunks = balanced_chunks(buf.offsets)
    n_chunks, ndocs = chunks.shape[0] - 1, buf.offsets.shape[0] - 1
    text = (buf.data, buf.offsets, chunks)
    classes = kernel_classes(spec)
    region = np.zeros(n_chunks + 1, dtype=np.int64)
    over_chunks(lambda c0, c1: _bk.chunk_occurrences(*text, c0, c1, spec.ngram, classes,
                                                     region), n_chunks, n_threads)
    np.cumsum(region, out=region)
    buffer = np.empty(region[-1], dtype=np.uint64)
    fps = np.zeros((ndocs, words), dtype=np.uint64)
    nfeat = np.zeros(ndocs, dtype=np.int64)
    args = (spec.ngram, np.uint64(spec.seed), classes, region, buffer, fps, nfeat)
    fitted = []
    over_chunks(lambda c0, c1: fitted.append(_bk.binary_features_fingerprints(
        *text, c0, c1, *args)), n_chunks, n_threads, chunk_steps(chunks, advance))
    if not all(fitted):
        raise AssertionError("binary_features_fingerprints: occurrences() undercounted")
    indptr = np.zeros(ndocs + 1, dtype=np.int64)
    np.cumsum(nfeat, out=indptr[1:])
    for c in range(n_chunks):  # destinations never pass their sources: left, in order
        src, dst, end = int(region[c]), int(indptr[chunks[c]]), int(indptr[chunks[c + 1]])
        if src != dst:
            buffer[dst:end] = buffer[src:src + end - dst]
    return buffer, indptr, fps


def check_document_sizes(offsets: np.ndarray, start: int = 0) -> None:
    """Refuse a document of 2 GiB or more (the kernels count its features in int32)."""
    if offsets.shape[0] > 1:  # a document has at most one feature per byte
        sizes = np.diff(offsets)
        if sizes.max() > _bk.MAX_UNIT_FEATURES:
            i = int(np.argmax(sizes))
            raise ValueError(f"texts[{start + i}] has {sizes[i]:,} bytes; documents must be "
                             "under 2 GiB")


def text_batch(texts, spec: FingerprintSpec, extras: dict, n_jobs=None, progress=None):
    """(FeatureBatch, validity, spec) of ``texts``; the spec records a table fitted here."""
    if spec.tokenizer == "jieba":
        return jf.jieba_batch(texts, spec, extras["setup"], n_jobs, progress)
    if spec.tokenizer == "callable":
        return jf.callable_batch(texts, spec, extras["func"], extras.get("idf"), progress)
    if spec.tokenizer in MODES:
        base = spec.replace(weights="tf") if spec.weights == "tfidf" else spec
        fb, valid = text_features(texts, base, n_jobs, return_valid=True, progress=progress)
        if spec.weights == "tfidf":
            fb, spec = apply_idf(fb, spec, extras.get("idf"))
        return fb, valid, spec
    raise ValueError(f"tokenizer {spec.tokenizer!r} does not read text")


def features(
    texts,
    *,
    tokenizer=None,
    ngram: int | None = None,
    weights: str | None = None,
    normalize=None,
    seed: int | None = None,
    spec: FingerprintSpec | None = None,
    params: Mapping | None = None,
    missing: str = "raise",
    n_jobs: int | None = None,
    progress: bool | None = None,
) -> FeatureBatch:
    """Tokenise ``texts`` and hash their features, without fingerprinting them.

    Takes the same arguments as :func:`simhash_nb.fingerprint`. Each document's
    features are its distinct feature hashes in increasing order, weighted by their
    count (``weights="tf"``), 1 (``"binary"``), count times IDF (``"tfidf"``) or the
    summed weights a callable tokenizer returned (``"given"``); a document with no
    tokens left (for instance only stop words) has none. A missing text (None, NaN,
    pd.NA) raises ``ValueError`` naming its position, as in :func:`fingerprint`; with
    ``missing="zero"`` it has no features (so its fingerprint is 0).
    ``fingerprint_features(features(texts))`` equals ``fingerprint(texts)``.

    Parameters
    ----------
    texts : sequence of str
        A list, numpy array, pandas Series or pyarrow array of strings.
    tokenizer, ngram, weights, normalize, seed, spec, params, n_jobs, progress
        As in :func:`simhash_nb.fingerprint`.
    missing : {"raise", "zero"}, default "raise"
        What a missing text gets: an error naming its position, or no features.

    Returns
    -------
    FeatureBatch
        CSR batch: ``indptr`` (one row per text), ``hashes`` and ``weights``.

    Raises
    ------
    ValueError
        If ``missing`` is not "raise" or "zero", a text is missing and
        ``missing="raise"``, or an option is invalid.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> fb = sh.features(["a b a"], tokenizer="word", ngram=1, weights="tf")
    >>> fb.n_features.tolist(), sorted(fb.weights.tolist())
    ([2], [1.0, 2.0])
    >>> fb = sh.features(["a b a"], tokenizer=str.split, params={"name": "split"})
    >>> sorted(fb.weights.tolist())
    [1.0, 2.0]
    """
    check_missing(missing, ("raise", "zero"))
    spec, extras = prepare(tokenizer=tokenizer, ngram=ngram, weights=weights,
                           normalize=normalize, seed=seed, spec=spec, params=params)
    fb, valid, _ = text_batch(texts, spec, extras, n_jobs, progress)
    if missing == "raise":
        raise_missing(valid, "missing='zero' to give them no features")
    return fb


def check_missing(missing, choices: tuple[str, ...]) -> None:
    """Refuse a ``missing=`` value not among ``choices``."""
    if not isinstance(missing, str) or missing not in choices:
        raise ValueError(f"missing must be one of {choices}, got {missing!r}")


def raise_missing(valid: np.ndarray, remedy: str) -> None:
    """Raise ``ValueError`` naming the first missing text, if any."""
    if not valid.all():
        pos = int(np.flatnonzero(~valid)[0])
        raise ValueError(f"texts[{pos}] is missing (None/NaN/NA); drop missing texts or pass "
                         f"{remedy}")


def fit_idf(texts, **options) -> IdfTable:
    """Fit an :class:`IdfTable` on a corpus with any tokenizer.

    Takes the options of :func:`simhash_nb.features` (weights are ignored). Pass the
    table back with ``weights="tfidf", params={"idf": table}`` and the same options.

    Parameters
    ----------
    texts : sequence of str
        The corpus to count document frequencies on.
    **options
        ``tokenizer``, ``ngram``, ``normalize``, ``seed``, ``spec``, ``params``,
        ``n_jobs``, ``progress`` as in :func:`simhash_nb.features` (``weights`` and an
        ``idf`` in ``params`` are ignored).

    Returns
    -------
    IdfTable
        The IDF of every feature hash seen in ``texts``.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> table = sh.fit_idf(["a b", "a c"], tokenizer="word")
    >>> fps = sh.fingerprint(["a b"], tokenizer="word", weights="tfidf",
    ...                      params={"idf": table})
    >>> fps.shape
    (1,)
    """
    options = dict(options)
    options["weights"] = "tf"
    params = dict(options.pop("params", None) or {})
    params.pop("idf", None)
    fb = features(texts, params=params, **options)
    return IdfTable.fit(fb)

