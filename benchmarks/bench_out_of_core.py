"""Out of core: verified near-duplicate pairs from parquet shards, in memory and streamed
under a memory limit, incrementally against a saved store, and against MinHash peers.

Run: ``python -m benchmarks.bench_out_of_core`` (sizes 200,000 and 2,000,000; takes long)
or ``python -m benchmarks.bench_out_of_core --quick`` (5,000 documents, a smoke run).
Options: ``--sizes 200000,2000000``, ``--peers gaoya,rensa,datatrove`` (``none``: no
peers), ``--memory-limit 1GB``, ``--seed 0``, ``--timeout S`` (per run), ``--streaming-via
auto|cli|python``. Writes
``benchmarks/results/out_of_core.json`` and ``out_of_core.png`` (``out_of_core-quick.*``
with ``--quick``: not figures to publish).

Corpus: :mod:`benchmarks.ooc_corpus` (its docstring has the recipe): unique documents of
random real sentences (~750 bytes), 9% edited copies (1-25% word edits), 6% exact
copies, shuffled, as parquet shards (``id``, ``text``) under ``benchmarks/.cache/ooc/``.
Truth: every pair with exact Jaccard of word 3-grams >= 0.7 (made for n <= 2M).

Every run is a child process under ``/usr/bin/time -v``, so that its peak RSS
("Maximum resident set size") is its own; times are the wall time of that process, one
run each (no warm-up: the cost a user sees, imports and Numba's cache loading included):

- ``simhash_nb in memory``: read every shard (pyarrow), then
  ``sh.near_duplicate_texts(texts, 0.7, tokenizer="word", ngram=3)``; pairs to ids.
- ``simhash_nb streaming``: ``simhash-nb pairs SHARDS OUT --threshold 0.7
  --memory-limit 1GB --column text --id id --tokenizer word --ngram 3``.
- ``simhash_nb incremental``: ``--save STORE`` on the first 90% of the shards, then the
  last 10% ``--against STORE`` (three runs against the same store, the median
  reported; the largest peak RSS); reported: that time as a share of the full
  streaming run's, and the agreement (Jaccard of the pair sets) of the two runs' pairs
  together with the full run's pairs.
- peers (``benchmarks/peers/run_peers.py ooc-pairs``, one child per peer; read
  ``benchmarks/peers/README.md``): gaoya (MinHash LSH 14 x 9, its estimate filter, in
  memory), rensa (R-MinHash 16 x 8, its estimate filter, in memory), datatrove (its four
  MinHash dedup stages, 16 buckets x 8 hashes, local executor with 2 workers, on disk).
  /usr/bin/time reports the largest single process of a run's tree: datatrove's two
  workers run side by side, so its total can be up to twice its figure.

Precision, recall and F1 are against the truth (exact Jaccard, all pairs), not pooled.
Above 2M documents there is no truth (it needs every text in memory): there each tool's
pairs are compared with the in-memory path's (``agreement_with_in_memory``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import ooc_corpus
from ._common import PEERS_PY, PEERS_RUN, RESULTS, ROOT, ensure_peers, save, table

SIZES = (200_000, 2_000_000)
QUICK_SIZES = (5_000,)
THRESHOLD = 0.7
MEMORY_LIMIT = "1GB"
PEERS = ("gaoya", "rensa", "datatrove")
INCREMENTAL_SHARE = 0.1
QUERY_REPEATS = 3  # runs of the incremental query; its median is reported
TIME = "/usr/bin/time"
OURS = ("in_memory", "streaming", "incremental")
LABELS = {"in_memory": "simhash_nb in memory", "streaming": "simhash_nb streaming",
          "incremental": "simhash_nb incremental (+10%)", "gaoya": "gaoya (MinHash, in memory)",
          "rensa": "rensa (MinHash, in memory)", "datatrove": "datatrove (MinHash, disk)"}
STREAM_ARGS = ["--threshold", str(THRESHOLD), "--column", "text", "--id", "id",
               "--tokenizer", "word", "--ngram", "3"]


# --------------------------------------------------------------------------- processes


def parse_time_v(text: str) -> dict:
    """Peak RSS (MB), wall and CPU seconds and exit status from ``/usr/bin/time -v``."""
    out = {}
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        out["peak_rss_mb"] = int(m.group(1)) / 1024
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    if m:
        parts = [float(x) for x in m.group(1).split(":")]
        out["time_v_wall_s"] = sum(p * 60 ** k for k, p in enumerate(reversed(parts)))
    user = re.search(r"User time \(seconds\): ([\d.]+)", text)
    system = re.search(r"System time \(seconds\): ([\d.]+)", text)
    if user and system:
        out["cpu_s"] = float(user.group(1)) + float(system.group(1))
    m = re.search(r"Exit status: (\d+)", text)
    if m:
        out["exit_status"] = int(m.group(1))
    return out


def timed_run(cmd: list[str], timeout: float, env: dict | None = None) -> dict:
    """Run ``cmd`` under ``/usr/bin/time -v``: wall seconds, peak RSS, stdout, or an error."""
    if not os.path.exists(TIME):
        return {"status": f"unavailable: {TIME} missing (apt-get install time)"}
    fd, stats = tempfile.mkstemp(suffix=".time")
    os.close(fd)
    try:
        t = time.perf_counter()
        try:
            p = subprocess.run([TIME, "-v", "-o", stats, *map(str, cmd)], capture_output=True,
                               text=True, cwd=ROOT, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"status": f"error: timed out after {timeout:g} s"}
        wall = time.perf_counter() - t
        res = {"wall_s": wall, **parse_time_v(Path(stats).read_text())}
    finally:
        os.unlink(stats)
    if p.returncode != 0:
        err = [ln for ln in p.stderr.strip().splitlines() if ln.strip()] or ["no output"]
        return {**res, "status": f"error: {err[-1][:300]}", "stderr": p.stderr[-3000:]}
    return {**res, "status": "ok", "stdout": p.stdout}


def _cli() -> str:
    exe = Path(sys.executable).with_name("simhash-nb")
    return str(exe) if exe.exists() else "simhash-nb"


def streaming_support() -> tuple[str | None, bool, str]:
    """(how to stream: "cli", "python" or None; incremental available; why not).

    "python" (``sh.near_duplicate_shards`` in a child) stands in while the CLI lacks
    ``--memory-limit``.
    """
    import simhash_nb as sh

    if not hasattr(sh, "near_duplicate_shards"):
        return None, False, ("simhash_nb has no near_duplicate_shards yet (the streaming path "
                             "of issue 22)")
    p = subprocess.run([_cli(), "pairs", "--help"], capture_output=True, text=True)
    help_text = p.stdout + p.stderr
    if "--memory-limit" not in help_text:
        return "python", False, "simhash-nb pairs has no --memory-limit/--save/--against yet"
    if "--against" not in help_text or "--save" not in help_text:
        return "cli", False, "simhash-nb pairs has no --save/--against yet (issue 22)"
    return "cli", True, ""


# --------------------------------------------------------------------------- children


def _child_in_memory(shards: str, out: str) -> None:
    """The in-memory path on every shard: read, near_duplicate_texts, pairs of ids."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import simhash_nb as sh

    t = time.perf_counter()
    ids, texts = ooc_corpus.read(Path(shards).parent)
    read_s = time.perf_counter() - t
    t = time.perf_counter()
    r = sh.near_duplicate_texts(texts, threshold=THRESHOLD, tokenizer="word", ngram=3)
    pairs_s = time.perf_counter() - t
    i, j = ids[np.asarray(r.i)], ids[np.asarray(r.j)]
    pq.write_table(pa.table({"left": np.minimum(i, j), "right": np.maximum(i, j)}), out)
    print(json.dumps({"read_s": read_s, "pairs_s": pairs_s, "k": int(getattr(r, "k", -1)),
                      "n": len(texts)}))


def _child_streaming(shards: str, out: str, memory_limit: str) -> None:
    """The streaming path through Python (while the CLI lacks --memory-limit)."""
    import simhash_nb as sh

    df = sh.near_duplicate_shards(shards, THRESHOLD, text_column="text", id_column="id",
                                  memory_limit=memory_limit, tokenizer="word", ngram=3)
    df[["left", "right", "jaccard"]].to_parquet(out)
    print(json.dumps({"n_pairs": len(df)}))


def run_in_memory(shards: Path, out: Path, timeout: float) -> dict:
    res = timed_run([sys.executable, "-m", "benchmarks.bench_out_of_core", "--child-in-memory",
                     shards, out], timeout)
    if res["status"] == "ok":
        res.update(json.loads(res.pop("stdout").strip().splitlines()[-1]))
        res["api"] = (f'sh.near_duplicate_texts(texts, threshold={THRESHOLD}, tokenizer="word", '
                      "ngram=3) on every shard read into memory")
        res["pairs_file"] = str(out)
    return res


def run_streaming(inputs: list, out: Path, memory_limit: str, timeout: float,
                  extra=()) -> dict:
    cmd = [_cli(), "pairs", *inputs, out, *STREAM_ARGS, "--memory-limit", memory_limit, *extra]
    res = timed_run(cmd, timeout)
    res.pop("stdout", None)
    shown = [str(c) if not isinstance(c, Path) or c.suffix != ".parquet" else c.name
             for c in cmd[1:]]
    res["api"] = "simhash-nb " + " ".join(shown)
    if res["status"] == "ok":
        res["pairs_file"] = str(out)
    return res


def run_streaming_python(shards: Path, out: Path, memory_limit: str, timeout: float) -> dict:
    res = timed_run([sys.executable, "-m", "benchmarks.bench_out_of_core", "--child-streaming",
                     shards, out, memory_limit], timeout)
    res.pop("stdout", None)
    res["api"] = (f"sh.near_duplicate_shards(shards, {THRESHOLD}, text_column='text', "
                  f"id_column='id', memory_limit={memory_limit!r}, tokenizer='word', ngram=3)"
                  " (Python: the CLI lacks --memory-limit)")
    if res["status"] == "ok":
        res["pairs_file"] = str(out)
    return res


def run_peer(name: str, shards: Path, outdir: Path, timeout: float) -> dict:
    cmd = [PEERS_PY, PEERS_RUN, "ooc-pairs", "--input", shards, "--out", outdir,
           "--threshold", str(THRESHOLD), "--shingles", "word3", "--peers", name,
           "--timeout", str(int(timeout))]
    res = timed_run(cmd, timeout + 60)
    if res["status"] != "ok":
        return res
    meta = json.loads(res.pop("stdout"))
    entry = meta["peers"][name]
    keep = {k: v for k, v in entry.items() if k not in ("peak_rss_mb", "status")}
    res.update(status=entry["status"], peer=keep, peer_peak_rss_mb=entry.get("peak_rss_mb"))
    if entry["status"] == "ok":
        res["pairs_file"] = entry["pairs_file"]
    return res


# --------------------------------------------------------------------------- scoring


def read_pairs(path) -> np.ndarray:
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["left", "right"])
    a, b = t.column("left").to_numpy(), t.column("right").to_numpy()
    return np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1).astype(np.int64)


def _keys(pairs: np.ndarray) -> np.ndarray:
    """One comparable key per pair, whichever way round it is given (a structured view)."""
    p = np.asarray(pairs, np.int64).reshape(-1, 2)
    p = np.ascontiguousarray(np.stack([p.min(axis=1), p.max(axis=1)], axis=1))
    p = p[p[:, 0] != p[:, 1]]
    return np.unique(p.view([("l", np.int64), ("r", np.int64)]).ravel())


def score(found: np.ndarray, truth: np.ndarray | None) -> dict:
    f = _keys(found)
    out = {"pairs": int(f.size)}
    if truth is None:
        return out
    t = _keys(truth)
    tp = int(np.isin(f, t, assume_unique=True).sum())
    prec = tp / f.size if f.size else float("nan")
    rec = tp / t.size if t.size else float("nan")
    f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    return {**out, "tp": tp, "truth_pairs": int(t.size), "precision": prec, "recall": rec,
            "f1": f1}


def agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard of two pair sets (1.0 when both are empty)."""
    ka, kb = _keys(a), _keys(b)
    union = np.union1d(ka, kb).size
    return np.intersect1d(ka, kb).size / union if union else 1.0


# --------------------------------------------------------------------------- driver


def run_size(n: int, args, peers: list[str], support) -> dict:
    folder = ooc_corpus.ensure(n, args.seed, truth=n <= ooc_corpus.TRUTH_MAX)
    shards = folder / "shards"
    meta = json.loads((folder / "meta.json").read_text())
    truth = ooc_corpus.truth_pairs(folder)
    work = Path(tempfile.mkdtemp(prefix="runs-", dir=folder))
    runs: dict = {}
    try:
        print(f"-- n={n:,}: {meta['bytes'] / 1e6:,.0f} MB in {meta['shards']} shards", flush=True)
        runs["in_memory"] = (run_in_memory(shards, work / "in_memory.parquet", args.timeout)
                             if n <= args.in_memory_max_n else
                             {"status": f"skipped: above --in-memory-max-n "
                                        f"{args.in_memory_max_n:,} (it would not fit)"})
        _say("in_memory", runs["in_memory"])
        how, incr_ok, why = support
        if how == "cli":
            runs["streaming"] = run_streaming([shards], work / "streaming.parquet",
                                              args.memory_limit, args.timeout)
        elif how == "python":
            runs["streaming"] = run_streaming_python(shards, work / "streaming.parquet",
                                                     args.memory_limit, args.timeout)
        else:
            runs["streaming"] = {"status": f"unavailable: {why}"}
        _say("streaming", runs["streaming"])
        if n > args.incremental_max_n:
            runs["incremental"] = {"status": f"skipped: above --incremental-max-n "
                                             f"{args.incremental_max_n:,}"}
        else:
            runs["incremental"] = (_incremental(folder, work, args, runs["streaming"])
                                   if incr_ok else {"status": f"unavailable: {why}"})
        _say("incremental", runs["incremental"])
        for name in peers:
            if n > args.peers_max_n:
                runs[name] = {"status": f"skipped: above --peers-max-n {args.peers_max_n:,}"}
            elif name == "datatrove" and n > args.datatrove_max_n:
                runs[name] = {"status": f"skipped: above --datatrove-max-n "
                                        f"{args.datatrove_max_n:,} (its run grows about "
                                        "linearly with the documents)"}
            else:
                runs[name] = run_peer(name, shards, work / "peers", args.timeout)
            _say(name, runs[name])
        base_pairs = (read_pairs(runs["in_memory"]["pairs_file"])
                      if runs["in_memory"].get("status") == "ok" else None)
        for name, r in runs.items():
            if r.get("status") == "ok" and r.get("pairs_file"):
                found = read_pairs(r.pop("pairs_file"))
                r.update(score(found, truth))
                if truth is None and base_pairs is not None and name != "in_memory":
                    r["agreement_with_in_memory"] = agreement(found, base_pairs)
        base = runs["in_memory"]
        for name, r in runs.items():
            if name != "in_memory" and r.get("wall_s") and base.get("wall_s"):
                r["time_vs_in_memory"] = r["wall_s"] / base["wall_s"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"corpus": meta, "truth": truth is not None, "runs": runs}


def _incremental(folder: Path, work: Path, args, full: dict) -> dict:
    files = ooc_corpus.shard_paths(folder)
    cut = len(files) - max(1, int(round(len(files) * INCREMENTAL_SHARE)))
    store = work / "store"
    first = run_streaming(files[:cut], work / "first.parquet", args.memory_limit, args.timeout,
                          ["--save", store])
    if first["status"] != "ok":
        return {**first, "stage": "--save on the first 90%"}
    runs = []  # a short run, the noisiest: the median of QUERY_REPEATS (same store)
    for _ in range(QUERY_REPEATS):
        runs.append(run_streaming(files[cut:], work / "new.parquet", args.memory_limit,
                                  args.timeout, ["--against", store]))
        if runs[-1]["status"] != "ok":
            return {**runs[-1], "stage": "--against on the last 10%"}
    walls = [r["wall_s"] for r in runs]
    res = {**sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2],
           "runs_wall_s": walls, "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}
    res["save_run"] = {k: first.get(k) for k in ("wall_s", "peak_rss_mb", "api")}
    res["shards"] = {"stored": cut, "new": len(files) - cut}
    if res["status"] == "ok":
        both = np.vstack([read_pairs(work / "first.parquet"), read_pairs(work / "new.parquet")])
        res.update(score(both, ooc_corpus.truth_pairs(folder)))
        res.pop("pairs_file", None)  # scored here, as first + new: not again on new alone
        if full.get("status") == "ok":
            res["share_of_full_run"] = res["wall_s"] / full["wall_s"]
            res["agreement_with_full_run"] = agreement(both, read_pairs(full["pairs_file"]))
    return res


def _say(name: str, r: dict) -> None:
    if r.get("status") != "ok":
        print(f"   {LABELS[name]:32s} {r.get('status')}", flush=True)
        return
    print(f"   {LABELS[name]:32s} {r['wall_s']:8.1f} s  {r.get('peak_rss_mb', 0):8.0f} MB",
          flush=True)


def main(argv=None) -> dict | None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", default=None)
    ap.add_argument("--peers", default=",".join(PEERS), help="comma list, or none")
    ap.add_argument("--memory-limit", default=MEMORY_LIMIT)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datatrove-max-n", type=int, default=500_000,
                    help="run datatrove only up to this size (it takes minutes per 100k)")
    ap.add_argument("--peers-max-n", type=int, default=10**12,
                    help="run the peers only up to this size")
    ap.add_argument("--in-memory-max-n", type=int, default=2_000_000,
                    help="run the in-memory path only up to this size")
    ap.add_argument("--incremental-max-n", type=int, default=2_000_000,
                    help="run the incremental case only up to this size")
    ap.add_argument("--tag", default="", help="suffix of the results' file names")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run")
    ap.add_argument("--streaming-via", choices=("auto", "cli", "python"), default="auto",
                    help="the streaming run through the CLI (auto: when it has "
                         "--memory-limit) or sh.near_duplicate_shards in a child")
    ap.add_argument("--child-in-memory", nargs=2, metavar=("SHARDS", "OUT"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--child-streaming", nargs=3, metavar=("SHARDS", "OUT", "LIMIT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_streaming:
        _child_streaming(*args.child_streaming)
        return None
    if args.child_in_memory:
        _child_in_memory(*args.child_in_memory)
        return None
    sizes = ([int(float(s)) for s in args.sizes.split(",")] if args.sizes
             else list(QUICK_SIZES if args.quick else SIZES))
    args.timeout = args.timeout or (900 if args.quick else 3 * 3600)
    peers = [] if args.peers in ("", "none") else [p.strip() for p in args.peers.split(",")]
    unknown = [p for p in peers if p not in PEERS]
    if unknown:
        raise SystemExit(f"unknown peers {unknown}; choose from {list(PEERS)}")
    if peers and not ensure_peers():
        print("peers: unavailable: benchmarks/peers/setup.sh failed", file=sys.stderr)
    support = streaming_support()
    if support[0] and args.streaming_via != "auto":
        support = (args.streaming_via, support[1], support[2])
    if support[2]:
        print(f"note: {support[2]}", flush=True)
    res = {"threshold": THRESHOLD, "memory_limit": args.memory_limit, "quick": args.quick,
           "features": "word 3-grams", "sizes": {}}
    for n in sizes:
        res["sizes"][str(n)] = run_size(n, args, peers, support)
    per_document(res)
    name = "out_of_core-quick" if args.quick else "out_of_core"
    name += f"-{args.tag}" if args.tag else ""
    path = save(name, res)
    print(f"wrote {path}")
    try:
        plot(res, RESULTS / f"{name}.png")
        print(f"wrote {RESULTS / f'{name}.png'}")
    except ImportError as e:
        print(f"no plot: {e}")
    print(report(res))
    return res


# --------------------------------------------------------------------------- report


def per_document(res: dict) -> None:
    """Streaming runs without an in-memory run of their size get their time per document
    as a multiple of the in-memory path's at the largest size it ran (``vs_in_memory_at``)."""
    done = [(int(n), sr["runs"]["in_memory"]) for n, sr in res["sizes"].items()
            if sr["runs"]["in_memory"].get("status") == "ok"]
    if not done:
        return
    ref_n, ref = max(done, key=lambda x: x[0])
    for n, sr in res["sizes"].items():
        r = sr["runs"].get("streaming", {})
        if r.get("status") == "ok" and sr["runs"]["in_memory"].get("status") != "ok":
            r["per_document_vs_in_memory"] = (r["wall_s"] / int(n)) / (ref["wall_s"] / ref_n)
            r["vs_in_memory_at"] = ref_n


def _fmt_s(x) -> str:
    return "-" if x is None else (f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}")


def _gb(mb: float) -> float:
    """MiB (``/usr/bin/time``'s kibibytes / 1024) as GB of 10^9 bytes: the unit of
    ``--memory-limit 1GB``, so that a peak reads against the limit as it is."""
    return mb * 2**20 / 1e9


def _fmt_gb(mb) -> str:
    return "-" if mb is None else f"{_gb(mb):.2f}"


def _of_limit(r: dict, limit: str) -> str:
    """A streaming run's peak as a share of its memory limit (the limit as parsed)."""
    from simhash_nb._core.pipeline.budget import parse_size

    if not r.get("peak_rss_mb"):
        return ""
    return f"peak {r['peak_rss_mb'] * 2**20 / parse_size(limit):.0%} of the limit"


def _fmt_p(x) -> str:
    return "-" if x is None or x != x else f"{x:.3f}"


def report(res: dict) -> str:
    rows = []
    for n, sr in res["sizes"].items():
        mb = sr["corpus"]["bytes"] / 1e6
        for name, r in sr["runs"].items():
            label = LABELS.get(name, name)
            if r.get("status") != "ok":
                rows.append([f"{int(n):,} ({mb:,.0f} MB)", label, r.get("status", "?")[:90],
                             "", "", "", "", ""])
                continue
            note = ""
            if name == "incremental":
                runs = ", ".join(_fmt_s(x) for x in r.get("runs_wall_s", []))
                note = (f"{r.get('share_of_full_run', float('nan')):.0%} of the streaming run"
                        f"{f' (median of {runs} s)' if runs else ''}; "
                        f"agreement {_fmt_p(r.get('agreement_with_full_run'))}")
            elif r.get("per_document_vs_in_memory"):
                note = (f"{r['per_document_vs_in_memory']:.2f}x the in-memory time per "
                        f"document at {r['vs_in_memory_at']:,}")
            elif r.get("time_vs_in_memory"):
                note = f"{r['time_vs_in_memory']:.2f}x in-memory time"
            if r.get("agreement_with_in_memory") is not None:
                note += f"; pairs agree {r['agreement_with_in_memory']:.3f} with in-memory"
            if name in ("streaming", "incremental"):
                note = "; ".join(x for x in (note, _of_limit(r, res["memory_limit"])) if x)
            rows.append([f"{int(n):,} ({mb:,.0f} MB)", label, _fmt_s(r.get("wall_s")),
                         _fmt_gb(r.get("peak_rss_mb")), _fmt_p(r.get("f1")),
                         _fmt_p(r.get("precision")), _fmt_p(r.get("recall")), note])
    text = table(rows, ["documents", "tool", "seconds", "peak RSS (GB)", "F1", "precision",
                        "recall", "note"])
    median = any("runs_wall_s" in sr["runs"].get("incremental", {})
                 for sr in res["sizes"].values())
    head = ("Verified pairs at word-3-gram Jaccard >= "
            f"{res['threshold']} from parquet shards; streaming with `--memory-limit "
            f"{res['memory_limit']}`. Seconds: wall time of the whole process (one run"
            f"{'; the incremental query: the median of three' if median else ''}); "
            "peak RSS: `/usr/bin/time -v`, in GB of 10^9 bytes (the unit of "
            "`--memory-limit`). F1 against the exact truth "
            "(`benchmarks/ooc_corpus.py`). Plot: "
            "[out_of_core.png](benchmarks/results/out_of_core.png).")
    if res.get("quick"):
        head = "**SMOKE RUN (--quick): not figures to quote.** " + head
    return head + "\n\n" + text


def plot(res: dict, path) -> None:
    """Per size: time and peak RSS bars per tool, F1 written on the time bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simhash_nb._core.pipeline.budget import parse_size

    sizes = list(res["sizes"])
    fig, axes = plt.subplots(len(sizes), 2, figsize=(11, 3.2 + 2.6 * len(sizes)),
                             squeeze=False)
    for row, n in zip(axes, sizes):
        sr = res["sizes"][n]
        names = [k for k, r in sr["runs"].items() if r.get("status") == "ok"]
        colours = ["C0" if k in OURS else "C7" for k in names]
        labels = [LABELS.get(k, k) for k in names]
        y = np.arange(len(names))
        secs = [sr["runs"][k]["wall_s"] for k in names]
        rss = [_gb(sr["runs"][k].get("peak_rss_mb", 0)) for k in names]
        row[0].barh(y, secs, color=colours)
        row[1].barh(y, rss, color=colours)
        for k, yy, s in zip(names, y, secs):
            f1 = sr["runs"][k].get("f1")
            row[0].text(s, yy, f"  {_fmt_s(s)} s" + (f", F1 {f1:.3f}" if f1 is not None else ""),
                        va="center", fontsize=8)
        for yy, g in zip(y, rss):
            row[1].text(g, yy, f"  {g:.2f} GB", va="center", fontsize=8)
        for ax in row:
            ax.set_yticks(y, labels, fontsize=8)
            ax.invert_yaxis()
            ax.grid(True, axis="x", alpha=0.3)
            ax.margins(x=0.35)
        mb = sr["corpus"]["bytes"] / 1e6
        row[0].set_title(f"{int(n):,} documents ({mb:,.0f} MB): seconds", fontsize=10)
        row[1].axvline(parse_size(res["memory_limit"]) / 1e9, color="C3", lw=1, ls="--")
        row[1].set_title(f"peak RSS, GB of 10^9 bytes (dashed: limit {res['memory_limit']})",
                         fontsize=10)
        missing = [f"{LABELS.get(k, k)}: {r.get('status')}" for k, r in sr["runs"].items()
                   if r.get("status") != "ok"]
        if missing:
            row[0].set_xlabel("\n".join(m[:110] for m in missing), fontsize=7, color="C3")
    title = f"Verified pairs, word 3-grams, Jaccard >= {res['threshold']}, parquet shards"
    if res.get("quick"):
        title = "SMOKE RUN (--quick): not figures to quote\n" + title
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
