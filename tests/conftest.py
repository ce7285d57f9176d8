import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from tests.early import Early

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


@pytest.fixture(scope="session")
def dask_cluster():
    """One LocalCluster of 2 worker processes for every Dask test module, so its workers
    start and import the package once a session, not once a module. Each module connects
    its own ``client`` (the default scheduler while that module runs, closed after it);
    between them no client is the default."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", worker_dashboard_address=None) as c:
        yield c


def pytest_configure(config):
    config.addinivalue_line("markers", "early(process, ...): tests.early.Early processes "
                                       "the test needs, started when collection ends")


def pytest_collection_finish(session):
    """Start the early processes (tests/early.py) that the selected tests name."""
    for item in session.items:
        for mark in item.iter_markers("early"):
            for process in mark.args:
                process.start()


def pytest_sessionfinish(session, exitstatus):
    for process in Early.started:
        process.close()
