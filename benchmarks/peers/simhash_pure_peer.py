"""simhash 2.1.2 (pure Python + numpy, 1e0n/simhash): fingerprints, SimhashIndex."""

from __future__ import annotations

import statistics
import time

from harness import (
    fingerprints_for,
    is_npy,
    maxrss_mb,
    texts_for,
    throughput,
    timed,
    utf8_len,
    words_of,
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
