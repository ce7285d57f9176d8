"""Features: anything (text, tokens, sparse matrices, user hashes) to a CSR FeatureBatch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ._kernels import bitsums as _bk
from ._kernels.shingles import MODE_CHAR, MODE_WORD
from ._parallel import balanced_chunks, deferred_interrupt, threads
from ._text import text_buffers
from ._unicode import word_classes
from .spec import FingerprintSpec

__all__ = ["FeatureBatch", "features"]

_MODES = {"char": MODE_CHAR, "word": MODE_WORD}


@dataclass(frozen=True)
class FeatureBatch:
    """Features of a batch of documents in CSR layout.

    Document ``i`` has features ``hashes[indptr[i]:indptr[i + 1]]`` with the matching
    ``weights``. Every feature source (built-in shingles, jieba, scikit-learn, hashes
    users bring) ends here, and one kernel fingerprints them all.

    Attributes
    ----------
    indptr : ndarray of int64, shape (n + 1,)
    hashes : ndarray of uint64, shape (nnz,)
    weights : ndarray of float32 or float64, shape (nnz,)
        Finite and non-negative.

    Examples
    --------
    >>> import numpy as np
    >>> fb = FeatureBatch.from_lists([np.array([1, 2], dtype=np.uint64), []])
    >>> len(fb), fb.indptr.tolist(), fb.weights.tolist()
    (2, [0, 2, 2], [1.0, 1.0])
    """

    indptr: np.ndarray
    hashes: np.ndarray
    weights: np.ndarray

    def __len__(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def n_features(self) -> np.ndarray:
        """Number of features of each document."""
        return np.diff(self.indptr)

    def validated(self, *, check_weights: bool = True) -> FeatureBatch:
        """Check dtypes, shapes and values; return a batch ready for the kernels.

        ``check_weights=False`` skips the pass over the weights, for callers whose
        kernel checks each weight as it reads it (see :func:`invalid_weight_error`).
        """
        indptr = np.asarray(self.indptr)
        hashes = np.asarray(self.hashes)
        weights = np.asarray(self.weights)
        if indptr.ndim != 1 or indptr.shape[0] < 1:
            raise ValueError("indptr must be a 1-D array of n + 1 offsets")
        if not np.issubdtype(indptr.dtype, np.integer):
            raise TypeError(f"indptr must be integers, got {indptr.dtype}")
        indptr = indptr.astype(np.int64, copy=False)
        if hashes.dtype != np.uint64:
            raise TypeError(f"hashes must be uint64, got {hashes.dtype}")
        if weights.dtype not in (np.float32, np.float64):
            if np.issubdtype(weights.dtype, np.integer) or weights.dtype == np.bool_:
                weights = weights.astype(np.float64)
            else:
                raise TypeError(f"weights must be float32 or float64, got {weights.dtype}")
        if hashes.ndim != 1 or weights.shape != hashes.shape:
            raise ValueError(
                f"hashes and weights must be 1-D of equal length, got {hashes.shape} "
                f"and {weights.shape}"
            )
        if indptr[0] != 0 or indptr[-1] != hashes.shape[0] or np.any(np.diff(indptr) < 0):
            raise ValueError(
                "indptr must start at 0, never decrease, and end at len(hashes) "
                f"({hashes.shape[0]}); got start {indptr[0]}, end {indptr[-1]}"
            )
        if check_weights:
            if (~np.isfinite(weights) | (weights < 0)).any():
                raise invalid_weight_error(indptr, weights)
        return FeatureBatch(
            np.ascontiguousarray(indptr),
            np.ascontiguousarray(hashes),
            np.ascontiguousarray(weights),
        )

    @classmethod
    def from_lists(
        cls,
        hashes: Sequence[Sequence[int]],
        weights: Sequence[Sequence[float]] | None = None,
    ) -> FeatureBatch:
        """Build a batch from per-document hash arrays (and optional weight arrays).

        Examples
        --------
        >>> FeatureBatch.from_lists([[5, 6]], [[1.0, 0.5]]).weights.tolist()
        [1.0, 0.5]
        """
        arrays = [_as_hash_array(h, i) for i, h in enumerate(hashes)]
        lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
        indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        flat = np.concatenate(arrays) if arrays else np.empty(0, np.uint64)
        if weights is None:
            w = np.ones(flat.shape[0], dtype=np.float64)
        else:
            if len(weights) != len(arrays):
                raise ValueError(f"got {len(arrays)} hash arrays but {len(weights)} weight arrays")
            ws = [np.asarray(x, dtype=np.float64).reshape(-1) for x in weights]
            for i, (a, x) in enumerate(zip(arrays, ws, strict=True)):
                if a.shape != x.shape:
                    raise ValueError(
                        f"document {i} has {a.shape[0]} hashes but {x.shape[0]} weights"
                    )
            w = np.concatenate(ws) if ws else np.empty(0, np.float64)
        return cls(indptr, flat, w).validated()


def invalid_weight_error(indptr: np.ndarray, weights: np.ndarray, doc: int = 0) -> ValueError:
    """The error naming the first weight from document ``doc`` on that is < 0 or not finite."""
    start = int(indptr[doc])
    rest = weights[start:]
    f = start + int(np.flatnonzero(~np.isfinite(rest) | (rest < 0))[0])
    doc = int(np.searchsorted(indptr, f, side="right") - 1)
    return ValueError(
        f"weights must be finite and >= 0; feature {f} (document {doc}) has {weights[f]}"
    )


def _as_hash_array(h, i: int) -> np.ndarray:
    arr = np.asarray(h)
    if arr.dtype == object or arr.dtype.kind == "f" and not isinstance(h, np.ndarray):
        # numpy reads a list holding Python ints >= 2**63 as float64: redo it exactly
        values = np.asarray(h, dtype=object).reshape(-1)
        if values.size and all(isinstance(x, (int, np.integer))
                               and not isinstance(x, (bool, np.bool_)) for x in values):
            if any(x < 0 for x in values):
                raise ValueError(f"document {i}: feature hashes must be non-negative (uint64)")
            try:
                return np.array(values.tolist(), dtype=np.uint64)
            except OverflowError:
                raise ValueError(f"document {i}: feature hashes must be below 2**64") from None
        if arr.dtype == object:
            arr = np.asarray(values.tolist())
    if arr.size == 0:
        return np.empty(0, np.uint64)
    if arr.dtype == np.uint64:
        return arr.reshape(-1)
    if np.issubdtype(arr.dtype, np.integer):
        if (arr < 0).any():
            raise ValueError(f"document {i}: feature hashes must be non-negative (uint64)")
        return arr.astype(np.uint64).reshape(-1)
    raise TypeError(
        f"document {i}: feature hashes must be unsigned 64-bit integers, got {arr.dtype}"
    )


def text_features(texts, spec: FingerprintSpec, n_jobs: int | None = None,
                  return_valid: bool = False):
    """Built-in char/word shingles of ``texts`` as a FeatureBatch (distinct sorted hashes).

    With ``return_valid`` also the validity mask (False for missing texts).
    """
    with threads(n_jobs) as n_threads, deferred_interrupt():
        buf = text_buffers(texts, spec.normalize, n_threads)
        mode = _MODES[spec.tokenizer]
        binary = spec.weights == "binary"
        chunks = balanced_chunks(buf.offsets)
        args = (buf.data, buf.offsets, chunks, mode, spec.ngram, np.uint64(spec.seed),
                word_classes(), binary)
        counts = _bk.feature_counts_texts(*args)
        counts[~buf.valid] = 0
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        hashes, weights = _bk.features_texts(*args, indptr)
    fb = FeatureBatch(indptr, hashes, weights)
    return (fb, buf.valid) if return_valid else fb


def is_fast(spec: FingerprintSpec) -> bool:
    """True if the fused Numba kernel makes these fingerprints (built-in tokens, unit weights)."""
    return spec.tokenizer in _MODES and spec.weights in ("tf", "binary")


def _callable_name(func, params: dict) -> str:
    name = params.get("name")
    if name is None:
        qual = getattr(func, "__qualname__", None) or type(func).__qualname__
        if "<lambda>" in qual or "<locals>" in qual:
            raise ValueError(
                "a lambda or local function cannot be named in the fingerprint spec; pass "
                "params={'name': 'my_tokenizer_v1'} (any name that changes when the "
                "tokenizer does)")
        name = f"{getattr(func, '__module__', None) or type(func).__module__}.{qual}"
    if not isinstance(name, str) or not name:
        raise TypeError(f"params['name'] must be a non-empty string, got {name!r}")
    return name


def _idf_param(params: dict, weights: str, where: str):
    idf = params.get("idf")
    if weights != "tfidf":
        if idf is not None:
            raise ValueError("params['idf'] is used only with weights='tfidf'")
        return {}, None
    from .jieba_features import IdfTable

    if isinstance(idf, IdfTable):
        return {"idf": idf.tag}, idf
    if idf == "fit" or idf == "jieba":
        return {"idf": idf}, idf
    if isinstance(idf, str) and idf.startswith("sha1:"):
        raise ValueError(f"this spec's IDF table ({idf}) is not stored in the spec; pass the "
                         "IdfTable again with params={'idf': table}")
    raise ValueError(f"weights='tfidf' with {where} needs params={{'idf': table}} (an IdfTable "
                     f"from sh.fit_idf), params={{'idf': 'fit'}} to fit on these texts, or "
                     f"params={{'idf': 'jieba'}} for jieba's table; got {idf!r}")


def _build(tokenizer, ngram, weights, normalize, seed, bits, params, func):
    from .fingerprint import make_spec

    params = dict(params)
    opts = {"bits": bits, "ngram": ngram, "normalize": normalize, "seed": seed}
    if tokenizer == "jieba":
        from .jieba_features import resolve

        weights = "tfidf" if weights is None else weights
        if weights not in ("tf", "binary", "tfidf"):
            raise ValueError(f"jieba weights must be 'tf', 'binary' or 'tfidf', got {weights!r}")
        spec_params, setup = resolve(params, weights)
        spec = make_spec(tokenizer="jieba", weights=weights, params=spec_params, **opts)
        return spec, {"setup": setup}
    if tokenizer == "callable":
        if func is None:
            raise ValueError(
                "a spec with tokenizer='callable' cannot rebuild the tokenizer; pass the "
                "function again: tokenizer=func, spec=spec")
        weights = "tf" if weights is None else weights
        if weights not in ("tf", "binary", "given", "tfidf"):
            raise ValueError(f"callable tokenizer weights must be 'tf', 'binary', 'given' or "
                             f"'tfidf', got {weights!r}")
        name = _callable_name(func, params)
        unknown = sorted(set(params) - {"name", "idf"})
        if unknown:
            raise ValueError(f"unknown params {unknown} for a callable tokenizer")
        idf_params, idf = _idf_param(params, weights, "a callable tokenizer")
        spec = make_spec(tokenizer="callable", weights=weights,
                         params={"name": name, **idf_params}, **opts)
        return spec, {"func": func, "idf": idf}
    if tokenizer in (None, "char", "word"):
        if weights == "given":
            raise ValueError("weights='given' needs a tokenizer that returns weights")
        unknown = sorted(set(params) - {"idf"})
        if unknown:
            raise ValueError(f"unknown params {unknown} for tokenizer {tokenizer or 'char'!r}")
        idf_params, idf = _idf_param(params, weights or "tf", f"tokenizer {tokenizer!r}")
        spec = make_spec(tokenizer=tokenizer, weights=weights, params=idf_params or None,
                         **opts)
        return spec, {"idf": idf}
    if tokenizer == "sklearn":
        raise ValueError("tokenizer 'sklearn' fingerprints come from "
                         "simhash_nb.sklearn.SimhashVectorizer or sh.fingerprint_sparse")
    if tokenizer == "hashes":
        raise ValueError("tokenizer 'hashes' fingerprints come from sh.fingerprint_features")
    raise ValueError(f"tokenizer must be 'char', 'word', 'jieba' or a callable, got {tokenizer!r}")


def prepare(*, tokenizer=None, ngram=None, weights=None, normalize=None, seed=None, bits=None,
            spec: FingerprintSpec | None = None, params=None):
    """The spec of these options and the objects it stands for (callable, stop words, IDF).

    With ``spec``, ``tokenizer`` may be the callable a ``"callable"`` spec was made
    with and ``params`` may hold the objects it records by content; the spec they give
    must equal ``spec``.
    """
    from .fingerprint import make_spec
    from .spec import check_compatible

    func = None
    if tokenizer is not None and not isinstance(tokenizer, str):
        if not callable(tokenizer):
            raise TypeError(f"tokenizer must be a name or a callable, got {tokenizer!r}")
        func, tokenizer = tokenizer, "callable"
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    params = dict(params or {})
    if spec is None:
        return _build(tokenizer, ngram, weights, normalize, seed, bits, params, func)
    spec = make_spec(spec, bits=bits, tokenizer=None if func else tokenizer, ngram=ngram,
                     weights=weights, normalize=normalize, seed=seed)
    if func is not None and spec.tokenizer != "callable":
        raise ValueError(f"a callable tokenizer was given with a {spec.tokenizer!r} spec")
    if is_fast(spec) and not params:
        return spec, {}
    merged = {**dict(spec.params), **params}
    built, extras = _build(spec.tokenizer, spec.ngram, spec.weights, spec.normalize, spec.seed,
                           spec.bits, merged, func)
    if dict(built.params).get("idf") == "fit":
        raise ValueError("params={'idf': 'fit'} cannot be checked against a spec; pass the "
                         "IdfTable the spec was made with")
    check_compatible(spec, built)
    return spec, extras


def text_batch(texts, spec: FingerprintSpec, extras: dict, n_jobs=None, progress=None):
    """(FeatureBatch, validity, spec) of ``texts``; the spec records a table fitted here."""
    from . import jieba_features as jf

    if spec.tokenizer == "jieba":
        return jf.jieba_batch(texts, spec, extras["setup"], n_jobs, progress)
    if spec.tokenizer == "callable":
        return jf.callable_batch(texts, spec, extras["func"], extras.get("idf"), progress)
    if spec.tokenizer in _MODES:
        base = spec.replace(weights="tf") if spec.weights == "tfidf" else spec
        fb, valid = text_features(texts, base, n_jobs, return_valid=True)
        if spec.weights == "tfidf":
            fb, spec = jf.apply_idf(fb, spec, extras.get("idf"))
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
