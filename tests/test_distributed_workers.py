"""sh.distributed.prepare_workers: its checks, and that on a worker Dask started (which
sets MALLOC_TRIM_THRESHOLD_, so glibc maps every array of 128 KiB and more afresh) it
serves such arrays from the heap, whose freed memory is reused (the page faults it
saves are measured by benchmarks/bench_distributed_verified.py)."""

from __future__ import annotations

import sys

import pytest

import simhash_nb as sh

distributed = pytest.importorskip("distributed")


def _mapped_chunks_of_an_array() -> int:
    """How many chunks glibc maps on their own (``mallinfo2().hblks``) for a live 2 MiB
    array, in this process: 1 while its mmap threshold is the fixed 128 KiB that Dask's
    MALLOC_TRIM_THRESHOLD_ leaves, 0 once arrays of that size come from the heap (whose
    freed memory is reused; a mapped chunk is unmapped when freed and faulted in afresh
    next time: 512 page faults). Deterministic, unlike counting page faults, which
    depends on where the heap has holes (on CI a small guard array landed in one and
    every freed block was the heap's top, which glibc trims at once)."""
    import ctypes

    import numpy as np

    class Mallinfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    mallinfo2 = ctypes.CDLL(None).mallinfo2  # glibc >= 2.33
    mallinfo2.restype = Mallinfo2
    before = mallinfo2().hblks
    a = np.ones(1 << 18)  # 2 MiB, below numpy's 4 MiB huge-page hint
    mapped = mallinfo2().hblks - before
    del a
    return int(mapped)


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
        try:
            [before] = client.run(_mapped_chunks_of_an_array).values()
        except AttributeError:
            pytest.skip("no mallinfo2: not glibc >= 2.33")
        done = sh.distributed.prepare_workers(client, paths="hamming")
        [report] = done.values()
        if not report["mmap_threshold"]:
            pytest.skip("not glibc: mallopt refused")
        [after] = client.run(_mapped_chunks_of_an_array).values()
    assert (before, after) == (1, 0)
