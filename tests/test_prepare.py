"""``prepare`` compiles the kernels ahead of time: a later process compiles nothing."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

import pytest

from simhash_nb._core.prepare import PATHS, PrepareReport, prepare
from simhash_nb.cli.prepare import add_prepare_parser, cmd_prepare
from tests.early import Early

# run in a fresh process: count the Numba compiles of a first fingerprint and search
_COMPILES = textwrap.dedent("""
    import json
    from numba.core import event
    compiled = []

    class Log(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Log())
    import numpy as np
    import simhash_nb as sh
""")  # the script's last line prints the Numba compiles of the lines after this
_FIRST_CALLS = _COMPILES + textwrap.dedent("""
    texts = ["the cat sat on the mat", "the cat sat on a mat", "Crème brûlée, 中文!"]
    sh.fingerprint(texts[:2])  # ASCII texts alone: the normaliser's ASCII-only variant
    fps = sh.fingerprint(texts)
    sh.near_duplicates(fps, 3)
    sh.fingerprint(texts, tokenizer="word", bits=128)
    # a corpus store (its shingles in files): new documents against it
    import pandas as pd, tempfile
    words = [f"w{i}" for i in range(50)]
    docs = [" ".join(words[i:i + 20]) for i in range(30)]
    store = sh.CorpusStore.create(tempfile.mkdtemp() + "/store", tokenizer="word", ngram=2)
    store.add(pd.DataFrame({"text": docs}))
    pairs = store.query(pd.DataFrame({"text": [d + " x" for d in docs[:5]]}), 0.7)
    assert len(pairs) >= 5, pairs
    print(json.dumps(compiled))
""")


# prepare on an empty cache, in a fresh process started when the session's tests are
# collected (tests/early.py): its cold compile runs beside the tests before this one
_COLD_PREPARE = Early("from simhash_nb._core.prepare import prepare; "
                      "print(len(prepare(paths=('fingerprint', 'search', 'streaming'))"
                      ".kernels))",
                      cold_cache=True)


@pytest.mark.slow
@pytest.mark.early(_COLD_PREPARE)
def test_after_prepare_a_first_fingerprint_search_and_store_query_compile_nothing():
    done = _COLD_PREPARE.result()
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 0  # a cold cache: prepare compiled kernels
    env = dict(os.environ, NUMBA_CACHE_DIR=str(_COLD_PREPARE.cache))
    first = subprocess.run([sys.executable, "-c", _FIRST_CALLS], env=env, capture_output=True,
                           text=True, timeout=900, check=False)
    assert first.returncode == 0, first.stderr[-3000:]
    assert json.loads(first.stdout.splitlines()[-1]) == []


def test_unknown_path_is_refused():
    with pytest.raises(ValueError, match="unknown path 'fingerprints': choose among"):
        prepare(paths=["fingerprints"])


def test_report_says_paths_and_kernels():
    report = PrepareReport({"fingerprint": 2.0, "search": 1.5},
                           [("fingerprint", "_kernels.bitsums.fingerprint_texts", 1.9)])
    assert report.seconds == 3.5
    assert str(report).splitlines() == [
        "1 kernels compiled in 3.5 s",
        "  fingerprint     2.0 s  1 kernels",
        "  search          1.5 s  0 kernels",
    ]


def test_cli_prepare_runs_the_named_paths(capsys):
    parser = argparse.ArgumentParser(prog="simhash-nb")
    add_prepare_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["prepare", "--path", "hamming"])
    assert cmd_prepare(args) == 0
    captured = capsys.readouterr()
    assert "hamming" in captured.out and "prepare: hamming" in captured.err
    assert set(PATHS) >= {"fingerprint", "search", "verified", "streaming", "index", "windows"}


_SMALL_BRUTE = _COMPILES + textwrap.dedent("""
    fps = np.random.default_rng(0).integers(0, 2**64, (3000, 2), dtype=np.uint64)
    sh.hamming_matrix(fps)
    sh.pairs_within(fps, 30)
    sh.pairs_within(fps[:, 0].copy(), 20, b=fps[:100, 1].copy())
    print(json.dumps(compiled))
""")


def test_small_brute_joins_and_matrices_compile_no_kernel(tmp_path):
    """Up to ``config["numpy_brute_pairs"]`` pairs, the brute-force join and the distance
    matrix run in numpy: a first call on an empty cache compiles nothing (a demo's or a
    small tuning table's first run)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    got = subprocess.run([sys.executable, "-c", _SMALL_BRUTE], env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert got.returncode == 0, got.stderr[-3000:]
    assert json.loads(got.stdout.splitlines()[-1]) == []
