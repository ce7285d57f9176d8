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
from tests.early import WARM_CACHE_HALF_PATHS, wait_for_warm_up

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
_FIRST_CALLS = textwrap.dedent("""
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
""")


# the last lines of a fresh process: the Numba compiles of the lines before them, and the
# signatures its kernels hold (loaded from the cache or compiled): those the process used
_HELD = textwrap.dedent("""
    import sys
    from numba.core.dispatcher import Dispatcher
    held = sorted({f"{name}.{attr}{sig}" for name, module in list(sys.modules.items())
                   if name.startswith("simhash_nb") for attr, d in vars(module).items()
                   if isinstance(d, Dispatcher) for sig in d.signatures})
    print(json.dumps({"compiled": compiled, "held": held}))
""")
_PATHS_OF_FIRST_CALLS = ("fingerprint", "search", "streaming")


def _run_held(code: str) -> dict:
    got = subprocess.run([sys.executable, "-c", _COMPILES + code + _HELD],
                         capture_output=True, text=True, timeout=900, check=False)
    assert got.returncode == 0, got.stderr[-3000:]
    return json.loads(got.stdout.splitlines()[-1])


@pytest.mark.slow
def test_after_prepare_a_first_fingerprint_search_and_store_query_compile_nothing():
    """What prepare on an empty cache followed by these first calls would show (they
    compile nothing), without compiling every kernel a second time into an empty cache
    (about 50 s of CPU a run): the first calls, in a fresh process, compile nothing from
    the shared cache (every kernel they use was cached, and loads), and every signature
    they use is one that ``prepare`` of their paths uses, in another fresh process (so
    prepare, not some other caller, puts it in the cache)."""
    wait_for_warm_up()  # a fresh clone: the shared cache is being filled beside the tests
    prepared = _run_held(f"sh.prepare(paths={_PATHS_OF_FIRST_CALLS!r})\n")
    first = _run_held(_FIRST_CALLS)
    assert first["compiled"] == []
    kernels = {sig.split("(")[0] for sig in first["held"]}
    assert {"simhash_nb._kernels.bitsums.fingerprint_chunks",
            "simhash_nb._kernels.minhash_bytes.band_pairs"} <= kernels, kernels
    assert sorted(set(first["held"]) - set(prepared["held"])) == []


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


def test_the_test_runs_warm_up_halves_cover_every_path():
    first, second = (set(half) for half in WARM_CACHE_HALF_PATHS)
    assert first | second == set(PATHS) and not first & second
