"""Time the peer SimHash libraries on the same data as simhash_nb's benchmarks.

Runs INSIDE the peers venv made by ``benchmarks/peers/setup.sh``::

    benchmarks/.peers/venv/bin/python benchmarks/peers/run_peers.py TASK --input FILE \
        [--n N] [--repeats R] [--k 3] [--peers gaoya,simhash-pybind,...]

and prints ONE JSON object on stdout (progress and warnings go to stderr).

Tasks
-----
fingerprint-words   texts (JSON lines, ``{"text": ...}``, gzip allowed) -> 64-bit
                    fingerprints from lowercased word unigrams.
fingerprint-char4   the same with character 4-grams.
search              all pairs within Hamming distance k among N fingerprints
                    (``.npy`` of uint64; or JSON-lines texts, see --texts).
index               N adds + Q queries at distance k.
minhash-pairs       texts -> every pair i < j that a MinHash LSH index reports at a
                    Jaccard threshold (gaoya, datasketch): build over all texts, query
                    all; pairs saved as <out>/<peer>.npy (int64, shape (m, 2)).
ooc-pairs           a folder of parquet shards (columns id, text) -> the pairs at a
                    Jaccard threshold by gaoya, rensa (in memory) and datatrove's
                    four-stage MinHash pipeline (on disk); pairs of ids saved as
                    <out>/<peer>.parquet (columns left, right). Used by
                    benchmarks/bench_out_of_core.py.

Every peer runs in its own child process (three of them install a top-level
package called ``simhash``; a child per peer also gives a clean ru_maxrss).
Each peer's entry says what its timed path includes; read README.md before
quoting ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

# the sibling modules (harness and one module a peer), also when this file is loaded by path
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from datasketch_peer import mh_datasketch  # noqa: E402
from gaoya_peer import fp_gaoya, index_gaoya, mh_gaoya, ooc_gaoya, search_gaoya  # noqa: E402
from harness import (  # noqa: E402
    PEERS,
    count_rows,
    is_npy,
    load_fingerprints,
    load_texts,
    log,
    lsh_params,
    numpy_version,
    parse_shingles,
    peer_env,
    peer_python,
    probe,
    rounded,
    utf8_len,
    write_status,
)
from python_simhash_peer import fp_python_simhash  # noqa: E402
from simhash_pure_peer import fp_simhash_pure, index_pure, search_pure  # noqa: E402
from simhash_pybind_peer import fp_simhash_pybind, search_pybind  # noqa: E402

# re-exported for tests/test_bench_e2e_smoke.py, which loads this file by path
shingles = harness.shingles
pairs_from_lists = harness.pairs_from_lists

TASKS = ("fingerprint-words", "fingerprint-char4", "search", "index", "minhash-pairs",
         "ooc-pairs")
# peers each task runs by default (--peers overrides)
TASK_PEERS = {t: ("gaoya", "python-simhash", "simhash-pybind", "simhash") for t in TASKS[:4]}
TASK_PEERS["minhash-pairs"] = ("gaoya", "datasketch")
TASK_PEERS["ooc-pairs"] = ("gaoya", "rensa", "datatrove")

def _lazy(module: str, name: str):
    """A worker function imported when it runs (its module needs that peer's venv)."""
    import importlib

    return getattr(importlib.import_module(module), name)


WORKERS = {
    ("fingerprint-words", "gaoya"): lambda a: fp_gaoya(load_texts(a.input, a.n), "words", a),
    ("fingerprint-words", "python-simhash"): lambda a: fp_python_simhash(
        load_texts(a.input, a.n), "words", a
    ),
    ("fingerprint-words", "simhash-pybind"): lambda a: fp_simhash_pybind(
        load_texts(a.input, a.n), "words", a
    ),
    ("fingerprint-words", "simhash"): lambda a: fp_simhash_pure(
        load_texts(a.input, a.n), "words", a
    ),
    ("fingerprint-char4", "gaoya"): lambda a: fp_gaoya(load_texts(a.input, a.n), "char4", a),
    ("fingerprint-char4", "python-simhash"): lambda a: fp_python_simhash(
        load_texts(a.input, a.n), "char4", a
    ),
    ("fingerprint-char4", "simhash-pybind"): lambda a: fp_simhash_pybind(
        load_texts(a.input, a.n), "char4", a
    ),
    ("fingerprint-char4", "simhash"): lambda a: fp_simhash_pure(
        load_texts(a.input, a.n), "char4", a
    ),
    ("search", "gaoya"): search_gaoya,
    ("search", "simhash-pybind"): search_pybind,
    ("search", "simhash"): search_pure,
    (
        "search",
        "python-simhash",
    ): "n/a: python-simhash has no index or pair search (only simhash/hamming_distance)",
    ("index", "gaoya"): index_gaoya,
    ("index", "simhash"): index_pure,
    ("index", "python-simhash"): "n/a: python-simhash has no index (only simhash/hamming_distance)",
    ("minhash-pairs", "gaoya"): mh_gaoya,
    ("minhash-pairs", "datasketch"): mh_datasketch,
    ("ooc-pairs", "gaoya"): ooc_gaoya,
    ("ooc-pairs", "rensa"): lambda a: _lazy("rensa_peer", "ooc_rensa")(a),
    ("ooc-pairs", "datatrove"): lambda a: _lazy("datatrove_peer", "ooc_datatrove")(a),
    ("index", "simhash-pybind"): (
        "n/a: simhash-pybind has no incremental index (no add/query API); "
        "find_all is a batch all-pairs self-join, timed in the search task"
    ),
}



# --------------------------------------------------------------------------- driver


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("task", nargs="?", choices=TASKS)
    p.add_argument(
        "--input", help="JSON lines {'text': ...} (gzip ok) or .npy of uint64 (search/index)"
    )
    p.add_argument(
        "--texts",
        help="search/index with a .npy --input: texts for gaoya (it cannot take fingerprints)",
    )
    p.add_argument("--n", type=int, default=None, help="use only the first N docs/fingerprints")
    p.add_argument(
        "--q", type=int, default=None, help="index: number of queries (default min(N, 10000))"
    )
    p.add_argument("--repeats", type=int, default=3, help="timed repeats; the median is reported")
    p.add_argument("--k", type=int, default=3, help="Hamming distance threshold (<= k)")
    p.add_argument(
        "--blocks", type=int, default=None, help="simhash-pybind find_all blocks (default k+2)"
    )
    p.add_argument("--gaoya-blocks", type=int, default=None, help="gaoya num_blocks (default k+3)")
    p.add_argument(
        "--peers",
        default=None,
        help="comma-separated subset of " + ",".join(PEERS) + " (default: the task's peers)",
    )
    p.add_argument("--threshold", type=float, default=0.7, help="minhash-pairs: Jaccard threshold")
    p.add_argument(
        "--shingles", default="word3", help="minhash-pairs: word3 | char5 (wordN / charN)"
    )
    p.add_argument("--num-perm", type=int, default=128, help="minhash-pairs: MinHash length")
    p.add_argument("--bands", type=int, default=None, help="minhash-pairs: LSH bands")
    p.add_argument("--rows", type=int, default=None, help="minhash-pairs: LSH rows per band")
    p.add_argument("--out", default=None,
                   help="minhash-pairs / ooc-pairs: folder for <peer>.npy / .parquet pairs")
    p.add_argument("--lsh-bands", type=int, default=16,
                   help="ooc-pairs: rensa's bands and datatrove's buckets (default 16)")
    p.add_argument("--lsh-rows", type=int, default=8,
                   help="ooc-pairs: datatrove's hashes per bucket (default 8)")
    p.add_argument("--workers", type=int, default=2,
                   help="ooc-pairs: datatrove's local executor workers (default 2)")
    p.add_argument("--tmp-dir", default=None,
                   help="ooc-pairs: where datatrove's stages write (default: the system's)")
    p.add_argument(
        "--max-est-s",
        type=float,
        default=600,
        help="minhash-pairs: skip datasketch when its estimated time is above this",
    )
    p.add_argument(
        "--gaoya-tokens",
        choices=("auto", "own", "python"),
        default="auto",
        help="minhash-pairs: gaoya's own tokeniser (own; auto = own), or simhash_nb's "
        "shingles built in Python and passed as tokens (python)",
    )
    p.add_argument(
        "--calibrate-docs", type=int, default=2000, help="minhash-pairs: datasketch estimate"
    )
    p.add_argument(
        "--slow-max-docs",
        type=int,
        default=2000,
        help="cap for the pure-Python fingerprint paths (simhash, pybind e2e_md5)",
    )
    p.add_argument(
        "--py-max-n", type=int, default=20000, help="cap on N for pure-Python SimhashIndex"
    )
    p.add_argument(
        "--py-max-q", type=int, default=2000, help="cap on Q for pure-Python SimhashIndex"
    )
    p.add_argument(
        "--threads", type=int, default=None, help="RAYON_NUM_THREADS for gaoya/python-simhash"
    )
    p.add_argument("--timeout", type=float, default=900, help="seconds per peer child")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--write-status", metavar="FILE", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if not a.write_status and (not a.task or not a.input):
        p.error("TASK and --input are required")
    return a


def run_worker(a) -> int:
    fn = WORKERS[(a.task, a.worker)]
    if a.task == "ooc-pairs":
        a.out = os.path.abspath(a.out)
    res = fn(a)
    res.setdefault("status", "ok")
    print(json.dumps(rounded(res)))
    return 0


def main(argv=None) -> int:
    a = parse_args(argv)
    if a.write_status:
        return write_status(a.write_status)
    if a.worker:
        return run_worker(a)

    if a.task.startswith("fingerprint") and is_npy(a.input):
        raise SystemExit(f"{a.task} needs texts (JSON lines), not {a.input}")
    if a.k < 0 or a.k >= 64:
        raise SystemExit("--k must be in [0, 64)")
    if a.blocks is not None and a.blocks <= a.k:
        raise SystemExit("--blocks must be > k")
    if a.gaoya_blocks is not None and a.gaoya_blocks <= a.k + 1:
        raise SystemExit("--gaoya-blocks must be > k+1 (gaoya is passed max_distance=k+1)")

    if a.task in ("minhash-pairs", "ooc-pairs"):
        if not a.out:
            raise SystemExit(f"{a.task} needs --out DIR (pairs are written there)")
        parse_shingles(a.shingles)
        if not 0 < a.threshold <= 1:
            raise SystemExit("--threshold must be in (0, 1]")
        if (a.bands is None) != (a.rows is None):
            raise SystemExit("give both --bands and --rows, or neither")
        a.out = os.path.abspath(a.out)
        if a.bands is None:  # one LSH design for every peer: datasketch's own choice
            try:
                a.bands, a.rows = lsh_params(a.threshold, a.num_perm)
            except ImportError:
                pass
    peers_arg = a.peers or ",".join(TASK_PEERS[a.task])
    names = [s.strip() for s in peers_arg.split(",") if s.strip()]
    unknown = [s for s in names if s not in PEERS]
    if unknown:
        raise SystemExit(f"unknown peers {unknown}; choose from {list(PEERS)}")

    meta = dict(
        task=a.task,
        input=os.path.abspath(a.input),
        k=a.k,
        repeats=a.repeats,
        n_limit=a.n,
        python=platform.python_version(),
        numpy=numpy_version(),
        cpu_count=os.cpu_count(),
        machine=platform.machine(),
        rayon_threads=a.threads or os.cpu_count(),
        throughput_unit="MB = 1e6 UTF-8 bytes",
        time_unit="seconds (median of repeats, after a warm-up)",
    )
    if a.task == "minhash-pairs":
        meta.update(threshold=a.threshold, shingles=a.shingles, num_perm=a.num_perm,
                    bands=a.bands, rows=a.rows, out=a.out,
                    time_unit="seconds (median of repeats, after a warm-up on 200 docs)")
    if a.task == "ooc-pairs":
        if not os.path.isdir(a.input):
            raise SystemExit(f"ooc-pairs needs a folder of parquet shards, not {a.input}")
        meta.update(threshold=a.threshold, shingles=a.shingles, num_perm=a.num_perm,
                    bands=a.bands, rows=a.rows, lsh_bands=a.lsh_bands, lsh_rows=a.lsh_rows,
                    workers=a.workers, out=a.out, n_docs=count_rows(a.input),
                    time_unit="seconds, one run (no warm-up)")
    elif a.task.startswith("fingerprint") or a.task == "minhash-pairs":
        texts = load_texts(a.input, a.n)
        meta.update(n_docs=len(texts), bytes=utf8_len(texts))
        del texts
    elif is_npy(a.input) and not meta["numpy"].startswith("unavailable"):
        meta.update(n_fingerprints=int(len(load_fingerprints(a.input, a.n))))

    base = [x for x in (argv if argv is not None else sys.argv[1:])]
    peers_out = {}
    for name in names:
        st = probe(name)
        if st["status"] != "installed":
            peers_out[name] = st
            log(f"{name}: {st['status']}")
            continue
        job = WORKERS.get((a.task, name), f"n/a: run_peers has no {a.task} task for {name}")
        if isinstance(job, str):
            peers_out[name] = {"status": job, "version": st["version"], "import": st["import"]}
            continue
        env = peer_env(name)
        if a.threads:
            env["RAYON_NUM_THREADS"] = str(a.threads)
        log(f"{name}: running {a.task}")
        t0 = time.perf_counter()
        try:
            p = subprocess.run(
                [peer_python(name), os.path.abspath(__file__), *base, "--worker", name],
                env=env,
                capture_output=True,
                text=True,
                timeout=a.timeout,
            )
        except subprocess.TimeoutExpired:
            peers_out[name] = {**st, "status": f"error: timed out after {a.timeout:g}s"}
            continue
        if p.returncode != 0 or not p.stdout.strip():
            err = (p.stderr.strip().splitlines() or ["no output"])[-1]
            peers_out[name] = {**st, "status": f"error: {err}"}
            log(f"{name} failed:\n{p.stderr[-2000:]}")
            continue
        res = json.loads(p.stdout.strip().splitlines()[-1])
        status = res.pop("status", "ok")
        peers_out[name] = {
            "status": status,
            "version": st["version"],
            "import": st["import"],
            "kind": st["kind"],
            **res,
            "child_wall_s": round(time.perf_counter() - t0, 3),
        }
    meta["peers"] = peers_out
    print(json.dumps(meta, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
