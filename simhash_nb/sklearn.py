"""scikit-learn face: a SimHash vectorizer, and fingerprints of any sparse term matrix.

``SimhashVectorizer`` wraps scikit-learn's ``CountVectorizer``/``TfidfVectorizer``: ``fit``
learns the vocabulary (and IDF), ``transform`` returns fingerprints. Its vocabulary is
hashed once, with the same xxh64 as every other feature (terms' UTF-8 bytes; scikit-learn
names word n-grams by joining the words with one space, as the built-in word tokenizer
does), so a fitted vectorizer's columns become feature hashes and one kernel makes the
fingerprints.
"""

from __future__ import annotations

import hashlib

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.utils.validation import check_is_fitted

from ._core import tokens as _tokens
from ._core.batch import FeatureBatch
from ._core.docstrings import shared_docs
from ._core.fingerprint import fingerprint_features
from ._core.jieba import jieba_tokens
from ._core.spec import FingerprintSpec
from ._core.text import to_arrow
from ._core.validation import check_bits

__all__ = ["SimhashVectorizer", "fingerprint_sparse", "vocabulary_hashes"]


def vocabulary_hashes(vocabulary, seed: int = 0) -> np.ndarray:
    """xxh64 of each term, in column order.

    Parameters
    ----------
    vocabulary : dict of str to int, or sequence of str
        A fitted vectorizer's ``vocabulary_`` (term to column) or its
        ``get_feature_names_out()`` (terms in column order).
    seed : int, default 0

    Returns
    -------
    numpy.ndarray of uint64, one hash per column

    Raises
    ------
    TypeError
        If ``vocabulary`` is neither a dict of term to column nor a sequence of terms.
    ValueError
        If a dict does not map its ``n`` terms to the columns ``0..n-1``.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> h = vocabulary_hashes({"b": 1, "a": 0})
    >>> bool(h[0] == sh.features(["a"], tokenizer="word").hashes[0])
    True
    """
    return _tokens.vocabulary_hashes(vocabulary, seed)


def _vocab_tag(hashes: np.ndarray) -> str:
    return "sha1:" + hashlib.sha1(np.ascontiguousarray(hashes).tobytes()).hexdigest()


_as_csr = _tokens.as_csr


def fingerprint_sparse(X, vocabulary, bits: int = 64, seed: int = 0, *,
                       n_jobs: int | None = None) -> np.ndarray:
    """Fingerprints of the rows of a document-term matrix.

    Column ``c`` is the feature ``term_c`` with hash ``xxh64(term_c, seed)``; row
    ``i``'s weights are its values. With the same terms and weights this equals
    :func:`simhash_nb.fingerprint`: for instance ``CountVectorizer(token_pattern=
    r"(?u)\\b\\w+\\b")`` unigrams give ``sh.fingerprint(texts, tokenizer="word",
    normalize=("lower",))`` on ASCII text.

    Parameters
    ----------
    X : scipy sparse matrix or 2-D array, shape (n_docs, n_terms)
        Non-negative finite weights (counts, TF-IDF, ...). Scaling a row does not
        change its fingerprint.
    vocabulary : dict of str to int, sequence of str, or uint64 array
        Terms of the columns (``vectorizer.vocabulary_`` or
        ``get_feature_names_out()``), or their hashes from :func:`vocabulary_hashes`
        (hash a large vocabulary once and reuse it).
    bits : {64, 128}, default 64
    seed : int, default 0
    n_jobs : int, optional

    Returns
    -------
    numpy.ndarray
        ``uint64[n_docs]`` or ``uint64[n_docs, 2]``.

    Raises
    ------
    ValueError
        If ``X`` and the vocabulary differ in their number of columns.

    See Also
    --------
    simhash_nb.FeatureBatch.from_sparse : the features of ``X`` (this function
        fingerprints them with :func:`simhash_nb.fingerprint_features`).

    Examples
    --------
    >>> import simhash_nb as sh
    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> texts = ["the cat sat", "the cat sat on the mat"]
    >>> cv = CountVectorizer(token_pattern=r"(?u)\\b\\w+\\b").fit(texts)
    >>> fps = fingerprint_sparse(cv.transform(texts), cv.vocabulary_)
    >>> same = sh.fingerprint(texts, tokenizer="word", weights="tf", normalize=("lower",))
    >>> bool((fps == same).all())
    True
    """
    fb = FeatureBatch.from_sparse(X, vocabulary, seed)
    return fingerprint_features(fb, bits=bits, n_jobs=n_jobs)


def _fingerprint_csr(X, col_hashes: np.ndarray, bits: int, n_jobs) -> np.ndarray:
    return fingerprint_features(_tokens.csr_batch(X, col_hashes), bits=bits, n_jobs=n_jobs)


_PARAMETERS = {"texts": "X : sequence of str\n    Texts.",
               "fit_input": "X : sequence of str\n    Texts.\ny : None\n    Ignored."}
"""The numpydoc entries of the vectorizer's methods' input (``{{name}}`` docstring lines)."""


def _identity(x):
    return x


class SimhashVectorizer(TransformerMixin, BaseEstimator):
    """Texts to SimHash fingerprints through a fitted scikit-learn vectorizer.

    ``fit`` learns the vocabulary and, for ``weights="tfidf"``, the IDF of each term
    (scikit-learn's smooth IDF); ``transform`` weighs each text's terms and returns
    their fingerprints. Terms not seen in ``fit`` are ignored, as in any vectorizer.
    Works with ``clone``, ``Pipeline`` and ``GridSearchCV``.

    Parameters
    ----------
    bits : {64, 128}, default 64
    weights : {"tfidf", "tf", "binary"}, default "tfidf"
    analyzer : {"word", "char", "char_wb"}, default "word"
        scikit-learn's analyzer.
    ngram_range : tuple (min_n, max_n), default (1, 1)
    tokenizer : None, "jieba" or callable, default None
        None: ``token_pattern``. ``"jieba"``: Chinese words from
        :func:`simhash_nb.jieba_features.jieba_tokens` (stop words dropped, worker
        processes with ``n_jobs``). A callable is scikit-learn's ``tokenizer``.
    token_pattern : str, default r"(?u)\\b\\w+\\b"
        Unlike scikit-learn's default, one-letter words count (as in the built-in word
        tokenizer).
    lowercase : bool, default True
    stop_words : None, "english", list, or (with jieba) "default"
    min_df, max_df, max_features : as in scikit-learn
    sublinear_tf : bool, default False
        ``1 + log(tf)`` instead of ``tf`` (with "tfidf").
    seed : int, default 0
        Seed of the xxh64 term hash.
    output : {"fingerprints", "bits"}, default "fingerprints"
        ``uint64`` fingerprints, or an ``(n, bits)`` array of 0/1 (``float32``) for
        estimators downstream in a Pipeline.
    n_jobs : int, optional

    Attributes
    ----------
    vectorizer_ : CountVectorizer or TfidfVectorizer
    vocabulary_ : dict of str to int
    idf_ : ndarray of float64 (only with "tfidf")
    term_hashes_ : ndarray of uint64, xxh64 of each term in column order
    spec_ : FingerprintSpec
        ``tokenizer="sklearn"``, the vocabulary (and IDF) checksum in ``params``.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> from simhash_nb.sklearn import SimhashVectorizer
    >>> vec = SimhashVectorizer().fit(["the cat sat on the mat", "a dog barked"])
    >>> fps = vec.transform(["the cat sat on the mat", "the cat sat on a mat"])
    >>> fps.dtype, int(sh.hamming(fps[0], fps[1])) < 16
    (dtype('uint64'), True)
    """

    def __init__(self, *, bits=64, weights="tfidf", analyzer="word", ngram_range=(1, 1),
                 tokenizer=None, token_pattern=r"(?u)\b\w+\b", lowercase=True, stop_words=None,
                 min_df=1, max_df=1.0, max_features=None, sublinear_tf=False, seed=0,
                 output="fingerprints", n_jobs=None):
        self.bits = bits
        self.weights = weights
        self.analyzer = analyzer
        self.ngram_range = ngram_range
        self.tokenizer = tokenizer
        self.token_pattern = token_pattern
        self.lowercase = lowercase
        self.stop_words = stop_words
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.sublinear_tf = sublinear_tf
        self.seed = seed
        self.output = output
        self.n_jobs = n_jobs

    def _check_params(self) -> None:
        check_bits(self.bits)
        if self.weights not in ("tfidf", "tf", "binary"):
            raise ValueError(f"weights must be 'tfidf', 'tf' or 'binary', got {self.weights!r}")
        if self.output not in ("fingerprints", "bits"):
            raise ValueError(f"output must be 'fingerprints' or 'bits', got {self.output!r}")
        if not (self.tokenizer is None or self.tokenizer == "jieba" or callable(self.tokenizer)):
            raise ValueError(f"tokenizer must be None, 'jieba' or a callable, got "
                             f"{self.tokenizer!r}")

    def _jieba(self) -> bool:
        return isinstance(self.tokenizer, str) and self.tokenizer == "jieba"

    def _make_vectorizer(self):
        common = {"ngram_range": tuple(self.ngram_range), "min_df": self.min_df,
                  "max_df": self.max_df, "max_features": self.max_features,
                  "binary": self.weights == "binary", "dtype": np.float64}
        if self._jieba():
            common.update(analyzer="word", tokenizer=_identity, preprocessor=_identity,
                          lowercase=False, token_pattern=None)
        else:
            stop = self.stop_words
            common.update(analyzer=self.analyzer, tokenizer=self.tokenizer,
                          token_pattern=None if self.tokenizer is not None
                          else self.token_pattern,
                          lowercase=self.lowercase, stop_words=stop)
        if self.weights == "tfidf":
            return TfidfVectorizer(norm=None, sublinear_tf=self.sublinear_tf, **common)
        return CountVectorizer(**common)

    def _documents(self, X):
        if isinstance(X, str):
            raise TypeError("X must be a sequence of texts, not a single string")
        arr = to_arrow(X)
        if arr.null_count:
            pos = int(np.flatnonzero(~arr.is_valid().to_numpy(zero_copy_only=False))[0])
            raise ValueError(f"X[{pos}] is missing (None/NaN/NA); drop missing texts first")
        if not self._jieba():
            return arr.to_pylist()

        stop = "default" if self.stop_words is None else self.stop_words
        return jieba_tokens(arr, stop_words=stop, n_jobs=self.n_jobs,
                            normalize=("nfkc", "lower") if self.lowercase else ("nfkc",))

    @shared_docs(**_PARAMETERS)
    def fit(self, X, y=None):
        """Learn the vocabulary (and IDF) of the texts ``X``.

        Parameters
        ----------
        {{fit_input}}

        Returns
        -------
        SimhashVectorizer
            The fitted vectorizer.
        """
        self.fit_transform(X, y)
        return self

    @shared_docs(**_PARAMETERS)
    def fit_transform(self, X, y=None):
        """Fit and return the fingerprints of ``X``.

        Parameters
        ----------
        {{fit_input}}

        Returns
        -------
        numpy.ndarray
            ``uint64[n]`` (``[n, 2]`` for 128 bits), or ``float32[n, bits]`` of 0/1 with
            ``output="bits"``.
        """
        self._check_params()
        docs = self._documents(X)
        vec = self._make_vectorizer()
        M = vec.fit_transform(docs)
        self.vectorizer_ = vec
        self.vocabulary_ = vec.vocabulary_
        self.term_hashes_ = vocabulary_hashes(vec.get_feature_names_out().tolist(), self.seed)
        params = {"vocabulary": _vocab_tag(self.term_hashes_),
                  "analyzer": "jieba" if self._jieba() else str(self.analyzer),
                  "ngram_range": f"{self.ngram_range[0]}-{self.ngram_range[1]}",
                  "lowercase": bool(self.lowercase)}
        if self.weights == "tfidf":
            self.idf_ = vec.idf_
            params["idf"] = "sha1:" + hashlib.sha1(vec.idf_.tobytes()).hexdigest()
            params["sublinear_tf"] = bool(self.sublinear_tf)
        if callable(self.tokenizer):
            params["name"] = getattr(self.tokenizer, "__qualname__", type(self.tokenizer).__name__)
        self.spec_ = FingerprintSpec(bits=self.bits, tokenizer="sklearn",
                                     ngram=int(self.ngram_range[1]), weights=self.weights,
                                     normalize=(), seed=int(self.seed), params=params)
        return self._output(_fingerprint_csr(M, self.term_hashes_, self.bits, self.n_jobs))

    @shared_docs(**_PARAMETERS)
    def transform(self, X):
        """Fingerprints of the texts ``X`` (``uint64[n]``/``[n, 2]``, or bits).

        Parameters
        ----------
        {{texts}}

        Returns
        -------
        numpy.ndarray
            As :meth:`fit_transform`.
        """
        check_is_fitted(self, "vectorizer_")
        M = self.vectorizer_.transform(self._documents(X))
        return self._output(_fingerprint_csr(M, self.term_hashes_, self.bits, self.n_jobs))

    def _output(self, fps: np.ndarray) -> np.ndarray:
        if self.output == "fingerprints":
            return fps
        words = fps.reshape(fps.shape[0], -1).astype("<u8")
        bits = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")
        return bits.astype(np.float32)

    def get_feature_names_out(self, input_features=None):
        """``fp0`` (and ``fp1``) for fingerprints, ``bit0..`` for bits.

        Parameters
        ----------
        input_features : None
            Ignored (the output columns do not depend on input features).

        Returns
        -------
        numpy.ndarray of str
        """
        check_is_fitted(self, "vectorizer_")
        if self.output == "bits":
            return np.array([f"bit{b}" for b in range(self.bits)], dtype=object)
        return np.array([f"fp{w}" for w in range(self.bits // 64)], dtype=object)
