"""``Series.simhash``: fingerprints, distances, pairs, clusters and dedupe of a Series."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import _frames
from .._core.docstrings import shared_docs
from .._core.spec import FingerprintSpec, check_compatible
from .._core.validation import check_raise_or_zero
from .docs import ACCESSOR_PARAMETERS
from .registration import register

__all__ = ["SimhashSeriesAccessor"]


# --- Series accessor ----------------------------------------------------------------------


class SimhashSeriesAccessor:
    """``Series.simhash``: fingerprints, distances, pairs, clusters and dedupe.

    Works on text Series (object, ``string``, ``str``, Arrow-backed strings or
    categoricals of them) and on fingerprint Series (``UInt64`` for 64 bits,
    ``binary[16][pyarrow]`` for 128 bits). Methods that search take text too: they
    fingerprint it first with the given options.

    A string Series named ``"simhash"`` whose every present value has exactly 16
    hexadecimal digits (or every one 32) holds fingerprints, as ``simhash-nb
    fingerprint`` writes them to CSV and JSON Lines: the methods read them as 64-bit (or
    128-bit) fingerprints, so ``pd.read_csv("fps.csv").simhash.near_duplicates(k=3)``
    finds the pairs the command line finds. Only some such values there, or a mix of
    widths, is refused as ambiguous (``ValueError``). A string Series of another name
    is text; but the methods that take text or fingerprints refuse one holding only
    such values rather than guess: call :meth:`from_hex` (fingerprints) or
    :meth:`fingerprint` (text) first.

    Examples
    --------
    >>> import pandas as pd, simhash_nb
    >>> s = pd.Series(["the cat sat on the mat", "the cat sat on a mat", None],
    ...               index=["a", "b", "c"])
    >>> fps = s.simhash.fingerprint(tokenizer="word")
    >>> str(fps.dtype), bool(fps.isna()["c"])
    ('UInt64', True)
    """

    def __init__(self, obj) -> None:
        kind = _frames.fingerprint_kind(obj.dtype)
        if kind is None:
            narrow = getattr(obj.dtype, "kind", None) == "u"  # uint8/16/32, UInt32, ...
            hint = ("; fingerprints are 64-bit words: .astype('UInt64') if each value is a "
                    "whole fingerprint") if narrow else ""
            raise AttributeError(
                f"the .simhash accessor needs a text Series (object, string, str, "
                f"string[pyarrow]) or a fingerprint Series (UInt64, binary[16][pyarrow]); "
                f"this one has dtype {obj.dtype}{hint}"
            )
        self._obj = obj

    def _read(self, guess: bool = False):
        """``(Series, kind)``: hexadecimal fingerprints in a ``"simhash"`` column parsed."""
        return _frames.as_fingerprints(self._obj, guess=guess)

    @property
    def _kind(self) -> str:
        return self._read()[1]

    @property
    def is_fingerprint(self) -> bool:
        """Whether the Series holds fingerprints (rather than text)."""
        return self._kind != "text"

    @property
    def bits(self) -> int | None:
        """Fingerprint width (64 or 128), or ``None`` for a text Series."""
        return {"fp64": 64, "fp128": 128}.get(self._kind)

    @property
    def spec(self) -> FingerprintSpec | None:
        """The :class:`~simhash_nb.FingerprintSpec` recorded in ``attrs``, if any."""
        return _frames.spec_of(self._obj)

    def _fingerprints(self, method: str):
        """The Series as fingerprints (hexadecimal ones parsed), or TypeError."""
        s, kind = self._read()
        if kind == "text":
            hint = (".simhash.from_hex() first: it holds hexadecimal fingerprints"
                    if _frames.hex_width(s) else ".simhash.fingerprint() first")
            raise TypeError(f".simhash.{method} needs a fingerprint Series; call {hint}")
        return s

    def fingerprint(
        self,
        *,
        bits: int | None = None,
        tokenizer: str | None = None,
        ngram: int | None = None,
        weights: str | None = None,
        normalize=None,
        seed: int | None = None,
        spec: FingerprintSpec | None = None,
        params: dict | None = None,
        n_jobs: int | None = None,
        progress: bool | None = None,
    ) -> pd.Series:
        """SimHash fingerprint of every text, aligned to the Series' index.

        Parameters
        ----------
        bits, tokenizer, ngram, weights, normalize, seed, spec, params, n_jobs, progress
            As in :func:`simhash_nb.fingerprint` (``tokenizer`` may be a callable).

        Returns
        -------
        pandas.Series
            ``UInt64`` (64 bits) or ``binary[16][pyarrow]`` (128 bits, big-endian
            bytes), ``<NA>`` for missing texts, same index and name; the spec is in
            ``attrs["simhash_spec"]``.

        Raises
        ------
        TypeError
            If the Series holds fingerprints already (fingerprint its text instead).

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> s = pd.Series(["hello world", "hello world!"], dtype="string[pyarrow]")
        >>> fps = s.simhash.fingerprint(tokenizer="word")
        >>> fps.iloc[0] == fps.iloc[1]
        np.True_
        >>> len(s.simhash.fingerprint(bits=128).iloc[0])  # 16 bytes, big-endian
        16
        """
        if self._kind != "text":
            raise TypeError("this Series holds fingerprints already; fingerprint its text column")
        options = dict(bits=bits, tokenizer=tokenizer, ngram=ngram, weights=weights,
                       normalize=normalize, seed=seed, spec=spec, params=params,
                       n_jobs=n_jobs, progress=progress)
        p = _frames.prints(self._obj, "text", options)
        return _frames.fingerprint_series(self._obj, p, self._obj.name)

    def to_numpy(self, missing: str = "raise") -> np.ndarray:
        """The fingerprints as the core API's array: ``uint64[n]`` or ``uint64[n, 2]``.

        Parameters
        ----------
        missing : {"raise", "zero"}
            Whether a missing fingerprint is an error or becomes 0.

        Returns
        -------
        numpy.ndarray
            ``uint64[n]`` for 64-bit, ``uint64[n, 2]`` (low word first) for 128-bit fingerprints.

        Raises
        ------
        TypeError
            If the Series holds text rather than fingerprints.
        ValueError
            If ``missing`` is not "raise" or "zero", or a fingerprint is missing and
            ``missing="raise"``.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> pd.Series([1, 2], dtype="UInt64").simhash.to_numpy()
        array([1, 2], dtype=uint64)
        """
        s = self._fingerprints("to_numpy")
        check_raise_or_zero(missing)
        fps, valid = _frames.fingerprint_values(s)
        if missing == "raise" and not valid.all():
            label = self._obj.index[int(np.flatnonzero(~valid)[0])]
            raise ValueError(f"the fingerprint at label {label!r} is missing; pass missing='zero'")
        return fps

    def from_hex(self) -> pd.Series:
        """Fingerprints parsed from hexadecimal strings, as ``simhash-nb`` writes them to
        CSV and JSON Lines (a ``"simhash"`` column is read so by every method anyway).

        Returns
        -------
        pandas.Series
            ``UInt64`` (16 digits each) or ``binary[16][pyarrow]`` (32 digits each), with
            this Series' index, name and ``attrs``; null and empty values are ``<NA>``.

        Raises
        ------
        TypeError
            If the Series does not hold strings.
        ValueError
            If a value is not hexadecimal, or the values are not all 16 or all 32 digits.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> fps = pd.Series(["00000000000000ff", None]).simhash.from_hex()
        >>> fps.tolist(), str(fps.dtype)
        ([255, <NA>], 'UInt64')
        """
        return _frames.parse_hex(self._obj)

    def hamming(self, other) -> pd.Series:
        """Hamming distance to ``other``, row by row (``UInt8``, ``<NA>`` where missing).

        Parameters
        ----------
        other : Series of fingerprints, or one fingerprint (int, or 16 bytes for 128 bits)
            A Series is aligned on the index first (labels missing from it give
            ``<NA>``).

        Returns
        -------
        pandas.Series of UInt8
            Named ``"distance"``, on this Series' index; ``<NA>`` where either side is missing.

        Raises
        ------
        TypeError
            If this Series or ``other`` does not hold fingerprints, or ``other`` is neither a
            Series nor an int (or 16 bytes).
        ValueError
            If ``other``'s index has duplicate labels, the widths differ (64 against 128
            bits), or a scalar ``other`` is not a fingerprint of this width.
        SpecMismatchError
            If the two Series' fingerprints were made with different specs.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> a = pd.Series([0b1011, 0, None], dtype="UInt64")
        >>> a.simhash.hamming(pd.Series([0b0001, 0, 5], dtype="UInt64")).tolist()
        [2, 0, <NA>]
        >>> a.simhash.hamming(0).tolist()
        [3, 0, <NA>]
        """
        s = self._fingerprints("hamming")
        fps, valid = _frames.fingerprint_values(s)
        if isinstance(other, pd.Series):
            kind = _frames.fingerprint_kind(other.dtype)
            if kind is not None:
                other, kind = _frames.as_fingerprints(other)
            if kind not in ("fp64", "fp128"):
                raise TypeError(f"other must be a fingerprint Series, got dtype {other.dtype}")
            check_compatible(_frames.spec_of(s), _frames.spec_of(other))
            if not other.index.equals(s.index):
                if not other.index.is_unique:
                    raise ValueError("other's index has duplicate labels; cannot align")
                other = other.reindex(s.index)
            ofps, ovalid = _frames.fingerprint_values(other)
            if ofps.ndim != fps.ndim:
                raise ValueError("cannot compare 64-bit with 128-bit fingerprints")
        else:
            ofps, ovalid = self._scalar(other), np.ones(len(s), dtype=bool)
        d = np.bitwise_count(np.bitwise_xor(fps, ofps))
        if fps.ndim == 2:  # 128 bits: add the two words
            d = d.sum(axis=1)
        d = np.broadcast_to(d, (len(s),)).astype(np.uint8)
        return pd.Series(pd.arrays.IntegerArray(d, ~(valid & ovalid)), index=s.index,
                         name="distance", copy=False)

    def _scalar(self, value) -> np.ndarray:
        if isinstance(value, (bytes, bytearray)):
            if len(value) != 16:
                raise ValueError("a 128-bit fingerprint given as bytes must have 16 bytes")
            value = int.from_bytes(value, "big")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"other must be a fingerprint Series or an int, got {type(value)}")
        value = int(value)
        bits = self.bits
        if not 0 <= value < 2**bits:
            raise ValueError(f"{value} is not a {bits}-bit fingerprint")
        if bits == 64:
            return np.uint64(value)
        return np.array([value & (2**64 - 1), value >> 64], dtype=np.uint64)

    def near_duplicates(
        self, k: int | None = None, *, threshold: float | None = None, against=None,
        max_pairs: int | None = None, **options
    ) -> pd.DataFrame:
        """Every pair of rows whose fingerprints are within Hamming distance ``k`` — or,
        with ``threshold``, whose texts' shingle sets have Jaccard similarity at least
        ``threshold`` (verified exactly, :func:`simhash_nb.near_duplicate_texts`).

        Parameters
        ----------
        k : int, optional
            Largest distance reported (inclusive); default from ``similarity`` (0.7:
            k = 12 at 64 bits, 25 at 128), see :func:`simhash_nb.near_duplicates`.
        threshold : float, optional
            Jaccard threshold of the verified path (a text Series only).
        against : Series, optional
            Pairs between this Series (``left``) and ``against`` (``right``) only.
        max_pairs : int, optional
            See :func:`simhash_nb.near_duplicates`.
        **options
            Search options ``similarity``, ``recall``, ``method``, ``blocks``,
            ``random_state`` (as in :func:`simhash_nb.near_duplicates`), and fingerprint
            options (as in :meth:`fingerprint`) when the Series holds text.

        Returns
        -------
        pandas.DataFrame
            Columns ``left``, ``right`` (index labels; ``left`` before ``right`` in the
            Series' order for a self-join) and ``distance`` (with ``threshold``: also
            ``jaccard``). Missing values are in no pair.

        Raises
        ------
        ValueError
            If the index has duplicate labels.
        TypeError
            If ``against`` holds neither text nor fingerprints, or ``threshold`` is given
            for fingerprints or with ``against``.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> s = pd.Series(["a b c d", "a b c d", "x y z", None], index=["p", "q", "r", "s"])
        >>> s.simhash.near_duplicates(k=0, tokenizer="word")
          left right  distance
        0    p     q         0
        >>> s.simhash.near_duplicates(threshold=0.9, tokenizer="word")[["left", "right"]]
          left right
        0    p     q
        """
        _frames.unique_index(self._obj.index, "Series'")
        if threshold is not None:
            self._need_text("near_duplicates(threshold=...)", against)
            got, pos = _frames.verified_pairs(self._obj, threshold, options)
            return _frames.verified_frame(got, self._obj.index, pos)
        search, options = _frames.split_search(options)
        values, own_kind = self._read(guess=True)
        p = _frames.prints(values, own_kind, options)
        other, q = ((self._obj, None) if against is None
                    else _against_prints(against, p, own_kind, options))
        pairs = _frames.search_pairs(p, q, options.get("n_jobs"), k=k, max_pairs=max_pairs,
                                     **search)
        right = p if q is None else q
        return _frames.pairs_frame(pairs, self._obj.index, p.positions, other.index,
                                   right.positions)

    def _need_text(self, what: str, against=None) -> None:
        if self._kind != "text":
            raise TypeError(f"{what} needs a text Series: the Jaccard similarity is that of "
                            "the texts' shingles (this Series holds fingerprints)")
        if against is not None:
            raise TypeError(f"{what} does not take against=")

    @shared_docs(**ACCESSOR_PARAMETERS)
    def clusters(self, k: int | None = None, *, threshold: float | None = None,
                 **options) -> pd.Series:
        """Connected components of the "within ``k`` bits" graph.

        Parameters
        ----------
        {{k}}
        {{threshold}}
        **options
            Fingerprint options (as in :meth:`fingerprint`) when the Series holds text.

        Returns
        -------
        pandas.Series of Int64
            For each row, the position (0-based, in the Series' order) of the first row
            of its cluster, so rows with equal labels are near duplicates (transitively);
            ``<NA>`` for missing values. Named ``"cluster"``.

        Raises
        ------
        TypeError
            If ``threshold`` is given for a Series of fingerprints.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> s = pd.Series(["x y z", "a b c d", "a b c d", None], index=[10, 20, 30, 40])
        >>> s.simhash.clusters(k=0, tokenizer="word").tolist()
        [0, 1, 1, <NA>]
        """
        if threshold is not None:
            self._need_text("clusters(threshold=...)")
            labels = _frames.verified_cluster_positions(self._obj, threshold, options)
            return _frames.cluster_series(labels, self._obj.index)
        search, options = _frames.split_search(options)
        p = _frames.prints(*self._read(guess=True), options)
        labels = _frames.cluster_positions(p, options.get("n_jobs"), k=k, **search)
        return _frames.cluster_series(labels, self._obj.index)

    @shared_docs(**ACCESSOR_PARAMETERS)
    def dedupe(self, k: int | None = None, keep: str = "first", *,
               threshold: float | None = None, **options) -> pd.Series:
        """The rows kept after dropping near duplicates: one row per cluster.

        Parameters
        ----------
        {{k}}
        {{threshold}}
        {{keep}}
        **options
            Fingerprint options when the Series holds text.

        Returns
        -------
        pandas.Series
            The rows kept, in their original order, with their index labels.

        Raises
        ------
        ValueError
            If ``keep`` is not "first", "last" or False.
        TypeError
            If ``threshold`` is given for a Series of fingerprints.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> s = pd.Series(["a b c d", "x y z", "a b c d"], index=["p", "q", "r"])
        >>> s.simhash.dedupe(k=0, tokenizer="word").index.tolist()
        ['p', 'q']
        """
        return self._obj[self._keep_rows(k, keep, threshold, options)]

    def _keep_rows(self, k, keep, threshold, options) -> np.ndarray:
        if threshold is not None:
            self._need_text("dedupe(threshold=...)")
            return _frames.verified_keep_mask(self._obj, threshold, keep, options)
        search, options = _frames.split_search(options)
        p = _frames.prints(*self._read(guess=True), options)
        return _frames.keep_mask(p, keep, options.get("n_jobs"), k=k, **search)


def _against_prints(against, p, own_kind: str, options: dict):
    """``(Series, Prints)`` of ``against``: its text fingerprinted as this Series' was
    (with this Series' spec when this one holds fingerprints), or its fingerprints read."""
    other = _as_series(against, "against")
    _frames.unique_index(other.index, "against Series'")
    kind = _frames.fingerprint_kind(other.dtype)
    if kind is None:
        raise TypeError(f"against has dtype {other.dtype}, neither text nor fingerprints")
    other, kind = _frames.as_fingerprints(other, guess=True, what="against Series")
    q_options = dict(options) if kind == "text" else {}
    if kind == "text" and own_kind != "text":
        q_options = {"spec": p.spec} if p.spec is not None else {}
    return other, _frames.prints(other, kind, q_options, "against Series")


def _as_series(obj, name: str):
    if isinstance(obj, pd.Series):
        return obj
    raise TypeError(f"{name} must be a pandas Series, got {type(obj).__name__}")


register()  # once both accessor modules are imported (see register)
