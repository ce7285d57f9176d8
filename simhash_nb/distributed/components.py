"""Connected components on Dask: union-find per partition, then large-star/small-star
rounds; :func:`clusters` and :func:`dedupe`."""

from __future__ import annotations

import dataclasses
import numbers

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .. import _frames
from .._core.clusters import check_keep
from .._core.docstrings import shared_docs
from .._core.similarity import resolve_k
from .._core.spec import check_compatible
from .docs import DASK_PARAMETERS
from .input import prepare, row_base, scan_input, shuffle_for
from .search import EDGE_META, search_tables

_ARC_META = pd.DataFrame({"src": np.empty(0, np.int64), "dst": np.empty(0, np.int64)})


# --- connected components ---------------------------------------------------------------


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


def star_rounds(edges, npartitions: int, shuffle_method, max_rounds: int):
    """Alternate large-star and small-star rounds until each component is a star
    ``(u = smallest row, v = other row)``."""
    current = edges.persist()
    for _ in range(max_rounds):
        arcs = current.map_partitions(_both_ways, meta=_ARC_META)
        arcs = arcs.shuffle("src", npartitions=npartitions, ignore_index=True,
                            shuffle_method=shuffle_for(shuffle_method, arcs, npartitions))
        large = arcs.map_partitions(_large_star, meta=EDGE_META)
        bad = arcs.map_partitions(_not_star, meta=pd.Series([], dtype=np.int64)).sum()
        large, bad = dask.persist(large, bad)
        if int(bad.compute()) == 0:
            return large
        method = shuffle_for(shuffle_method, large, npartitions)
        current = (large.shuffle("v", npartitions=npartitions, ignore_index=True,
                                 shuffle_method=method)
                   .map_partitions(_small_star, meta=EDGE_META).persist())
    raise RuntimeError(
        f"connected components did not converge in {max_rounds} rounds; raise max_rounds"
    )


def _with_part(df: pd.DataFrame, col: str, offsets: np.ndarray) -> pd.DataFrame:
    part = np.searchsorted(offsets, df[col].to_numpy(), side="right") - 1
    return df.assign(part=part.astype(np.int64))


def route(frame, col: str, offsets: np.ndarray, shuffle_method):
    """Rows of ``frame`` moved to the partition (of the input) holding row ``frame[col]``."""
    p = offsets.shape[0] - 1
    meta = frame._meta.assign(part=np.empty(0, np.int64))
    with_part = frame.map_partitions(_with_part, col, offsets, meta=meta)
    divisions = tuple(range(p)) + (p - 1,)
    return with_part.set_index("part", divisions=divisions,
                               shuffle_method=shuffle_for(shuffle_method, frame, p))


def _local(rows: np.ndarray, base: int, n: int) -> np.ndarray:
    """Global rows routed to a partition -> positions in it."""
    local = rows - base
    if local.shape[0] and (local.min() < 0 or local.max() >= n):
        raise RuntimeError("a row was routed to the wrong partition")  # pragma: no cover
    return local


def missing_fps(fps: pd.Series) -> np.ndarray:
    """Rows of a fingerprint partition without a fingerprint (their label is ``<NA>``)."""
    _, valid = _frames.fingerprint_values(fps)
    return ~valid


def _labels(rows, stars: pd.DataFrame, base: int, missing) -> pd.Series:
    labels = np.arange(base, base + len(rows), dtype=np.int64)
    if len(stars):
        labels[_local(stars["v"].to_numpy(np.int64), base, len(rows))] = \
            stars["u"].to_numpy(np.int64)
    return pd.Series(pd.arrays.IntegerArray(labels, missing(rows)), index=rows.index,
                     name="cluster", copy=False)


def _label_part(rows, stars: pd.DataFrame, offsets: np.ndarray, missing,
                partition_info=None) -> pd.Series:
    return _labels(rows, stars, row_base(rows, offsets, partition_info), missing)


def _label_frame(part: pd.DataFrame, rows, stars: pd.DataFrame, offsets: np.ndarray,
                 out: str, missing, partition_info=None) -> pd.DataFrame:
    base = row_base(part, offsets, partition_info)
    row_base(rows, offsets, partition_info)
    return part.assign(**{out: _labels(rows, stars, base, missing).set_axis(part.index)})


def check_out(data, out: str | None) -> None:
    """Refuse ``out=`` for a Series (it names a column to add to a DataFrame)."""
    if out is not None and not isinstance(data, dd.DataFrame):
        raise TypeError("out= names a column to add to a DataFrame; this is a Series")


def check_rounds(max_rounds) -> int:
    """The checked ``max_rounds`` of :func:`star_rounds`."""
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, numbers.Integral) or \
            max_rounds < 1:
        raise ValueError(f"max_rounds must be a positive integer, got {max_rounds!r}")
    return int(max_rounds)


def label_rows(data, rows, stars, offsets: np.ndarray, out: str | None, shuffle_method,
               missing=missing_fps):
    """The ``Int64`` labels of ``data``'s rows (lazy), from the stars ``(u, v)``: each
    row's star centre, or itself; ``<NA>`` where ``missing(rows partition)``. ``rows``
    is partitioned like ``data`` (its fingerprints, or the verified path's prints);
    with ``out``, ``data`` with the labels as that column."""
    routed = route(stars, "v", offsets, shuffle_method)
    meta = pd.Series(pd.array([], dtype="Int64"), name="cluster")
    if out is None:
        return dd.map_partitions(_label_part, rows, routed, offsets, missing, meta=meta,
                                 align_dataframes=False, enforce_metadata=False)
    return dd.map_partitions(_label_frame, data, rows, routed, offsets, out, missing,
                             meta=data._meta.assign(**{out: meta.set_axis(data._meta.index)}),
                             align_dataframes=False, enforce_metadata=False)


def keep_rows(data, stars, keep, offsets: np.ndarray, shuffle_method):
    """``data``'s rows that :func:`dedupe` keeps (lazy), from the stars ``(u, v)``."""
    routed = route(drop_rows(stars, keep, shuffle_method), "row", offsets, shuffle_method)
    return dd.map_partitions(keep_part, data, routed, offsets, meta=data._meta,
                             align_dataframes=False, enforce_metadata=False)


def keep_part(part, drops: pd.DataFrame, offsets: np.ndarray, partition_info=None):
    """The rows of ``part`` (one input partition) whose global row is not in ``drops``."""
    base = row_base(part, offsets, partition_info)
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


def drop_rows(stars, keep, shuffle_method):
    """Rows that :func:`dedupe` drops, from the stars ``(u = centre, v = leaf)``."""
    row_meta = pd.DataFrame({"row": np.empty(0, np.int64)})
    if keep == "first":
        return stars.map_partitions(_drops_first, meta=row_meta)
    by_centre = stars.shuffle("u", npartitions=stars.npartitions, ignore_index=True,
                              shuffle_method=shuffle_for(shuffle_method, stars,
                                                         stars.npartitions))
    return by_centre.map_partitions(_drops_last if keep == "last" else _drops_all,
                                    meta=row_meta)


def _components_stars(data, k, column, blocks, npartitions, shuffle_method, max_rounds,
                      n_jobs, options: dict, search: dict):
    """The checked input and its scan, and the stars of the components of its pairs."""
    inp = prepare(data, column, options, n_jobs, aligned=True)
    k = resolve_k(k, search.get("similarity"), inp.bits)
    max_rounds = check_rounds(max_rounds)
    inp = dataclasses.replace(inp, fps=inp.fps.persist())
    scan = scan_input(dataclasses.replace(inp, text=None))
    if inp.spec is not None:
        check_compatible(inp.spec, scan.spec)
    edges = search_tables(inp, scan, k, blocks, "edges", npartitions=npartitions,
                          shuffle_method=shuffle_method, n_jobs=n_jobs,
                          recall=search.get("recall"),
                          random_state=search.get("random_state", 0))
    stars = star_rounds(edges, max(1, inp.fps.npartitions), shuffle_method, max_rounds)
    return inp, scan, stars


@shared_docs(**DASK_PARAMETERS)
def clusters(
        data, k: int | None = None, *, similarity: float | None = None,
        recall: float | None = None, random_state: int | None = 0,
        column: str | None = None, out: str | None = None, blocks: int | None = None,
        npartitions: int | None = None, shuffle_method: str | None = None,
        max_rounds: int = 100, n_jobs: int | None = None, **options):
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
    k : int, optional
        Largest distance of an edge; default from ``similarity``.
    similarity, recall, random_state, npartitions, shuffle_method, n_jobs
        As in :func:`near_duplicates`.
    {{column}}
    {{blocks}}
    {{out}}
    {{max_rounds}}
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
    check_out(data, out)
    search = {"similarity": similarity, "recall": recall, "random_state": random_state}
    inp, scan, stars = _components_stars(data, k, column, blocks, npartitions, shuffle_method,
                                         max_rounds, n_jobs, options, search)
    return label_rows(data, inp.fps, stars, scan.offsets, out, shuffle_method)


@shared_docs(**DASK_PARAMETERS)
def dedupe(  # the parameters of clusters, and keep (explicit, for help() and editors)
        data, k: int | None = None, keep="first", *, similarity: float | None = None,
        recall: float | None = None, random_state: int | None = 0,
        column: str | None = None, blocks: int | None = None,
        npartitions: int | None = None, shuffle_method: str | None = None,
        max_rounds: int = 100, n_jobs: int | None = None, **options):
    """The rows kept after dropping near duplicates (one row per cluster), on Dask.

    The rows where :func:`simhash_nb.dedupe` (same ``keep``) is True, as the pandas
    accessor's ``.simhash.dedupe`` returns them; rows with a missing fingerprint stay.

    Parameters
    ----------
    data : dask Series or DataFrame
        Fingerprints or text (a DataFrame keeps all its columns).
    k : int, optional
        As in :func:`clusters`.
    {{keep}}
    similarity, recall, random_state, column, blocks, npartitions, shuffle_method, \
max_rounds, n_jobs, **options
        As in :func:`clusters`.

    {{kept}}

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
    check_keep(keep)
    search = {"similarity": similarity, "recall": recall, "random_state": random_state}
    _, scan, stars = _components_stars(data, k, column, blocks, npartitions, shuffle_method,
                                       max_rounds, n_jobs, options, search)
    return keep_rows(data, stars, keep, scan.offsets, shuffle_method)
