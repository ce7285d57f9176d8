"""simhash-pybind (C++ port of seomoz/simhash-py): fingerprints and find_all."""

from __future__ import annotations

import math
import time

from harness import (
    MASK64,
    char4_of,
    fingerprints_for,
    is_npy,
    maxrss_mb,
    prehash,
    texts_for,
    throughput,
    timed,
    utf8_len,
    words_of,
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
