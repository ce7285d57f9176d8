"""Dask (``sh.distributed``) on a LocalCluster against the single-machine path.

Three stages, each on data that already sits in memory (worker memory for Dask, the
process for the single-machine path), so only the work itself is timed:

1. ``fingerprint``: texts (English verses and fortunes, each copy numbered) to 64-bit
   fingerprints;
2. ``near_duplicates``: pairs within k=3 among ``n`` synthetic fingerprints with planted
   near copies (10 %, 1-3 bits flipped) and exact copies (1 %) spread over all
   partitions;
3. ``clusters``: connected components of the same fingerprints.

The Dask results are checked against the single-machine ones (pair count and
checksums; every cluster label).

Run: ``python -m benchmarks.bench_distributed [--n 10000000] [--quick]``
(``--quick``: 100,000 rows). Writes ``benchmarks/results/distributed.json``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import simhash_nb as sh

from ._common import load_texts, save, table

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def synthetic_fps(start: int, stop: int, n: int, seed: int = 0) -> np.ndarray:
    """Fingerprints of global rows ``[start, stop)`` of an ``n``-row set: random, but
    10 % are a random row's fingerprint with 1-3 bits flipped and 1 % an exact copy.
    Any slice is computed on its own, so Dask partitions and the whole array agree."""
    rows = np.arange(start, stop, dtype=np.uint64)
    salt = np.uint64(seed * 0x9E3779B97F4A7C15 % 2**64)
    own = _mix(rows ^ salt)
    r = _mix(own ^ np.uint64(0x5555))  # per-row randomness
    kind = r % np.uint64(100)
    source = (_mix(r) % np.uint64(n)) ^ salt
    copy = _mix(source)
    n_flips = np.uint64(1) + (r >> np.uint64(40)) % np.uint64(3)
    flips = np.zeros(rows.shape[0], dtype=np.uint64)
    for b in range(3):
        bit = np.uint64(1) << ((r >> np.uint64(8 + 6 * b)) & np.uint64(63))
        flips ^= np.where(n_flips > np.uint64(b), bit, np.uint64(0))
    near = kind < np.uint64(10)
    exact = kind == np.uint64(10)
    out = own.copy()
    out[near] = copy[near] ^ flips[near]
    out[exact] = copy[exact]
    return out


def texts_for(start: int, stop: int, corpus: list[str]) -> list[str]:
    """Texts of global rows ``[start, stop)``: corpus lines, each copy numbered."""
    m = len(corpus)
    return [f"{corpus[i % m]} #{i // m}" for i in range(start, stop)]


def _bounds(n: int, partitions: int) -> list[tuple[int, int]]:
    cuts = np.linspace(0, n, partitions + 1).astype(np.int64).tolist()
    return list(zip(cuts[:-1], cuts[1:]))


def _fps_part(bounds: tuple[int, int], n: int):
    import pandas as pd

    return pd.Series(synthetic_fps(bounds[0], bounds[1], n), name="simhash",
                     index=pd.RangeIndex(bounds[0], bounds[1]))


def _texts_part(bounds: tuple[int, int], corpus: list[str]):
    import pandas as pd

    return pd.Series(texts_for(bounds[0], bounds[1], corpus), name="text",
                     index=pd.RangeIndex(bounds[0], bounds[1]), dtype="string[pyarrow]")


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _pair_stats(left, right, dist) -> list[int]:
    return [int(len(left)), int(np.asarray(left, np.int64).sum()),
            int(np.asarray(right, np.int64).sum()), int(np.asarray(dist, np.int64).sum())]


def run(n: int, n_text: int, partitions: int, workers: int, threads_per_worker: int,
        k: int = 3) -> dict:
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, wait

    D = sh.distributed
    corpus = load_texts("kjv_verses.jsonl.gz") + load_texts("fortunes_en.jsonl.gz")
    res: dict = {"n": n, "n_text": n_text, "k": k, "partitions": partitions,
                 "workers": workers, "threads_per_worker": threads_per_worker}

    # single machine, all cores
    texts = texts_for(0, n_text, corpus)
    sh.fingerprint(texts[:1000])  # warm the kernels
    t = time.perf_counter()
    fps_text = sh.fingerprint(texts)
    t_fp1 = time.perf_counter() - t
    texts = None
    fps = synthetic_fps(0, n, n)
    sh.near_duplicates(fps[:10_000], k)
    t_nd1, pairs = _timed(lambda: sh.near_duplicates(fps, k))
    t_cl1, labels = _timed(lambda: sh.clusters(fps, k))
    single_stats = _pair_stats(pairs.i, pairs.j, pairs.distance)
    res["single"] = {"fingerprint_s": t_fp1, "near_duplicates_s": t_nd1, "clusters_s": t_cl1,
                     "pairs": len(pairs), "clusters": int(np.unique(labels).shape[0])}
    del pairs

    with LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                      processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        n_jobs = D.threads_per_task(client)
        res["numba_threads_per_task"] = n_jobs
        meta_t = _texts_part((0, 0), corpus)
        ds_text = dd.from_map(_texts_part, _bounds(n_text, partitions), corpus=corpus,
                              meta=meta_t).persist()
        wait(ds_text)
        D.fingerprint(ds_text.partitions[0], n_jobs=n_jobs).compute()  # warm the workers
        t = time.perf_counter()
        fp_d = D.fingerprint(ds_text, n_jobs=n_jobs).persist()
        wait(fp_d)
        t_fp = time.perf_counter() - t
        got = fp_d.compute().to_numpy(dtype=np.uint64)
        assert np.array_equal(got, fps_text), "distributed fingerprints differ"
        ds_text = fp_d = got = None

        ds = dd.from_map(_fps_part, _bounds(n, partitions), n=n, meta=_fps_part((0, 0), n))
        ds = ds.persist()
        wait(ds)
        D.near_duplicates(ds.partitions[0], k, n_jobs=n_jobs).compute()  # warm

        def pairs_d():
            p = D.near_duplicates(ds, k, n_jobs=n_jobs)
            cols = (p["left"].count(), p["left"].sum(), p["right"].sum(),
                    p["distance"].astype("int64").sum())
            return [int(x) for x in dask.compute(*cols)]

        t_nd, dist_stats = _timed(pairs_d)
        assert dist_stats == single_stats, (dist_stats, single_stats)

        t = time.perf_counter()
        lab_d = D.clusters(ds, k, n_jobs=n_jobs).persist()
        wait(lab_d)
        t_cl = time.perf_counter() - t
        got = lab_d.compute().to_numpy(dtype=np.int64)
        assert np.array_equal(got, labels), "distributed cluster labels differ"

    res["dask"] = {"fingerprint_s": t_fp, "near_duplicates_s": t_nd, "clusters_s": t_cl}
    res["verified"] = True
    return res


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000_000, help="fingerprints (default 10M)")
    ap.add_argument("--n-text", type=int, default=None,
                    help="texts to fingerprint (default: n)")
    ap.add_argument("--quick", action="store_true", help="100,000 rows")
    ap.add_argument("--partitions", type=int, default=None,
                    help="Dask partitions (default: one per million rows, at least 4)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads-per-worker", type=int, default=1)
    args = ap.parse_args(argv)
    n = 100_000 if args.quick else args.n
    n_text = args.n_text or n
    partitions = args.partitions or max(4, n // 1_000_000)
    res = run(n, n_text, partitions, args.workers, args.threads_per_worker)
    save("distributed", res)
    print(report(res))
    return res


def report(res: dict) -> str:
    """Markdown table of one run."""
    s, d = res["single"], res["dask"]
    rows = []
    for stage, what, size in (("fingerprint", "texts to 64-bit fingerprints", res["n_text"]),
                              ("near_duplicates", f"pairs within k={res['k']}", res["n"]),
                              ("clusters", f"clusters at k={res['k']}", res["n"])):
        one, many = s[f"{stage}_s"], d[f"{stage}_s"]
        rows.append([f"{what} ({size:,} rows)", f"{one:.2f} s", f"{many:.2f} s",
                     f"{many / one:.1f}x"])
    head = [f"LocalCluster: {res['workers']} workers x {res['threads_per_worker']} thread(s), "
            f"{res['numba_threads_per_task']} Numba thread(s) per task, "
            f"{res['partitions']} partitions; single machine: all cores. "
            f"{s['pairs']:,} pairs and {s['clusters']:,} clusters, identical on both paths.",
            ""]
    return "\n".join(head + [table(rows, ["stage", "single machine", "Dask", "Dask / single"])])


if __name__ == "__main__":
    main()
