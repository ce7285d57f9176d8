"""Dask twins of the core functions: fingerprints, near-duplicate pairs, clusters and
dedupe on Dask DataFrames, with the same results as on one machine.

``sh.distributed`` is loaded on first use and needs the ``dask`` extra
(``pip install 'simhash-nb[dask]'``); ``import simhash_nb`` never imports Dask. Importing
it also registers the ``.simhash`` accessor on Dask DataFrames and Series.

How it works
------------
- :func:`fingerprint` runs the core kernels on each partition (``map_partitions``).
- :func:`near_duplicates` splits fingerprints into the permutation tables of
  :func:`simhash_nb.near_duplicates` (the same block layout and cost model, plus the
  cost of shuffling each table, which favours fewer tables), emits
  ``(table, key, row, fingerprint)`` records for every table, shuffles them on the key,
  and verifies the rows sharing a key with the same Numba kernels. A pair is kept only
  by the first table whose key it matches (the single-machine ownership rule), so
  every pair appears once. No worker ever holds all fingerprints.
- :func:`clusters` and :func:`dedupe` start from the same search, contract each
  partition's pairs with union-find, then run the alternating large-star / small-star
  rounds of Kiveris et al. ("Connected components in MapReduce and beyond", SoCC 2014)
  on the edge list until every component is a star around its smallest row. Each
  round is one shuffle of edges; no worker holds the whole graph.

Row ids
-------
Rows are numbered by their global position: partition after partition, in order, 0 to
``n - 1``. Pairs and cluster labels use these positions, so they equal the
single-machine result on ``fps.compute()``. Missing fingerprints keep their position
but are in no pair (cluster label ``<NA>``; :func:`dedupe` keeps them), as in the
pandas accessor. ``near_duplicates(..., ids="index")`` reports index labels instead
(it needs known divisions, so that labels are unique and ordered).

Threads: Numba inside Dask
--------------------------
Dask runs one task per worker thread, and each task calls multi-threaded Numba
kernels. To keep threads at most the number of cores, each task runs its kernels with
``n_jobs`` Numba threads, by default **1**: Dask's own defaults (``LocalCluster()``,
``dask-worker --nthreads``) already give one worker thread per core. With few, fat
workers -- say ``LocalCluster(n_workers=2, threads_per_worker=1)`` on a 16-core machine
-- pass ``n_jobs=8``, or ``n_jobs=sh.distributed.threads_per_task(client)``, which
divides each host's cores by the Dask threads on it. (Numba's threading layer here is
OpenMP; the per-task thread count is thread-local, so concurrent tasks do not interfere.)

Tunables are read on the client when the graph is built (``max_pairs``, the table
design, ``config["distributed_partition_rows"]``); workers use their own
:data:`simhash_nb.config` for the kernels' internal settings.

Examples
--------
>>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
>>> pdf = pd.DataFrame({"text": ["a b c d", "x y z", "a b c d", "a b c e"]})
>>> ddf = dd.from_pandas(pdf, npartitions=2)
>>> ddf = sh.distributed.fingerprint(ddf, tokenizer="word")
>>> sh.distributed.near_duplicates(ddf, k=0).compute().values.tolist()
[[0, 2, 0]]
>>> sh.distributed.clusters(ddf, k=0).compute().tolist()
[0, 1, 0, 3]
"""

from __future__ import annotations

import dataclasses
import numbers
import os
from typing import Any

import numpy as np

try:
    import dask
    import dask.dataframe as dd
except ImportError as _e:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "simhash_nb.distributed needs Dask: pip install 'simhash-nb[dask]' "
        "(installs dask[dataframe] and distributed)"
    ) from _e

import pandas as pd

from . import accessors as _acc
from ._kernels.unionfind import components as _components
from ._parallel import threads
from ._validation import check_k
from .config import config
from .fingerprint import make_spec
from .search import (
    TooManyPairsError,
    _check_blocks,
    _expand,
    _group_identical,
    _identical,
    _Layout,
    _n_tables,
    _table_search,
    _Work,
    table_design,
)
from .spec import FingerprintSpec, SpecMismatchError, check_compatible

__all__ = [
    "clusters",
    "dedupe",
    "fingerprint",
    "near_duplicates",
    "threads_per_task",
]

_EDGE_META = pd.DataFrame({"u": np.empty(0, np.int64), "v": np.empty(0, np.int64)})
_ARC_META = pd.DataFrame({"src": np.empty(0, np.int64), "dst": np.empty(0, np.int64)})
_NO_LIMIT = 2**62


# --- input ------------------------------------------------------------------------------


def _check_dask(data, what: str = "data") -> None:
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


def _select(data, column: str | None, default: str | None = None, aligned: bool = False):
    """The Dask Series to work on and its kind ("text", "fp64", "fp128").

    ``aligned``: select the column inside a whole-frame task, so the Series is
    partitioned exactly like the frame. (A plain projection may be read with other
    partitions: Dask fuses small Parquet partitions when it reads fewer columns.)
    """
    _check_dask(data)
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
    kind = _acc.fingerprint_kind(series._meta.dtype)
    if kind is None:
        raise TypeError(
            f"{'column ' + repr(series.name) if isinstance(data, dd.DataFrame) else 'the Series'}"
            f" has dtype {series._meta.dtype}: neither text (object, string) nor fingerprints "
            "(UInt64, binary[16][pyarrow])"
        )
    return series, kind


@dataclasses.dataclass
class _Input:
    """Fingerprints to search: a Dask Series (perhaps lazily made from text here)."""

    fps: Any
    text: Any
    spec: FingerprintSpec | None
    bits: int


def _prepare(data, column, options: dict[str, Any], n_jobs, aligned: bool = False) -> _Input:
    series, kind = _select(data, column, aligned=aligned)
    spec_options, _ = _acc._split_options(dict(options))
    if kind == "text":
        spec = make_spec(**spec_options)
        return _Input(_fingerprint_series(series, spec, n_jobs), series, spec, spec.bits)
    if spec_options:
        raise TypeError(
            f"the data holds fingerprints already; fingerprint options {sorted(spec_options)} "
            "apply only to text"
        )
    return _Input(series, None, None, 64 if kind == "fp64" else 128)


def _task_threads(n_jobs) -> int | None:
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
    >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False) as cluster:
    ...     with Client(cluster) as client:
    ...         sh.distributed.threads_per_task(client) >= 1
    True
    """
    if client is None:
        from distributed import get_client

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


# --- fingerprints -----------------------------------------------------------------------


def _fp_meta(bits: int, name) -> pd.Series:
    empty = np.zeros((0,) if bits == 64 else (0, 2), dtype=np.uint64)
    return pd.Series(_acc.fingerprint_array(empty), name=name)


def _fingerprint_part(part: pd.Series, spec: FingerprintSpec, n_jobs) -> pd.Series:
    return _acc.SimhashSeriesAccessor(part).fingerprint(spec=spec, n_jobs=n_jobs)


def _fingerprint_frame(part: pd.DataFrame, column, out, spec, n_jobs) -> pd.DataFrame:
    return _acc.SimhashDataFrameAccessor(part).fingerprint(column, out, spec=spec, n_jobs=n_jobs)


def _fingerprint_series(series, spec: FingerprintSpec, n_jobs):
    return series.map_partitions(
        _fingerprint_part, spec, _task_threads(n_jobs), meta=_fp_meta(spec.bits, series.name)
    )


def fingerprint(
    data,
    column: str = "text",
    *,
    out: str = "simhash",
    bits: int | None = None,
    tokenizer: str | None = None,
    ngram: int | None = None,
    weights: str | None = None,
    normalize=None,
    seed: int | None = None,
    spec: FingerprintSpec | None = None,
    n_jobs: int | None = None,
):
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
    bits, tokenizer, ngram, weights, normalize, seed, spec
        As in :func:`simhash_nb.fingerprint`.
    n_jobs : int, optional
        Numba threads per task (default 1; see "Threads" in the module docs).

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
        If the data is not text.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> s = dd.from_pandas(pd.Series(["hello world", "hello world!", None]), npartitions=2)
    >>> fps = sh.distributed.fingerprint(s, tokenizer="word").compute()
    >>> str(fps.dtype), fps.iloc[0] == fps.iloc[1], bool(fps.isna().iloc[2])
    ('UInt64', np.True_, True)
    """
    spec = make_spec(spec, bits=bits, tokenizer=tokenizer, ngram=ngram, weights=weights,
                     normalize=normalize, seed=seed)
    series, kind = _select(data, column if isinstance(data, dd.DataFrame) else None, "text")
    if kind != "text":
        raise TypeError(
            f"{'column ' + repr(series.name) if isinstance(data, dd.DataFrame) else 'the Series'}"
            " holds fingerprints already; fingerprint a text column"
        )
    if isinstance(data, dd.Series):
        return _fingerprint_series(data, spec, n_jobs)
    meta = data._meta.assign(**{out: _fp_meta(spec.bits, out).set_axis(data._meta.index)})
    return data.map_partitions(
        _fingerprint_frame, series.name, out, spec, _task_threads(n_jobs), meta=meta
    )


# --- describing the partitions ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Scan:
    offsets: np.ndarray  # int64[P + 1]: first global position of each partition, then n
    n_valid: int
    spec: FingerprintSpec | None

    @property
    def n(self) -> int:
        return int(self.offsets[-1])


def _describe_part(part: pd.Series, check_index: bool) -> pd.DataFrame:
    kind = _acc.fingerprint_kind(part.dtype)
    if kind in ("fp64", "fp128"):
        n_valid = int(part.notna().sum())
        got = _acc.spec_of(part)
        spec = got.to_json() if got is not None else ""
    else:
        n_valid, spec = len(part), ""
    unique = bool(part.index.is_unique) if check_index else True
    return pd.DataFrame({"n": [len(part)], "n_valid": [n_valid], "kind": [kind or ""],
                         "spec": [spec], "unique": [unique]})


_DESCRIBE_META = pd.DataFrame({"n": np.empty(0, np.int64), "n_valid": np.empty(0, np.int64),
                               "kind": np.empty(0, object), "spec": np.empty(0, object),
                               "unique": np.empty(0, bool)})


def _scan(inp: _Input, check_index: bool = False) -> _Scan:
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
        return _Scan(offsets, int(counts.sum()), inp.spec)
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
    return _Scan(offsets, int(parts["n_valid"].sum()), spec)


# --- the distributed pair search --------------------------------------------------------


def _design_blocks(n: int, k: int, bits: int, blocks: int | None,
                   n_against: int | None = None) -> int:
    """Blocks of the distributed table layout.

    Each table costs a shuffle of ``n`` records (``config["distributed_cost_record"]``
    seconds each), far more than sorting them on one machine, so the design minimises
    :func:`table_design`'s modelled cost plus the shuffles: fewer, wider-bucket tables
    than on one machine.
    """
    if blocks is not None:
        return _check_blocks(blocks, k, bits)
    best, best_cost = None, None
    for b in range(max(k + 1, bits // 64), bits + 1):
        if _n_tables(b, k) > config["max_tables"]:
            break
        d = table_design(n, k, bits, n_against=n_against, blocks=b)
        cost = d.cost + d.tables * (n + (n_against or 0)) * config["distributed_cost_record"]
        if best_cost is None or cost < best_cost:
            best, best_cost = b, cost
    return best


_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (the shuffle key's hash)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _emit_meta(words: int, label_dtype, sided: bool = False) -> pd.DataFrame:
    cols = {"bucket": np.empty(0, np.uint64), "table": np.empty(0, np.uint16),
            "row": np.empty(0, np.int64)}
    if sided:
        cols["side"] = np.empty(0, np.uint8)
    for w in range(words):
        cols[f"w{w}"] = np.empty(0, np.uint64)
    meta = pd.DataFrame(cols)
    if label_dtype is not None:
        meta["label"] = pd.Series([], dtype=label_dtype)
    return meta


def _emit(part: pd.Series, tables: range, key_masks: np.ndarray, offsets: np.ndarray,
          labels: bool, side: int | None = None, partition_info=None) -> pd.DataFrame:
    """Records of some tables for one partition: (bucket, table, row[, side], fingerprint
    words[, label]), ``bucket`` hashing the table and its key (the selected blocks);
    ``side`` (0 or 1) tells the two collections of a search ``against`` apart."""
    base = _base(part, offsets, partition_info)
    fps, valid = _acc.fingerprint_values(part)
    words = fps.reshape(fps.shape[0], key_masks.shape[1])
    pos = np.flatnonzero(valid)
    if pos.shape[0] != words.shape[0]:
        words = words[pos]
    m, nt = words.shape[0], len(tables)
    bucket = np.empty(m * nt, dtype=np.uint64)
    for x, t in enumerate(tables):
        key = _mix(np.full(m, t + 1, dtype=np.uint64))
        for w in range(words.shape[1]):
            key = _mix(key ^ (words[:, w] & key_masks[t, w]))
        bucket[x * m:(x + 1) * m] = key
    cols = {"bucket": bucket,
            "table": np.repeat(np.asarray(tables, dtype=np.uint16), m),
            "row": np.tile(pos.astype(np.int64) + base, nt)}
    if side is not None:
        cols["side"] = np.full(m * nt, side, dtype=np.uint8)
    for w in range(words.shape[1]):
        cols[f"w{w}"] = np.tile(words[:, w], nt)
    out = pd.DataFrame(cols)
    if labels:
        out["label"] = np.tile(part.index[pos].to_numpy(), nt) if m else part.index[:0]
    return out


_PER_BLOCK = ("starts", "widths", "block_masks")


def _one_table(layout: _Layout, t: int) -> _Layout:
    """The layout restricted to table ``t``; ownership still checks against all blocks.

    Every array field indexed by table (``sels``, ``rests``, ``key_widths``, ...) is
    sliced; the per-block fields are kept whole.
    """
    s = slice(t, t + 1)
    n = layout.n_tables
    changes = {
        f.name: getattr(layout, f.name)[s]
        for f in dataclasses.fields(layout)
        if f.name not in _PER_BLOCK
        and isinstance(getattr(layout, f.name), np.ndarray)
        and getattr(layout, f.name).ndim > 0
        and getattr(layout, f.name).shape[0] == n
    }
    return dataclasses.replace(layout, **changes)


def _table_pairs(fps: np.ndarray, layout: _Layout, t: int, k: int, limit: int, expand: bool):
    """Pairs owned by table ``t`` among rows sharing its keys (local row numbers).

    ``expand``: every pair of rows (as :func:`simhash_nb.near_duplicates` lists them);
    otherwise a spanning set for clustering (distinct fingerprints' first rows, and each
    repeated row linked to the first row with its fingerprint).
    """
    m = fps.shape[0]
    none = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8))
    if m < 2:
        return none
    work = _Work(m)
    ga = _group_identical(fps, work)
    ua = ga.distinct(fps)
    identical = ga.identical_pairs() if expand and t == 0 else 0
    if identical > limit:
        raise _too_many(identical, limit)
    if ua.shape[0] >= 2:
        w = ga.weights() if expand else np.empty(0, np.int64)
        got = _table_search(ua, -1, _one_table(layout, t), k, w, w, limit - identical, work)
        if got.over:
            raise _too_many(got.weighted + identical, limit)
        u, v, d = got.result()
    else:
        u, v, d = none
    if expand:
        i, j, d = _expand(u, v, d, ga, ga, True)
        if identical:
            ii, jj, dd_ = _identical(ga)
            i, j, d = np.concatenate([i, ii]), np.concatenate([j, jj]), np.concatenate([d, dd_])
        return i, j, d
    if not ga.has_duplicates:
        return u, v, d
    i, j = ga.first[u], ga.first[v]
    if t == 0:
        rep = ga.first[ga.inverse]
        rows = np.flatnonzero(rep != np.arange(m))
        i, j = np.concatenate([i, rep[rows]]), np.concatenate([j, rows])
        d = np.concatenate([d, np.zeros(rows.shape[0], np.uint8)])
    return i, j, d


def _cross_table_pairs(fa: np.ndarray, fb: np.ndarray, layout: _Layout, t: int, k: int,
                       limit: int):
    """Pairs (row of ``fa``, row of ``fb``) owned by table ``t``, as in a cross join."""
    work = _Work(fa.shape[0] + fb.shape[0])
    ga, gb = _group_identical(fa, work), _group_identical(fb, work)
    ua, ub = ga.distinct(fa), gb.distinct(fb)
    both = np.concatenate([ua, ub])
    got = _table_search(both, ua.shape[0], _one_table(layout, t), k, ga.weights(),
                        gb.weights(), limit, work.fit(both.shape[0]))
    if got.over:
        raise _too_many(got.weighted, limit)
    return _expand(*got.result(), ga, gb, False)


def _too_many(total: int, limit: int) -> TooManyPairsError:
    return TooManyPairsError(
        f"one partition of the distributed search would hold {total:,} pairs, more than "
        f"max_pairs={limit:,}; use sh.distributed.clusters or dedupe (they do not list every "
        "pair), raise max_pairs, or use more partitions (npartitions=)"
    )


def _pairs_meta(label_dtype) -> pd.DataFrame:
    if label_dtype is None:
        return pd.DataFrame({"left": np.empty(0, np.int64), "right": np.empty(0, np.int64),
                             "distance": np.empty(0, np.uint8)})
    return pd.DataFrame({"left": pd.Series([], dtype=label_dtype),
                         "right": pd.Series([], dtype=label_dtype),
                         "distance": np.empty(0, np.uint8)})


def _search_part(df: pd.DataFrame, layout: _Layout, k: int, mode: str, limit: int,
                 n_jobs, label_dtype) -> pd.DataFrame:
    """Verify the candidates of one shuffled partition, table by table.

    Rows of a table come in shuffle order; pairs are put in global order afterwards
    (the set found does not depend on the order).
    """
    table = df["table"].to_numpy()
    row = df["row"].to_numpy()
    order_rows = np.argsort(table, kind="stable")  # radix sort of uint16
    table, row = table[order_rows], row[order_rows]
    words = np.stack([df[f"w{w}"].to_numpy()[order_rows] for w in range(layout.bits // 64)],
                     axis=1)
    side = df["side"].to_numpy()[order_rows] if mode == "cross" else None
    bounds = np.flatnonzero(np.diff(table)) + 1
    starts = np.concatenate(([0], bounds)).astype(np.int64)
    ends = np.concatenate((bounds, [table.shape[0]])).astype(np.int64)
    out_i, out_j, out_d = [], [], []
    with threads(n_jobs):
        for s, e in zip(starts.tolist(), ends.tolist()):
            if e - s < 2:
                continue
            if mode == "cross":
                left = np.flatnonzero(side[s:e] == 0) + s
                right = np.flatnonzero(side[s:e] == 1) + s
                if left.shape[0] == 0 or right.shape[0] == 0:
                    continue
                i, j, d = _cross_table_pairs(words[left], words[right], layout, int(table[s]),
                                             k, limit)
                i, j = left[i], right[j]
            else:
                fps = np.ascontiguousarray(words[s:e])
                i, j, d = _table_pairs(fps, layout, int(table[s]), k, limit, mode == "pairs")
                i, j = i + s, j + s
            out_i.append(i)
            out_j.append(j)
            out_d.append(d)
            if mode != "edges":
                limit -= i.shape[0]
    pi = np.concatenate(out_i) if out_i else np.empty(0, np.int64)
    pj = np.concatenate(out_j) if out_j else np.empty(0, np.int64)
    d = np.concatenate(out_d) if out_d else np.empty(0, np.uint8)
    if mode != "cross":  # a self-join lists each pair as left < right
        swap = row[pi] > row[pj]
        pi, pj = np.where(swap, pj, pi), np.where(swap, pi, pj)
    i, j = row[pi], row[pj]
    if mode == "edges":
        u, v = _contract(i, j)
        return pd.DataFrame({"u": u, "v": v})
    order = np.lexsort((j, i))
    i, j, d = i[order], j[order], d[order]
    if label_dtype is None:
        return pd.DataFrame({"left": i, "right": j, "distance": d})
    labels = df["label"].array.take(order_rows)
    return pd.DataFrame({"left": labels.take(pi[order]), "right": labels.take(pj[order]),
                         "distance": d})


def _search(inp: _Input, scan: _Scan, k: int, blocks: int | None, mode: str, *,
            labels: bool = False, npartitions=None, max_pairs=None, shuffle_method=None,
            n_jobs=None, against: tuple[_Input, _Scan] | None = None):
    """The shuffled table search as a lazy Dask DataFrame (pairs, or star edges).

    With ``against`` (mode ``"cross"``) the records of both collections are shuffled
    together, tagged with their side, and only pairs across the sides are verified.
    """
    bits = inp.bits
    sides = [(inp, scan)] if against is None else [(inp, scan), against]
    if against is None:
        design = _design_blocks(max(scan.n_valid, 2), k, bits, blocks)
    else:
        design = _design_blocks(max(scan.n_valid, 1), k, bits, blocks,
                                n_against=max(against[1].n_valid, 1))
    layout = _Layout.make(bits, k, design)
    label_dtype = inp.fps._meta.index.dtype if labels else None
    key_masks = np.stack([np.bitwise_or.reduce(layout.block_masks[sel], axis=0)
                          for sel in layout.sels])
    # each task emits as many tables as fit in about `rows` records
    rows = max(1, int(config["distributed_partition_rows"]))
    emitted = []
    for side, (data, sc) in enumerate(sides):
        longest = int(np.diff(sc.offsets).max()) if sc.offsets.shape[0] > 1 else 0
        per_task = max(1, rows // max(1, longest))
        tag = side if against is not None else None
        emitted += [
            data.fps.map_partitions(
                _emit, range(t, min(t + per_task, layout.n_tables)), key_masks, sc.offsets,
                labels, tag, meta=_emit_meta(bits // 64, label_dtype, tag is not None),
                clear_divisions=True, enforce_metadata=False,
            )
            for t in range(0, layout.n_tables, per_task)
        ]
    frame = emitted[0] if len(emitted) == 1 else dd.concat(emitted, ignore_unknown_divisions=True)
    records = sum(sc.n_valid for _, sc in sides) * layout.n_tables
    if npartitions is not None and (isinstance(npartitions, bool) or not isinstance(
            npartitions, numbers.Integral) or npartitions < 1):
        raise ValueError(f"npartitions must be a positive integer, got {npartitions!r}")
    q = npartitions or max(max(d.fps.npartitions for d, _ in sides), -(-records // rows))
    shuffled = frame.shuffle("bucket", npartitions=q, ignore_index=True,
                             shuffle_method=shuffle_method)
    limit = _NO_LIMIT if mode == "edges" else _max_pairs(max_pairs)
    meta = _EDGE_META if mode == "edges" else _pairs_meta(label_dtype)
    return shuffled.map_partitions(
        _search_part, layout, k, mode, limit, _task_threads(n_jobs), label_dtype, meta=meta,
        enforce_metadata=False,
    )


def _max_pairs(max_pairs) -> int:
    if max_pairs is None:
        return int(config["max_pairs"])
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, numbers.Integral) or max_pairs < 0:
        raise ValueError(f"max_pairs must be a non-negative integer, got {max_pairs!r}")
    return int(max_pairs)


def near_duplicates(
    data,
    k: int = 3,
    *,
    against=None,
    column: str | None = None,
    blocks: int | None = None,
    ids: str = "position",
    npartitions: int | None = None,
    max_pairs: int | None = None,
    shuffle_method: str | None = None,
    n_jobs: int | None = None,
    **options,
):
    """Every pair of rows whose fingerprints are within Hamming distance ``k``, on Dask.

    The Dask twin of :func:`simhash_nb.near_duplicates`: permutation tables laid out as
    on one machine, one shuffle of ``(table, key, row, fingerprint)`` records on the
    key, verification of each key's rows with the core kernels. Each pair is reported
    once, by the first table whose key it matches. No worker gathers all fingerprints.

    Parameters
    ----------
    data : dask Series or DataFrame
        Fingerprints (``UInt64`` / ``uint64`` / ``binary[16][pyarrow]``), or text to
        fingerprint with ``**options``.
    k : int, default 3
        Largest distance reported (inclusive).
    against : dask Series or DataFrame, optional
        A second collection, of the same kind (fingerprints of the same width, or text
        fingerprinted with the same options; ``column`` applies to both): then only
        pairs between a row of ``data`` (``left``) and a row of ``against``
        (``right``) are reported, as :func:`simhash_nb.near_duplicates` does with
        ``against=``. Both are shuffled together, so neither is gathered.
    column : str, optional
        Column of a DataFrame: default ``"simhash"`` if it holds fingerprints, else
        ``"text"``.
    blocks : int, optional
        Blocks of the table layout (``C(blocks, k)`` tables, each one shuffled); by
        default the cheapest under :func:`~simhash_nb.table_design`'s cost model plus
        ``config["distributed_cost_record"]`` per shuffled record.
    ids : {"position", "index"}, default "position"
        ``left``/``right`` as global row positions (0 to n-1, partition after
        partition; equal to the single-machine result on ``fps.compute()``), or as
        index labels (needs known divisions and unique labels).
    npartitions : int, optional
        Partitions of the shuffle and of the result (default: the input's, or more so
        that each holds about ``config["distributed_partition_rows"]`` table records).
    max_pairs : int, optional
        Refuse to hold more pairs than this in any one result partition (default
        ``config["max_pairs"]``); raised as :class:`~simhash_nb.search.TooManyPairsError`
        when the result is computed.
    shuffle_method : str, optional
        Dask's shuffle method (default: ``"p2p"`` on a distributed cluster).
    n_jobs : int, optional
        Numba threads per task (default 1).
    **options
        Fingerprint options (``bits``, ``tokenizer``, ...) when ``data`` is text.

    Returns
    -------
    dask DataFrame
        Columns ``left < right`` (int64 positions, or labels) and ``distance``
        (uint8); each partition sorted by ``(left, right)``, partitions in no global
        order. Missing fingerprints are in no pair. With ``against``, ``left`` counts
        rows of ``data`` and ``right`` rows of ``against`` (so ``left < right`` need
        not hold).

    Raises
    ------
    KeyError
        If ``column`` is not in the DataFrame.
    SpecMismatchError
        If partitions (or ``data`` and ``against``) hold fingerprints made with
        different specs.
    ValueError
        For ``ids="index"`` on unknown divisions or duplicate labels.

    Notes
    -----
    One eager pass reads the partition lengths (for global positions and the table
    design) and checks the specs; persist fingerprints made lazily from text first, or
    pass the text itself (then only its lengths are read in that pass).

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> fps = pd.Series(np.array([0b0000, 0b0111, 0b1111_0000, 0b0001, 0b0000], dtype=np.uint64))
    >>> p = sh.distributed.near_duplicates(dd.from_pandas(fps, npartitions=2), k=1)
    >>> p.compute().sort_values(["left", "right"]).values.tolist()
    [[0, 3, 1], [0, 4, 0], [3, 4, 1]]
    >>> old = dd.from_pandas(pd.Series(np.array([0b0011], dtype=np.uint64)), npartitions=1)
    >>> x = sh.distributed.near_duplicates(dd.from_pandas(fps, npartitions=2), k=1, against=old)
    >>> x.compute().sort_values(["left", "right"]).values.tolist()
    [[1, 0, 1], [3, 0, 1]]
    """
    if ids not in ("position", "index"):
        raise ValueError(f"ids must be 'position' or 'index', got {ids!r}")
    collections = [("data", data)] + ([("against", against)] if against is not None else [])
    for name, coll in collections:
        _check_dask(coll, name)
        if ids == "index" and not coll.known_divisions:
            raise ValueError(
                f"ids='index' needs known divisions (a sorted index, so labels are unique "
                f"across partitions); the divisions of {name} are unknown: call "
                ".set_index(...) or use ids='position' (global row positions)"
            )
    inp = _prepare(data, column, options, n_jobs)
    k = check_k(k, inp.bits)
    scan = _scan(inp, check_index=ids == "index")
    other = None
    if against is not None:
        other = _against(inp, scan, against, column, options, n_jobs, ids == "index")
    return _search(inp, scan, k, blocks, "cross" if other else "pairs",
                   labels=ids == "index", npartitions=npartitions, max_pairs=max_pairs,
                   shuffle_method=shuffle_method, n_jobs=n_jobs, against=other)


def _against(inp: _Input, scan: _Scan, against, column, options, n_jobs, labels: bool):
    """The second collection of a cross search, checked against the first."""
    other = _prepare(against, column, options, n_jobs)
    if other.bits != inp.bits:
        raise ValueError(f"data holds {inp.bits}-bit fingerprints but against holds "
                         f"{other.bits}-bit ones")
    other_scan = _scan(other, check_index=labels)
    if scan.spec is not None and other_scan.spec is not None:
        try:
            check_compatible(scan.spec, other_scan.spec)
        except SpecMismatchError as e:
            raise SpecMismatchError(
                f"data and against hold fingerprints made with different specs "
                f"({str(e).split(': ', 1)[-1]}); recompute one of them"
            ) from None
    if labels and other.fps._meta.index.dtype != inp.fps._meta.index.dtype:
        raise TypeError(
            f"ids='index' needs one index dtype on both sides; data has "
            f"{inp.fps._meta.index.dtype}, against {other.fps._meta.index.dtype}"
        )
    return other, other_scan


# --- connected components ---------------------------------------------------------------


def _contract(i: np.ndarray, j: np.ndarray):
    """Union-find over one partition's edges: (root, member) for every non-root member,
    the root being the component's smallest row."""
    if i.shape[0] == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    ids, inv = np.unique(np.concatenate([i, j]), return_inverse=True)
    inv = inv.astype(np.int64)
    lab = _components(ids.shape[0], inv[: i.shape[0]], inv[i.shape[0]:])
    x = np.flatnonzero(lab != np.arange(ids.shape[0]))
    return ids[lab[x]].astype(np.int64), ids[x].astype(np.int64)


def _both_ways(df: pd.DataFrame) -> pd.DataFrame:
    u, v = df["u"].to_numpy(), df["v"].to_numpy()
    return pd.DataFrame({"src": np.concatenate([u, v]), "dst": np.concatenate([v, u])})


def _grouped(src: np.ndarray, dst: np.ndarray):
    """Arcs sorted by (src, dst) without repeats; group starts and group of each arc."""
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    if src.shape[0]:
        keep = np.ones(src.shape[0], dtype=bool)
        keep[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        src, dst = src[keep], dst[keep]
    new = np.ones(src.shape[0], dtype=bool)
    new[1:] = src[1:] != src[:-1]
    starts = np.flatnonzero(new)
    gid = np.cumsum(new) - 1
    return src, dst, starts, gid


def _large_star(df: pd.DataFrame) -> pd.DataFrame:
    """Each vertex links its larger neighbours to the smallest of itself and them."""
    src, dst, starts, gid = _grouped(df["src"].to_numpy(), df["dst"].to_numpy())
    m = np.minimum(src[starts], dst[starts])[gid]
    up = dst > src
    return pd.DataFrame({"u": m[up], "v": dst[up]})


def _not_star(df: pd.DataFrame) -> pd.Series:
    """Vertices with a smaller neighbour and more than one neighbour (0: all are stars
    centred on their smallest vertex)."""
    src, dst, starts, _ = _grouped(df["src"].to_numpy(), df["dst"].to_numpy())
    degree = np.diff(np.append(starts, src.shape[0]))
    return pd.Series([int(((degree > 1) & (dst[starts] < src[starts])).sum())])


def _small_star(df: pd.DataFrame) -> pd.DataFrame:
    """Each vertex links itself and its smaller neighbours to the smallest of them."""
    big, small, starts, gid = _grouped(df["v"].to_numpy(), df["u"].to_numpy())
    m = small[starts]
    mg = m[gid]
    other = small != mg
    return pd.DataFrame({"u": np.concatenate([mg[other], m]),
                         "v": np.concatenate([small[other], big[starts]])})


def _stars(edges, npartitions: int, shuffle_method, max_rounds: int):
    """Alternate large-star and small-star rounds until each component is a star
    ``(u = smallest row, v = other row)``."""
    current = edges.persist()
    for _ in range(max_rounds):
        arcs = current.map_partitions(_both_ways, meta=_ARC_META)
        arcs = arcs.shuffle("src", npartitions=npartitions, ignore_index=True,
                            shuffle_method=shuffle_method)
        large = arcs.map_partitions(_large_star, meta=_EDGE_META)
        bad = arcs.map_partitions(_not_star, meta=pd.Series([], dtype=np.int64)).sum()
        large, bad = dask.persist(large, bad)
        if int(bad.compute()) == 0:
            return large
        current = (large.shuffle("v", npartitions=npartitions, ignore_index=True,
                                 shuffle_method=shuffle_method)
                   .map_partitions(_small_star, meta=_EDGE_META).persist())
    raise RuntimeError(
        f"connected components did not converge in {max_rounds} rounds; raise max_rounds"
    )


def _base(part, offsets: np.ndarray, partition_info) -> int:
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


def _with_part(df: pd.DataFrame, col: str, offsets: np.ndarray) -> pd.DataFrame:
    part = np.searchsorted(offsets, df[col].to_numpy(), side="right") - 1
    return df.assign(part=part.astype(np.int64))


def _route(frame, col: str, offsets: np.ndarray, shuffle_method):
    """Rows of ``frame`` moved to the partition (of the input) holding row ``frame[col]``."""
    p = offsets.shape[0] - 1
    meta = frame._meta.assign(part=np.empty(0, np.int64))
    with_part = frame.map_partitions(_with_part, col, offsets, meta=meta)
    divisions = tuple(range(p)) + (p - 1,)
    return with_part.set_index("part", divisions=divisions, shuffle_method=shuffle_method)


def _local(rows: np.ndarray, base: int, n: int) -> np.ndarray:
    """Global rows routed to a partition -> positions in it."""
    local = rows - base
    if local.shape[0] and (local.min() < 0 or local.max() >= n):
        raise RuntimeError("a row was routed to the wrong partition")  # pragma: no cover
    return local


def _labels(fps: pd.Series, stars: pd.DataFrame, base: int) -> pd.Series:
    _, valid = _acc.fingerprint_values(fps)
    labels = np.arange(base, base + len(fps), dtype=np.int64)
    if len(stars):
        labels[_local(stars["v"].to_numpy(), base, len(fps))] = stars["u"].to_numpy()
    return pd.Series(pd.arrays.IntegerArray(labels, ~valid), index=fps.index, name="cluster",
                     copy=False)


def _label_part(fps: pd.Series, stars: pd.DataFrame, offsets: np.ndarray,
                partition_info=None) -> pd.Series:
    return _labels(fps, stars, _base(fps, offsets, partition_info))


def _label_frame(part: pd.DataFrame, fps: pd.Series, stars: pd.DataFrame, offsets: np.ndarray,
                 out: str, partition_info=None) -> pd.DataFrame:
    base = _base(part, offsets, partition_info)
    _base(fps, offsets, partition_info)
    return part.assign(**{out: _labels(fps, stars, base).set_axis(part.index)})


def _keep_part(part, drops: pd.DataFrame, offsets: np.ndarray, partition_info=None):
    base = _base(part, offsets, partition_info)
    keep = np.ones(len(part), dtype=bool)
    if len(drops):
        keep[_local(drops["row"].to_numpy(), base, len(part))] = False
    return part[keep]


def _drops_first(df: pd.DataFrame) -> pd.DataFrame:
    """Rows dropped by ``keep="first"``: every member of a star but its centre."""
    return pd.DataFrame({"row": df["v"].to_numpy()})


def _drops_all(df: pd.DataFrame) -> pd.DataFrame:
    """Rows dropped by ``keep=False``: every member of every star."""
    centre, leaf, starts, _ = _grouped(df["u"].to_numpy(), df["v"].to_numpy())
    return pd.DataFrame({"row": np.concatenate([leaf, centre[starts]])})


def _drops_last(df: pd.DataFrame) -> pd.DataFrame:
    """Rows dropped by ``keep="last"``: every member of a star but its largest row."""
    centre, leaf, starts, _ = _grouped(df["u"].to_numpy(), df["v"].to_numpy())
    last = np.zeros(leaf.shape[0], dtype=bool)
    last[np.append(starts[1:], leaf.shape[0])[: starts.shape[0]] - 1] = True
    return pd.DataFrame({"row": np.concatenate([leaf[~last], centre[starts]])})


def _drops(stars, keep, shuffle_method):
    """Rows that :func:`dedupe` drops, from the stars ``(u = centre, v = leaf)``."""
    row_meta = pd.DataFrame({"row": np.empty(0, np.int64)})
    if keep == "first":
        return stars.map_partitions(_drops_first, meta=row_meta)
    by_centre = stars.shuffle("u", npartitions=stars.npartitions, ignore_index=True,
                              shuffle_method=shuffle_method)
    return by_centre.map_partitions(_drops_last if keep == "last" else _drops_all,
                                    meta=row_meta)


def _components_stars(inp: _Input, k, blocks, npartitions, shuffle_method, max_rounds, n_jobs):
    k = check_k(k, inp.bits)
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, numbers.Integral) or \
            max_rounds < 1:
        raise ValueError(f"max_rounds must be a positive integer, got {max_rounds!r}")
    inp = dataclasses.replace(inp, fps=inp.fps.persist())
    scan = _scan(dataclasses.replace(inp, text=None))
    if inp.spec is not None:
        check_compatible(inp.spec, scan.spec)
    edges = _search(inp, scan, k, blocks, "edges", npartitions=npartitions,
                    shuffle_method=shuffle_method, n_jobs=n_jobs)
    stars = _stars(edges, max(1, inp.fps.npartitions), shuffle_method, int(max_rounds))
    return inp, scan, stars


def clusters(
    data,
    k: int = 3,
    *,
    column: str | None = None,
    out: str | None = None,
    blocks: int | None = None,
    npartitions: int | None = None,
    shuffle_method: str | None = None,
    max_rounds: int = 100,
    n_jobs: int | None = None,
    **options,
):
    """Connected components of the "within ``k`` bits" graph, on Dask.

    The Dask twin of :func:`simhash_nb.clusters`: every row's label is the global
    position of the first row of its cluster, equal to ``sh.clusters(fps.compute(), k)``.
    Pairs come from the distributed table search (without listing the pairs inside
    groups of identical fingerprints), are contracted by union-find within each
    partition, then joined across partitions by large-star / small-star rounds (one
    edge shuffle each) until every component is a star around its smallest row.

    Parameters
    ----------
    data : dask Series or DataFrame
        Fingerprints, or text to fingerprint with ``**options``.
    k : int, default 3
    column, blocks, npartitions, shuffle_method, n_jobs
        As in :func:`near_duplicates`.
    out : str, optional
        With a DataFrame: return the frame with the labels added as column ``out``.
        Prefer this to ``ddf.assign(cluster=labels)``, which Dask aligns by index (a
        shuffle, and wrong on unknown divisions with repeated labels).
    max_rounds : int, default 100
        Give up (``RuntimeError``) after this many rounds; components converge in
        ``O(log^2 n)`` rounds, a handful in practice.
    **options
        Fingerprint options when ``data`` is text.

    Returns
    -------
    dask Series or DataFrame
        ``Int64`` labels named ``"cluster"``, partitioned and indexed like ``data``;
        ``<NA>`` for missing fingerprints. With ``out``, ``data`` with that column.

    Raises
    ------
    TypeError
        If ``out=`` is given for a Series (it names a column to add to a DataFrame).

    Notes
    -----
    Runs eagerly up to the final labelling: the fingerprints are persisted, and each
    round is computed (and persisted) to test convergence. Kiveris, Lattanzi,
    Mirrokni, Rastogi and Vassilvitskii, "Connected components in MapReduce and
    beyond", SoCC 2014.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> fps = pd.Series(np.array([0b0000, 0b0111, 0b1111_0000, 0b0001, 0b0011], dtype=np.uint64))
    >>> sh.distributed.clusters(dd.from_pandas(fps, npartitions=2), k=1).compute().tolist()
    [0, 0, 2, 0, 0]
    >>> sh.clusters(fps.to_numpy(), k=1).tolist()
    [0, 0, 2, 0, 0]
    """
    if out is not None and not isinstance(data, dd.DataFrame):
        raise TypeError("out= names a column to add to a DataFrame; this is a Series")
    inp = _prepare(data, column, options, n_jobs, aligned=True)
    inp, scan, stars = _components_stars(inp, k, blocks, npartitions, shuffle_method,
                                         max_rounds, n_jobs)
    routed = _route(stars, "v", scan.offsets, shuffle_method)
    meta = pd.Series(pd.array([], dtype="Int64"), name="cluster")
    if out is None:
        return dd.map_partitions(_label_part, inp.fps, routed, scan.offsets, meta=meta,
                                 align_dataframes=False, enforce_metadata=False)
    return dd.map_partitions(_label_frame, data, inp.fps, routed, scan.offsets, out,
                             meta=data._meta.assign(**{out: meta.set_axis(data._meta.index)}),
                             align_dataframes=False, enforce_metadata=False)


def dedupe(
    data,
    k: int = 3,
    keep="first",
    *,
    column: str | None = None,
    blocks: int | None = None,
    npartitions: int | None = None,
    shuffle_method: str | None = None,
    max_rounds: int = 100,
    n_jobs: int | None = None,
    **options,
):
    """The rows kept after dropping near duplicates (one row per cluster), on Dask.

    The rows where :func:`simhash_nb.dedupe` (same ``keep``) is True, as the pandas
    accessor's ``.simhash.dedupe`` returns them; rows with a missing fingerprint stay.

    Parameters
    ----------
    data : dask Series or DataFrame
        Fingerprints or text (a DataFrame keeps all its columns).
    k : int, default 3
    keep : {"first", "last", False}
        Keep the first row of each cluster (in global row order), the last, or
        (``False``) only rows with no near duplicate at all.
    column, blocks, npartitions, shuffle_method, max_rounds, n_jobs, **options
        As in :func:`clusters`.

    Returns
    -------
    dask Series or DataFrame
        ``data``'s rows that stay, in their partitions.

    Raises
    ------
    ValueError
        If ``keep`` is not "first", "last" or False.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> df = dd.from_pandas(pd.DataFrame({"text": ["a b", "c", "a b"], "n": [1, 2, 3]}),
    ...                     npartitions=2)
    >>> sh.distributed.dedupe(df, k=0, keep="last", tokenizer="word").compute()["n"].tolist()
    [2, 3]
    """
    if not (keep is False or (isinstance(keep, str) and keep in ("first", "last"))):
        raise ValueError(f"keep must be 'first', 'last' or False, got {keep!r}")
    inp = _prepare(data, column, options, n_jobs, aligned=True)
    inp, scan, stars = _components_stars(inp, k, blocks, npartitions, shuffle_method,
                                         max_rounds, n_jobs)
    routed = _route(_drops(stars, keep, shuffle_method), "row", scan.offsets, shuffle_method)
    return dd.map_partitions(_keep_part, data, routed, scan.offsets, meta=data._meta,
                             align_dataframes=False, enforce_metadata=False)


# --- Dask accessors -----------------------------------------------------------------------


class SimhashDaskSeriesAccessor:
    """``dask Series.simhash``: :func:`fingerprint`, :func:`near_duplicates`,
    :func:`clusters` and :func:`dedupe` of the Series.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, simhash_nb as sh
    >>> s = dd.from_pandas(pd.Series(["a b", "c", "a b"]), npartitions=2)
    >>> s.simhash.near_duplicates(k=0, tokenizer="word").compute().values.tolist()
    [[0, 2, 0]]
    """

    def __init__(self, obj) -> None:
        if _acc.fingerprint_kind(obj._meta.dtype) is None:
            raise AttributeError(
                "the .simhash accessor needs a text or fingerprint Series; this one has "
                f"dtype {obj._meta.dtype}"
            )
        self._obj = obj

    def fingerprint(self, **options):
        """See :func:`fingerprint`."""
        return fingerprint(self._obj, **options)

    def near_duplicates(self, k: int = 3, **options):
        """See :func:`near_duplicates`."""
        return near_duplicates(self._obj, k, **options)

    def clusters(self, k: int = 3, **options):
        """See :func:`clusters`."""
        return clusters(self._obj, k, **options)

    def dedupe(self, k: int = 3, keep="first", **options):
        """See :func:`dedupe`."""
        return dedupe(self._obj, k, keep, **options)


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
        """See :func:`fingerprint`."""
        return fingerprint(self._obj, column, out=out, **options)

    def near_duplicates(self, column: str | None = None, k: int = 3, **options):
        """See :func:`near_duplicates`."""
        return near_duplicates(self._obj, k, column=column, **options)

    def clusters(self, column: str | None = None, k: int = 3, **options):
        """See :func:`clusters` (``out="cluster"`` adds the labels as a column)."""
        return clusters(self._obj, k, column=column, **options)

    def dedupe(self, column: str | None = None, k: int = 3, keep="first", **options):
        """See :func:`dedupe`."""
        return dedupe(self._obj, k, keep, column=column, **options)


def _register() -> None:
    from dask.dataframe.extensions import (
        register_dataframe_accessor,
        register_series_accessor,
    )

    for cls in (dd.DataFrame, dd.Series):
        if "simhash" in getattr(cls, "_accessors", set()):
            return
    register_dataframe_accessor("simhash")(SimhashDaskDataFrameAccessor)
    register_series_accessor("simhash")(SimhashDaskSeriesAccessor)


_register()
