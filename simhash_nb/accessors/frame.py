"""``DataFrame.simhash``: the Series methods on one column, returning frame rows."""

from __future__ import annotations

import pandas as pd

from .._core.docstrings import shared_docs
from .._frames.attrs import SPEC_ATTR, column_specs
from .._frames.columns import FINGERPRINT_COLUMN, fingerprint_kind
from .._frames.hex import hex_width
from .docs import ACCESSOR_PARAMETERS
from .registration import register

__all__ = ["SimhashDataFrameAccessor"]



# --- DataFrame accessor -------------------------------------------------------------------


class SimhashDataFrameAccessor:
    """``DataFrame.simhash``: the Series methods on one column, returning frame rows.

    ``column`` names a text column (fingerprinted with the given options) or a
    fingerprint column. Left as ``None`` it is ``"simhash"`` when the frame has such a
    fingerprint column, else ``"text"``. A ``"simhash"`` column of hexadecimal strings
    (16 digits each, or 32), as ``simhash-nb fingerprint`` writes to CSV, is such a
    column: ``pd.read_csv("fps.csv").simhash.near_duplicates(k=3)`` gives the command
    line's pairs (see :class:`pandas.Series.simhash` for the rule).

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
            column = FINGERPRINT_COLUMN
            if column not in df.columns or not _holds_fingerprints(df[column]):
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

    @shared_docs(**ACCESSOR_PARAMETERS)
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
        {{no_column}}
        TypeError
            If the column holds fingerprints already (fingerprint its text instead).

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
        recorded = self._obj.attrs.get(SPEC_ATTR)
        specs = dict(recorded) if isinstance(recorded, dict) else {}
        specs[out] = fps.attrs[SPEC_ATTR]
        df.attrs = {**self._obj.attrs, SPEC_ATTR: column_specs(specs)}
        return df

    @shared_docs(**ACCESSOR_PARAMETERS)
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
        {{column}}
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
        {{no_column}}
        ValueError
            If the index has duplicate labels.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> df = pd.DataFrame({"text": ["a b", "a b", "c"]}, index=[7, 8, 9])
        >>> df.simhash.near_duplicates(k=0, tokenizer="word").values.tolist()
        [[7, 8, 0]]
        """
        s = self._column(column)
        if isinstance(against, pd.DataFrame):
            against = SimhashDataFrameAccessor(against)._column(s.name)
        return s.simhash.near_duplicates(k, threshold=threshold, against=against,
                                         max_pairs=max_pairs, **options)

    @shared_docs(**ACCESSOR_PARAMETERS)
    def dedupe(
        self, column: str | None = None, k: int | None = None, keep: str = "first", *,
        threshold: float | None = None, **options
    ) -> pd.DataFrame:
        """The rows kept after dropping near duplicates (one per cluster; missing stay).

        Parameters
        ----------
        {{column}}
        {{k}}
        {{threshold}}
        {{keep}}
        **options
            Search options (``similarity``, ``recall``, ...) and fingerprint options when
            the column holds text.

        Returns
        -------
        pandas.DataFrame
            The rows kept, in their original order.

        Raises
        ------
        {{no_column}}
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

    @shared_docs(**ACCESSOR_PARAMETERS)
    def clusters(self, column: str | None = None, k: int | None = None, *,
                 threshold: float | None = None, **options) -> pd.Series:
        """Cluster label of each row (Int64, ``<NA>`` if missing), aligned to the index.

        See :meth:`SimhashSeriesAccessor.clusters`.

        Parameters
        ----------
        {{column}}
        {{k}}
        {{threshold}}
        **options
            Fingerprint options when the column holds text.

        Returns
        -------
        pandas.Series of Int64
            For each row, the position of the first row of its cluster; ``<NA>`` if missing.

        Raises
        ------
        {{no_column}}
        TypeError
            If the column holds fingerprints and ``threshold`` is given.

        Examples
        --------
        >>> import pandas as pd, simhash_nb
        >>> df = pd.DataFrame({"text": ["a b", "c", "a b"]})
        >>> df.simhash.clusters(k=0, tokenizer="word").tolist()
        [0, 1, 0]
        """
        s = self._column(column)
        return s.simhash.clusters(k, threshold=threshold, **options)


def _holds_fingerprints(s) -> bool:
    """Whether the ``"simhash"`` column holds fingerprints (hexadecimal ones too)."""
    kind = fingerprint_kind(s.dtype) if hasattr(s, "dtype") else None
    if kind is None:
        return False
    return kind != "text" or hex_width(s, strict=True) is not None


register()  # once both accessor modules are imported (see register)
