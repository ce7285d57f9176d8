"""Every kernel that hands an array back to Python is called with Ctrl-C held.

Numba boxes a returned array by calling into Python (``_numba_unpickle``); a
``KeyboardInterrupt`` raised there is not handled by the compiled code, which fails with
``SystemError`` (CI saw it once, from the sketches of the verified path) or crashes the
interpreter. :func:`simhash_nb._core.parallel.deferred_interrupt` holds the signal
around such calls. A child process watches ``_numba_unpickle`` from before the first
kernel runs, goes down every road of the library that reaches a kernel (in memory,
spilled to disk, a corpus store, the CLI, jieba, a tokenizer callable, tuning), and lists
each call made in the main thread outside ``deferred_interrupt``, with the library's
frames that made it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_CHILD = r"""
import collections, json, os, sys, tempfile, threading
import numba.core.serialize as serialize

original = serialize._numba_unpickle
calls, bare = [0], collections.Counter()


def watched(*args):  # numba's C helper looks this name up on its first call
    calls[0] += 1
    if threading.current_thread() is threading.main_thread() and not held():
        frame, where = sys._getframe(1), []
        while frame is not None and len(where) < 3:
            name = frame.f_code.co_filename
            if "simhash_nb" in name:
                where.append(f"{name.rsplit('simhash_nb', 1)[1]}:{frame.f_code.co_name}")
            frame = frame.f_back
        bare[" <- ".join(where)] += 1
    return original(*args)


serialize._numba_unpickle = watched
import numpy as np
import pandas as pd
import simhash_nb as sh
from simhash_nb._core.parallel import interrupt_deferred as held
from simhash_nb._core.pipeline import MemoryBudget
from simhash_nb.cli.main import main
from simhash_nb.sklearn import SimhashVectorizer

rng = np.random.default_rng(0)
words = [f"w{i}" for i in range(300)]
texts = [" ".join(rng.choice(words, 25)) for _ in range(600)]
texts += texts[:60] + [t + " extra" for t in texts[:60]]
root = tempfile.mkdtemp()
shards = os.path.join(root, "shards")
os.mkdir(shards)
for s in range(3):
    pd.DataFrame({"text": texts[s::3], "id": np.arange(s, len(texts), 3)}).to_parquet(
        os.path.join(shards, f"{s}.parquet"))


def every_road():
    fps = sh.fingerprint(texts)
    sh.fingerprint(texts, bits=128, tokenizer="char", ngram=3)
    sh.fingerprint_features(sh.features(texts))
    sh.fingerprint(["今天天气很好我们去公园散步吧", "今天天气很好"] * 20, tokenizer="jieba")
    sh.fingerprint(texts, tokenizer=str.split)
    sh.threshold_table(fps, sh.jaccard_pairs(texts, 0.5))
    for keep in ("first", "last"):
        sh.near_duplicate_texts(texts, 0.7)
        sh.cluster_texts(texts, 0.7)
        sh.dedupe_texts(texts, 0.7, keep=keep)
        sh.dedupe(fps, k=4, keep=keep)
    sh.near_duplicates(fps, k=4)
    sh.near_duplicates(fps, k=12, recall=0.9)
    sh.near_duplicates(fps, k=12, method="brute")
    sh.pairs_within(fps, 12)
    sh.clusters(fps, 4)
    sh.jaccard_pairs(sh.features(texts, tokenizer="word", ngram=1), 0.5)
    index = sh.SimhashIndex(k=4)
    index.add(fps)
    index.query(fps[:50])
    SimhashVectorizer().fit_transform(texts)
    sh.streaming.near_duplicate_shards(shards, id_column="id")
    sh.streaming.cluster_shards(shards, id_column="id")
    sh.streaming.dedupe_shards(shards, tempfile.mkdtemp(dir=root), keep="last")
    store = sh.streaming.CorpusStore.create(tempfile.mkdtemp(dir=root) + "/store")
    store.add([os.path.join(shards, "0.parquet"), os.path.join(shards, "1.parquet")],
              id_column="id")
    store.query([os.path.join(shards, "2.parquet")], id_column="id", add=True)
    out, saved = os.path.join(root, "out.csv"), tempfile.mkdtemp(dir=root) + "/store"
    assert main(["pairs", shards, out, "--threshold", "0.7", "--save", saved]) == 0
    assert main(["pairs", shards, out, "--threshold", "0.7", "--against", saved]) == 0
    assert main(["clusters", shards, out, "--threshold", "0.7"]) == 0


every_road()  # shingles held in memory
MemoryBudget.shingle_bytes = property(lambda self: 0)  # every shingle spilled to disk,
MemoryBudget.verify_bytes = property(lambda self: 1 << 16)  # read back in small blocks
every_road()
print(json.dumps({"calls": calls[0], "bare": bare}))
"""


@pytest.mark.slow
def test_kernels_returning_arrays_hold_ctrl_c():
    env = {**os.environ, "SIMHASH_NB_PROGRESS": "0"}
    p = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                       timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["calls"] > 100  # the watch saw the kernels box their results
    assert got["bare"] == {}, "kernels boxing results with Ctrl-C not held: " + json.dumps(
        got["bare"], indent=1)
