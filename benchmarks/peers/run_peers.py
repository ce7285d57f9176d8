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

Every peer runs in its own child process (three of them install a top-level
package called ``simhash``; a child per peer also gives a clean ru_maxrss).
Each peer's entry says what its timed path includes; read README.md before
quoting ratios.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
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

TASKS = ("fingerprint-words", "fingerprint-char4", "search", "index", "minhash-pairs")
# peers each task runs by default (--peers overrides)
TASK_PEERS = {t: ("gaoya", "python-simhash", "simhash-pybind", "simhash") for t in TASKS[:4]}
TASK_PEERS["minhash-pairs"] = ("gaoya", "datasketch")

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
}

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


# --------------------------------------------------------------------------- fingerprint tasks


def gaoya_index_class():
    from gaoya.gaoya import simhash as gs  # native classes (the wrapper lacks bulk fingerprinting)

    return gs.SimHash64StringIntIndex


def fp_gaoya(texts, mode, a):
    C = gaoya_index_class()
    if mode == "words":
        idx = C(6, 3, "word", True, None)
        path = (
            "Rust, all in the timed call: Unicode lowercase, split on ASCII whitespace+ASCII "
            "punctuation (non-ASCII punctuation stays inside tokens; CJK runs are one token), "
            "SipHash-2-4 per token, bit counts; rayon-parallel over docs. Includes converting "
            "the Python list of str in and the list of int out."
        )
        ctor = (
            "SimHash64StringIntIndex(num_blocks=6, max_distance=3, analyzer='word', "
            "lowercase=True, ngram_range=None)"
        )
    else:
        idx = C(6, 3, "char", True, (4, 4))
        path = (
            "Rust, all in the timed call: Unicode lowercase, character 4-gram shingles of the "
            "raw lowercased text (whitespace and punctuation kept), SipHash-2-4, bit counts; "
            "rayon-parallel over docs."
        )
        ctor = "SimHash64StringIntIndex(6, 3, analyzer='char', lowercase=True, ngram_range=(4, 4))"
    idx.par_bulk_doc2signatures(texts[:200])  # warm-up (thread pool)
    med, times, fps = timed(lambda: idx.par_bulk_doc2signatures(texts), a.repeats)
    nb = utf8_len(texts)
    e2e = throughput(med, len(texts), nb)
    return dict(
        api=f"gaoya.gaoya.simhash.{ctor}.par_bulk_doc2signatures(texts)",
        timed_path=path,
        threads=rayon_threads(),
        n_docs=len(texts),
        bytes=nb,
        times_s=times,
        **e2e,
        core=None,
        core_note="same as e2e: the call takes raw texts",
        sample_fp=int(fps[0]) if fps else None,
    )


def fp_python_simhash(texts, mode, a):
    import simhash as ps

    feats_of = words_of if mode == "words" else char4_of
    hasher = "xxh3"
    ps.simhash_parallel(feats_of(texts[:200]), hasher)  # warm-up (rayon pool init is ~0.5 s)
    feats = feats_of(texts)
    nb = utf8_len(texts)
    core_med, core_times, fps = timed(lambda: ps.simhash_parallel(feats, hasher), a.repeats)
    e2e_med, e2e_times, _ = timed(lambda: ps.simhash_parallel(feats_of(texts), hasher), a.repeats)
    feat_desc = (
        "re.findall(r'\\w+', text.lower())"
        if mode == "words"
        else "[s[i:i+4] for i in range(len(s)-3)] with s = text.lower() (whitespace/punct kept)"
    )
    return dict(
        api=f"simhash.simhash_parallel(list_of_feature_lists, hasher='{hasher}')  [python-simhash]",
        timed_path=(
            f"e2e: Python builds features ({feat_desc}) + Rust hashes (xxh3) each feature "
            f"and folds bits. core: only simhash_parallel over the prebuilt Python lists "
            f"(includes list->Rust conversion)."
        ),
        threads=rayon_threads(),
        n_docs=len(texts),
        bytes=nb,
        times_s=e2e_times,
        **throughput(e2e_med, len(texts), nb),
        core=dict(times_s=core_times, **throughput(core_med, len(texts), nb)),
        sample_fp=int(fps[0]) if fps else None,
    )


def fp_simhash_pybind(texts, mode, a):
    import simhash as sp
    from simhash import _simhash

    feats_of = words_of if mode == "words" else char4_of
    compute = _simhash.compute
    nb = utf8_len(texts)
    hashes = prehash(feats_of(texts))
    compute(hashes[0] if hashes else [])
    core_med, core_times, fps = timed(lambda: [compute(h) for h in hashes], a.repeats)

    def e2e():
        return [compute([hash(f) & MASK64 for f in fl]) for fl in feats_of(texts)]

    e2e_med, e2e_times, _ = timed(e2e, a.repeats)

    # The library's own helper, unsigned_hash (MD5), on a capped subset.
    sub = texts[: a.slow_max_docs]
    uh = sp.unsigned_hash

    def e2e_md5():
        return [compute([uh(f.encode("utf-8")) for f in fl]) for fl in feats_of(sub)]

    md5_med, md5_times, _ = timed(e2e_md5, min(a.repeats, 3))
    feat_desc = (
        "re.findall(r'\\w+', text.lower())"
        if mode == "words"
        else "char 4-grams of text.lower() (whitespace/punct kept)"
    )
    return dict(
        api="simhash._simhash.compute(list_of_uint64)  [simhash-pybind], one call per doc",
        timed_path=(
            f"core: compute() over pre-hashed features (features = {feat_desc}, hashed "
            f"untimed with Python hash() & 2**64-1); includes list->std::vector conversion. "
            f"e2e: tokenise + hash() + compute(), all timed (fastest Python glue; the "
            f"library has no tokenizer). e2e_md5: same with the library's unsigned_hash "
            f"(MD5) helper, on the first {len(sub)} docs."
        ),
        threads=1,
        n_docs=len(texts),
        bytes=nb,
        times_s=e2e_times,
        **throughput(e2e_med, len(texts), nb),
        core=dict(times_s=core_times, **throughput(core_med, len(texts), nb)),
        e2e_md5=dict(
            n_docs=len(sub),
            bytes=utf8_len(sub),
            times_s=md5_times,
            **throughput(md5_med, len(sub), utf8_len(sub)),
        ),
        sample_fp=int(fps[0]) if fps else None,
    )


def fp_simhash_pure(texts, mode, a):
    import numpy as np
    import simhash as pure

    sub = texts[: a.slow_max_docs]
    nb = utf8_len(sub)
    reps = min(a.repeats, 3)
    Simhash = pure.Simhash
    Simhash(sub[0] if sub else "")  # warm-up
    if mode == "words":
        toks = words_of(sub)
        core_med, core_times, fps = timed(lambda: [Simhash(t).value for t in toks], reps)
        e2e_med, e2e_times, _ = timed(lambda: [Simhash(t).value for t in words_of(sub)], reps)
        path = (
            "e2e: re.findall(r'\\w+', text.lower()) + Simhash(tokens) (each token weight 1 per "
            "occurrence, MD5 per token, numpy bit sums). core: Simhash(tokens) on pre-tokenised "
            "lists."
        )
        api = "simhash.Simhash(list_of_tokens).value  [simhash 2.1.2]"
        core = dict(times_s=core_times, **throughput(core_med, len(sub), nb))
    else:
        e2e_med, e2e_times, fps = timed(lambda: [Simhash(t).value for t in sub], reps)
        path = (
            "Simhash(text): the library's own default features: text.lower(), keep only "
            "characters matching [\\w\\u4e00-\\u9fcc] (whitespace and punctuation are DROPPED "
            "and the rest concatenated), character 4-grams of that, counted (sorted+groupby) "
            "as weights, MD5 per distinct 4-gram, numpy bit sums."
        )
        api = "simhash.Simhash(text).value  [simhash 2.1.2, default features]"
        core = None
    return dict(
        api=api,
        timed_path=path,
        threads=1,
        numpy=np.__version__,
        n_docs=len(sub),
        bytes=nb,
        subset_of_input=len(sub) < len(texts),
        times_s=e2e_times,
        **throughput(e2e_med, len(sub), nb),
        core=core,
        sample_fp=int(fps[0]) if fps else None,
        note=(
            f"measured on the first {len(sub)} of {len(texts)} docs (--slow-max-docs); "
            f"fingerprinting is linear in input, so MB/s and docs/s carry over"
        )
        if len(sub) < len(texts)
        else None,
    )


# --------------------------------------------------------------------------- search / index


def fingerprints_for(a, texts):
    """Fingerprints for peers that take them: the .npy input, else gaoya's of the texts."""
    if is_npy(a.input):
        return load_fingerprints(a.input, a.n), "input .npy"
    import numpy as np

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


def search_pybind(a):
    from simhash import _simhash

    fps, src = fingerprints_for(a, texts_for(a) if not is_npy(a.input) else None)
    blocks = a.blocks or a.k + 2
    rss_pre = maxrss_mb()
    t0 = time.perf_counter()
    hs: set = set()
    for lo in range(0, len(fps), 65536):  # chunked, so no full-size temporary list
        hs.update(fps[lo : lo + 65536].tolist())
    prep_s = time.perf_counter() - t0
    rss0 = maxrss_mb()
    _simhash.find_all(set(list(hs)[:1000]), blocks, a.k)  # warm-up

    def run():
        return len(_simhash.find_all(hs, blocks, a.k))

    med, times, pairs = timed(run, a.repeats)
    return dict(
        api=(
            f"simhash._simhash.find_all(set_of_uint64, number_of_blocks={blocks}, "
            f"different_bits={a.k})"
        ),
        timed_path=(
            "find_all on a prebuilt Python set: set->std::unordered_set copy, "
            f"C({blocks},{blocks - a.k})={math.comb(blocks, blocks - a.k)} permute+sort passes, "
            "prefix-run scans, result std::unordered_set->Python set of tuples. "
            "prep_s (untimed in median_s) = ndarray.tolist() + set()."
        ),
        threads=1,
        fingerprints=src,
        n=int(len(fps)),
        n_unique=len(hs),
        times_s=times,
        median_s=med,
        prep_s=prep_s,
        median_incl_prep_s=med + prep_s,
        pairs=pairs,
        per_s=len(fps) / med if med > 0 else None,
        maxrss_delta_mb=maxrss_mb() - rss0,
        maxrss_mb=maxrss_mb(),
        input_set_maxrss_delta_mb=rss0 - rss_pre,
        memory_note=(
            "maxrss_delta_mb: growth of the child's peak RSS during find_all, on top of "
            "the Python set of ints it is given (input_set_maxrss_delta_mb)"
        ),
        note=(
            "returns (hash_a, hash_b) VALUE pairs with a < b, not document ids; input is a "
            "set, so identical fingerprints collapse: exact-duplicate documents yield no pair, "
            "and mapping back to ids needs a value->ids dict (not timed)"
        ),
    )


def _pure_objs(pure, fps):
    t0 = time.perf_counter()
    objs = [(str(i), pure.Simhash(int(v))) for i, v in enumerate(fps.tolist())]
    return objs, time.perf_counter() - t0


def search_pure(a):
    import simhash as pure

    fps, src = fingerprints_for(a, texts_for(a) if not is_npy(a.input) else None)
    n = len(fps)
    m = min(n, a.py_max_n)
    objs, wrap_s = _pure_objs(pure, fps[:m])
    rss0 = maxrss_mb()
    reps = min(a.repeats, 3)
    t_build, t_query, pairs = [], [], 0
    for _ in range(reps):
        t0 = time.perf_counter()
        idx = pure.SimhashIndex(objs, k=a.k)
        t1 = time.perf_counter()
        hits = sum(len(idx.get_near_dups(sh)) for _, sh in objs)
        t2 = time.perf_counter()
        t_build.append(t1 - t0)
        t_query.append(t2 - t1)
        pairs = (hits - m) // 2  # each object finds itself; each pair is found from both ends
        del idx
    b, q = statistics.median(t_build), statistics.median(t_query)
    scale = n / m if m else 0.0
    return dict(
        api=f"simhash.SimhashIndex(objs, k={a.k}) + get_near_dups(Simhash) for every object",
        timed_path=(
            f"build: SimhashIndex over (str(id), Simhash(int)) pairs (k+1={a.k + 1} "
            f"bucket tables keyed by {64 // (a.k + 1)}-bit slices, hex-string entries); "
            f"query: get_near_dups for each of the m objects (self-join). Wrapping ints in "
            f"Simhash objects is untimed (wrap_s)."
        ),
        threads=1,
        fingerprints=src,
        n=n,
        n_timed=m,
        capped=m < n,
        times_build_s=t_build,
        times_query_s=t_query,
        build_s=b,
        query_s=q,
        median_s=b + q,
        wrap_s=wrap_s,
        pairs_at_n_timed=pairs,
        maxrss_delta_mb=maxrss_mb() - rss0,
        extrapolated_to_n_s=((b + q) * scale) if m < n else None,
        extrapolation=(
            "LINEAR ESTIMATE, not measured: (build_s + query_s) * n / n_timed. "
            "Per-query cost grows with bucket occupancy (~n / 2**(64/(k+1)) per table), "
            "so at large n this is a lower bound"
        )
        if m < n
        else None,
    )


def search_gaoya(a):
    texts = texts_for(a)
    if texts is None:
        return dict(
            status=(
                "n/a: gaoya's Python API indexes texts/token lists only (it hashes them "
                "itself); it cannot insert precomputed fingerprints. Pass --texts FILE "
                "(or a JSON-lines --input) to time it"
            )
        )
    C = gaoya_index_class()
    maxd = a.k + 1
    blocks = a.gaoya_blocks or maxd + 2
    ids = list(range(len(texts)))
    w = C(blocks, maxd, "word", True, None)
    w.par_bulk_insert_docs(ids[:200], texts[:200])
    w.par_bulk_query(texts[:200])  # warm-up
    fp_med, _, _ = timed(
        lambda: C(6, 3, "word", True, None).par_bulk_doc2signatures(texts), a.repeats
    )
    rss0 = maxrss_mb()

    def run():
        idx = C(blocks, maxd, "word", True, None)
        idx.par_bulk_insert_docs(ids, texts)
        res = idx.par_bulk_query(texts)
        return (sum(len(r) for r in res) - len(texts)) // 2

    med, times, pairs = timed(run, a.repeats)
    return dict(
        api=(
            f"gaoya.gaoya.simhash.SimHash64StringIntIndex({blocks}, max_distance={maxd}, 'word', "
            f"lowercase=True).par_bulk_insert_docs(ids, texts) + par_bulk_query(texts)"
        ),
        timed_path=(
            "texts in: fingerprinting (as in fingerprint-words) happens inside BOTH the "
            "bulk insert and the bulk query, so each text is fingerprinted twice; "
            f"{math.comb(blocks, maxd)} hash tables; rayon-parallel. "
            "index_only_est_s = median_s - 2 * fingerprint_s (estimate)."
        ),
        threads=rayon_threads(),
        n=len(texts),
        times_s=times,
        median_s=med,
        fingerprint_s=fp_med,
        index_only_est_s=med - 2 * fp_med,
        pairs=pairs,
        maxrss_delta_mb=maxrss_mb() - rss0,
        note=(
            f"gaoya returns matches with distance STRICTLY below max_distance, so "
            f"max_distance={maxd} is passed for 'within k={a.k}' (and needs num_blocks > "
            f"max_distance); results are ids. Fingerprints are gaoya's own (SipHash, its "
            f"tokenizer), not the .npy ones, so pair counts differ from other peers"
        ),
    )


def index_pure(a):
    import simhash as pure

    fps, src = fingerprints_for(a, texts_for(a) if not is_npy(a.input) else None)
    n = len(fps)
    q = min(a.q or min(n, 10000), n)
    m = min(n, a.py_max_n)
    mq = min(q, a.py_max_q, m)
    objs, wrap_s = _pure_objs(pure, fps[:m])
    queries = [sh for _, sh in objs[:mq]]
    reps = min(a.repeats, 3)
    rss0 = maxrss_mb()
    t_add, t_query, hits = [], [], 0
    for _ in range(reps):
        idx = pure.SimhashIndex([], k=a.k)
        t0 = time.perf_counter()
        for oid, sh in objs:
            idx.add(oid, sh)
        t1 = time.perf_counter()
        hits = sum(len(idx.get_near_dups(sh)) for sh in queries)
        t2 = time.perf_counter()
        t_add.append(t1 - t0)
        t_query.append(t2 - t1)
        del idx
    add_s, query_s = statistics.median(t_add), statistics.median(t_query)
    capped = m < n or mq < q
    ext = None
    if capped:
        ext = dict(add_s=add_s * n / m, query_s=query_s * q / mq if mq else None)
        ext["total_s"] = ext["add_s"] + (ext["query_s"] or 0.0)
    return dict(
        api=(
            f"simhash.SimhashIndex([], k={a.k}); .add(id, Simhash) x N; .get_near_dups(Simhash) x Q"
        ),
        timed_path=(
            f"add: one add() per object (k+1={a.k + 1} bucket tables, hex-string entries); "
            f"query: get_near_dups() for the first Q indexed fingerprints (each finds at "
            f"least itself). Wrapping ints in Simhash objects is untimed (wrap_s)."
        ),
        threads=1,
        fingerprints=src,
        n=n,
        q=q,
        n_timed=m,
        q_timed=mq,
        capped=capped,
        times_add_s=t_add,
        times_query_s=t_query,
        add_s=add_s,
        query_s=query_s,
        median_s=add_s + query_s,
        adds_per_s=m / add_s if add_s else None,
        queries_per_s=mq / query_s if query_s else None,
        hits=hits,
        wrap_s=wrap_s,
        maxrss_delta_mb=maxrss_mb() - rss0,
        extrapolated=ext,
        extrapolation=(
            "LINEAR ESTIMATE, not measured: add_s * n / n_timed and query_s * q / "
            "q_timed; per-query cost grows with bucket occupancy (~n / 2**(64/(k+1)) "
            "per table), so at large n this is a lower bound"
        )
        if capped
        else None,
    )


def index_gaoya(a):
    texts = texts_for(a)
    if texts is None:
        return search_gaoya(a)  # same n/a reason
    C = gaoya_index_class()
    n = len(texts)
    q = min(a.q or min(n, 10000), n)
    maxd = a.k + 1
    blocks = a.gaoya_blocks or maxd + 2
    ids = list(range(n))
    qtexts = texts[:q]
    w = C(blocks, maxd, "word", True, None)
    w.par_bulk_insert_docs(ids[:200], texts[:200])
    w.par_bulk_query(texts[:200])  # warm-up
    fp = C(6, 3, "word", True, None)
    fp_add, _, _ = timed(lambda: fp.par_bulk_doc2signatures(texts), a.repeats)
    fp_q, _, _ = timed(lambda: fp.par_bulk_doc2signatures(qtexts), a.repeats)
    rss0 = maxrss_mb()
    t_add, t_query, hits = [], [], 0
    for _ in range(max(1, a.repeats)):
        idx = C(blocks, maxd, "word", True, None)
        t0 = time.perf_counter()
        idx.par_bulk_insert_docs(ids, texts)
        t1 = time.perf_counter()
        res = idx.par_bulk_query(qtexts)
        t2 = time.perf_counter()
        hits = sum(len(r) for r in res)
        t_add.append(t1 - t0)
        t_query.append(t2 - t1)
        del idx, res
    add_s, query_s = statistics.median(t_add), statistics.median(t_query)
    return dict(
        api=(
            f"gaoya.gaoya.simhash.SimHash64StringIntIndex({blocks}, max_distance={maxd}, 'word', "
            f"lowercase=True): par_bulk_insert_docs(ids, texts) then par_bulk_query(first Q texts)"
        ),
        timed_path=(
            "texts in: add_s and query_s each include fingerprinting their texts "
            "(fingerprint_add_s / fingerprint_query_s are that part alone, timed "
            f"separately); {math.comb(blocks, maxd)} hash tables; rayon-parallel."
        ),
        threads=rayon_threads(),
        n=n,
        q=q,
        times_add_s=t_add,
        times_query_s=t_query,
        add_s=add_s,
        query_s=query_s,
        median_s=add_s + query_s,
        fingerprint_add_s=fp_add,
        fingerprint_query_s=fp_q,
        index_only_est_s=add_s + query_s - fp_add - fp_q,
        adds_per_s=n / add_s if add_s else None,
        queries_per_s=q / query_s if query_s else None,
        hits=hits,
        maxrss_delta_mb=maxrss_mb() - rss0,
        note=(
            f"max_distance={maxd} because gaoya matches distance < max_distance; results are "
            f"ids; gaoya's own fingerprints (not the .npy ones)"
        ),
    )


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


def gaoya_mode(a, kind: str) -> str:
    """'own' (gaoya's Rust tokeniser) or 'python' (our shingles fed as tokens)."""
    if a.gaoya_tokens != "auto":
        return a.gaoya_tokens
    # 'own' for both: gaoya's word tokeniser is close to simhash_nb's (0.8% of texts
    # differ). Its char n-grams keep punctuation and repeated white space, but feeding it
    # our char5 shingles from Python made it 3.5x slower at 10k texts for 0.5% more
    # pairs, so its native path is the fair one to time (README.md, minhash-pairs).
    return "own"


def mh_gaoya(a):
    from gaoya.gaoya import minhash as gm

    texts = load_texts(a.input, a.n)
    kind, n = parse_shingles(a.shingles)
    bands, rows = (a.bands, a.rows) if a.bands else lsh_params(a.threshold, a.num_perm)
    mode = gaoya_mode(a, kind)
    C = gm.MinHash32StringIntIndexHashSet

    def run(docs):
        ids = list(range(len(docs)))
        if mode == "own":
            idx = C(a.threshold, bands, rows, None, kind, True, (n, n))
            idx.par_bulk_insert_docs(ids, docs)
            return pairs_from_lists(idx.par_bulk_query(docs))
        toks = [list(shingles(t, kind, n)) for t in docs]
        idx = C(a.threshold, bands, rows, None, "word", True, None)
        idx.par_bulk_insert_tokens(ids, toks)
        return pairs_from_lists(idx.par_bulk_query_tokens(toks))

    if mode == "python":
        _punct_table()  # built once (untimed)
    run(texts[:200])  # warm-up: rayon thread pool
    rss0 = maxrss_mb()
    med, times, pairs = timed(lambda: run(texts), a.repeats)
    if mode == "own":
        api = (
            f"gaoya.gaoya.minhash.MinHash32StringIntIndexHashSet(jaccard_threshold={a.threshold}, "
            f"num_bands={bands}, band_width={rows}, num_hashes=None, analyzer='{kind}', "
            f"lowercase=True, ngram_range=({n}, {n})): par_bulk_insert_docs(ids, texts), "
            f"then par_bulk_query(texts)"
        )
        shingling = f"Rust: Unicode lowercase, gaoya's own tokeniser ({kind} {n}-grams)"
    else:
        api = (
            f"gaoya.gaoya.minhash.MinHash32StringIntIndexHashSet(jaccard_threshold={a.threshold}, "
            f"num_bands={bands}, band_width={rows}, num_hashes=None): "
            f"par_bulk_insert_tokens(ids, shingle lists), then par_bulk_query_tokens(shingle lists)"
        )
        shingling = (
            f"Python: simhash_nb's {kind} {n}-gram shingles (run_peers.shingles, as for "
            "datasketch), then passed to Rust as lists of str"
        )
    return dict(
        api=api,
        gaoya_tokens=mode,
        timed_path=(
            f"all timed: shingling ({shingling}), building the index (MinHash with "
            f"{bands * rows} 32-bit hashes, {bands} bands x {rows} rows), querying every text "
            "(band look-ups, then gaoya keeps candidates whose MinHash-estimated Jaccard >= "
            "threshold), and turning the result lists into unique pairs i < j (numpy); the "
            "Rust parts rayon-parallel over documents"
        ),
        threads=rayon_threads(),
        n_docs=len(texts),
        bands=bands,
        rows=rows,
        times_s=times,
        median_s=med,
        n_pairs=int(len(pairs)),
        pairs_file=save_pairs(a, "gaoya", pairs),
        maxrss_delta_mb=maxrss_mb() - rss0,
        peak_rss_mb=maxrss_mb(),
    )


def _datasketch_run(texts, kind, n, a, bands, rows):
    """(candidate pairs, estimate-filtered pairs, seconds to candidates, seconds to filtered)."""
    import numpy as np
    from datasketch import MinHash, MinHashLSH

    t0 = time.perf_counter()
    feats = ([s.encode("utf-8") for s in shingles(t, kind, n)] for t in texts)
    mhs = list(MinHash.generator(feats, num_perm=a.num_perm))
    lsh = MinHashLSH(threshold=a.threshold, num_perm=a.num_perm, params=(bands, rows))
    with lsh.insertion_session() as session:
        for key, m in enumerate(mhs):
            session.insert(key, m, check_duplication=False)
    pairs = pairs_from_lists([lsh.query(m) for m in mhs])
    t1 = time.perf_counter()
    # the same candidates kept when their MinHash estimate reaches the threshold (gaoya does
    # this inside its query): MinHash.jaccard, vectorised over the candidate pairs
    sig = np.stack([m.hashvalues for m in mhs]) if mhs else np.empty((0, a.num_perm))
    est = np.empty(len(pairs))
    for lo in range(0, len(pairs), 1 << 16):
        p = pairs[lo : lo + (1 << 16)]
        est[lo : lo + len(p)] = (sig[p[:, 0]] == sig[p[:, 1]]).mean(axis=1)
    kept = pairs[est >= a.threshold]
    t2 = time.perf_counter()
    return pairs, kept, t1 - t0, t2 - t0


def mh_datasketch(a):
    texts = load_texts(a.input, a.n)
    kind, n = parse_shingles(a.shingles)
    bands, rows = (a.bands, a.rows) if a.bands else lsh_params(a.threshold, a.num_perm)
    _punct_table()  # built once (untimed): ~1 s over all code points
    m = min(len(texts), a.calibrate_docs)
    _, _, _, cal_s = _datasketch_run(texts[:m], kind, n, a, bands, rows)
    est_s = cal_s * len(texts) / max(m, 1)
    base = dict(
        api=(
            f"datasketch.MinHash.generator(shingle utf-8 bytes per doc, num_perm={a.num_perm}) "
            f"(MinHash.update_batch, default sha1_hash32, scheme 'affine32'); "
            f"MinHashLSH(threshold={a.threshold}, num_perm={a.num_perm}, params=({bands}, {rows}))"
            f" filled in an insertion_session, then lsh.query(m) for every doc"
        ),
        timed_path=(
            "all timed: Python shingling (normalise: NFKC, lower, punctuation/symbols to "
            f"space, white space collapsed; {kind} {n}-grams as in simhash_nb), utf-8 "
            "encoding, MinHash (sha1 per shingle, numpy permutations), LSH insert of all, "
            "query of all, result lists to unique pairs i < j. 'candidates' are the raw LSH "
            "results; 'estimate' additionally keeps pairs whose MinHash-estimated Jaccard "
            ">= threshold (MinHash.jaccard, vectorised), as gaoya's query does"
        ),
        threads=1,
        n_docs=len(texts),
        bands=bands,
        rows=rows,
        calibration=dict(n_docs=m, seconds=cal_s, est_full_s=est_s),
    )
    if est_s > a.max_est_s:
        return dict(
            base,
            status=f"skipped (too slow: est. {est_s / 60:.0f} min)",
            note=f"linear extrapolation from {m} docs ({cal_s:.2f} s); --max-est-s {a.max_est_s:g}",
        )
    rss0 = maxrss_mb()
    reps = max(1, a.repeats)
    cand_t, est_t = [], []
    for _ in range(reps):
        pairs, kept, t_c, t_e = _datasketch_run(texts, kind, n, a, bands, rows)
        cand_t.append(t_c)
        est_t.append(t_e)
    return dict(
        base,
        times_s=cand_t,
        median_s=statistics.median(cand_t),
        n_pairs=int(len(pairs)),
        pairs_file=save_pairs(a, "datasketch", pairs),
        estimate=dict(
            times_s=est_t,
            median_s=statistics.median(est_t),
            n_pairs=int(len(kept)),
            pairs_file=save_pairs(a, "datasketch-estimate", kept),
        ),
        maxrss_delta_mb=maxrss_mb() - rss0,
        peak_rss_mb=maxrss_mb(),
    )


def rayon_threads():
    v = os.environ.get("RAYON_NUM_THREADS")
    return int(v) if v else os.cpu_count()


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
    ("index", "simhash-pybind"): (
        "n/a: simhash-pybind has no incremental index (no add/query API); "
        "find_all is a batch all-pairs self-join, timed in the search task"
    ),
}


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
    if lib and not os.path.isdir(os.path.join(LIB_DIR, lib)):
        reason = install_failure(spec["key"]) or (
            f"not installed ({os.path.join(LIB_DIR, lib)} missing); run benchmarks/peers/setup.sh"
        )
        return {"status": f"unavailable: {reason}"}
    p = subprocess.run(
        [sys.executable, "-c", code],
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
    p.add_argument("--out", default=None, help="minhash-pairs: folder for <peer>.npy pairs")
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

    if a.task == "minhash-pairs":
        if not a.out:
            raise SystemExit("minhash-pairs needs --out DIR (pairs are written there)")
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
    if a.task.startswith("fingerprint") or a.task == "minhash-pairs":
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
        job = WORKERS[(a.task, name)]
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
                [sys.executable, os.path.abspath(__file__), *base, "--worker", name],
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
