"""Tokens made in Python (jieba, a user's callable, a vectorizer's vocabulary) to features.

The slow part of these paths is the tokenizer itself; everything after it is vectorised:
all tokens of a batch travel as one pyarrow string array, are filtered and joined into
n-grams with pyarrow.compute, hashed with the same Numba xxh64 as the built-in shingles
(UTF-8 bytes, words of an n-gram joined by one space), and grouped per document with
numpy into a :class:`~simhash_nb.FeatureBatch`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._kernels.xxh64 import xxh64_many
from .batch import FeatureBatch
from .parallel import deferred_interrupt
from .text import string_buffers


def as_string_array(strings) -> pa.Array:
    """A list/array of str as a ``large_string`` pyarrow array (no nulls allowed)."""
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    if isinstance(strings, pa.Array):
        arr = strings
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            raise TypeError(f"tokens must be strings, got arrow type {arr.type}")
        if not pa.types.is_large_string(arr.type):
            arr = arr.cast(pa.large_string())
    else:
        try:
            arr = pa.array(strings if isinstance(strings, list) else list(strings),
                           type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise TypeError(f"tokens must be strings: {exc}") from None
    if arr.null_count:
        pos = int(np.flatnonzero(~arr.is_valid().to_numpy(zero_copy_only=False))[0])
        raise TypeError(f"token {pos} is None; tokens must be strings")
    return arr


def hash_strings(strings, seed: int = 0) -> np.ndarray:
    """xxh64 of the UTF-8 bytes of each string, exactly as the built-in features are hashed.

    Examples
    --------
    >>> from simhash_nb._core.tokens import hash_strings
    >>> import simhash_nb as sh
    >>> h = hash_strings(["cat"])
    >>> bool(h[0] == sh.features(["cat"], tokenizer="word").hashes[0])
    True
    """
    arr = as_string_array(strings)
    if len(arr) == 0:
        return np.empty(0, np.uint64)
    data, offsets = string_buffers(arr)
    with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
        return xxh64_many(data, np.ascontiguousarray(offsets, dtype=np.int64),
                          np.uint64(seed))


def ngram_strings(tokens: pa.Array, lengths: np.ndarray, n: int) -> tuple[pa.Array, np.ndarray]:
    """Word n-grams (tokens joined by one space) of each document's token run.

    ``tokens`` holds all documents' tokens back to back, ``lengths[d]`` of them for
    document ``d``. A document with ``0 < L < n`` tokens gives one feature: all of
    them joined. Returns ``(grams, doc)``: the n-grams and the document of each.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    ndocs = lengths.shape[0]
    doc = np.repeat(np.arange(ndocs, dtype=np.int64), lengths)
    if n == 1 or ndocs == 0:
        return tokens, doc
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    pos = np.arange(doc.shape[0], dtype=np.int64) - np.repeat(starts, lengths)
    full = pos <= (lengths[doc] - n)
    idx = np.flatnonzero(full)
    parts = [tokens.take(pa.array(idx + j)) for j in range(n)]
    sep = pa.scalar(" ", pa.large_string())
    grams = pc.binary_join_element_wise(*parts, sep) if idx.size else pa.array(
        [], pa.large_string())
    gdoc = doc[idx]
    short = np.flatnonzero((lengths > 0) & (lengths < n))
    if short.size:
        extra = [" ".join(tokens.slice(int(starts[d]), int(lengths[d])).to_pylist())
                 for d in short]
        grams = pa.concat_arrays([grams.cast(pa.large_string()),
                                  pa.array(extra, pa.large_string())])
        gdoc = np.concatenate((gdoc, short))
    return grams, gdoc


def group_features(doc: np.ndarray, hashes: np.ndarray, weights: np.ndarray | None,
                   ndocs: int, binary: bool = False) -> FeatureBatch:
    """Distinct sorted hashes per document with summed weights (1 per occurrence if None).

    With ``binary`` every distinct feature weighs 1.
    """
    doc = np.asarray(doc, dtype=np.int64)
    hashes = np.asarray(hashes, dtype=np.uint64)
    if hashes.shape[0] == 0:
        return FeatureBatch(np.zeros(ndocs + 1, np.int64), np.empty(0, np.uint64),
                            np.empty(0, np.float64))
    order = np.lexsort((hashes, doc))
    d = doc[order]
    h = hashes[order]
    new = np.ones(h.shape[0], dtype=bool)
    new[1:] = (d[1:] != d[:-1]) | (h[1:] != h[:-1])
    group = np.cumsum(new) - 1
    if binary:
        w = np.ones(int(group[-1]) + 1, dtype=np.float64)
    elif weights is None:
        w = np.bincount(group).astype(np.float64)
    else:
        w = np.bincount(group, weights=np.asarray(weights, dtype=np.float64)[order])
    ud = d[new]
    indptr = np.zeros(ndocs + 1, dtype=np.int64)
    np.cumsum(np.bincount(ud, minlength=ndocs), out=indptr[1:])
    return FeatureBatch(indptr, np.ascontiguousarray(h[new]), w)


def token_features(tokens: pa.Array, lengths: np.ndarray, *, ngram: int = 1, seed: int = 0,
                   binary: bool = False, token_weights: np.ndarray | None = None
                   ) -> FeatureBatch:
    """FeatureBatch of token runs: n-grams hashed with xxh64, grouped per document.

    ``token_weights`` (one per token, only with ``ngram == 1``) are summed per distinct
    feature; without them each occurrence counts 1 (term frequency).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if token_weights is not None and ngram != 1:
        raise ValueError("tokens with weights need ngram=1")
    grams, doc = ngram_strings(tokens, lengths, ngram)
    hashes = hash_strings(grams, seed)
    return group_features(doc, hashes, token_weights, lengths.shape[0], binary)


def word_mask(tokens: pa.Array) -> np.ndarray:
    """True for tokens with at least one letter or digit (drops spaces and punctuation)."""
    if len(tokens) == 0:
        return np.zeros(0, dtype=bool)
    m = pc.match_substring_regex(tokens, r"[\p{L}\p{N}]")
    return m.to_numpy(zero_copy_only=False).astype(bool, copy=False)


def filter_tokens(tokens: pa.Array, lengths: np.ndarray, keep: np.ndarray
                  ) -> tuple[pa.Array, np.ndarray]:
    """Keep the tokens where ``keep`` is True; returns the tokens and new per-doc lengths."""
    lengths = np.asarray(lengths, dtype=np.int64)
    ndocs = lengths.shape[0]
    doc = np.repeat(np.arange(ndocs, dtype=np.int64), lengths)
    new_lengths = np.bincount(doc[keep], minlength=ndocs).astype(np.int64)
    return tokens.filter(pa.array(keep)), new_lengths


# --- a document-term matrix and its vocabulary ---------------------------------------


def vocabulary_hashes(vocabulary, seed: int = 0) -> np.ndarray:
    """xxh64 of each term of a vocabulary (term to column, or terms), in column order."""
    if isinstance(vocabulary, Mapping):
        cols = np.fromiter(vocabulary.values(), dtype=np.int64, count=len(vocabulary))
        n = len(vocabulary)
        if n and (cols.min() < 0 or cols.max() >= n or np.unique(cols).shape[0] != n):
            raise ValueError("vocabulary must map its n terms to the columns 0..n-1")
        terms = np.empty(n, dtype=object)
        terms[cols] = list(vocabulary.keys())
        terms = terms.tolist()
    elif isinstance(vocabulary, (str, bytes)) or not isinstance(vocabulary, (Sequence,
                                                                            np.ndarray)):
        raise TypeError("vocabulary must be a dict of term to column or a sequence of terms")
    else:
        terms = [str(t) if isinstance(t, np.str_) else t for t in vocabulary]
    return hash_strings(terms, seed)


def as_csr(X):
    """A scipy CSR matrix of a sparse matrix or a 2-D array."""
    import scipy.sparse as sp  # only for sparse matrices from scikit-learn

    if sp.issparse(X):
        return X.tocsr()
    arr = np.asarray(X)
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.number):
        raise TypeError("X must be a scipy sparse matrix or a 2-D numeric array "
                        "(documents x terms)")
    return sp.csr_matrix(arr)


def csr_batch(X, col_hashes: np.ndarray) -> FeatureBatch:
    """The FeatureBatch of a CSR matrix whose column ``c`` is the feature ``col_hashes[c]``."""
    data = np.asarray(X.data)
    if not np.issubdtype(data.dtype, np.floating):
        data = data.astype(np.float64)
    fb = FeatureBatch(np.asarray(X.indptr, dtype=np.int64),
                      col_hashes[np.asarray(X.indices, dtype=np.int64)], data)
    try:
        return fb.validated()
    except ValueError as exc:
        raise ValueError(f"X must hold non-negative finite weights: {exc}") from None


def _from_sparse(cls, X, vocabulary, seed: int = 0) -> FeatureBatch:
    """The features of the rows of a document-term matrix.

    Column ``c`` is the feature ``term_c`` with hash ``xxh64(term_c, seed)`` (the hash
    of every other feature source); row ``i``'s values are its weights.
    :func:`simhash_nb.fingerprint_sparse` is ``fingerprint_features`` of this batch.

    Parameters
    ----------
    X : scipy sparse matrix or 2-D array, shape (n_docs, n_terms)
        Non-negative finite weights (counts, TF-IDF, ...).
    vocabulary : dict of str to int, sequence of str, or uint64 array
        Terms of the columns (a vectorizer's ``vocabulary_`` or
        ``get_feature_names_out()``), or their hashes.
    seed : int, default 0
        Seed of the term hash (ignored for hashes).

    Returns
    -------
    FeatureBatch
        One row per row of ``X``.

    Raises
    ------
    TypeError
        If ``X`` is not a sparse matrix or 2-D numeric array, or ``vocabulary`` is
        neither terms nor hashes.
    ValueError
        If ``X`` and the vocabulary differ in their number of columns, or a weight is
        negative or not finite.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fb = sh.FeatureBatch.from_sparse(np.array([[2, 0], [1, 1]]), ["cat", "mat"])
    >>> fb.indptr.tolist(), fb.weights.tolist()
    ([0, 1, 3], [2.0, 1.0, 1.0])
    >>> bool(fb.hashes[0] == sh.features(["cat"], tokenizer="word").hashes[0])
    True
    """
    X = as_csr(X)
    v = vocabulary if isinstance(vocabulary, np.ndarray) else None
    if v is not None and v.dtype == np.uint64:
        hashes = v
    else:
        hashes = vocabulary_hashes(vocabulary, seed)
    if hashes.shape[0] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but the vocabulary has "
                         f"{hashes.shape[0]} terms")
    return csr_batch(X, hashes)


# the classmethod lives here, with the hashing it needs; batch.py is a leaf
_from_sparse.__name__ = "from_sparse"
_from_sparse.__qualname__ = "FeatureBatch.from_sparse"
FeatureBatch.from_sparse = classmethod(_from_sparse)  # type: ignore[attr-defined]
