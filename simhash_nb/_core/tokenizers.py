"""Fingerprint options to a spec: the spec of ``tokenizer=..., weights=..., params=...``
and the objects it stands for (a callable tokenizer, stop words, an IDF table)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._kernels.shingles import MODE_CHAR, MODE_WORD
from .idf import IdfTable
from .jieba import resolve
from .spec import FingerprintSpec, build_spec, check_compatible
from .unicode import word_classes

__all__ = ["FINGERPRINT_OPTIONS", "FINGERPRINT_PARAMETERS", "RUN_OPTIONS", "SPEC_OPTIONS",
           "is_fast", "kernel_classes", "prepare", "split_options"]

SPEC_OPTIONS = ("bits", "tokenizer", "ngram", "weights", "normalize", "seed", "spec", "params")
"""The options that decide a fingerprint: :func:`prepare` turns them into (spec, extras)."""
RUN_OPTIONS = ("n_jobs", "progress")
"""The options of a run that do not change a fingerprint."""
FINGERPRINT_OPTIONS = SPEC_OPTIONS + RUN_OPTIONS
"""Every fingerprint option, defined once: every face splits its ``**options`` with
:func:`split_options` and makes the spec with :func:`prepare`."""

FINGERPRINT_PARAMETERS = {
    "bits": "bits : {64, 128}, default 64",
    "tokenizer": """\
tokenizer : {"char", "word", "jieba"} or callable, default "char"
    Character n-grams over code points, or word n-grams over Unicode word characters
    (each CJK ideograph or kana is a word): both run in one Numba kernel. ``"jieba"``:
    Chinese words segmented by jieba, stop words dropped (see
    :mod:`simhash_nb.jieba_features`). A callable ``text -> tokens`` (or ``-> (token,
    weight) pairs``) brings your own segmenter; it is the slow path (one Python call
    per text), and its tokens are hashed and fingerprinted by the same xxh64 and
    kernels.""",
    "ngram": 'ngram : int, default 5 for "char", 1 otherwise',
    "weights": """\
weights : {"tf", "binary", "tfidf", "given"}, default "binary" ("tfidf" for jieba,
    "tf" for a callable)
    Count every occurrence of a feature, each distinct feature once, count times
    IDF (``params={"idf": ...}``), or the weights a callable returned.""",
    "normalize": """\
normalize : tuple of str, default ("nfkc", "lower", "punct", "whitespace")
    Steps among ``"html"``, ``"nfkc"``, ``"lower"``, ``"punct"``, ``"digits"``,
    ``"whitespace"``, applied in that order; ``()`` for none.""",
    "seed": "seed : int, default 0\n    Seed of the xxh64 feature hash.",
    "spec": "spec : FingerprintSpec, optional\n    All of the above in one object (then leave "
            "them unset).",
    "params": """\
params : dict, optional
    Tokenizer settings recorded in the spec. jieba: ``user_dict`` (path),
    ``stop_words`` ("default", "none", path or words), ``hmm`` (bool), ``idf``
    ("jieba", "fit" or an :class:`~simhash_nb.jieba_features.IdfTable`). A callable:
    ``name`` (default: its module and qualified name; required for lambdas). Any
    tokenizer with ``weights="tfidf"``: ``idf``.""",
    "n_jobs": """\
n_jobs : int, optional
    Threads (default: Numba's setting, all cores); for jieba, worker processes
    (default: one per million characters, at most one per core).""",
    "progress": """\
progress : bool, optional
    A tqdm progress bar on stderr (``True``), or none (``False``): over the texts
    (built-in tokenizers) or their characters (jieba, callable); default: shown in a
    terminal or notebook from ``config["progress_min_texts"]`` texts or
    ``config["progress_min_chars"]`` characters on.""",
}
"""The numpydoc entry of each of :data:`FINGERPRINT_OPTIONS`, one wording for every
function that takes them: a docstring line ``{{name}}`` under
:func:`~simhash_nb._core.docstrings.shared_docs` ``(**FINGERPRINT_PARAMETERS)``."""

MODES = {"char": MODE_CHAR, "word": MODE_WORD}
"""Kernel mode of each built-in tokenizer (the tokenizers the fused kernels run)."""


def kernel_classes(spec: FingerprintSpec):
    """The tokenizer argument of the document kernels (:func:`~simhash_nb._kernels.shingles.
    doc_hashes`): the word-class table for ``"word"``, None for ``"char"``."""
    return word_classes() if spec.tokenizer == "word" else None


def is_fast(spec: FingerprintSpec) -> bool:
    """True if the fused Numba kernel makes these fingerprints (built-in tokens, unit weights)."""
    return spec.tokenizer in MODES and spec.weights in ("tf", "binary")


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
    params = dict(params)
    opts = {"bits": bits, "ngram": ngram, "normalize": normalize, "seed": seed}
    if tokenizer == "jieba":
        weights = "tfidf" if weights is None else weights
        if weights not in ("tf", "binary", "tfidf"):
            raise ValueError(f"jieba weights must be 'tf', 'binary' or 'tfidf', got {weights!r}")
        spec_params, setup = resolve(params, weights)
        spec = build_spec(tokenizer="jieba", weights=weights, params=spec_params, **opts)
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
        spec = build_spec(tokenizer="callable", weights=weights,
                         params={"name": name, **idf_params}, **opts)
        return spec, {"func": func, "idf": idf}
    if tokenizer in (None, "char", "word"):
        if weights == "given":
            raise ValueError("weights='given' needs a tokenizer that returns weights")
        unknown = sorted(set(params) - {"idf"})
        if unknown:
            raise ValueError(f"unknown params {unknown} for tokenizer {tokenizer or 'char'!r}")
        idf_params, idf = _idf_param(params, weights or "tf", f"tokenizer {tokenizer!r}")
        spec = build_spec(tokenizer=tokenizer, weights=weights, params=idf_params or None,
                         **opts)
        return spec, {"idf": idf}
    if tokenizer == "sklearn":
        raise ValueError("tokenizer 'sklearn' fingerprints come from "
                         "simhash_nb.sklearn.SimhashVectorizer or sh.fingerprint_sparse")
    if tokenizer == "hashes":
        raise ValueError("tokenizer 'hashes' fingerprints come from sh.fingerprint_features")
    raise ValueError(f"tokenizer must be 'char', 'word', 'jieba' or a callable, got {tokenizer!r}")


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(spec options that are set, run options)`` of a face's ``**options``.

    Raises ``TypeError`` naming :data:`FINGERPRINT_OPTIONS` for an unknown option.
    """
    options = dict(options)
    unknown = sorted(set(options) - set(FINGERPRINT_OPTIONS))
    if unknown:
        raise TypeError(
            f"unexpected keyword arguments {unknown}; fingerprint options are "
            f"{list(FINGERPRINT_OPTIONS)}"
        )
    run = {k: options.pop(k, None) for k in RUN_OPTIONS}
    return {k: v for k, v in options.items() if v is not None}, run


def prepare(*, tokenizer=None, ngram=None, weights=None, normalize=None, seed=None, bits=None,
            spec: FingerprintSpec | None = None, params=None):
    """The spec of these options and the objects it stands for (callable, stop words, IDF).

    With ``spec``, ``tokenizer`` may be the callable a ``"callable"`` spec was made
    with and ``params`` may hold the objects it records by content; the spec they give
    must equal ``spec``.
    """
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
    spec = build_spec(spec, bits=bits, tokenizer=None if func else tokenizer, ngram=ngram,
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


def _from_options(cls, spec: FingerprintSpec | None = None, **options: Any) -> FingerprintSpec:
    """The spec of fingerprint options: the one way to build a spec from them.

    The same spec :func:`simhash_nb.fingerprint` (and every face: the accessors,
    the CLI, Dask) makes of these options: ``ngram`` and ``weights`` default by
    tokenizer, a callable tokenizer is named, jieba's stop words and user dictionary
    and an IDF table are recorded by checksum.

    Parameters
    ----------
    spec : FingerprintSpec, optional
        Returned as it is (then pass no options).
    **options
        ``bits``, ``tokenizer`` (a name or a callable), ``ngram``, ``weights``,
        ``normalize``, ``seed``, ``params`` as in :func:`simhash_nb.fingerprint`.
        ``tokenizer="sklearn"`` or ``"hashes"`` give the spec with those fields.

    Returns
    -------
    FingerprintSpec

    Raises
    ------
    TypeError
        If ``spec`` is not a FingerprintSpec, or an option is unknown.
    ValueError
        If both ``spec`` and options are given, or an option's value is invalid.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> sh.FingerprintSpec.from_options(tokenizer="word").ngram
    1
    >>> sh.FingerprintSpec.from_options(tokenizer="jieba").weights
    'tfidf'
    >>> sh.FingerprintSpec.from_options() == sh.FingerprintSpec()
    True
    """
    given = {k: v for k, v in options.items() if v is not None}
    if spec is not None or given.get("tokenizer") in ("sklearn", "hashes"):
        return build_spec(spec, **options)
    unknown = sorted(set(options) - set(SPEC_OPTIONS))
    if unknown:
        raise TypeError(f"unknown fingerprint options {unknown}; choose from "
                        f"{[k for k in SPEC_OPTIONS if k != 'spec']}")
    return prepare(**options)[0]


# the classmethod lives with the options it reads; spec.py cannot import this module
_from_options.__name__ = "from_options"
_from_options.__qualname__ = "FingerprintSpec.from_options"
FingerprintSpec.from_options = classmethod(_from_options)  # type: ignore[attr-defined]
