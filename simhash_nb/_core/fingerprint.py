"""Fingerprints: texts or features to 64- or 128-bit SimHash fingerprints.

Definition (format version 1)
-----------------------------
1. Text is normalised with pyarrow (default: NFKC, lowercase, punctuation and symbols to
   spaces, white space collapsed).
2. Features are character n-grams over code points or word n-grams (words joined by
   one space), see :mod:`simhash_nb._kernels.shingles`.
3. A feature's hash is ``xxh64(utf8_bytes, seed)``. For 128 bits its second word of
   hash bits is ``splitmix64(hash)``.
4. Bit ``b`` of the fingerprint is 1 iff the weighted sum over features of ``+w`` (bit
   ``b`` of the feature hash set) or ``-w`` (not set) is ``> 0``. Ties, and documents
   with no features (empty, or no word characters), give 0 bits.
5. 64-bit fingerprints are ``uint64[n]``; 128-bit are ``uint64[n, 2]``, low word first.
"""

from __future__ import annotations

import numpy as np

from .._kernels import bitsums as _bk
from ..config import config
from .batch import FeatureBatch, invalid_weight_error
from .docstrings import shared_docs
from .features import (
    binary_features,
    check_document_sizes,
    check_missing,
    raise_missing,
    text_batch,
)
from .parallel import balanced_chunks, deferred_interrupt, threads
from .progress import chunk_steps, progress_bar, show_progress
from .spec import FingerprintSpec
from .text import over_chunks, text_buffers, text_slices
from .tokenizers import FINGERPRINT_PARAMETERS, MODES, is_fast, kernel_classes, prepare
from .validation import check_bits, check_raise_or_zero

__all__ = ["features_and_fingerprints", "fingerprint", "fingerprint_features"]


def fingerprint_texts(texts, spec: FingerprintSpec, n_jobs=None, extras=None, progress=None):
    """Fingerprints, feature counts and validity of each text (missing texts: 0).

    ``extras`` holds what a spec records only by name or content (a callable tokenizer,
    stop words, an IDF table), as returned by :func:`simhash_nb._core.tokenizers.prepare`.
    """
    if not is_fast(spec):
        if extras is None:
            spec, extras = prepare(spec=spec)
        fb, valid, _ = text_batch(texts, spec, extras, n_jobs, progress)
        fps = fingerprint_features(fb, bits=spec.bits, n_jobs=n_jobs)
        return fps, fb.n_features, valid
    parts = []
    n = len(texts) if hasattr(texts, "__len__") else None
    show = show_progress(progress, n or 0, config["progress_min_texts"])
    with threads(n_jobs) as n_threads, progress_bar(show, n, desc="fingerprinting",
                                                    unit="text", unit_scale=True) as advance:
        for start, piece in text_slices(texts, config["text_slice_bytes"]):
            with deferred_interrupt():  # Ctrl-C lands between slices, not inside a kernel
                parts.append(_fused_fingerprints(piece, start, spec, n_threads, advance))
    out, nfeat, valid = (np.concatenate(p) for p in zip(*parts, strict=True))
    fps = out[:, 0] if spec.bits == 64 else out
    return fps, nfeat, valid


def _fused_fingerprints(texts, start: int, spec: FingerprintSpec, n_threads: int,
                        advance=None):
    """The fused kernel on one piece of a batch: ``(uint64[n, words], nfeat, valid)``;
    ``advance(texts)`` (a progress bar's update) as its chunks finish."""
    buf = text_buffers(texts, spec.normalize, n_threads, start)
    check_document_sizes(buf.offsets, start)
    chunks = balanced_chunks(buf.offsets)
    out = np.zeros((len(buf), spec.words), dtype=np.uint64)
    nfeat = np.zeros(len(buf), dtype=np.int64)
    binary = spec.weights == "binary"
    args = (spec.ngram, np.uint64(spec.seed), kernel_classes(spec), binary, out, nfeat)

    def run(c0: int, c1: int) -> None:
        scratch = _bk.chunk_scratch(buf.offsets, chunks, c0, c1, spec.ngram, binary)
        _bk.fingerprint_chunks(buf.data, buf.offsets, chunks, c0, c1, *args, scratch)

    over_chunks(run, chunks.shape[0] - 1, n_threads, chunk_steps(chunks, advance))
    if not buf.valid.all():
        out[~buf.valid] = 0
        nfeat[~buf.valid] = 0
    return out, nfeat, buf.valid


@shared_docs(**FINGERPRINT_PARAMETERS)
def fingerprint(
    texts,
    *,
    bits: int | None = None,
    tokenizer: str | None = None,
    ngram: int | None = None,
    weights: str | None = None,
    normalize=None,
    seed: int | None = None,
    spec: FingerprintSpec | None = None,
    params=None,
    missing: str = "raise",
    n_jobs: int | None = None,
    progress: bool | None = None,
) -> np.ndarray:
    """SimHash fingerprints of a batch of texts.

    Tokenising, hashing and bit sums run in one parallel Numba kernel over the UTF-8
    bytes of all texts; there is no Python loop per document.

    Parameters
    ----------
    texts : sequence of str
        A list, numpy array, pandas Series (object, ``string`` or Arrow-backed) or
        pyarrow array. Byte strings must be valid UTF-8.
    {{bits}}
    {{tokenizer}}
    {{ngram}}
    {{weights}}
    {{normalize}}
    {{seed}}
    {{spec}}
    {{params}}
    missing : {"raise", "zero"}, default "raise"
        What a missing text (None, NaN, pd.NA) gets: an error naming its position, or
        the fingerprint 0.
    {{n_jobs}}
    {{progress}}

    Returns
    -------
    numpy.ndarray
        ``uint64[n]`` for 64 bits, ``uint64[n, 2]`` (low word first) for 128 bits.

    Raises
    ------
    ValueError
        If ``missing`` is not "raise" or "zero", a text is missing and
        ``missing="raise"``, or an option is invalid.

    See Also
    --------
    features, fingerprint_features, FingerprintSpec

    Notes
    -----
    Charikar (2002), "Similarity estimation techniques from rounding algorithms".
    Fingerprint bit ``b`` is 1 iff the weighted sum for bit ``b`` is ``> 0``; empty
    texts get 0. Fingerprints are the same on every machine and in every process.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> fps = sh.fingerprint(["Hello, world!", "hello world", "goodbye"], tokenizer="word")
    >>> int(sh.hamming(fps[0], fps[1]))
    0
    >>> sh.fingerprint(["abc"], bits=128).shape
    (1, 2)
    """
    spec, extras = prepare(bits=bits, tokenizer=tokenizer, ngram=ngram, weights=weights,
                           normalize=normalize, seed=seed, spec=spec, params=params)
    check_raise_or_zero(missing)
    fps, _, valid = fingerprint_texts(texts, spec, n_jobs, extras, progress)
    if missing == "raise":
        raise_missing(valid, "missing='zero' to give them the fingerprint 0")
    return fps


def fingerprint_features(features, bits: int = 64, *, n_jobs: int | None = None) -> np.ndarray:
    """SimHash fingerprints of features you already have.

    Parameters
    ----------
    features : FeatureBatch or sequence of hash arrays or of (hashes, weights) pairs
        One uint64 hash per feature; weights default to 1 and must be finite, >= 0.
    bits : {64, 128}, default 64
    n_jobs : int, optional

    Returns
    -------
    numpy.ndarray
        ``uint64[n]`` or ``uint64[n, 2]``.

    Raises
    ------
    TypeError
        If ``features`` is not a FeatureBatch or a sequence of hash arrays.
    ValueError
        If ``bits`` is not 64 or 128, or a weight is negative or not finite.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> h = np.array([0b0111, 0b0011, 0b1000], dtype=np.uint64)
    >>> int(sh.fingerprint_features([h])[0])
    3
    >>> int(sh.fingerprint_features([(h, [1.0, 1.0, 5.0])])[0])
    8
    """
    bits = check_bits(bits)
    fb = _as_feature_batch(features)
    with threads(n_jobs), deferred_interrupt():
        chunks = balanced_chunks(fb.indptr)
        out, invalid = _bk.fingerprint_csr(fb.indptr, fb.hashes, fb.weights, chunks, bits // 64)
    if invalid >= 0:  # the kernel checks every weight as it reads it
        raise invalid_weight_error(fb.indptr, fb.weights, invalid)
    return out[:, 0] if bits == 64 else out


def _as_feature_batch(features) -> FeatureBatch:
    if isinstance(features, FeatureBatch):
        return features.validated(check_weights=False)
    if isinstance(features, (str, bytes)) or not hasattr(features, "__len__"):
        raise TypeError(
            "features must be a FeatureBatch or a sequence of per-document hash arrays "
            "(or (hashes, weights) pairs)"
        )
    items = list(features)
    if items and all(isinstance(x, tuple) and len(x) == 2 for x in items):
        return FeatureBatch.from_lists([x[0] for x in items], [x[1] for x in items])
    return FeatureBatch.from_lists(items)


def features_and_fingerprints(
    texts,
    bits: int = 128,
    *,
    spec: FingerprintSpec | None = None,
    missing: str = "raise",
    n_jobs: int | None = None,
    progress: bool | None = None,
    **options,
) -> tuple[FeatureBatch, np.ndarray]:
    """Binary-weight features of texts and their fingerprints, tokenising each text once.

    Equals ``(fb, fingerprint_features(fb, bits=bits))`` with
    ``fb = features(texts, weights="binary", ...)``, bit for bit; the built-in
    tokenizers ("char", "word") make both in one pass, the others take those two steps.

    Parameters
    ----------
    texts : sequence of str
        As in :func:`fingerprint`.
    bits : {128, 64}, default 128
        Width of the fingerprints (not of the spec: the features are the same).
    spec : FingerprintSpec, optional
        Instead of the options; its weights must be "binary".
    missing, n_jobs, progress
        As in :func:`simhash_nb.features`.
    **options
        ``tokenizer``, ``ngram``, ``normalize``, ``seed``, ``params`` as in
        :func:`simhash_nb.features`; the weights are binary.

    Returns
    -------
    (FeatureBatch, numpy.ndarray)
        The features (distinct hashes in increasing order, weights 1: from the built-in
        tokenizers, one read-only 1.0 shared by every feature) and ``uint64[n]``
        (64 bits) or ``uint64[n, 2]`` (128 bits) fingerprints.

    Raises
    ------
    ValueError
        If ``bits`` or an option is invalid, ``spec`` weights are not binary, or a text
        is missing and ``missing="raise"``.
    """
    bits = check_bits(bits)
    check_missing(missing, ("raise", "zero"))
    spec, extras = prepare(weights=None if spec is not None else "binary", spec=spec,
                           **options)
    if spec.weights != "binary":
        raise ValueError(f"features_and_fingerprints makes binary features; the spec has "
                         f"weights={spec.weights!r}")
    fb, fps, valid = binary_shingles(texts, spec, extras, bits, n_jobs, progress)
    if missing == "raise":
        raise_missing(valid, "missing='zero' to give them no features")
    return fb, fps


def binary_shingles(texts, spec: FingerprintSpec, extras: dict, bits: int,
                    n_jobs: int | None = None, progress: bool | None = False):
    """``(FeatureBatch, fingerprints, validity)`` of ``texts`` under a binary-weight
    ``spec`` (and the objects :func:`~simhash_nb._core.tokenizers.prepare` gave with
    it): the shingle-and-fingerprint stage of the verified path, one batch at a time.
    Missing texts have no features and are ``False`` in ``validity``. ``progress`` as
    in :func:`simhash_nb.fingerprint`; by default none (the batches' caller shows its
    own bar over them).

    Examples
    --------
    >>> from simhash_nb._core.tokenizers import prepare
    >>> spec, extras = prepare(tokenizer="word", ngram=1, weights="binary")
    >>> fb, fps, valid = binary_shingles(["a b", None], spec, extras, 128)
    >>> fb.n_features.tolist(), fps.shape, valid.tolist()
    ([2, 0], (2, 2), [True, False])
    """
    if spec.tokenizer in MODES:
        fb, fps, valid = binary_features(texts, spec, bits, n_jobs, shared_weights=True,
                                         progress=progress)
        return fb, (fps[:, 0] if bits == 64 else fps), valid
    fb, valid, _ = text_batch(texts, spec, extras, n_jobs, progress)
    return fb, fingerprint_features(fb, bits=bits, n_jobs=n_jobs), valid
