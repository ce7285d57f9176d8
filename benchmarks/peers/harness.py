"""The harness the peers share: their registry, input loading, timing, shingles, pairs,
and the probe of each peer's install (``benchmarks/.peers/status.json``).

Each peer's timed work lives in its own module (``gaoya_peer.py``, ``rensa_peer.py``,
...); ``run_peers.py`` is the command line that runs them, one child process a peer.
Everything here runs in the peers' environments (numpy < 2 in ``venv``, numpy 2 in
``datatrove-venv``), so it imports only the standard library at module level.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS_DIR = os.path.join(ROOT, "benchmarks", ".peers")
LIB_DIR = os.path.join(PEERS_DIR, "lib")


# name -> how to find and check it. ``lib`` is the --target dir under LIB_DIR (None:
# installed in the venv itself); ``attr`` must exist on the imported module.
PEERS = {
    "gaoya": dict(
        dist="gaoya",
        pin="0.2.2",
        lib=None,
        module="gaoya",
        attr="simhash",
        kind="Rust (pyo3 + rayon, multi-threaded)",
        key="gaoya",
    ),
    "python-simhash": dict(
        dist="python-simhash",
        pin="0.1.0",
        lib="python_simhash",
        module="simhash",
        attr="simhash_parallel",
        kind="Rust (pyo3 + rayon)",
        key="python_simhash",
    ),
    "simhash-pybind": dict(
        dist="simhash-pybind",
        pin="0.0.3",
        lib="simhash_pybind",
        module="simhash",
        attr="find_all",
        kind="C++ (pybind11 port of seomoz/simhash-py, single-threaded)",
        key="simhash_pybind",
    ),
    "simhash": dict(
        dist="simhash",
        pin="2.1.2",
        lib="simhash_pure",
        module="simhash",
        attr="SimhashIndex",
        kind="pure Python + numpy (1e0n/simhash), single-threaded",
        key="simhash_pure",
    ),
    "datasketch": dict(
        dist="datasketch",
        pin="2.0.0",
        lib=None,
        module="datasketch",
        attr="MinHashLSH",
        kind="pure Python + numpy (ekzhu/datasketch), single-threaded",
        key="datasketch",
    ),
    "rensa": dict(
        dist="rensa",
        pin="0.5.0",
        lib=None,
        module="rensa",
        attr="RMinHashLSH",
        kind="Rust (pyo3), single-threaded",
        key="rensa",
    ),
    "datatrove": dict(
        dist="datatrove",
        pin="0.10.1",
        lib=None,
        module="datatrove.pipeline.dedup.minhash",
        attr="MinhashDedupSignature",
        kind="Python + numpy (huggingface/datatrove), 4 stages on disk, multiprocess workers",
        key="datatrove",
        venv="datatrove-venv",  # its own venv: datatrove needs numpy >= 2
    ),
}


def peer_python(name: str) -> str:
    """The Python that runs a peer: its own venv's (datatrove), else this one."""
    venv = PEERS[name].get("venv")
    return os.path.join(PEERS_DIR, venv, "bin", "python") if venv else sys.executable

WORD_RE = re.compile(r"\w+")  # Python-side word tokenizer for peers that take features
MASK64 = (1 << 64) - 1
MB = 1e6  # throughput unit: 10^6 bytes of UTF-8 input per second


def log(msg: str) -> None:
    print(f"[run_peers] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- input


def is_npy(path: str) -> bool:
    return path.endswith(".npy")


def load_texts(path: str, n: int | None) -> list[str]:
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    texts: list[str] = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            texts.append(obj if isinstance(obj, str) else obj["text"])
            if n is not None and len(texts) >= n:
                break
    return texts


def load_fingerprints(path: str, n: int | None):
    import numpy as np

    a = np.load(path, allow_pickle=False)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise SystemExit(
            f"{path}: expected a 1-D array of 64-bit fingerprints, got shape {a.shape}"
        )
    if a.dtype.itemsize != 8 or a.dtype.kind not in "iu":
        raise SystemExit(f"{path}: expected uint64 fingerprints, got {a.dtype}")
    a = a.view(np.uint64)
    return a[:n] if n is not None else a


def utf8_len(texts) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


# --------------------------------------------------------------------------- timing


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def timed(fn, repeats: int):
    """Run ``fn`` ``repeats`` times; return (median_s, [times], last result)."""
    times, out = [], None
    for _ in range(max(1, repeats)):
        out = None
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, out


def throughput(seconds: float, n_docs: int, n_bytes: int) -> dict:
    return {
        "median_s": seconds,
        "mb_per_s": (n_bytes / MB / seconds) if seconds > 0 else None,
        "docs_per_s": (n_docs / seconds) if seconds > 0 else None,
    }


def rounded(obj):
    if isinstance(obj, float):
        return float(f"{obj:.6g}")
    if isinstance(obj, dict):
        return {k: rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rounded(v) for v in obj]
    return obj


# --------------------------------------------------------------------------- features


def words_of(texts):
    return [WORD_RE.findall(t.lower()) for t in texts]


def char4_of(texts):
    out = []
    for t in texts:
        s = t.lower()
        out.append([s[i : i + 4] for i in range(len(s) - 3)] if len(s) >= 4 else [s])
    return out


def prehash(feature_lists):
    # Python's str hash (PYTHONHASHSEED is fixed by the parent): the cheapest way to
    # turn features into uint64 in Python.
    return [[hash(f) & MASK64 for f in fl] for fl in feature_lists]


def fingerprints_for(a, texts):
    """Fingerprints for peers that take them: the .npy input, else gaoya's of the texts."""
    if is_npy(a.input):
        return load_fingerprints(a.input, a.n), "input .npy"
    import numpy as np
    from gaoya_peer import gaoya_index_class  # lazy: gaoya_peer imports this module

    C = gaoya_index_class()
    fps = C(6, 3, "word", True, None).par_bulk_doc2signatures(texts)
    return np.array(
        fps, dtype=np.uint64
    ), "gaoya word-unigram fingerprints of the input texts (untimed)"


def texts_for(a):
    if not is_npy(a.input):
        return load_texts(a.input, a.n)
    if a.texts:
        return load_texts(a.texts, a.n)
    return None


# --------------------------------------------------------------------------- minhash-pairs


# Shingles meant to equal simhash_nb's (see README.md "minhash-pairs"): its default
# normalisation is NFKC, lowercase, punctuation and symbols to spaces, white space
# collapsed; words are runs of word characters, an n-gram's words are joined by one space.
_PUNCT_TABLE = None


def _punct_table() -> dict:
    """str.translate table: every Unicode punctuation (P*) or symbol (S*) code point,
    except the connector ``_`` (a word character for simhash_nb), to a space."""
    global _PUNCT_TABLE
    if _PUNCT_TABLE is None:
        import unicodedata

        _PUNCT_TABLE = {
            c: " "
            for c in range(0x110000)
            if unicodedata.category(chr(c))[0] in "PS" and c != 0x5F
        }
    return _PUNCT_TABLE


_WS_RE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, lowercase, punctuation/symbols to spaces, white space runs to one space."""
    import unicodedata

    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.lower().translate(_punct_table())
    return _WS_RE.sub(" ", text).strip()


def parse_shingles(spec: str) -> tuple[str, int]:
    m = re.fullmatch(r"(word|char)(\d+)", spec)
    if not m or int(m.group(2)) < 1:
        raise SystemExit(f"--shingles must look like word3 or char5, got {spec!r}")
    return m.group(1), int(m.group(2))


def shingles(text: str, kind: str, n: int) -> set:
    """The shingle set of one text (str items), as simhash_nb builds it (emulated).

    A text with fewer than ``n`` words (characters) has one shingle: all of it; an
    empty one has none.
    """
    s = normalise(text)
    if kind == "word":
        toks = WORD_RE.findall(s)
        if len(toks) <= n:
            return {" ".join(toks)} if toks else set()
        return {" ".join(toks[i : i + n]) for i in range(len(toks) - n + 1)}
    if len(s) <= n:
        return {s} if s else set()
    return {s[i : i + n] for i in range(len(s) - n + 1)}


def lsh_params(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows): datasketch's own choice for MinHashLSH(threshold, num_perm)."""
    from datasketch.lsh import _optimal_param

    return tuple(int(x) for x in _optimal_param(threshold, num_perm, 0.5, 0.5))


def pairs_from_lists(results):
    """(m, 2) int64 pairs i < j, unique, from result lists (results[q] = ids found for q)."""
    import numpy as np

    lens = np.fromiter((len(r) for r in results), dtype=np.int64, count=len(results))
    flat = np.fromiter((x for r in results for x in r), dtype=np.int64, count=int(lens.sum()))
    q = np.repeat(np.arange(len(results), dtype=np.int64), lens)
    keep = flat != q
    i, j = np.minimum(q[keep], flat[keep]), np.maximum(q[keep], flat[keep])
    packed = np.unique((i << 32) | j)
    return np.stack([packed >> 32, packed & 0xFFFFFFFF], axis=1).astype(np.int64)


def save_pairs(a, name: str, pairs) -> str:
    import numpy as np

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"{name}.npy")
    np.save(path, pairs)
    return path


# --------------------------------------------------------------------------- parquet shards
# (the ooc-pairs task: benchmarks/bench_out_of_core.py's corpus, columns id (int64), text)


def shard_files(folder: str) -> list[str]:
    """The ``*.parquet`` files of a folder, sorted (the corpus order)."""
    files = sorted(f for f in os.listdir(folder) if f.endswith(".parquet"))
    if not files:
        raise SystemExit(f"{folder}: no *.parquet shards")
    return [os.path.join(folder, f) for f in files]


def count_rows(folder: str) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in shard_files(folder))


def read_shards(folder: str, text_column: str = "text", id_column: str = "id"):
    """(ids as int64 ndarray, texts as a list of str) of every shard, in order."""
    import numpy as np
    import pyarrow.parquet as pq

    ids, texts = [], []
    for f in shard_files(folder):
        t = pq.read_table(f, columns=[id_column, text_column])
        ids.append(t.column(id_column).to_numpy().astype(np.int64))
        texts += t.column(text_column).to_pylist()
    return (np.concatenate(ids) if ids else np.empty(0, np.int64)), texts


def save_id_pairs(a, name: str, left, right) -> str:
    """Pairs of ids as ``<out>/<name>.parquet`` (columns left, right; left < right)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    lo, hi = np.minimum(left, right), np.maximum(left, right)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"{name}.parquet")
    pq.write_table(pa.table({"left": lo, "right": hi}), path)
    return path


def rayon_threads():
    v = os.environ.get("RAYON_NUM_THREADS")
    return int(v) if v else os.cpu_count()


# --------------------------------------------------------------------------- peer probing


def peer_env(name: str) -> dict:
    env = dict(os.environ)
    lib = PEERS[name]["lib"]
    parts = [os.path.join(LIB_DIR, lib)] if lib else []
    # never let another peer's `simhash` (or the repo's packages) leak in
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONHASHSEED"] = "0"
    env.setdefault("PYTHONNOUSERSITE", "1")
    return env


def probe(name: str) -> dict:
    """Check in a child that the peer imports and is the package we mean."""
    spec = PEERS[name]
    code = (
        "import importlib, json, sys\n"
        "from importlib.metadata import version\n"
        f"m = importlib.import_module({spec['module']!r})\n"
        f"assert hasattr(m, {spec['attr']!r}), 'imported ' + m.__file__ + ' lacks {spec['attr']}'\n"
        f"print(json.dumps({{'version': version({spec['dist']!r}), 'file': m.__file__}}))\n"
    )
    lib = spec["lib"]
    if spec.get("venv") and not os.path.exists(peer_python(name)):
        reason = install_failure(spec["key"]) or (
            f"not installed ({peer_python(name)} missing); run benchmarks/peers/setup.sh"
        )
        return {"status": f"unavailable: {reason}"}
    if lib and not os.path.isdir(os.path.join(LIB_DIR, lib)):
        reason = install_failure(spec["key"]) or (
            f"not installed ({os.path.join(LIB_DIR, lib)} missing); run benchmarks/peers/setup.sh"
        )
        return {"status": f"unavailable: {reason}"}
    p = subprocess.run(
        [peer_python(name), "-c", code],
        env=peer_env(name),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if p.returncode != 0:
        reason = install_failure(spec["key"])
        err = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"status": f"unavailable: {reason or 'import failed: ' + err}"}
    info = json.loads(p.stdout)
    st = {
        "status": "installed",
        "version": info["version"],
        "import": spec["module"],
        "path": info["file"],
        "kind": spec["kind"],
        "pinned": spec["pin"],
    }
    if info["version"] != spec["pin"]:
        st["warning"] = f"version {info['version']} differs from pinned {spec['pin']}"
    return st


def install_failure(key: str) -> str | None:
    """Reason setup.sh recorded for a failed install (benchmarks/.peers/failed-KEY.txt)."""
    try:
        with open(os.path.join(PEERS_DIR, f"failed-{key}.txt")) as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def numpy_version() -> str:
    try:
        import numpy as np
    except ImportError as e:
        return f"unavailable: {e}"
    return np.__version__


def write_status(path: str) -> int:
    out = {name: probe(name) for name in PEERS}
    out["_env"] = {
        "python": platform.python_version(),
        "numpy": numpy_version(),
        "venv": sys.prefix,
    }
    with open(path, "w") as fh:
        json.dump(out, fh, indent=2)
    for name in PEERS:
        st = out[name]
        extra = f" {st['version']} (import {st['import']})" if st["status"] == "installed" else ""
        print(f"  {name:15s} {st['status']}{extra}")
    return 0

