"""Workers made ready for the verified path: kernels loaded, and glibc's allocator told to
reuse freed memory (:func:`prepare_workers`)."""

from __future__ import annotations

import ctypes
import ctypes.util
import numbers
import time

from .._core.prepare import path_names, prepare

__all__ = ["prepare_workers"]

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
MMAP_THRESHOLD = 32 << 20  # glibc's largest: DEFAULT_MMAP_THRESHOLD_MAX on 64-bit


def _set_mmap_threshold(nbytes: int) -> bool:
    """``mallopt(M_MMAP_THRESHOLD, nbytes)`` in this process; False where the C library
    is not glibc (musl, macOS, Windows) or refuses the value."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, int(nbytes)))


def _prepare_worker(paths, mmap_threshold) -> dict:
    """On a worker: the allocator setting, then the kernels of ``paths``."""
    done = {"mmap_threshold": bool(mmap_threshold) and _set_mmap_threshold(mmap_threshold)}
    start = time.perf_counter()
    prepare(paths=paths)
    done["prepare_s"] = round(time.perf_counter() - start, 3)
    return done


def prepare_workers(client=None, *, paths=("verified",),
                    mmap_threshold: int | None = MMAP_THRESHOLD) -> dict:
    """Get every worker ready for the verified path: its kernels loaded (compiled into
    Numba's cache first where it is cold), and, on Linux with glibc, freed memory of up
    to ``mmap_threshold`` bytes kept for reuse.

    Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_`` set (so that they give
    memory back to the system), and setting any of glibc's malloc parameters turns off
    its adaptive ``mmap`` threshold: every array of 128 KiB or more is then mapped
    afresh and faulted in page by page, then unmapped when freed. The verified path
    allocates gigabytes of short-lived arrays (records, shingles, pairs); at 200,000
    texts on 2 workers that was 1.6-1.7 million page faults a worker over two runs, and
    over 40% of its CPU time in the kernel (about 100,000 faults after this call).
    Setting ``M_MMAP_THRESHOLD`` (``mallopt``, what ``MALLOC_MMAP_THRESHOLD_`` does at
    start-up) serves arrays below it from the heap, whose freed memory is reused (only
    what is freed at the top of the heap still goes back to the system). The setting
    lasts for the worker process: a restarted worker needs it again (or the environment
    variable; see the user guide's "Verified near-duplicates on a Dask cluster").

    Parameters
    ----------
    client : distributed.Client, optional
        Default: the current client.
    paths : str or sequence of str, default ("verified",)
        The kernels to load, as :func:`simhash_nb.prepare` names them.
    mmap_threshold : int or None, default 32 MiB
        Bytes; None or 0 leaves the allocator alone. glibc accepts at most 32 MiB.

    Returns
    -------
    dict
        For each worker's address, ``{"mmap_threshold": bool (set), "prepare_s": float}``.

    Raises
    ------
    ValueError
        If ``mmap_threshold`` is not None or an integer in ``[0, 32 MiB]``, or a path
        is unknown.

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> import simhash_nb as sh
    >>> # in-process workers share this process's allocator: leave it alone here
    >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
    ...                   dashboard_address=":0") as cluster:
    ...     with Client(cluster) as client:
    ...         done = sh.distributed.prepare_workers(client, mmap_threshold=None)
    >>> sorted(next(iter(done.values())))
    ['mmap_threshold', 'prepare_s']
    """
    if mmap_threshold is not None and (
            isinstance(mmap_threshold, bool) or not isinstance(mmap_threshold, numbers.Integral)
            or not 0 <= mmap_threshold <= MMAP_THRESHOLD):
        raise ValueError(f"mmap_threshold must be None or an integer in [0, {MMAP_THRESHOLD}] "
                         f"(bytes; glibc's largest), got {mmap_threshold!r}")
    path_names(paths)  # unknown names fail here, not on each worker
    if client is None:
        from distributed import get_client  # optional: only a cluster's client has one

        client = get_client()
    return client.run(_prepare_worker, paths, mmap_threshold)
