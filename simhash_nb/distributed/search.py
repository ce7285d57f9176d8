"""The distributed pair search: one shuffle per permutation table, pairs kept by their owner."""

from __future__ import annotations

import dataclasses
import numbers

import dask.dataframe as dd
import numpy as np
import pandas as pd

from .. import _frames
from .._core.docstrings import shared_docs
from .._core.parallel import threads
from .._core.pipeline.stages import may_reach
from .._core.search.dense import dense_search
from .._core.search.design import check_blocks, check_recall, table_design
from .._core.search.engine import TooManyPairsError, table_search
from .._core.search.families import TableFamily, sampled
from .._core.search.groups import expand_pairs, group_identical, identical_rows
from .._core.search.layout import Layout, Work, table_count
from .._core.similarity import resolve_k
from .._core.spec import SpecMismatchError, check_compatible
from .._kernels.unionfind import components as _components
from ..config import config
from .docs import DASK_PARAMETERS
from .input import (
    Input,
    Scan,
    check_dask,
    check_npartitions,
    prepare,
    row_base,
    scan_input,
    shuffle_for,
    task_threads,
)

_NO_LIMIT = 2**62


EDGE_META = pd.DataFrame({"u": np.empty(0, np.int64), "v": np.empty(0, np.int64)})


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
        return check_blocks(blocks, k, bits)
    best, best_cost = None, None
    for b in range(max(k + 1, bits // 64), bits + 1):
        if table_count(b, k) > config["max_tables"]:
            break
        d = table_design(n, k, bits, n_against=n_against, blocks=b)
        cost = d.cost + d.tables * (n + (n_against or 0)) * config["distributed_cost_record"]
        if best_cost is None or cost < best_cost:
            best, best_cost = b, cost
    return best


_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix(z: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array: a bijection (the shuffle key's hash, and
    the rows' priority in the verification)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


SIZE_CAP = np.iinfo(np.uint16).max  # a record's shingle count saturates here


def emit_meta(words: int, label_dtype, sided: bool = False, sized: bool = False) -> pd.DataFrame:
    """Meta of :func:`emit`'s records."""
    cols = {"bucket": np.empty(0, np.uint64), "table": np.empty(0, np.uint16),
            "row": np.empty(0, np.int64)}
    if sided:
        cols["side"] = np.empty(0, np.uint8)
    if sized:
        cols["size"] = np.empty(0, np.uint16)
    for w in range(words):
        cols[f"w{w}"] = np.empty(0, np.uint64)
    meta = pd.DataFrame(cols)
    if label_dtype is not None:
        meta["label"] = pd.Series([], dtype=label_dtype)
    return meta


def _searched(part, words: int):
    """``(fingerprint words uint64[m, words], their positions, their sizes or None)`` of
    the rows of a partition to search: a fingerprint Series (its valid rows), or a
    prints frame ``w0[, w1], nf`` of the verified path (its rows with shingles; their
    shingle counts, saturated at :data:`SIZE_CAP`)."""
    if isinstance(part, pd.DataFrame):
        nf = part["nf"].to_numpy(np.int64)
        pos = np.flatnonzero(nf > 0)
        fps = np.stack([part[f"w{w}"].to_numpy(np.uint64)[pos] for w in range(words)], axis=1)
        return fps, pos, np.minimum(nf[pos], SIZE_CAP).astype(np.uint16)
    fps, valid = _frames.fingerprint_values(part)
    fps = fps.reshape(fps.shape[0], words)
    pos = np.flatnonzero(valid)
    return (fps if pos.shape[0] == fps.shape[0] else fps[pos]), pos, None


def emit(part, tables: range, key_masks: np.ndarray, offsets: np.ndarray,
         labels: bool, side: int | None = None, partition_info=None) -> pd.DataFrame:
    """Records of some tables for one partition: (bucket, table, row[, side][, size],
    fingerprint words[, label]), ``bucket`` hashing the table and its key (the selected
    blocks); ``side`` (0 or 1) tells the two collections of a search ``against`` apart;
    ``size`` is the shingle count of a prints frame's rows (see :func:`_searched`)."""
    base = row_base(part, offsets, partition_info)
    words, pos, sizes = _searched(part, key_masks.shape[1])
    m, nt = words.shape[0], len(tables)
    bucket = np.empty(m * nt, dtype=np.uint64)
    for x, t in enumerate(tables):
        key = mix(np.full(m, t + 1, dtype=np.uint64))
        for w in range(words.shape[1]):
            key = mix(key ^ (words[:, w] & key_masks[t, w]))
        bucket[x * m:(x + 1) * m] = key
    cols = {"bucket": bucket,
            "table": np.repeat(np.asarray(tables, dtype=np.uint16), m),
            "row": np.tile(pos.astype(np.int64) + base, nt)}
    if side is not None:
        cols["side"] = np.full(m * nt, side, dtype=np.uint8)
    if sizes is not None:
        cols["size"] = np.tile(sizes, nt)
    for w in range(words.shape[1]):
        cols[f"w{w}"] = np.tile(words[:, w], nt)
    out = pd.DataFrame(cols)
    if labels:
        out["label"] = np.tile(part.index[pos].to_numpy(), nt) if m else part.index[:0]
    return out


_PER_BLOCK = ("starts", "widths", "block_masks")


def _one_table(layout: Layout, t: int) -> Layout:
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


def _search_one(fps, n_left, tables, t: int, k: int, wa, wb, limit: int, work):
    """Pairs owned by table ``t`` among ``fps``: packed pigeonhole tables (a
    :class:`Layout`) or a family of dense ones (sampled tables, ``recall < 1``)."""
    if isinstance(tables, TableFamily):
        return dense_search(np.ascontiguousarray(fps), n_left, tables, k, wa, wb, limit,
                            tables=np.array([t], dtype=np.int64))
    return table_search(fps, n_left, _one_table(tables, t), k, wa, wb, limit, work)


def _table_pairs(fps: np.ndarray, layout, t: int, k: int, limit: int, expand: bool):
    """Pairs owned by table ``t`` among rows sharing its keys (local row numbers).

    ``expand``: every pair of rows (as :func:`simhash_nb.near_duplicates` lists them);
    otherwise a spanning set for clustering (distinct fingerprints' first rows, and each
    repeated row linked to the first row with its fingerprint).
    """
    m = fps.shape[0]
    none = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8))
    if m < 2:
        return none
    if expand and isinstance(layout, TableFamily):
        return _dense_pairs(fps, layout, t, k, limit)
    work = Work(m)
    ga = group_identical(fps, work)
    ua = ga.distinct(fps)
    identical = ga.identical_pairs() if expand and t == 0 else 0
    if identical > limit:
        raise _too_many(identical, limit)
    if ua.shape[0] >= 2:
        w = ga.weights() if expand else np.empty(0, np.int64)
        got = _search_one(ua, -1, layout, t, k, w, w, limit - identical, work)
        if got.over:
            raise _too_many(got.weighted + identical, limit)
        u, v, d = got.result()
    else:
        u, v, d = none
    if expand:
        i, j, d = expand_pairs(u, v, d, ga, ga, True)
        if identical:
            ii, jj, dd_ = identical_rows(ga)
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


def _dense_pairs(fps: np.ndarray, family: TableFamily, t: int, k: int, limit: int):
    """Every pair of rows owned by table ``t`` of a family of dense tables, copies
    included, without grouping the copies first: copies agree on every mask, so the
    family's rule (block or mask) gives them to table 0 alone, as the grouped search
    does; the limit counts pairs of rows."""
    none = np.empty(0, np.int64)
    got = dense_search(np.ascontiguousarray(fps), -1, family, k, none, none, limit,
                       tables=np.array([t], dtype=np.int64))
    if got.over:
        raise _too_many(got.weighted, limit)
    return got.result()


def _cross_table_pairs(fa: np.ndarray, fb: np.ndarray, layout, t: int, k: int,
                       limit: int):
    """Pairs (row of ``fa``, row of ``fb``) owned by table ``t``, as in a cross join."""
    work = Work(fa.shape[0] + fb.shape[0])
    ga, gb = group_identical(fa, work), group_identical(fb, work)
    ua, ub = ga.distinct(fa), gb.distinct(fb)
    both = np.concatenate([ua, ub])
    got = _search_one(both, ua.shape[0], layout, t, k, ga.weights(), gb.weights(), limit,
                      work.fit(both.shape[0]))
    if got.over:
        raise _too_many(got.weighted, limit)
    return expand_pairs(*got.result(), ga, gb, False)


def _too_many(total: int, limit: int) -> TooManyPairsError:
    return TooManyPairsError(
        f"one partition of the distributed search would hold {total:,} pairs, more than "
        f"max_pairs={limit:,}; use sh.distributed.clusters or dedupe (they do not list every "
        "pair), raise max_pairs, or use more partitions (npartitions=)"
    )


def pairs_meta(label_dtype) -> pd.DataFrame:
    """Meta of the candidate pairs ``left``, ``right`` (positions or labels), ``distance``."""
    if label_dtype is None:
        return pd.DataFrame({"left": np.empty(0, np.int64), "right": np.empty(0, np.int64),
                             "distance": np.empty(0, np.uint8)})
    return pd.DataFrame({"left": pd.Series([], dtype=label_dtype),
                         "right": pd.Series([], dtype=label_dtype),
                         "distance": np.empty(0, np.uint8)})


def _bucket_pairs(words: np.ndarray, table: np.ndarray, side, layout, k: int, mode: str,
                  limit: int, n_jobs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs ``(i, j, distance)`` (indices into the records, sorted by table) of each
    table's records, the limit counted across tables (star edges: no limit)."""
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
    if not out_i:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
    return np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_d)


def reachable(size_i: np.ndarray, size_j: np.ndarray, threshold: float) -> np.ndarray:
    """Which pairs of records' shingle counts (saturated at :data:`SIZE_CAP`) may reach
    Jaccard ``threshold``: :func:`~simhash_nb._core.pipeline.stages.may_reach`, and
    every pair with a saturated count (its true count is unknown: kept)."""
    size_i, size_j = size_i.astype(np.int64), size_j.astype(np.int64)
    return may_reach(size_i, size_j, threshold) | (np.maximum(size_i, size_j) >= SIZE_CAP)


def search_part(df: pd.DataFrame, layout, bits: int, k: int, mode: str, limit: int,
                n_jobs, label_dtype, threshold: float | None = None) -> pd.DataFrame:
    """Verify the candidates of one shuffled partition, table by table.

    Rows of a table come in shuffle order; pairs are put in global order afterwards
    (the set found does not depend on the order). With ``threshold`` (records with a
    ``size``), the pairs whose shingle counts cannot reach it are dropped (after the
    limit counted them, as on one machine).
    """
    table = df["table"].to_numpy()
    row = df["row"].to_numpy()
    order_rows = np.argsort(table, kind="stable")  # radix sort of uint16
    table, row = table[order_rows], row[order_rows]
    words = np.stack([df[f"w{w}"].to_numpy()[order_rows] for w in range(bits // 64)], axis=1)
    side = df["side"].to_numpy()[order_rows] if mode == "cross" else None
    pi, pj, d = _bucket_pairs(words, table, side, layout, k, mode, limit, n_jobs)
    if threshold is not None:
        size = df["size"].to_numpy()[order_rows]
        ok = reachable(size[pi], size[pj], threshold)
        pi, pj, d = pi[ok], pj[ok], d[ok]
    if mode != "cross":  # a self-join lists each pair as left < right
        swap = row[pi] > row[pj]
        pi, pj = np.where(swap, pj, pi), np.where(swap, pi, pj)
    i, j = row[pi], row[pj]
    if mode == "edges":
        u, v = contract(i, j)
        return pd.DataFrame({"u": u, "v": v})
    order = np.lexsort((j, i))
    i, j, d = i[order], j[order], d[order]
    if label_dtype is None:
        return pd.DataFrame({"left": i, "right": j, "distance": d})
    labels = df["label"].array.take(order_rows)
    return pd.DataFrame({"left": labels.take(pi[order]), "right": labels.take(pj[order]),
                         "distance": d})


def search_tables(inp: Input, scan: Scan, k: int, blocks: int | None, mode: str, *,
            labels: bool = False, npartitions=None, max_pairs=None, shuffle_method=None,
            n_jobs=None, against: tuple[Input, Scan] | None = None, recall=None,
            random_state=0):
    """The shuffled table search as a lazy Dask DataFrame (pairs, or star edges).

    With ``against`` (mode ``"cross"``) the records of both collections are shuffled
    together, tagged with their side, and only pairs across the sides are verified.
    With ``recall < 1`` the tables are sampled ones (the single-machine design for
    that recall, seeded by ``random_state``), verified as dense tables.
    """
    bits = inp.bits
    sides = [(inp, scan)] if against is None else [(inp, scan), against]
    recall = check_recall(recall)
    if recall < 1.0:
        n_against = None if against is None else max(against[1].n_valid, 1)
        d = table_design(max(scan.n_valid, 2), k, bits, recall=recall, method="sampling",
                         n_against=n_against)
        layout = sampled(bits, d.key_bits, d.tables, random_state)
        key_masks = np.ascontiguousarray(layout.masks[:, : bits // 64])
    else:
        if against is None:
            design = _design_blocks(max(scan.n_valid, 2), k, bits, blocks)
        else:
            design = _design_blocks(max(scan.n_valid, 1), k, bits, blocks,
                                    n_against=max(against[1].n_valid, 1))
        layout = Layout.make(bits, k, design)
        key_masks = np.stack([np.bitwise_or.reduce(layout.block_masks[sel], axis=0)
                              for sel in layout.sels])
    label_dtype = inp.fps._meta.index.dtype if labels else None
    records = sum(sc.n_valid for _, sc in sides) * layout.n_tables
    limit = _NO_LIMIT if mode == "edges" else pair_limit(max_pairs)
    return shuffled_search([(data.fps, sc.offsets) for data, sc in sides], layout, key_masks,
                           k, mode, records, limit, task_threads(n_jobs), shuffle_method,
                           npartitions, label_dtype)


def shuffled_search(sides: list, layout, key_masks: np.ndarray, k: int, mode: str,
                    records: int, limit: int, n_jobs: int | None, shuffle_method,
                    npartitions: int | None = None, label_dtype=None,
                    threshold: float | None = None):
    """Emit the table records of each side ``(fingerprints, offsets)`` (two sides: a
    search ``against``, records tagged with their side), shuffle them on their bucket,
    and search each bucket with ``layout`` (lazy pairs, or star edges). ``records``:
    how many are emitted, to size the shuffle's partitions. With ``threshold``, the
    sides are prints frames (``w0[, w1], nf``): the records carry each row's shingle
    count, and pairs whose counts cannot reach the threshold are dropped at the search
    (see :func:`search_part`)."""
    bits = key_masks.shape[1] * 64
    labels = label_dtype is not None
    # each task emits as many tables as fit in about `rows` records
    rows = max(1, int(config["distributed_partition_rows"]))
    emitted = []
    for side, (fps, offsets) in enumerate(sides):
        longest = int(np.diff(offsets).max()) if offsets.shape[0] > 1 else 0
        per_task = max(1, rows // max(1, longest))
        tag = side if len(sides) > 1 else None
        emitted += [
            fps.map_partitions(
                emit, range(t, min(t + per_task, layout.n_tables)), key_masks, offsets,
                labels, tag,
                meta=emit_meta(bits // 64, label_dtype, tag is not None, threshold is not None),
                clear_divisions=True, enforce_metadata=False,
            )
            for t in range(0, layout.n_tables, per_task)
        ]
    frame = emitted[0] if len(emitted) == 1 else dd.concat(emitted, ignore_unknown_divisions=True)
    check_npartitions(npartitions)
    q = npartitions or max(max(fps.npartitions for fps, _ in sides), -(-records // rows))
    shuffled = frame.shuffle("bucket", npartitions=q, ignore_index=True,
                             shuffle_method=shuffle_for(shuffle_method, frame, q))
    meta = EDGE_META if mode == "edges" else pairs_meta(label_dtype)
    return shuffled.map_partitions(search_part, layout, bits, k, mode, limit, n_jobs,
                                   label_dtype, threshold, meta=meta, enforce_metadata=False)


def pair_limit(max_pairs) -> int:
    """The checked ``max_pairs`` (default ``config["max_pairs"]``)."""
    if max_pairs is None:
        return int(config["max_pairs"])
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, numbers.Integral) or max_pairs < 0:
        raise ValueError(f"max_pairs must be a non-negative integer, got {max_pairs!r}")
    return int(max_pairs)


def _check_collections(data, against, ids: str) -> None:
    """``ids`` one of the two, and ``data`` and ``against`` (unless None) Dask
    collections (with known divisions for ``ids="index"``)."""
    if ids not in ("position", "index"):
        raise ValueError(f"ids must be 'position' or 'index', got {ids!r}")
    for name, coll in (("data", data), ("against", against)):
        if coll is None and name == "against":
            continue
        check_dask(coll, name)
        if ids == "index" and not coll.known_divisions:
            raise ValueError(
                f"ids='index' needs known divisions (a sorted index, so labels are unique "
                f"across partitions); the divisions of {name} are unknown: call "
                ".set_index(...) or use ids='position' (global row positions)"
            )


@shared_docs(**DASK_PARAMETERS)
def near_duplicates(
        data, k: int | None = None, *, similarity: float | None = None,
        recall: float | None = None, random_state: int | None = 0, against=None,
        column: str | None = None, blocks: int | None = None, ids: str = "position",
        npartitions: int | None = None, max_pairs: int | None = None,
        shuffle_method: str | None = None, n_jobs: int | None = None, **options):
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
    k : int, optional
        Largest distance reported (inclusive); default from ``similarity``.
    similarity, recall, random_state
        As in :func:`simhash_nb.near_duplicates`: ``k`` from a Jaccard similarity (0.7:
        12 of 64 bits, 25 of 128), and sampled tables for a recall at ``k`` (seeded).
    against : dask Series or DataFrame, optional
        A second collection of the same kind (``column`` and ``**options`` apply to
        both): then only pairs of a row of ``data`` (``left``) and a row of
        ``against`` (``right``) are reported, as :func:`simhash_nb.near_duplicates`
        does. Both are shuffled together, so neither is gathered.
    {{column}}
    {{blocks}}
    {{ids}}
    {{run}}
    **options
        Fingerprint options (``bits``, ``tokenizer``, ...) when ``data`` is text.

    Returns
    -------
    dask DataFrame
        Columns ``left < right`` (int64 positions, or labels) and ``distance``
        (uint8); each partition sorted by ``(left, right)``, partitions in no global
        order. Missing fingerprints are in no pair. With ``against``, ``left`` counts
        rows of ``data``, ``right`` rows of ``against`` (``left < right`` need not hold).

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
    One eager pass reads the partition lengths (global positions, the table design) and
    checks the specs: persist fingerprints made lazily from text, or pass the text.

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
    _check_collections(data, against, ids)
    inp = prepare(data, column, options, n_jobs)
    k = resolve_k(k, similarity, inp.bits)
    scan = scan_input(inp, check_index=ids == "index")
    other = (None if against is None
             else _against(inp, scan, against, column, options, n_jobs, ids == "index"))
    return search_tables(inp, scan, k, blocks, "cross" if other else "pairs",
                         labels=ids == "index", npartitions=npartitions, max_pairs=max_pairs,
                         shuffle_method=shuffle_method, n_jobs=n_jobs, against=other,
                         recall=recall, random_state=random_state)


def _against(inp: Input, scan: Scan, against, column, options, n_jobs, labels: bool):
    """The second collection of a cross search, checked against the first."""
    other = prepare(against, column, options, n_jobs)
    if other.bits != inp.bits:
        raise ValueError(f"data holds {inp.bits}-bit fingerprints but against holds "
                         f"{other.bits}-bit ones")
    other_scan = scan_input(other, check_index=labels)
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


def contract(i: np.ndarray, j: np.ndarray):
    """Union-find over one partition's edges: (root, member) for every non-root member,
    the root being the component's smallest row."""
    if i.shape[0] == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    ids, inv = np.unique(np.concatenate([i, j]), return_inverse=True)
    inv = inv.astype(np.int64)
    lab = _components(ids.shape[0], inv[: i.shape[0]], inv[i.shape[0]:])
    x = np.flatnonzero(lab != np.arange(ids.shape[0]))
    return ids[lab[x]].astype(np.int64), ids[x].astype(np.int64)
