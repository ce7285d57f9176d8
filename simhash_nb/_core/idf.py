"""IDF weighting of any tokenizer's features: :class:`IdfTable` (fitted, jieba's, or yours)."""

from __future__ import annotations

import functools
import hashlib
import math
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from . import tokens as _tokens
from .batch import FeatureBatch
from .spec import FingerprintSpec
from .text import normalize_arrow

__all__ = ["IdfTable", "apply_idf", "document_frequencies"]


_SAVED_FORMAT = "simhash_nb.IdfTable/1"
"""The first entry of a file written by :meth:`IdfTable.save`."""


def digest(parts: Iterable[bytes]) -> str:
    """``"sha1:<hex>"`` of length-prefixed byte strings: the content name a spec records."""
    h = hashlib.sha1()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return "sha1:" + h.hexdigest()


def document_frequencies(features: FeatureBatch) -> tuple[np.ndarray, np.ndarray]:
    """``(hashes, df)``: each feature hash of a batch, in increasing order, and the number
    of documents that have it (a hash repeated within a document counts once).

    Examples
    --------
    >>> import simhash_nb as sh
    >>> h, df = document_frequencies(sh.features(["a b a", "a c"], tokenizer="word"))
    >>> sorted(df.tolist())
    [1, 1, 2]
    """
    hashes = np.asarray(features.hashes, dtype=np.uint64)
    doc = np.repeat(np.arange(len(features), dtype=np.int64), features.n_features)
    order = np.lexsort((hashes, doc))
    hs, ds = hashes[order], doc[order]
    first = np.ones(hs.shape[0], dtype=bool)
    first[1:] = (hs[1:] != hs[:-1]) | (ds[1:] != ds[:-1])
    return np.unique(hs[first], return_counts=True)


@dataclass(frozen=True, eq=False)
class IdfTable:
    """Inverse document frequencies keyed by feature hash.

    Any tokenizer's features can be weighted with it (``weights="tfidf"`` and
    ``params={"idf": table}``); features not in the table get ``default``.

    Attributes
    ----------
    hashes : ndarray of uint64, sorted
    values : ndarray of float64
    default : float
        IDF of a feature the table does not know.
    source : str
        ``"jieba"`` (jieba's bundled table) or ``"fitted"``.
    n_docs : int
        Documents it was fitted on (0 for jieba's table).
    spec : FingerprintSpec or None
        The spec of the features it was fitted on (tokenizer, ngram, normalize, seed),
        when known: :meth:`save` keeps it, so that a reader can check its own options.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> fb = sh.features(["a b", "a c", "a d"], tokenizer="word")
    >>> table = IdfTable.fit(fb)
    >>> from simhash_nb._core.tokens import hash_strings
    >>> table.lookup(hash_strings(["a", "b"])).round(3).tolist(), round(table.default, 3)
    ([1.0, 1.693], 2.386)
    """

    hashes: np.ndarray
    values: np.ndarray
    default: float
    source: str = "fitted"
    n_docs: int = 0
    spec: FingerprintSpec | None = None
    _tag: list = field(default_factory=list, repr=False, init=False, compare=False)

    def __post_init__(self) -> None:
        h = np.asarray(self.hashes)
        v = np.asarray(self.values, dtype=np.float64)
        if h.dtype != np.uint64 or h.ndim != 1 or v.shape != h.shape:
            raise TypeError("hashes must be uint64[m] and values float[m]")
        if h.size > 1 and np.any(h[1:] <= h[:-1]):
            order = np.argsort(h, kind="stable")
            h, v = h[order], v[order]
            keep = np.ones(h.size, dtype=bool)
            keep[1:] = h[1:] != h[:-1]
            h, v = h[keep], v[keep]
        if not (np.all(np.isfinite(v)) and np.all(v >= 0) and math.isfinite(self.default)
                and self.default >= 0):
            raise ValueError("IDF values must be finite and >= 0")
        object.__setattr__(self, "hashes", np.ascontiguousarray(h))
        object.__setattr__(self, "values", np.ascontiguousarray(v))
        object.__setattr__(self, "default", float(self.default))

    def __len__(self) -> int:
        return int(self.hashes.shape[0])

    @property
    def tag(self) -> str:
        """How a spec records this table: ``"jieba"`` or ``"sha1:..."`` of its contents."""
        if self.source == "jieba":
            return "jieba"
        if not self._tag:
            self._tag.append(digest([self.hashes.tobytes(), self.values.tobytes(),
                                      np.float64(self.default).tobytes()]))
        return self._tag[0]

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """IDF of each feature hash (``default`` for unknown ones).

        Parameters
        ----------
        hashes : array-like of uint64
            Feature hashes.

        Returns
        -------
        numpy.ndarray of float64
            Same shape as ``hashes``.
        """
        hashes = np.asarray(hashes, dtype=np.uint64)
        out = np.full(hashes.shape, self.default, dtype=np.float64)
        if len(self):
            pos = np.searchsorted(self.hashes, hashes)
            pos = np.minimum(pos, len(self) - 1)
            hit = self.hashes[pos] == hashes
            out[hit] = self.values[pos[hit]]
        return out

    def weigh(self, features: FeatureBatch) -> FeatureBatch:
        """The batch with each weight multiplied by its feature's IDF.

        Parameters
        ----------
        features : FeatureBatch
            Features hashed with the table's seed.

        Returns
        -------
        FeatureBatch
            Same ``indptr`` and ``hashes``, weights times :meth:`lookup` of the hashes.
        """
        return FeatureBatch(features.indptr, features.hashes,
                            features.weights * self.lookup(features.hashes))

    @classmethod
    def fit(cls, features: FeatureBatch) -> IdfTable:
        """Smooth IDF, as scikit-learn's: ``ln((1 + n) / (1 + df)) + 1``.

        ``df`` counts the documents that have the feature (hashes are distinct within a
        document in a FeatureBatch from :func:`simhash_nb.features`); unknown features
        get ``ln(1 + n) + 1``.

        Parameters
        ----------
        features : FeatureBatch
            The corpus' features, from :func:`simhash_nb.features`.

        Returns
        -------
        IdfTable

        Raises
        ------
        TypeError
            If ``features`` is not a FeatureBatch.
        """
        if not isinstance(features, FeatureBatch):
            raise TypeError("IdfTable.fit takes a FeatureBatch (see simhash_nb.features)")
        n = len(features)
        h, df = document_frequencies(features)
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        return cls(h, idf, math.log(1.0 + n) + 1.0, "fitted", n)

    def save(self, path) -> None:
        """Write the table to ``path`` as a NumPy ``.npz`` file (no pickle).

        :meth:`load` reads it back with the same :attr:`tag`, so fingerprints weighted
        by the loaded table equal those weighted by this one.

        Parameters
        ----------
        path : str or path-like
            The file to write (written as given: no ``.npz`` is appended).

        Examples
        --------
        >>> import os, tempfile, simhash_nb as sh
        >>> table = sh.fit_idf(["a b", "a c"], tokenizer="word")
        >>> path = os.path.join(tempfile.mkdtemp(), "idf.npz")
        >>> table.save(path)
        >>> IdfTable.load(path).tag == table.tag
        True
        """
        with open(path, "wb") as f:
            np.savez(f, format=np.str_(_SAVED_FORMAT), hashes=self.hashes, values=self.values,
                     default=np.float64(self.default), source=np.str_(self.source),
                     n_docs=np.int64(self.n_docs),
                     spec=np.str_(self.spec.to_json() if self.spec is not None else ""))

    @classmethod
    def load(cls, path) -> IdfTable:
        """Read a table written by :meth:`save`.

        Parameters
        ----------
        path : str or path-like

        Returns
        -------
        IdfTable

        Raises
        ------
        ValueError
            If the file is not a table written by :meth:`save`.
        """
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["format"]) != _SAVED_FORMAT:
                    raise KeyError("format")
                spec = str(z["spec"])
                return cls(z["hashes"], z["values"], float(z["default"]), str(z["source"]),
                           int(z["n_docs"]), FingerprintSpec.from_json(spec) if spec else None)
        except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise ValueError(f"{path}: not an IDF table written by IdfTable.save") from None

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, float], default: float | None = None,
                     seed: int = 0) -> IdfTable:
        """A table from ``{feature string: idf}`` (default: the median IDF, as jieba).

        Parameters
        ----------
        mapping : mapping of str to float
            IDF of each feature string.
        default : float, optional
            IDF of unknown features (default: the median of ``mapping``'s values, the
            upper one for an even count; 1 for an empty mapping).
        seed : int, default 0
            Seed of the feature hash; must match the fingerprints'.

        Returns
        -------
        IdfTable

        Examples
        --------
        >>> t = IdfTable.from_mapping({"cat": 2.0, "dog": 4.0, "the": 0.1})
        >>> t.default
        2.0
        """
        words = list(mapping)
        values = np.array([float(mapping[w]) for w in words], dtype=np.float64)
        if default is None:
            default = float(np.sort(values)[len(values) // 2]) if len(values) else 1.0
        return cls(_tokens.hash_strings(words, seed), values, default, "fitted")

    @classmethod
    def from_jieba(cls, seed: int = 0, normalize: tuple[str, ...] = ()) -> IdfTable:
        """jieba's bundled IDF table (``jieba/analyse/idf.txt``), unknown words: its median.

        Words are normalised like the texts so that they match the tokens.

        Parameters
        ----------
        seed : int, default 0
            Seed of the feature hash; must match the fingerprints'.
        normalize : tuple of str, default ()
            Normalisation applied to the table's words, as to the texts.

        Returns
        -------
        IdfTable
        """
        return _jieba_idf(int(seed), tuple(normalize))


@functools.cache
def _jieba_idf(seed: int, normalize: tuple[str, ...]) -> IdfTable:
    path = resources.files("jieba").joinpath("analyse/idf.txt")
    with path.open("rb") as f:
        table = pcsv.read_csv(
            f,
            read_options=pcsv.ReadOptions(column_names=["word", "idf"]),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"word": pa.large_string(), "idf": pa.float64()}),
        )
    values = table["idf"].to_numpy()
    median = float(np.sort(values)[len(values) // 2])  # jieba's median_idf
    words = normalize_arrow(table["word"].combine_chunks(), normalize)
    t = IdfTable(_tokens.hash_strings(words, seed), values, median, "jieba", 0)
    return t


def apply_idf(fb: FeatureBatch, spec: FingerprintSpec, idf) -> tuple[FeatureBatch, FingerprintSpec]:
    """Weigh a tf batch by an IDF table ('jieba', 'fit' on this batch, or an IdfTable)."""
    if idf == "jieba" or idf is None:
        table = IdfTable.from_jieba(spec.seed, spec.normalize)
    elif idf == "fit":
        table = IdfTable.fit(fb)
    elif isinstance(idf, IdfTable):
        table = idf
    else:
        raise ValueError(f"params['idf'] must be 'jieba', 'fit' or an IdfTable, got {idf!r}")
    params = dict(spec.params)
    if params.get("idf") != table.tag:
        params["idf"] = table.tag
        spec = spec.replace(params=params)
    return table.weigh(fb), spec

