"""The ``.simhash`` accessor on Dask DataFrames and Series (registered on import)."""

from __future__ import annotations

import dask.dataframe as dd
from dask.dataframe.extensions import register_dataframe_accessor, register_series_accessor

from .. import _frames
from .._core.docstrings import shared_docs
from .._core.verified import VERIFIED_PARAMETERS
from .components import clusters, dedupe
from .docs import DASK_PARAMETERS
from .fingerprint import fingerprint
from .search import near_duplicates
from .verified import cluster_texts, dedupe_texts, near_duplicate_texts

# --- Dask accessors -----------------------------------------------------------------------


def _for_methods(decorate):
    """Class decorator: ``decorate`` each public method (filling its docstring slots)."""
    def apply(cls):
        for name, value in vars(cls).items():
            if callable(value) and not name.startswith("_"):
                setattr(cls, name, decorate(value))
        return cls

    return apply



def _method_docs() -> dict[str, str]:
    """The accessors' docstring blocks: each method's parameters after ``column`` (one
    wording for the Series and the DataFrame method of one name)."""
    k = ("k : int, optional\n    Largest Hamming distance {}; by default derived from "
         "``similarity``\n    (in ``options``; default 0.7).")
    threshold = VERIFIED_PARAMETERS["threshold"]
    keep = ('keep : {"first", "last", False}, default "first"\n    Which row of each cluster '
            "stays (``False``: only rows without duplicates).")
    return {
        "column": DASK_PARAMETERS["column"],
        "text_column": 'column : str, optional\n    The text column (default ``"text"``).',
        "fingerprint": ("**options\n    ``bits``, ``tokenizer``, ``ngram``, ``weights``, "
                        "``normalize``, ``seed``,\n    ``spec``, ``n_jobs`` as in "
                        ":func:`fingerprint`."),
        "near_duplicates": "\n".join([
            k.format("reported (inclusive)"),
            "**options\n    The other keywords of :func:`near_duplicates` (``similarity``, "
            "``recall``,\n    ``against``, ...), and fingerprint options for text.",
            "\nReturns\n-------\ndask DataFrame"]),
        "clusters": "\n".join([
            k.format("joining two rows"),
            "**options\n    The other keywords of :func:`clusters` (with a DataFrame, "
            '``out="cluster"``\n    adds the labels as a column), and fingerprint options '
            "for text."]),
        "dedupe": "\n".join([
            k.format("joining two rows"), keep,
            "**options\n    The other keywords of :func:`dedupe`, and fingerprint options "
            "for text."]),
        "near_duplicate_texts": "\n".join([
            threshold,
            "**options\n    The other keywords of :func:`near_duplicate_texts` (``recall``, "
            "``ids``,\n    shingle options, ...).",
            "\nReturns\n-------\ndask DataFrame"]),
        "cluster_texts": "\n".join([
            threshold,
            "**options\n    The other keywords of :func:`cluster_texts` (with a DataFrame, "
            '``out="cluster"``\n    adds the labels as a column).']),
        "dedupe_texts": "\n".join([
            threshold, keep.replace("without duplicates", "in no pair"),
            "**options\n    The other keywords of :func:`dedupe_texts`."]),
    }


_DOCS = _method_docs()


@_for_methods(shared_docs(**_DOCS))
class SimhashDaskSeriesAccessor:
    """``dask Series.simhash``: :func:`fingerprint`, :func:`near_duplicates`,
    :func:`clusters` and :func:`dedupe` of the Series, and the verified path's
    :func:`near_duplicate_texts`, :func:`cluster_texts` and :func:`dedupe_texts`.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> s = dd.from_pandas(pd.Series(["a b", "c", "a b"]), npartitions=2)
    >>> s.simhash.near_duplicates(k=0, tokenizer="word").compute().values.tolist()
    [[0, 2, 0]]
    """

    def __init__(self, obj) -> None:
        if _frames.fingerprint_kind(obj._meta.dtype) is None:
            raise AttributeError(
                "the .simhash accessor needs a text or fingerprint Series; this one has "
                f"dtype {obj._meta.dtype}"
            )
        self._obj = obj

    def fingerprint(self, **options):
        """Fingerprints of the Series' texts; see :func:`fingerprint`.

        Parameters
        ----------
        {{fingerprint}}

        Returns
        -------
        dask Series
        """
        return fingerprint(self._obj, **options)

    def near_duplicates(self, k: int | None = None, **options):
        """Pairs of rows within ``k`` bits; see :func:`near_duplicates`.

        Parameters
        ----------
        {{near_duplicates}}
        """
        return near_duplicates(self._obj, k, **options)

    def clusters(self, k: int | None = None, **options):
        """Cluster labels of the rows; see :func:`clusters`.

        Parameters
        ----------
        {{clusters}}

        Returns
        -------
        dask Series
        """
        return clusters(self._obj, k, **options)

    def dedupe(self, k: int | None = None, keep="first", **options):
        """The rows kept after dropping near duplicates; see :func:`dedupe`.

        Parameters
        ----------
        {{dedupe}}

        Returns
        -------
        dask Series
        """
        return dedupe(self._obj, k, keep, **options)

    def near_duplicate_texts(self, threshold: float = 0.7, **options):
        """Pairs of texts at shingle Jaccard ``>= threshold``, verified exactly; see
        :func:`near_duplicate_texts`.

        Parameters
        ----------
        {{near_duplicate_texts}}
        """
        return near_duplicate_texts(self._obj, threshold, **options)

    def cluster_texts(self, threshold: float = 0.7, **options):
        """Cluster labels of the texts by verified pairs; see :func:`cluster_texts`.

        Parameters
        ----------
        {{cluster_texts}}

        Returns
        -------
        dask Series
        """
        return cluster_texts(self._obj, threshold, **options)

    def dedupe_texts(self, threshold: float = 0.7, keep="first", **options):
        """The texts kept after dropping verified near duplicates; see
        :func:`dedupe_texts`.

        Parameters
        ----------
        {{dedupe_texts}}

        Returns
        -------
        dask Series
        """
        return dedupe_texts(self._obj, threshold, keep=keep, **options)


@_for_methods(shared_docs(**_DOCS))
class SimhashDaskDataFrameAccessor:
    """``dask DataFrame.simhash``: the module's functions on one column.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> df = dd.from_pandas(pd.DataFrame({"text": ["a b", "c", "a b"]}), npartitions=2)
    >>> df = df.simhash.fingerprint(tokenizer="word")
    >>> df.simhash.clusters(k=0).compute().tolist()
    [0, 1, 0]
    """

    def __init__(self, obj) -> None:
        self._obj = obj

    def fingerprint(self, column: str = "text", out: str = "simhash", **options):
        """The frame with the fingerprints of a text column added; see :func:`fingerprint`.

        Parameters
        ----------
        column : str, default "text"
            The text column.
        out : str, default "simhash"
            Name of the fingerprint column added.
        {{fingerprint}}

        Returns
        -------
        dask DataFrame
        """
        return fingerprint(self._obj, column, out=out, **options)

    def near_duplicates(self, column: str | None = None, k: int | None = None, **options):
        """Pairs of rows within ``k`` bits; see :func:`near_duplicates`.

        Parameters
        ----------
        {{column}}
        {{near_duplicates}}
        """
        return near_duplicates(self._obj, k, column=column, **options)

    def clusters(self, column: str | None = None, k: int | None = None, **options):
        """Cluster labels of the rows; see :func:`clusters`.

        Parameters
        ----------
        {{column}}
        {{clusters}}

        Returns
        -------
        dask Series or DataFrame
            The labels, or with ``out`` the frame with them added.
        """
        return clusters(self._obj, k, column=column, **options)

    def dedupe(self, column: str | None = None, k: int | None = None, keep="first", **options):
        """The rows kept after dropping near duplicates; see :func:`dedupe`.

        Parameters
        ----------
        {{column}}
        {{dedupe}}

        Returns
        -------
        dask DataFrame
            All columns of the rows that stay.
        """
        return dedupe(self._obj, k, keep, column=column, **options)

    def near_duplicate_texts(self, column: str | None = None, threshold: float = 0.7,
                             **options):
        """Pairs of rows whose texts have shingle Jaccard ``>= threshold``, verified
        exactly; see :func:`near_duplicate_texts`.

        Parameters
        ----------
        {{text_column}}
        {{near_duplicate_texts}}
        """
        return near_duplicate_texts(self._obj, threshold, column=column, **options)

    def cluster_texts(self, column: str | None = None, threshold: float = 0.7, **options):
        """Cluster labels of the rows by verified pairs; see :func:`cluster_texts`.

        Parameters
        ----------
        {{text_column}}
        {{cluster_texts}}

        Returns
        -------
        dask Series or DataFrame
        """
        return cluster_texts(self._obj, threshold, column=column, **options)

    def dedupe_texts(self, column: str | None = None, threshold: float = 0.7, keep="first",
                     **options):
        """The rows kept after dropping verified near-duplicate texts; see
        :func:`dedupe_texts`.

        Parameters
        ----------
        {{text_column}}
        {{dedupe_texts}}

        Returns
        -------
        dask DataFrame
            All columns of the rows that stay.
        """
        return dedupe_texts(self._obj, threshold, keep=keep, column=column, **options)


def _register() -> None:
    for cls in (dd.DataFrame, dd.Series):
        if "simhash" in getattr(cls, "_accessors", set()):
            return
    register_dataframe_accessor("simhash")(SimhashDaskDataFrameAccessor)
    register_series_accessor("simhash")(SimhashDaskSeriesAccessor)


_register()
