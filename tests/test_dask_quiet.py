"""A basic Dask run logs no line for each P2P shuffle that starts and ends normally
(``distributed.shuffle._scheduler_plugin``: "Shuffle ... initialized by task ...",
"Shuffle ... deactivated due to stimulus ..."); ``sh.distributed`` filters those two."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

import simhash_nb as sh

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

LOGGER = "distributed.shuffle._scheduler_plugin"


def _record(msg, *args):
    return logging.LogRecord(LOGGER, logging.WARNING, __file__, 1, msg, args, None)


def test_only_the_two_shuffle_lines_are_dropped():
    sh.distributed  # noqa: B018 (loads the module, which installs the filter)
    logger = logging.getLogger(LOGGER)
    assert logger.filter(_record("Shuffle %s initialized by task %r executed on worker %s",
                                 "abc", ("shuffle-transfer-abc", 0), "inproc://w")) is False
    assert logger.filter(_record("Shuffle %s deactivated due to stimulus '%s'",
                                 "abc", "task-finished-1")) is False
    # anything else still shows: a restart, a failed broadcast
    assert logger.filter(_record("Shuffle %s restarted due to stimulus '%s", "abc", "x"))
    assert logger.filter(_record("Failure during broadcast of %s, retrying.", "abc"))
    sh.distributed._quiet_shuffles()  # installed once, however often it is called
    names = [type(f).__name__ for f in logger.filters]
    assert names.count("_QuietShuffles") == 1


def test_basic_run_logs_no_shuffle_lines(caplog):
    fps = np.random.default_rng(0).integers(0, 2**64, 400, dtype=np.uint64)
    fps[200:210] = fps[:10]  # some pairs
    ddf = dd.from_pandas(pd.DataFrame({"fp": fps}), npartitions=2)
    # distributed's loggers do not propagate to the root logger: listen on this one
    logger = logging.getLogger(LOGGER)
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger=LOGGER), \
                distributed.LocalCluster(n_workers=1, processes=False,
                                         dashboard_address=":0") as cluster, \
                distributed.Client(cluster):
            pairs = sh.distributed.near_duplicates(ddf["fp"], k=3).compute()
    finally:
        logger.removeHandler(caplog.handler)
    assert len(pairs) >= 10
    shuffles = [r.getMessage() for r in caplog.records
                if r.name == LOGGER and r.getMessage().startswith("Shuffle ")]
    assert shuffles == []
