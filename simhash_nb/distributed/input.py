"""Dask input: the column and options, threads per task, fingerprinting partitions, and
the scan that numbers rows by their global position."""

from __future__ import annotations

import dataclasses
import numbers
import os
from typing import Any

import cloudpickle  # Dask's own dependency: what pickles here travels to the workers
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .. import _frames
from .. import accessors as _acc
from .._core.spec import FingerprintSpec, SpecMismatchError, check_compatible
from .._core.tokenizers import prepare as prepare_options
from .._core.tokenizers import split_options

# --- input ------------------------------------------------------------------------------


def check_dask(data, what: str = "data") -> None:
    if isinstance(data, (dd.DataFrame, dd.Series)):
        return
    if isinstance(data, (pd.DataFrame, pd.Series)):
        raise TypeError(
            f"{what} is a pandas {type(data).__name__}; use its .simhash accessor (or the core "
            "functions) on one machine, or dask.dataframe.from_pandas(...) to distribute it"
        )
    raise TypeError(f"{what} must be a Dask DataFrame or Series, got {type(data).__name__}")


def _pick(df: pd.DataFrame, name) -> pd.Series:
    return df[name]


def select(data, column: str | None, default: str | None = None, aligned: bool = False):
    """The Dask Series to work on and its kind ("text", "fp64", "fp128").

    ``aligned``: select the column inside a whole-frame task, so the Series is
    partitioned exactly like the frame. (A plain projection may be read with other
    partitions: Dask fuses small Parquet partitions when it reads fewer columns.)
    """
    check_dask(data)
    if isinstance(data, dd.DataFrame):
        # the pandas accessor's column rules (default "simhash" if present, else "text")
        meta = _acc.SimhashDataFrameAccessor(data._meta)._column(column or default)
        if aligned:
            series = data.map_partitions(_pick, meta.name, meta=meta)
        else:
            series = data[meta.name]
    else:
        if column is not None:
            raise TypeError("column= applies to a Dask DataFrame; this is a Series")
        series = data
    kind = _frames.fingerprint_kind(series._meta.dtype)
    if kind is None:
        raise TypeError(
            f"{'column ' + repr(series.name) if isinstance(data, dd.DataFrame) else 'the Series'}"
            f" has dtype {series._meta.dtype}: neither text (object, string) nor fingerprints "
            "(UInt64, binary[16][pyarrow])"
        )
    return series, kind


@dataclasses.dataclass(frozen=True)
class Recipe:
    """Fingerprint options checked on the client, to run on the workers.

    ``options`` are the user's spec options as given (a callable tokenizer, jieba's
    stop words, an IDF table travel with them: each task makes its spec with
    :func:`simhash_nb._core.tokenizers.prepare`, the one path of every face); ``spec``
    is the spec they make.
    """

    spec: FingerprintSpec
    options: dict
    progress: bool | None = None


def recipe(options: dict[str, Any]) -> Recipe:
    """The :class:`Recipe` of a face's fingerprint options (every option of the core)."""
    spec_options, run = split_options(options)
    spec, _ = prepare_options(**spec_options)
    if dict(spec.params).get("idf") == "fit":
        raise ValueError(
            "params={'idf': 'fit'} fits the IDF on the texts at hand, which on Dask would be "
            "each partition's; fit a table first (sh.fit_idf on the column or a sample) and "
            "pass params={'idf': table}")
    if spec.tokenizer in ("callable", "jieba") or "params" in spec_options:
        check_picklable(spec_options)
    return Recipe(spec, spec_options, run["progress"])


def check_picklable(options: dict) -> None:
    """Raise ``TypeError`` if ``options`` (a tokenizer, params) will not travel to workers."""
    try:
        cloudpickle.dumps(options)
    except Exception as e:
        what = ("the tokenizer" if callable(options.get("tokenizer"))
                else "the fingerprint options")
        raise TypeError(
            f"{what} must be picklable to travel to the Dask workers ({type(e).__name__}: "
            f"{e}); use a module-level function, or an object that pickles") from None


@dataclasses.dataclass
class Input:
    """Fingerprints to search: a Dask Series (perhaps lazily made from text here)."""

    fps: Any
    text: Any
    spec: FingerprintSpec | None
    bits: int


def prepare(data, column, options: dict[str, Any], n_jobs, aligned: bool = False) -> Input:
    series, kind = select(data, column, aligned=aligned)
    spec_options, _ = split_options(options)
    if kind == "text":
        r = recipe(options)
        return Input(fingerprint_series(series, r, n_jobs), series, r.spec, r.spec.bits)
    if spec_options:
        raise TypeError(
            f"the data holds fingerprints already; fingerprint options {sorted(spec_options)} "
            "apply only to text"
        )
    return Input(series, None, None, 64 if kind == "fp64" else 128)


def check_npartitions(npartitions) -> None:
    """Refuse an ``npartitions`` other than None or a positive integer."""
    if npartitions is not None and (isinstance(npartitions, bool) or not isinstance(
            npartitions, numbers.Integral) or npartitions < 1):
        raise ValueError(f"npartitions must be a positive integer, got {npartitions!r}")


# Up to this many partitions on either side, a shuffle whose method the user leaves
# unset runs as Dask's "tasks" shuffle: the verified path's shuffles are a few large
# partitions, where P2P's per-shuffle setup, disk buffers and barrier cost more than
# they save (at 100k texts in 4 partitions on 2 workers, about twice the workers' CPU
# time). Beyond it, Dask's default (P2P on a distributed cluster) keeps memory flat.
SMALL_SHUFFLE = 32


def shuffle_for(shuffle_method: str | None, frame, npartitions: int) -> str | None:
    """The method of a shuffle of ``frame`` into ``npartitions``: the user's, else
    ``"tasks"`` for at most :data:`SMALL_SHUFFLE` partitions in and out, else Dask's
    default."""
    if shuffle_method is not None:
        return shuffle_method
    return "tasks" if max(frame.npartitions, npartitions) <= SMALL_SHUFFLE else None


def task_threads(n_jobs) -> int | None:
    """Numba threads for each task (validated here, on the client)."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    return int(n_jobs)


def threads_per_task(client=None) -> int:
    """Numba threads each task may use without oversubscribing the cluster's cores.

    For each worker host: its cores divided by the Dask threads of all workers on it;
    the smallest over hosts (at least 1). Pass it as ``n_jobs``.

    Parameters
    ----------
    client : distributed.Client, optional
        Default: the current client.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If the cluster has no workers.

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> import simhash_nb as sh
    >>> # dashboard_address=":0": any free port (the default 8787 may be taken)
    >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
    ...                   dashboard_address=":0") as cluster:
    ...     with Client(cluster) as client:
    ...         sh.distributed.threads_per_task(client) >= 1
    True
    """
    if client is None:
        from distributed import get_client  # optional: only a cluster's client has one

        client = get_client()
    workers = client.scheduler_info(n_workers=-1)["workers"]
    cores = client.run(_usable_cores)
    per_host: dict[str, list[int]] = {}
    for addr, w in workers.items():
        threads_cores = per_host.setdefault(w["host"], [0, 0])
        threads_cores[0] += int(w["nthreads"])
        threads_cores[1] = max(threads_cores[1], int(cores.get(addr, 1)))
    if not per_host:
        raise ValueError("the cluster has no workers")
    return max(1, min(c // max(t, 1) for t, c in per_host.values()))


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def fp_meta(bits: int, name) -> pd.Series:
    empty = np.zeros((0,) if bits == 64 else (0, 2), dtype=np.uint64)
    return pd.Series(_frames.fingerprint_array(empty), name=name)


def _fingerprint_part(part: pd.Series, r: Recipe, n_jobs) -> pd.Series:
    return _acc.SimhashSeriesAccessor(part).fingerprint(**r.options, n_jobs=n_jobs,
                                                        progress=r.progress)


def fingerprint_frame(part: pd.DataFrame, column, out, r: Recipe, n_jobs) -> pd.DataFrame:
    return _acc.SimhashDataFrameAccessor(part).fingerprint(column, out, **r.options,
                                                           n_jobs=n_jobs, progress=r.progress)


def fingerprint_series(series, r: Recipe, n_jobs):
    return series.map_partitions(
        _fingerprint_part, r, task_threads(n_jobs), meta=fp_meta(r.spec.bits, series.name)
    )


# --- describing the partitions ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Scan:
    offsets: np.ndarray  # int64[P + 1]: first global position of each partition, then n
    n_valid: int
    spec: FingerprintSpec | None

    @property
    def n(self) -> int:
        return int(self.offsets[-1])


def _describe_part(part: pd.Series, check_index: bool) -> pd.DataFrame:
    kind = _frames.fingerprint_kind(part.dtype)
    if kind in ("fp64", "fp128"):
        n_valid = int(part.notna().sum())
        got = _frames.spec_of(part)
        spec = got.to_json() if got is not None else ""
    else:
        n_valid, spec = len(part), ""
    unique = bool(part.index.is_unique) if check_index else True
    return pd.DataFrame({"n": [len(part)], "n_valid": [n_valid], "kind": [kind or ""],
                         "spec": [spec], "unique": [unique]})


_DESCRIBE_META = pd.DataFrame({"n": np.empty(0, np.int64), "n_valid": np.empty(0, np.int64),
                               "kind": np.empty(0, object), "spec": np.empty(0, object),
                               "unique": np.empty(0, bool)})


def scan_input(inp: Input, check_index: bool = False) -> Scan:
    """Lengths, kinds and specs of every partition (one small pass)."""
    source = inp.text if inp.text is not None else inp.fps
    parts = source.map_partitions(
        _describe_part, check_index, meta=_DESCRIBE_META, clear_divisions=True,
        enforce_metadata=False,
    ).compute()
    counts = parts["n"].to_numpy(dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    if check_index and not parts["unique"].all():
        p = int(np.flatnonzero(~parts["unique"].to_numpy(bool))[0])
        raise ValueError(
            f"partition {p} has duplicate index labels, so pairs of labels would be "
            "ambiguous; use ids='position' or make the index unique"
        )
    if inp.text is not None:
        return Scan(offsets, int(counts.sum()), inp.spec)
    want = "fp64" if inp.bits == 64 else "fp128"
    kinds = parts["kind"].tolist()
    for p, kind in enumerate(kinds):
        if counts[p] and kind != want:
            raise ValueError(
                f"partition {p} holds {kind or 'no'} fingerprints, but the collection's "
                f"dtype says {want}; all partitions must hold fingerprints of one width"
            )
    spec = None
    first = None
    for p, text in enumerate(parts["spec"].tolist()):
        if not text:
            continue
        s = FingerprintSpec.from_json(text)
        if spec is None:
            spec, first = s, p
            continue
        try:
            check_compatible(spec, s)
        except SpecMismatchError as e:
            raise SpecMismatchError(
                f"partitions {first} and {p} hold fingerprints made with different specs "
                f"({str(e).split(': ', 1)[-1]}); recompute them with one spec"
            ) from None
    return Scan(offsets, int(parts["n_valid"].sum()), spec)


def row_base(part, offsets: np.ndarray, partition_info) -> int:
    """Global position of the partition's first row; checks the partition still has the
    length the first pass saw."""
    p = partition_info["number"] if partition_info else 0
    base, end = int(offsets[p]), int(offsets[p + 1])
    if len(part) != end - base:
        raise RuntimeError(
            f"partition {p} has {len(part)} rows now but had {end - base} when it was "
            "scanned: the collection is not partitioned the same way on every read "
            "(non-deterministic input, or a file source read with other columns); persist "
            "it first, or pass the column as a Series"
        )
    return base
