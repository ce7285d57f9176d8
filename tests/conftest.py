import os
import pathlib
import signal
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from tests.early import WARM_CACHE, WARM_CACHE_HALVES, Early, cold_kernel_cache

# Numba's OpenMP threads sleep as soon as a parallel kernel is done, instead of spinning
# for the next one: two xdist workers (and the docs build beside them) each run parallel
# kernels on the same two cores, where a spinning thread only takes the core another
# process's kernel is waiting for. Measured on two cores, warm, the same hour: 158.6 s and
# 304 s of CPU against 175.8 s and 339 s. Set before any kernel starts its threads (GNU
# OpenMP reads it when it is loaded), for this process and every process it starts;
# `make test` sets it for the docs build too.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# A shell starts a background job (`make test &`, a CI step run with `&`) with SIGINT
# ignored, and every process it starts inherits that: the Ctrl-C tests' children would
# then never see the SIGINT they are sent (a test that waits for it hangs). The session
# takes Python's default handler back, so the processes it starts get SIGINT's default
# action; the tests that start a child with SIGINT ignored set that themselves.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile(
    "default",
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")


def fp_ints(fps: np.ndarray) -> list[int]:
    """Fingerprint array as Python ints (128-bit: low word first)."""
    if fps.ndim == 1:
        return [int(x) for x in fps]
    return [int(r[0]) | (int(r[1]) << 64) for r in fps]


_DASK: dict = {"cluster": None, "last": None}  # the session's cluster, its last test


@pytest.fixture(scope="session")
def dask_cluster():
    """One LocalCluster of 2 worker processes for every Dask test module, so its workers
    start and import the package once a session, not once a module. Each module connects
    its own ``client`` (the default scheduler while that module runs, closed after it);
    between them no client is the default. The tests that use it run one after another
    (:func:`pytest_collection_modifyitems`), and it is closed after the last of them
    (:func:`pytest_runtest_teardown`): its three idle processes would take about a
    seventh of a core for the rest of the session."""
    distributed = pytest.importorskip("distributed")
    if _DASK["cluster"] is None:
        _DASK["cluster"] = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
            worker_dashboard_address=None)
    return _DASK["cluster"]


def _close_dask_cluster() -> None:
    cluster, _DASK["cluster"] = _DASK["cluster"], None
    if cluster is not None:
        cluster.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """Close the Dask cluster once its last test and that module's client are done."""
    try:
        return (yield)
    finally:
        if item is _DASK["last"]:
            _close_dask_cluster()


@pytest.fixture(scope="session")
def docs_build():
    """Wait for the docs build that ``make test`` runs beside the tests, and fail with its log
    if it failed or warned. ``SIMHASH_NB_DOCS_BUILD`` names the file the build's exit status
    goes to (the log beside it, ``log``); without it (the tests run alone, or after ``make
    docs``) there is nothing to wait for."""
    status = os.environ.get("SIMHASH_NB_DOCS_BUILD")
    if not status:
        return
    status = pathlib.Path(status)
    deadline = time.monotonic() + 1800
    while not (status.exists() and status.read_text().strip()):
        assert time.monotonic() < deadline, "the docs build did not finish within 30 minutes"
        time.sleep(0.5)
    log = status.with_name("log")
    assert status.read_text().strip() == "0", \
        f"the docs build failed:\n{log.read_text(errors='replace')[-6000:]}"


def xdist_worker() -> bool:
    """Whether this process is a worker of pytest-xdist (``make test PYTEST_WORKERS=...``)."""
    return "PYTEST_XDIST_WORKER" in os.environ


# on a cold cache, the kernels compiled beside the tests: tests/early.py, WARM_CACHE
def pytest_configure(config):
    config.addinivalue_line("markers", "early(process, ...): tests.early.Early processes "
                                       "the test needs, started when collection ends")
    if not cold_kernel_cache() or xdist_worker():  # with xdist: once, by the controller
        return
    if not getattr(config.option, "numprocesses", None):
        WARM_CACHE.start()
        return
    print("A cold Numba cache: compiling the kernels (sh.prepare) before the workers start",
          file=sys.stderr, flush=True)
    for process in WARM_CACHE_HALVES:
        process.start()
    for process in WARM_CACHE_HALVES:
        process.result()


def pytest_collection_finish(session):
    """Start the early processes (tests/early.py) that the selected tests name. Not in an
    xdist worker: each collects every test, so each would start all of them; there a
    test starts its own when it asks for the result, beside the other worker's tests."""
    if xdist_worker():
        return
    for item in session.items:
        for mark in item.iter_markers("early"):
            for process in mark.args:
                process.start()


def pytest_collection_modifyitems(session, config, items):
    """With the docs build running beside the tests (``make test``), the tests that read
    what it builds run last, so that the build runs beside the others; the tests of the
    session's Dask cluster run one after another (see :func:`dask_cluster`)."""
    if os.environ.get("SIMHASH_NB_DOCS_BUILD"):
        items.sort(key=lambda item: "docs_build" in getattr(item, "fixturenames", ()))
    dask = [item for item in items if "dask_cluster" in getattr(item, "fixturenames", ())]
    for item in dask:  # with xdist (--dist loadgroup), all in one worker: one cluster
        item.add_marker(pytest.mark.xdist_group("dask_cluster"))
    if dask:  # the cluster's tests one after another, where the first of them was
        first = items.index(dask[0])
        users = set(dask)
        rest = [item for item in items if item not in users]
        items[:] = rest[:first] + dask + rest[first:]
    _DASK["last"] = dask[-1] if dask else None


def pytest_sessionfinish(session, exitstatus):
    _close_dask_cluster()
    for process in Early.started:
        process.close()
