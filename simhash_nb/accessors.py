"""pandas accessors: ``Series.simhash`` and ``DataFrame.simhash``.

``import simhash_nb`` registers them without importing pandas: if pandas is already
imported they are registered at once, otherwise the moment pandas is first imported (a
one-shot import hook), so ``import simhash_nb`` stays as fast as it is without pandas.

Fingerprints in pandas
----------------------
- **64 bits**: a nullable ``UInt64`` Series; a missing text gives ``<NA>``.
- **128 bits**: an Arrow ``fixed_size_binary(16)`` Series (``binary[16][pyarrow]``): the
  16 bytes are the 128-bit fingerprint ``hi * 2**64 + lo`` in big-endian order, so
  ``value.hex()`` is its 32-digit hexadecimal form; a missing text gives ``<NA>``.
  (The core API's ``uint64[n, 2]`` holds ``lo, hi`` in each row.)

Every accessor method takes either kind. The :class:`~simhash_nb.FingerprintSpec` that
made a fingerprint Series travels in ``Series.attrs["simhash_spec"]`` (JSON); a
DataFrame keeps ``attrs["simhash_spec"] = {column: JSON}``. Comparing fingerprints of
two different known specs raises :class:`~simhash_nb.SpecMismatchError`.

Missing texts (None, NaN, ``pd.NA``) get a missing fingerprint and are left out of pairs
and clusters (their cluster label is ``<NA>``); :meth:`SimhashSeriesAccessor.dedupe`
keeps them (a missing text is nobody's duplicate).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from typing import TYPE_CHECKING

import numpy as np

from ._core.spec import FingerprintSpec, check_compatible
from ._frames import (
    SPEC_ATTR,
    cluster_positions,
    cluster_series,
    fingerprint_kind,
    fingerprint_series,
    fingerprint_values,
    keep_mask,
    pairs_frame,
    prints,
    search_pairs,
    spec_of,
    split_search,
    unique_index,
    verified_frame,
    verified_pairs,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["SPEC_ATTR", "SimhashDataFrameAccessor", "SimhashSeriesAccessor", "register"]


# --- Series accessor ----------------------------------------------------------------------


class SimhashSeriesAccessor:
    """``Series.simhash``: fingerprints, distances, pairs, clusters and dedupe.

    Works on text Series (object, ``string``, ``str``, Arrow-backed strings or
    categoricals of them) and on fingerprint Series (``UInt64`` for 64 bits,
    ``binary[16][pyarrow]`` for 128 bits). Methods that search take text too: they
    fingerprint it first with the given options.

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
        kind = fingerprint_kind(obj.dtype)
        if kind is None:
            raise AttributeError(
                f"the .simhash accessor needs a text Series (object, string, str, "
                f"string[pyarrow]) or a fingerprint Series (UInt64, binary[16][pyarrow]); "
                f"this one has dtype {obj.dtype}"
            )
        self._obj = obj
        self._kind = kind

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
        return spec_of(self._obj)

    def _need_fingerprints(self, method: str) -> None:
        if self._kind == "text":
            raise TypeError(
                f".simhash.{method} needs a fingerprint Series; call .simhash.fingerprint() first"
            )

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
        p = prints(self._obj, "text", options)
        return fingerprint_series(self._obj, p, self._obj.name)

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
        self._need_fingerprints("to_numpy")
        if missing not in ("raise", "zero"):
            raise ValueError(f"missing must be 'raise' or 'zero', got {missing!r}")
        fps, valid = fingerprint_values(self._obj)
        if missing == "raise" and not valid.all():
            label = self._obj.index[int(np.flatnonzero(~valid)[0])]
            raise ValueError(f"the fingerprint at label {label!r} is missing; pass missing='zero'")
        return fps

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
        import pandas as pd

        self._need_fingerprints("hamming")
        s = self._obj
        fps, valid = fingerprint_values(s)
        if isinstance(other, pd.Series):
            kind = fingerprint_kind(other.dtype)
            if kind not in ("fp64", "fp128"):
                raise TypeError(f"other must be a fingerprint Series, got dtype {other.dtype}")
            check_compatible(spec_of(s), spec_of(other))
            if not other.index.equals(s.index):
                if not other.index.is_unique:
                    raise ValueError("other's index has duplicate labels; cannot align")
                other = other.reindex(s.index)
            ofps, ovalid = fingerprint_values(other)
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
        unique_index(self._obj.index, "Series'")
        if threshold is not None:
            self._need_text("near_duplicates(threshold=...)", against)
            got, pos = verified_pairs(self._obj, threshold, options)
            return verified_frame(got, self._obj.index, pos)
        search, options = split_search(options)
        p = prints(self._obj, self._kind, options)
        q = None
        if against is not None:
            other = _as_series(against, "against")
            unique_index(other.index, "against Series'")
            kind = fingerprint_kind(other.dtype)
            if kind is None:
                raise TypeError(f"against has dtype {other.dtype}, neither text nor fingerprints")
            q_options = dict(options) if kind == "text" else {}
            if kind == "text" and self._kind != "text":
                q_options = {"spec": p.spec} if p.spec is not None else {}
            q = prints(other, kind, q_options, "against Series")
        pairs = search_pairs(p, q, options.get("n_jobs"), k=k, max_pairs=max_pairs, **search)
        if q is None:
            return pairs_frame(pairs, self._obj.index, p.positions, self._obj.index, p.positions)
        return pairs_frame(pairs, self._obj.index, p.positions, other.index, q.positions)

    def _need_text(self, what: str, against=None) -> None:
        if self._kind != "text":
            raise TypeError(f"{what} needs a text Series: the Jaccard similarity is that of "
                            "the texts' shingles (this Series holds fingerprints)")
        if against is not None:
            raise TypeError(f"{what} does not take against=")

    def clusters(self, k: int | None = None, *, threshold: float | None = None,
                 **options) -> pd.Series:
        """Connected components of the "within ``k`` bits" graph.

        Parameters
        ----------
        k : int, optional
            Largest Hamming distance (inclusive) that links two rows; default from
            ``similarity`` (0.7: k = 12 at 64 bits, 25 at 128).
        threshold : float, optional
            Instead, link texts whose shingle sets have Jaccard similarity at least this
            (verified exactly; a text column only), as in
            :func:`simhash_nb.near_duplicate_texts`.
        **options
            Fingerprint options (as in :meth:`fingerprint`) when the Series holds text.

        Returns
        -------
        pandas.Series of Int64
            For each row, the position (0-based, in the Series' order) of the first row
            of its cluster, so rows with equal labels are near duplicates (transitively);
            ``<NA>`` for missing values. Named ``"cluster"``.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> s = pd.Series(["x y z", "a b c d", "a b c d", None], index=[10, 20, 30, 40])
        >>> s.simhash.clusters(k=0, tokenizer="word").tolist()
        [0, 1, 1, <NA>]
        """
        if threshold is not None:
            self._need_text("clusters(threshold=...)")
            got, pos = verified_pairs(self._obj, threshold, options)
            labels = np.full(len(self._obj), -1, dtype=np.int64)
            labels[pos] = pos[got.clusters()]
            return cluster_series(labels, self._obj.index)
        search, options = split_search(options)
        p = prints(self._obj, self._kind, options)
        labels = cluster_positions(p, options.get("n_jobs"), k=k, **search)
        return cluster_series(labels, self._obj.index)

    def dedupe(self, k: int | None = None, keep: str = "first", *,
               threshold: float | None = None, **options) -> pd.Series:
        """The rows kept after dropping near duplicates: one row per cluster.

        Parameters
        ----------
        k : int, optional
            As in :meth:`clusters`.
        threshold : float, optional
            As in :meth:`clusters`.
        keep : {"first", "last", False}
            Which row of each cluster stays; ``False`` keeps only rows without any near
            duplicate (as in ``drop_duplicates``). Rows with a missing value always stay.
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
            if not (keep is False or keep in ("first", "last")):
                raise ValueError(f"keep must be 'first', 'last' or False, got {keep!r}")
            got, pos = verified_pairs(self._obj, threshold, options)
            mask = np.ones(len(self._obj), dtype=bool)
            mask[pos] = got.dedupe(keep=keep)
            return mask
        search, options = split_search(options)
        p = prints(self._obj, self._kind, options)
        return keep_mask(p, keep, options.get("n_jobs"), k=k, **search)


def _as_series(obj, name: str):
    import pandas as pd

    if isinstance(obj, pd.Series):
        return obj
    raise TypeError(f"{name} must be a pandas Series, got {type(obj).__name__}")


# --- DataFrame accessor -------------------------------------------------------------------


class SimhashDataFrameAccessor:
    """``DataFrame.simhash``: the Series methods on one column, returning frame rows.

    ``column`` names a text column (fingerprinted with the given options) or a
    fingerprint column. Left as ``None`` it is ``"simhash"`` when the frame has such a
    fingerprint column, else ``"text"``.

    Examples
    --------
    >>> import pandas as pd, simhash_nb
    >>> df = pd.DataFrame({"text": ["a b c d", "a b c d", "x y z"]}, index=["p", "q", "r"])
    >>> df = df.simhash.fingerprint(tokenizer="word")
    >>> df.simhash.near_duplicates(k=0)[["left", "right"]].values.tolist()
    [['p', 'q']]
    >>> df.simhash.dedupe(k=0).index.tolist()
    ['p', 'r']
    """

    def __init__(self, obj) -> None:
        self._obj = obj

    def _column(self, column: str | None):
        df = self._obj
        if column is None:
            column = "simhash"
            if column not in df.columns or fingerprint_kind(df[column].dtype) is None:
                column = "text"
        if column not in df.columns:
            raise KeyError(
                f"column {column!r} is not in the DataFrame (columns: {list(df.columns)[:20]})"
            )
        s = df[column]
        if not hasattr(s, "dtype"):
            raise ValueError(f"the DataFrame has more than one column named {column!r}")
        if fingerprint_kind(s.dtype) is None:
            raise TypeError(
                f"column {column!r} has dtype {s.dtype}: neither text nor fingerprints "
                "(UInt64, binary[16][pyarrow])"
            )
        return s

    def fingerprint(self, column: str = "text", out: str = "simhash", **options) -> pd.DataFrame:
        """A copy of the frame with a fingerprint column ``out`` made from ``column``.

        Parameters
        ----------
        column : str, default "text"
        out : str, default "simhash"
        **options
            ``bits``, ``tokenizer``, ``ngram``, ``weights``, ``normalize``, ``seed``,
            ``spec``, ``params``, ``n_jobs``, ``progress`` as in
            :func:`simhash_nb.fingerprint`.

        Returns
        -------
        pandas.DataFrame
            A copy with the fingerprint column ``out`` (``UInt64``, or ``binary[16]`` for 128
            bits); its spec is recorded in ``attrs``.

        Raises
        ------
        KeyError
            If ``column`` is not in the frame.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> df = pd.DataFrame({"text": ["one", None]}).simhash.fingerprint(bits=128)
        >>> str(df["simhash"].dtype), df["simhash"].isna().tolist()
        ('fixed_size_binary[16][pyarrow]', [False, True])
        """
        s = self._column(column)
        fps = s.simhash.fingerprint(**options)
        df = self._obj.assign(**{out: fps.array})  # positional: no index alignment
        specs = dict(self._obj.attrs.get(SPEC_ATTR) or {})
        specs[out] = fps.attrs[SPEC_ATTR]
        df.attrs = {**self._obj.attrs, SPEC_ATTR: specs}
        return df

    def near_duplicates(
        self, column: str | None = None, k: int | None = None, *,
        threshold: float | None = None, against=None, max_pairs: int | None = None,
        **options,
    ) -> pd.DataFrame:
        """Pairs of rows within ``k`` bits: ``left``, ``right`` (index labels), ``distance``.

        ``against`` is another DataFrame (its column of the same name is used) or a
        Series. See :meth:`SimhashSeriesAccessor.near_duplicates`.

        Parameters
        ----------
        column : str, optional
            A text or fingerprint column (default: ``"simhash"`` if the frame has that
            fingerprint column, else ``"text"``).
        k : int, optional
            Largest distance reported (inclusive); default from ``similarity``.
        threshold : float, optional
            Verified Jaccard threshold (a text column), as in
            :meth:`SimhashSeriesAccessor.near_duplicates`.
        against : DataFrame or Series, optional
            Pairs between this frame (``left``) and ``against`` (``right``) only.
        max_pairs : int, optional
            See :func:`simhash_nb.near_duplicates`.
        **options
            Fingerprint options when the column holds text.

        Returns
        -------
        pandas.DataFrame
            Columns ``left``, ``right`` (index labels) and ``distance``.

        Raises
        ------
        KeyError
            If ``column`` is not in the frame.
        ValueError
            If the index has duplicate labels.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> df = pd.DataFrame({"text": ["a b", "a b", "c"]}, index=[7, 8, 9])
        >>> df.simhash.near_duplicates(k=0, tokenizer="word").values.tolist()
        [[7, 8, 0]]
        """
        import pandas as pd

        s = self._column(column)
        if isinstance(against, pd.DataFrame):
            against = SimhashDataFrameAccessor(against)._column(s.name)
        return s.simhash.near_duplicates(k, threshold=threshold, against=against,
                                         max_pairs=max_pairs, **options)

    def dedupe(
        self, column: str | None = None, k: int | None = None, keep: str = "first", *,
        threshold: float | None = None, **options
    ) -> pd.DataFrame:
        """The rows kept after dropping near duplicates (one per cluster; missing stay).

        Parameters
        ----------
        column : str, optional
            A text or fingerprint column (default: ``"simhash"`` if the frame has that
            fingerprint column, else ``"text"``).
        k : int, optional
            Largest Hamming distance (inclusive) that links two rows; default from
            ``similarity`` (0.7: k = 12 at 64 bits, 25 at 128).
        threshold : float, optional
            Instead, link texts whose shingle sets have Jaccard similarity at least this
            (verified exactly; a text column only), as in
            :func:`simhash_nb.near_duplicate_texts`.
        keep : {"first", "last", False}
            Which row of each cluster stays; ``False`` keeps only rows without any near
            duplicate.
        **options
            Search options (``similarity``, ``recall``, ...) and fingerprint options when
            the column holds text.

        Returns
        -------
        pandas.DataFrame
            The rows kept, in their original order.

        Raises
        ------
        KeyError
            If ``column`` is not in the frame.
        ValueError
            If ``keep`` is not "first", "last" or False.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> df = pd.DataFrame({"text": ["a b", "c", "a b"], "n": [1, 2, 3]})
        >>> df.simhash.dedupe(k=0, keep="last", tokenizer="word")["n"].tolist()
        [2, 3]
        """
        s = self._column(column)
        return self._obj[s.simhash._keep_rows(k, keep, threshold, options)]

    def clusters(self, column: str | None = None, k: int | None = None, *,
                 threshold: float | None = None, **options) -> pd.Series:
        """Cluster label of each row (Int64, ``<NA>`` if missing), aligned to the index.

        See :meth:`SimhashSeriesAccessor.clusters`.

        Parameters
        ----------
        column : str, optional
            A text or fingerprint column (default: ``"simhash"`` if the frame has that
            fingerprint column, else ``"text"``).
        k : int, optional
            Largest Hamming distance (inclusive) that links two rows; default from
            ``similarity`` (0.7: k = 12 at 64 bits, 25 at 128).
        threshold : float, optional
            Instead, link texts whose shingle sets have Jaccard similarity at least this
            (verified exactly; a text column only), as in
            :func:`simhash_nb.near_duplicate_texts`.
        **options
            Fingerprint options when the column holds text.

        Returns
        -------
        pandas.Series of Int64
            For each row, the position of the first row of its cluster; ``<NA>`` if missing.

        Raises
        ------
        KeyError
            If ``column`` is not in the frame.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> df = pd.DataFrame({"text": ["a b", "c", "a b"]})
        >>> df.simhash.clusters(k=0, tokenizer="word").tolist()
        [0, 1, 0]
        """
        s = self._column(column)
        return s.simhash.clusters(k, threshold=threshold, **options)


# --- registration -------------------------------------------------------------------------

_registered = False
_lock = threading.Lock()


def register() -> None:
    """Register ``Series.simhash`` and ``DataFrame.simhash`` (imports pandas; idempotent)."""
    global _registered
    with _lock:
        if _registered:
            return
        import pandas as pd

        pd.api.extensions.register_series_accessor("simhash")(SimhashSeriesAccessor)
        pd.api.extensions.register_dataframe_accessor("simhash")(SimhashDataFrameAccessor)
        _registered = True


class _LoaderWrapper(importlib.abc.Loader):
    """Runs the real loader of pandas, then registers the accessors."""

    def __init__(self, loader) -> None:
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        register()

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _PandasHook(importlib.abc.MetaPathFinder):
    """One-shot finder: wraps the loader of ``pandas`` the first time it is imported."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "pandas":
            return None
        _remove_hook()
        spec = importlib.util.find_spec("pandas")
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _LoaderWrapper(spec.loader)
        return spec


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PandasHook)]


def install() -> None:
    """Register now if pandas is imported, else as soon as it is (without importing it)."""
    pd = sys.modules.get("pandas")
    if pd is not None and hasattr(pd, "api"):
        register()
    elif not any(isinstance(f, _PandasHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _PandasHook())
