"""Chinese word features with jieba, stop words and TF-IDF weights.

jieba (precise mode) segments each normalised text; tokens without a letter or digit
(spaces, punctuation) and stop words are dropped; the remaining tokens (or their
n-grams, joined by one space) are hashed with the same xxh64 as every other feature and
weighted by term frequency, 1 (binary) or TF-IDF. jieba itself is pure Python and is
the slow part: everything after it is vectorised, and ``n_jobs`` spreads large batches
over worker processes with results identical to one process.

The spec records what decides the features: ``params`` holds ``hmm``, ``stop_words``
(``"default"``, ``"none"`` or ``"sha1:..."`` of a list you bring), ``user_dict``
(``"sha1:..."`` of the dictionary file's bytes) and, for TF-IDF, ``idf`` (``"jieba"``
or ``"sha1:..."`` of an :class:`IdfTable`). Lists, files and tables you bring are
recorded by content; pass them again to make comparable fingerprints.
"""

from __future__ import annotations

import atexit
import functools
import multiprocessing
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..config import config
from . import tokens as _tokens
from .batch import FeatureBatch
from .idf import IdfTable, apply_idf, digest
from .progress import progress_bar, show_progress
from .spec import FingerprintSpec, build_spec
from .text import normalize_arrow, to_arrow

__all__ = ["jieba_features", "jieba_tokens", "default_stop_words"]

_PARAM_KEYS = ("hmm", "idf", "stop_words", "user_dict")


# --- stop words ----------------------------------------------------------------------


@functools.cache
def default_stop_words() -> frozenset[str]:
    """The bundled Chinese stop words (stopwords-iso ``zh``, MIT; 794 entries).

    Examples
    --------
    >>> from simhash_nb.jieba_features import default_stop_words
    >>> "的" in default_stop_words(), len(default_stop_words())
    (True, 794)
    """
    text = resources.files("simhash_nb").joinpath("data/stopwords_zh.txt").read_text("utf-8")
    return frozenset(w for w in text.splitlines() if w)



def _stop_words(value) -> tuple[str, frozenset[str]]:
    """(spec tag, words) of a ``stop_words`` option."""
    if value is None or (isinstance(value, str) and value == "none"):
        return "none", frozenset()
    if isinstance(value, str) and value == "default":
        return "default", default_stop_words()
    if isinstance(value, str) and value.startswith("sha1:"):
        raise ValueError(f"this spec's stop words ({value}) are recorded by content only; pass "
                         "them again with params={'stop_words': words}")
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"stop-word file {path!r} does not exist (pass 'default', 'none', a file "
                "with one word per line, or a collection of words)")
        with open(path, encoding="utf-8") as f:
            words = frozenset(w.strip() for w in f if w.strip())
    elif isinstance(value, Iterable):
        words = frozenset(value)
        bad = [w for w in words if not isinstance(w, str)]
        if bad:
            raise TypeError(f"stop words must be strings, got {type(bad[0]).__name__}")
    else:
        raise TypeError(f"stop_words must be 'default', 'none', a path or words, got {value!r}")
    if words == default_stop_words():
        return "default", words
    return digest(w.encode("utf-8") for w in sorted(words)), words


def _user_dict(value) -> tuple[str | None, str | None]:
    """(path, spec tag) of a ``user_dict`` option."""
    if value is None:
        return None, None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"user_dict must be a path to a jieba dictionary file, got {value!r}")
    if isinstance(value, str) and value.startswith("sha1:"):
        raise ValueError(f"this spec's user dictionary ({value}) is recorded by content only; "
                         "pass its path again with params={'user_dict': path}")
    path = os.path.abspath(os.fspath(value))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"jieba user dictionary {os.fspath(value)!r} does not exist")
    with open(path, "rb") as f:
        return path, digest([f.read()])


# --- options -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setup:
    hmm: bool
    stop_words: frozenset
    user_dict: str | None
    idf: object  # IdfTable, "fit", or None


def resolve(params: Mapping | None, weights: str) -> tuple[dict, _Setup]:
    """Spec params (JSON values) and the objects they stand for, from user options."""
    params = dict(params or {})
    unknown = sorted(set(params) - set(_PARAM_KEYS) - {"name"})
    if unknown:
        raise ValueError(f"unknown jieba params {unknown}; choose from {list(_PARAM_KEYS)}")
    hmm = params.get("hmm", True)
    if not isinstance(hmm, bool):
        raise TypeError(f"params['hmm'] must be True or False, got {hmm!r}")
    sw_tag, words = _stop_words(params.get("stop_words", "default"))
    path, ud_tag = _user_dict(params.get("user_dict"))
    out = {"hmm": hmm, "stop_words": sw_tag}
    if ud_tag is not None:
        out["user_dict"] = ud_tag
    idf = params.get("idf")
    if weights == "tfidf":
        idf = "jieba" if idf is None else idf
        if isinstance(idf, IdfTable):
            out["idf"] = idf.tag
        elif idf == "jieba":
            out["idf"] = "jieba"
        elif idf == "fit":
            out["idf"] = "fit"  # replaced by the fitted table's tag
        elif isinstance(idf, str) and idf.startswith("sha1:"):
            raise ValueError(
                f"this spec's IDF table ({idf}) is not stored in the spec; pass the IdfTable "
                "again with params={'idf': table}")
        else:
            raise ValueError(f"params['idf'] must be 'jieba', 'fit' or an IdfTable, got {idf!r}")
    elif idf is not None:
        raise ValueError("params['idf'] is used only with weights='tfidf'")
    return out, _Setup(hmm, words, path, idf)


# --- tokenising (worker processes) -------------------------------------------------------

_TOKENIZERS: dict = {}
_POOLS: dict = {}


def _tokenizer(user_dict: str | None):
    tok = _TOKENIZERS.get(user_dict)
    if tok is None:
        import jieba  # optional, and slow to import (its dictionary)

        if user_dict is None:
            tok = jieba.dt
        else:
            tok = jieba.Tokenizer()
            tok.load_userdict(user_dict)
        _TOKENIZERS[user_dict] = tok
    return tok


def _cut(texts: list, user_dict: str | None, hmm: bool) -> tuple[pa.Array, np.ndarray]:
    """jieba tokens of each text, back to back, and how many each text has."""
    cut = _tokenizer(user_dict).lcut
    flat: list[str] = []
    extend = flat.extend
    lengths = []
    append = lengths.append
    for t in texts:
        if t:
            toks = cut(t, False, hmm)
            extend(toks)
            append(len(toks))
        else:
            append(0)
    return pa.array(flat, type=pa.large_string()), np.array(lengths, dtype=np.int64)


def _pool(n: int):
    pool = _POOLS.get(n)
    if pool is None:
        ctx = multiprocessing.get_context(config["jieba_mp_context"])
        pool = ProcessPoolExecutor(n, mp_context=ctx)
        _POOLS[n] = pool
    return pool


@atexit.register
def _shutdown_pools() -> None:
    for pool in _POOLS.values():
        pool.shutdown(wait=False, cancel_futures=True)
    _POOLS.clear()


def _n_processes(n_jobs, total_chars: int) -> int:
    if n_jobs is None:
        per = config["jieba_min_chars_per_process"]
        return max(1, min(os.cpu_count() or 1, total_chars // max(1, per)))
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    cores = os.cpu_count() or 1
    return max(1, int(n_jobs) if n_jobs > 0 else cores + 1 + int(n_jobs))


def _chunks(lengths: np.ndarray, n_chunks: int) -> list[tuple[int, int]]:
    cost = np.concatenate(([0], np.cumsum(lengths + 1)))
    bounds = np.searchsorted(cost, np.linspace(0, cost[-1], n_chunks + 1), side="left")
    bounds[0], bounds[-1] = 0, lengths.shape[0]
    bounds = np.unique(bounds)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def cut_texts(texts, *, normalize=("nfkc", "lower"), user_dict: str | None = None,
              hmm: bool = True, n_jobs=None, progress=None, func=None
              ) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray | None]:
    """Tokens of all texts (jieba, or ``func`` in this process), per-text counts, validity
    and token weights (None unless ``func`` returned (token, weight) pairs)."""
    arr = normalize_arrow(to_arrow(texts), tuple(normalize))
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    valid = arr.is_valid().to_numpy(zero_copy_only=False).astype(bool, copy=False)
    n = len(arr)
    lengths_chars = pc.fill_null(pc.utf8_length(arr), 0).to_numpy(zero_copy_only=False)
    total = int(lengths_chars.sum())
    nproc = 1 if func is not None else _n_processes(n_jobs, total)
    nproc = min(nproc, max(1, n))
    show = show_progress(progress, total, config["progress_min_chars"])
    if nproc == 1 and not show:
        work = [(0, n)]
    else:
        per_chunk = config["jieba_chunk_chars"]
        n_chunks = max(nproc * 4, -(-total // per_chunk)) if n else 1
        work = _chunks(lengths_chars.astype(np.int64), min(max(1, n), n_chunks))
    parts = []
    with progress_bar(show, total, desc="tokenising", unit="char", unit_scale=True) as advance:
        if nproc > 1:
            pool = _pool(nproc)
            futures = [pool.submit(_cut, arr.slice(a, b - a).to_pylist(), user_dict, hmm)
                       for a, b in work]
            for (a, b), fut in zip(work, futures, strict=True):
                parts.append(fut.result())
                if advance is not None:
                    advance(int(lengths_chars[a:b].sum()))
        else:
            for a, b in work:
                texts_ab = arr.slice(a, b - a).to_pylist()
                parts.append(_cut(texts_ab, user_dict, hmm) if func is None
                             else _call(func, texts_ab, a))
                if advance is not None:
                    advance(int(lengths_chars[a:b].sum()))
    if not parts:
        return pa.array([], pa.large_string()), np.zeros(0, np.int64), valid, None
    tokens = pa.concat_arrays([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
    lengths = np.concatenate([p[1] for p in parts])
    weights = [p[2] if len(p) > 2 else None for p in parts]
    if all(w is None for w in weights):
        return tokens, lengths, valid, None
    return tokens, lengths, valid, np.concatenate(
        [np.ones(len(p[0])) if w is None else w for p, w in zip(parts, weights, strict=True)])


def _call(func, texts: list, first: int):
    """Run a user's tokenizer on each text: tokens, or (token, weight) pairs."""
    flat: list[str] = []
    weights: list[float] = []
    lengths = np.zeros(len(texts), dtype=np.int64)
    pairs = None
    for i, t in enumerate(texts):
        if t is None:
            continue
        out = func(t)
        if isinstance(out, str) or not isinstance(out, Iterable):
            raise TypeError(
                f"the tokenizer returned {type(out).__name__} for text {first + i}; it must "
                "return a list of tokens (str) or of (token, weight) pairs")
        out = list(out)
        if out:
            is_pair = not isinstance(out[0], str)
            if pairs is None:
                pairs = is_pair
            if is_pair != pairs:
                raise TypeError(
                    f"the tokenizer returned tokens for some texts and (token, weight) pairs "
                    f"for others (text {first + i}); return one kind")
            if pairs:
                try:
                    toks, ws = zip(*out, strict=True)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"the tokenizer's output for text {first + i} is neither a list of "
                        "tokens (str) nor of (token, weight) pairs") from None
                flat.extend(toks)
                weights.extend(ws)
            else:
                flat.extend(out)
        lengths[i] = len(out)
    tokens = _tokens.as_string_array(flat)
    if not pairs:
        return tokens, lengths, None
    try:
        w = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("token weights must be numbers") from None
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("token weights must be finite and >= 0")
    return tokens, lengths, w


# --- features ------------------------------------------------------------------------


def _keep_mask(tokens: pa.Array, stop_words: frozenset, normalize) -> np.ndarray:
    keep = _tokens.word_mask(tokens)
    if stop_words and len(tokens):
        stop = normalize_arrow(pa.array(sorted(stop_words), pa.large_string()),
                               tuple(normalize))
        keep &= ~pc.is_in(tokens, value_set=stop).to_numpy(zero_copy_only=False)
    return keep


def callable_batch(texts, spec: FingerprintSpec, func, idf=None, progress=None
                   ) -> tuple[FeatureBatch, np.ndarray, FingerprintSpec]:
    """FeatureBatch of a user's tokenizer (the slow path: one Python call per text)."""
    tokens, lengths, valid, tw = cut_texts(texts, normalize=spec.normalize, func=func,
                                           progress=progress)
    if tw is not None and spec.weights != "given":
        raise ValueError("the tokenizer returned (token, weight) pairs; pass weights='given' "
                         "to use their weights")
    if tw is None and spec.weights == "given" and len(tokens):
        raise ValueError("weights='given' needs a tokenizer that returns (token, weight) pairs")
    if tw is not None and spec.ngram != 1:
        raise ValueError("(token, weight) pairs need ngram=1")
    fb = _tokens.token_features(tokens, lengths, ngram=spec.ngram, seed=spec.seed,
                                binary=spec.weights == "binary", token_weights=tw)
    if spec.weights == "tfidf":
        fb, spec = apply_idf(fb, spec, idf)
    return fb, valid, spec


def jieba_batch(texts, spec: FingerprintSpec, setup: _Setup, n_jobs=None, progress=None
                ) -> tuple[FeatureBatch, np.ndarray, FingerprintSpec]:
    """FeatureBatch, validity and final spec (fitted IDF recorded) of ``texts``."""
    tokens, lengths, valid, _ = cut_texts(texts, normalize=spec.normalize,
                                       user_dict=setup.user_dict, hmm=setup.hmm,
                                       n_jobs=n_jobs, progress=progress)
    keep = _keep_mask(tokens, setup.stop_words, spec.normalize)
    tokens, lengths = _tokens.filter_tokens(tokens, lengths, keep)
    fb = _tokens.token_features(tokens, lengths, ngram=spec.ngram, seed=spec.seed,
                                binary=spec.weights == "binary")
    if spec.weights == "tfidf":
        fb, spec = apply_idf(fb, spec, setup.idf)
    return fb, valid, spec



def _spec(ngram, weights, normalize, seed, bits, params) -> tuple[FingerprintSpec, _Setup]:
    weights = "tfidf" if weights is None else weights
    if weights not in ("tf", "binary", "tfidf"):
        raise ValueError(f"jieba weights must be 'tf', 'binary' or 'tfidf', got {weights!r}")
    spec_params, setup = resolve(params, weights)
    spec = build_spec(bits=bits, tokenizer="jieba", ngram=ngram, weights=weights,
                     normalize=normalize, seed=seed, params=spec_params)
    return spec, setup


def jieba_tokens(
    texts,
    *,
    stop_words="default",
    user_dict: str | None = None,
    hmm: bool = True,
    normalize=("nfkc", "lower"),
    n_jobs: int | None = None,
    progress: bool | None = None,
) -> list[list[str]]:
    """The tokens the jieba features are made of, per text (after stop-word removal).

    Parameters
    ----------
    texts : sequence of str
    stop_words : "default", "none", path or collection of str
        Words to drop (the bundled list by default). Tokens without a letter or digit
        are always dropped.
    user_dict : path, optional
        A jieba user dictionary (one ``word [freq] [tag]`` a line).
    hmm : bool, default True
        jieba's HMM for words not in its dictionary.
    normalize : tuple of str, default ("nfkc", "lower")
    n_jobs : int, optional
        Worker processes (default: one per 10**6 characters, at most one per core).
    progress : bool, optional
        tqdm progress bar (default: on batches over 5 million characters in a terminal).

    Returns
    -------
    list of list of str

    Examples
    --------
    >>> from simhash_nb.jieba_features import jieba_tokens
    >>> jieba_tokens(["我们在北京天安门。"])
    [['北京', '天安门']]
    """
    sw_tag, words = _stop_words(stop_words)
    path, _ = _user_dict(user_dict)
    tokens, lengths, _, _ = cut_texts(texts, normalize=normalize, user_dict=path, hmm=hmm,
                                   n_jobs=n_jobs, progress=progress)
    keep = _keep_mask(tokens, words, normalize)
    tokens, lengths = _tokens.filter_tokens(tokens, lengths, keep)
    flat = tokens.to_pylist()
    ends = np.cumsum(lengths)
    return [flat[e - m:e] for e, m in zip(ends.tolist(), lengths.tolist(), strict=True)]


def jieba_features(
    texts,
    *,
    ngram: int = 1,
    weights: str = "tfidf",
    stop_words="default",
    user_dict: str | None = None,
    idf="jieba",
    hmm: bool = True,
    normalize=("nfkc", "lower"),
    seed: int = 0,
    n_jobs: int | None = None,
    progress: bool | None = None,
) -> FeatureBatch:
    """jieba word features of ``texts``, weighted by TF-IDF (or tf, or binary).

    The same as ``sh.features(texts, tokenizer="jieba", params={...})`` with these
    options as params. A text left with no tokens after stop-word removal has no
    features: its fingerprint is 0 and ``n_features`` is 0 (not an error).

    Parameters
    ----------
    texts : sequence of str
    ngram : int, default 1
        Tokens per feature (n-grams joined by one space, like the word tokenizer).
    weights : {"tfidf", "tf", "binary"}, default "tfidf"
    stop_words : "default", "none", path or collection of str
    user_dict : path, optional
        jieba user dictionary; a missing file raises FileNotFoundError.
    idf : "jieba", "fit" or IdfTable, default "jieba"
        jieba's bundled IDF table (unknown words get its median), a table fitted on
        these texts, or one you fitted with :func:`fit_idf`.
    hmm : bool, default True
    normalize : tuple of str, default ("nfkc", "lower")
    seed : int, default 0
    n_jobs : int, optional
        Worker processes for jieba; results are identical for any value.
    progress : bool, optional

    Returns
    -------
    FeatureBatch

    Examples
    --------
    >>> import simhash_nb as sh
    >>> from simhash_nb.jieba_features import jieba_features
    >>> fb = jieba_features(["我爱北京天安门", "的了"])
    >>> fb.n_features.tolist()
    [3, 0]
    >>> fps = sh.fingerprint_features(fb)
    >>> int(fps[1])
    0
    """
    params = {"stop_words": stop_words, "user_dict": user_dict, "hmm": hmm}
    if weights == "tfidf":
        params["idf"] = idf
    spec, setup = _spec(ngram, weights, normalize, seed, None, params)
    fb, _, _ = jieba_batch(texts, spec, setup, n_jobs, progress)
    return fb
