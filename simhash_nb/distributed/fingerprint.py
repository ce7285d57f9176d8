"""Fingerprints of a Dask Series or DataFrame column: :func:`fingerprint`."""

from __future__ import annotations

import dask.dataframe as dd

from .._core.spec import FingerprintSpec
from .input import fingerprint_frame, fingerprint_series, fp_meta, recipe, select, task_threads

# --- fingerprints -----------------------------------------------------------------------


def fingerprint(  # the options of sh.fingerprint, explicit (help(), editors, misspellings)
        data, column: str = "text", *, out: str = "simhash", bits: int | None = None,
        tokenizer=None, ngram: int | None = None, weights: str | None = None,
        normalize=None, seed: int | None = None, spec: FingerprintSpec | None = None,
        params: dict | None = None, n_jobs: int | None = None,
        progress: bool | None = None):
    """SimHash fingerprints of a Dask text column, partition by partition.

    The Dask twin of :func:`simhash_nb.fingerprint` and of the pandas accessor's
    ``.simhash.fingerprint``: same fingerprints, same pandas representation.

    Parameters
    ----------
    data : dask DataFrame or Series
        Texts (object, ``string``, ``string[pyarrow]`` or categorical of them).
    column : str, default "text"
        The text column of a DataFrame.
    out : str, default "simhash"
        Name of the fingerprint column added to a DataFrame.
    bits, tokenizer, ngram, weights, normalize, seed, spec, params
        As in :func:`simhash_nb.fingerprint`: every option of the core, a callable
        tokenizer (it must pickle, to travel to the workers) and jieba's ``params``
        included. An IDF table travels as ``params={"idf": table}``; ``"fit"`` is
        refused (it would fit each partition on its own).
    n_jobs : int, optional
        Numba threads per task (default 1; see "Threads" in the module docs).
    progress : bool, optional
        As in :func:`simhash_nb.fingerprint`, in each task (off where the worker does
        not write to a terminal).

    Returns
    -------
    dask Series or DataFrame
        A Series: its fingerprints (``UInt64``, or ``binary[16][pyarrow]`` for 128 bits,
        ``<NA>`` for missing texts; the spec in each partition's
        ``attrs["simhash_spec"]``). A DataFrame: a copy with the column ``out`` added.

    Raises
    ------
    KeyError
        If ``column`` is not in the DataFrame.
    TypeError
        If the data is not text, or a callable tokenizer does not pickle.
    ValueError
        If an option is invalid, or ``params={"idf": "fit"}``.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> s = dd.from_pandas(pd.Series(["hello world", "hello world!", None]), npartitions=2)
    >>> fps = sh.distributed.fingerprint(s, tokenizer="word").compute()
    >>> str(fps.dtype), fps.iloc[0] == fps.iloc[1], bool(fps.isna().iloc[2])
    ('UInt64', np.True_, True)
    """
    r = recipe(dict(bits=bits, tokenizer=tokenizer, ngram=ngram, weights=weights,
                    normalize=normalize, seed=seed, spec=spec, params=params,
                    progress=progress))
    series, kind = select(data, column if isinstance(data, dd.DataFrame) else None, "text")
    if kind != "text":
        raise TypeError(
            f"{'column ' + repr(series.name) if isinstance(data, dd.DataFrame) else 'the Series'}"
            " holds fingerprints already; fingerprint a text column"
        )
    if isinstance(data, dd.Series):
        return fingerprint_series(data, r, n_jobs)
    meta = data._meta.assign(**{out: fp_meta(r.spec.bits, out).set_axis(data._meta.index)})
    return data.map_partitions(
        fingerprint_frame, series.name, out, r, task_threads(n_jobs), meta=meta
    )
