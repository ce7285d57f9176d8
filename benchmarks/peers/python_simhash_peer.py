"""python-simhash (Rust, pyo3 + rayon): fingerprints only (no index)."""

from __future__ import annotations

from harness import (
    char4_of,
    rayon_threads,
    throughput,
    timed,
    utf8_len,
    words_of,
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
