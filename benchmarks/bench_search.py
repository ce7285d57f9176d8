"""Near-duplicate search and index at scale.

Run: ``python -m benchmarks.bench_search [--quick] [--sizes 1e5 1e6 1e7] [--max-n N]
[--repeats R] [--no-index] [--peers]``. Writes ``benchmarks/results/search.json``.

Data: uniformly random 64-bit fingerprints in which 1% of the rows are replaced by
copies of other rows with 1 to 3 bits flipped; ``k = 3``. Every size runs in its own
child process, so the peak resident memory (``ru_maxrss``) is that size's alone; the
timed call is :func:`simhash_nb.near_duplicates` (median of the repeats, after one
warm-up call on a small input so compilation is excluded).

:func:`timings` returns our figures as a dict, for tables that combine them with the
peer libraries' (``benchmarks/peers``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from ._common import ROOT, ensure_peers, run_peers, save, table

K = 3
SIZES = (100_000, 1_000_000, 10_000_000)


def make_fingerprints(n: int, seed: int = 0, planted: float = 0.01) -> np.ndarray:
    """Random 64-bit fingerprints, ``planted * n`` of them 1..3 bits from another row."""
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)
    m = int(n * planted)
    if m == 0:
        return fps
    rows = rng.choice(n, size=2 * m, replace=False)
    src, dst = rows[:m], rows[m:]
    dist = rng.integers(1, 4, size=m)
    flips = np.zeros(m, dtype=np.uint64)
    for r in range(3):
        todo = np.flatnonzero(dist > r)
        while todo.size:  # a new bit each time, so exactly dist bits differ
            bit = np.uint64(1) << rng.integers(0, 64, size=todo.size).astype(np.uint64)
            fresh = (flips[todo] & bit) == 0
            flips[todo[fresh]] |= bit[fresh]
            todo = todo[~fresh]
    fps[dst] = fps[src] ^ flips
    return fps


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child_search(n: int, repeats: int) -> dict:
    import simhash_nb as sh

    sh.near_duplicates(make_fingerprints(5000, 1), K)  # compile / load the cache
    fps = make_fingerprints(n)
    before = _maxrss_mb()
    times = []
    pairs = 0
    for _ in range(repeats):
        t = time.perf_counter()
        pairs = len(sh.near_duplicates(fps, K))
        times.append(time.perf_counter() - t)
    d = sh.table_design(n, K)
    return {
        "n": n, "k": K, "median_s": statistics.median(times), "times_s": times,
        "pairs": pairs, "rss_before_mb": before, "peak_rss_mb": _maxrss_mb(),
        "design": {"method": d.method, "blocks": d.blocks, "tables": d.tables},
        "threads": _threads(), "load_avg": os.getloadavg()[0],
    }


def _child_index(n_add: int, n_query: int, n_save: int, repeats: int) -> dict:
    import simhash_nb as sh

    warm = sh.SimhashIndex(K)
    warm.add(make_fingerprints(5000, 1))
    warm.query(make_fingerprints(100, 2))
    fps = make_fingerprints(n_add)
    q = fps[:n_query].copy()
    q[::2] ^= np.uint64(0b101)  # half of them 2 bits away from an indexed row
    out = {"n_add": n_add, "n_query": n_query, "k": K, "threads": _threads()}
    add_t, add_batches_t, query_t = [], [], []
    index = None
    matches = 0
    for _ in range(repeats):
        index = sh.SimhashIndex(K)
        t = time.perf_counter()
        index.add(fps)
        add_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        matches = len(index.query(q))
        query_t.append(time.perf_counter() - t)
        batched = sh.SimhashIndex(K)
        t = time.perf_counter()
        for part in np.array_split(fps, 100):
            batched.add(part)
        add_batches_t.append(time.perf_counter() - t)
    out.update(add_s=statistics.median(add_t), add_100_batches_s=statistics.median(add_batches_t),
               query_s=statistics.median(query_t), matches=matches)
    del index, batched
    big = make_fingerprints(n_save, 3)
    index = sh.SimhashIndex(K)
    t = time.perf_counter()
    index.add(big)
    out["build_save_n_s"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "index.npz")
        save_t, load_t = [], []
        for _ in range(max(1, repeats)):
            t = time.perf_counter()
            index.save(path)
            save_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            loaded = sh.SimhashIndex.load(path)
            load_t.append(time.perf_counter() - t)
            del loaded
        out.update(n_save=n_save, save_s=statistics.median(save_t),
                   load_s=statistics.median(load_t), file_mb=os.path.getsize(path) / 1e6)
    out["peak_rss_mb"] = _maxrss_mb()
    return out


def _threads() -> int:
    import numba

    return numba.get_num_threads()


def _run_child(args: list[str], timeout: float = 3600) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.bench_search", "--child", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    if out.returncode != 0:
        return {"error": out.stderr[-2000:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def timings(sizes=SIZES, repeats: int = 5) -> dict:
    """Our near_duplicates figures: ``{n: {"median_s", "peak_rss_mb", "pairs", ...}}``,
    each size measured in a fresh child process."""
    return {int(n): _run_child(["search", str(int(n)), str(repeats)]) for n in sizes}


def index_timings(n_add: int = 1_000_000, n_query: int = 100_000, n_save: int = 10_000_000,
                  repeats: int = 3) -> dict:
    """SimhashIndex figures: add, query, and save + load, in a fresh child process."""
    return _run_child(["index", str(n_add), str(n_query), str(n_save), str(repeats)])


def _peer_search(n: int, repeats: int) -> dict:
    fd, path = tempfile.mkstemp(suffix=".npy")
    os.close(fd)
    try:
        np.save(path, make_fingerprints(n))
        return run_peers("search", "--input", path, "--k", str(K), "--repeats", str(repeats))
    finally:
        os.unlink(path)


def _peer_index_pure(n_add: int, n_query: int, repeats: int) -> dict:
    """Pure-Python ``simhash.SimhashIndex`` on the same fingerprints (capped, extrapolated)."""
    fd, path = tempfile.mkstemp(suffix=".npy")
    os.close(fd)
    try:
        np.save(path, make_fingerprints(n_add))
        return run_peers("index", "--input", path, "--k", str(K), "--q", str(n_query),
                         "--repeats", str(repeats), "--peers", "simhash",
                         "--py-max-n", str(n_add), "--py-max-q", str(n_query))
    finally:
        os.unlink(path)


def _index_texts(repeats: int) -> dict:
    """gaoya's index (texts in) against ours on the same real texts, fingerprinting included."""
    import simhash_nb as sh

    from ._common import load_texts, median_time, write_jsonl

    texts = load_texts("kjv_verses.jsonl.gz") + load_texts("fortunes_en.jsonl.gz")
    q = len(texts) // 10
    path = write_jsonl(texts)
    try:
        peers = run_peers("index", "--input", path, "--k", str(K), "--q", str(q),
                          "--repeats", str(repeats), "--peers", "gaoya")
    finally:
        os.unlink(path)
    opts = dict(tokenizer="word", normalize=("lower",))  # gaoya: lowercased word unigrams

    def ours():
        index = sh.SimhashIndex(K)
        index.add(sh.fingerprint(texts, **opts))
        return index.query(sh.fingerprint(texts[:q], **opts))

    return {"n": len(texts), "q": q, "ours_s": median_time(ours, repeats), "peers": peers}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="n up to 1e6, few repeats")
    ap.add_argument("--sizes", nargs="*", type=float, help="sizes (default 1e5 1e6 1e7)")
    ap.add_argument("--max-n", type=float, default=None, help="skip sizes above this")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--no-index", action="store_true", help="skip the index benchmark")
    ap.add_argument("--no-peers", action="store_true", help="skip the peer libraries")
    ap.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        kind, *rest = args.child
        fn = _child_search if kind == "search" else _child_index
        print(json.dumps(fn(*(int(float(x)) for x in rest))))
        return {}
    sizes = [int(s) for s in (args.sizes or SIZES)]
    max_n = args.max_n if args.max_n is not None else (1e6 if args.quick else None)
    if max_n is not None:
        sizes = [s for s in sizes if s <= max_n]
    repeats = args.repeats or (3 if args.quick else 5)
    res: dict = {"k": K, "search": timings(sizes, repeats)}
    if not args.no_index:
        scale = 10 if args.quick else 1
        res["index"] = index_timings(1_000_000 // scale, 100_000 // scale,
                                     10_000_000 // scale, 2 if args.quick else 3)
    if not args.no_peers and ensure_peers():
        res["peers"] = {n: _peer_search(n, repeats) for n in sizes if n <= 1_000_000}
        if not args.no_index:
            ix = res["index"]
            res["peers_index"] = _peer_index_pure(ix["n_add"], ix["n_query"], 1)
            res["peers_index_texts"] = _index_texts(3)
    path = save("search", res)
    try:
        plot(res, path.with_name("search.png"))
    except ImportError:  # matplotlib is optional here
        pass
    print(report(res))
    return res


def plot(res: dict, path) -> None:
    """Time against n, log-log (ours, and the peers' when measured)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ours = sorted((int(n), r["median_s"]) for n, r in res["search"].items() if "error" not in r)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.loglog(*zip(*ours), "o-", label="simhash_nb near_duplicates")
    for name, series in _peer_series(res).items():
        ax.loglog(*zip(*series), "s--", label=name)
    ax.set_xlabel("fingerprints (n)")
    ax.set_ylabel("seconds (median)")
    ax.set_title(f"all pairs within k = {res['k']}, 1% planted neighbours")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _peer_series(res: dict) -> dict[str, list[tuple[int, float]]]:
    series: dict[str, list[tuple[int, float]]] = {}
    for n, out in res.get("peers", {}).items():
        for name, p in (out.get("peers") or {}).items():
            seconds = p.get("median_s") if isinstance(p, dict) else None
            if seconds and p.get("n_timed", int(n)) == int(n):  # capped runs are not n
                series.setdefault(name, []).append((int(n), seconds))
    return {k: sorted(v) for k, v in series.items()}


def report(res: dict) -> str:
    rows = []
    for n, r in res["search"].items():
        if "error" in r:
            rows.append([f"{int(n):,}", "error", "", "", ""])
            continue
        d = r["design"]
        design = f"{d['method']}, {d['blocks']} blocks, {d['tables']} tables"
        rows.append([f"{int(n):,}", f"{r['median_s']:.3f}", f"{r['peak_rss_mb']:.0f}",
                     f"{r['pairs']:,}", design])
    out = [f"near_duplicates, random 64-bit fingerprints with 1% planted neighbours, "
           f"k = {res['k']}", "",
           table(rows, ["n", "median s", "peak RSS MB", "pairs", "design"])]
    ix = res.get("index")
    if ix and "error" not in ix:
        out += ["", table([
            [f"add {ix['n_add']:,} (one batch)", f"{ix['add_s']:.2f} s"],
            [f"add {ix['n_add']:,} (100 batches)", f"{ix['add_100_batches_s']:.2f} s"],
            [f"query {ix['n_query']:,} at k = {ix['k']}", f"{ix['query_s']:.2f} s"],
            [f"save {ix['n_save']:,} ({ix['file_mb']:.0f} MB)", f"{ix['save_s']:.2f} s"],
            [f"load {ix['n_save']:,}", f"{ix['load_s']:.2f} s"],
        ], ["SimhashIndex", "time"])]
    out += _peer_report(res)
    return "\n".join(out)


def _peer_report(res: dict) -> list[str]:
    rows = []
    for n, out in sorted(res.get("peers", {}).items(), key=lambda x: int(x[0])):
        ours = res["search"].get(n) or res["search"].get(str(n)) or {}
        for name, p in (out.get("peers") or {}).items():
            if isinstance(p, dict) and p.get("n_timed", int(n)) != int(n):
                continue  # capped below n: not the same work (the index row compares it)
            if isinstance(p, dict) and p.get("median_s") and ours.get("median_s"):
                rows.append([f"{name}: {p.get('api', '').split('(')[0]}", f"{int(n):,}",
                             f"{p['median_s']:.3f}", f"{ours['median_s']:.3f}",
                             f"{p['median_s'] / ours['median_s']:.1f}x"])
    ix, pi = res.get("index") or {}, (res.get("peers_index") or {}).get("peers", {})
    pure = pi.get("simhash") or {}
    if pure.get("status") == "ok" and ix.get("add_s"):
        ours = ix["add_s"] + ix["query_s"]
        ext = pure.get("extrapolated") or {}
        theirs = ext.get("total_s", pure["median_s"])
        label = (f"simhash.SimhashIndex ({pure['n_timed']:,} adds + {pure['q_timed']:,} "
                 "queries measured, linear extrapolation)" if ext else
                 "simhash.SimhashIndex (pure Python): adds + queries")
        rows.append([label, f"{ix['n_add']:,} + {ix['n_query']:,} q",
                     f"{theirs:.1f}", f"{ours:.3f}", f"{theirs / ours:.0f}x"])
    tx = res.get("peers_index_texts") or {}
    g = (tx.get("peers") or {}).get("peers", {}).get("gaoya") or {}
    if g.get("status") == "ok":
        rows.append(["gaoya index, texts in (fingerprinting included on both sides)",
                     f"{tx['n']:,} + {tx['q']:,} q", f"{g['median_s']:.3f}",
                     f"{tx['ours_s']:.3f}", f"{g['median_s'] / tx['ours_s']:.1f}x"])
    if not rows:
        return []
    header = ["peer (same data, same run)", "n", "peer s", "simhash_nb s", "simhash_nb is"]
    return ["", table(rows, header), "", "![time against n](benchmarks/results/search.png)"]


if __name__ == "__main__":
    main()
