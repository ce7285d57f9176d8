"""sh.distributed.prepare_workers: its checks, and that on a worker Dask started (which
sets MALLOC_TRIM_THRESHOLD_, so glibc maps every array of 128 KiB and more afresh) it
makes freed arrays reusable: far fewer page faults for the same allocations."""

from __future__ import annotations

import sys

import pytest

import simhash_nb as sh

distributed = pytest.importorskip("distributed")


def _faults_of_fresh_arrays(n: int = 40) -> int:
    """Minor page faults of ``n`` arrays of 2 MiB (below numpy's 4 MiB huge-page
    hint), each filled then freed, in this process. A 3 MiB array allocated after the
    first and alive throughout keeps the freed block off the top of the heap (which
    glibc trims at once under Dask's MALLOC_TRIM_THRESHOLD_); it is too large to come
    from a hole below it. (A small guard may: on CI one did, and each freed block was
    trimmed.)"""
    import resource

    import numpy as np

    a = np.ones(1 << 18)  # 2 MiB
    guard = np.ones(3 << 17)  # 3 MiB, after it
    del a
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(n):
        a = np.ones(1 << 18)
        del a
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    del guard
    return faults


def test_prepare_workers_checks_its_arguments():
    for bad in (-1, 1 << 26, 1.5, True, "32MB"):
        with pytest.raises(ValueError, match="mmap_threshold must be None or an integer"):
            sh.distributed.prepare_workers(object(), mmap_threshold=bad)
    with pytest.raises(ValueError, match="unknown path 'nope'"):
        sh.distributed.prepare_workers(object(), paths=["verified", "nope"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_prepare_workers_lets_a_worker_reuse_freed_arrays():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0",
                                  worker_dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        [before] = client.run(_faults_of_fresh_arrays).values()
        done = sh.distributed.prepare_workers(client, paths="hamming")
        [report] = done.values()
        if not report["mmap_threshold"]:
            pytest.skip("not glibc: mallopt refused")
        [after] = client.run(_faults_of_fresh_arrays).values()
    assert before >= 40 * 400  # each array mapped afresh: 512 pages a time
    assert after < 0.1 * before, (before, after)  # measured: 20.5k against 0
