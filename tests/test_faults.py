"""Faults: Ctrl-C during kernels, damaged files (issue 13)."""

from __future__ import annotations

import importlib
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time

import numba
import numpy as np
import pytest

_CHILD = r"""
import sys
import numpy as np
import simhash_nb as sh
if sys.argv[2] == "text":
    texts = [f"short text number {i} with a few words" for i in range(1_000_000)]
    sh.fingerprint(texts[:100]); sh.features(texts[:100])

    def work():
        sh.fingerprint(texts)
        sh.features(texts[:200_000])
else:
    fps = np.random.default_rng(0).integers(0, 2**64, 200_000, dtype=np.uint64)
    index = sh.SimhashIndex(k=3)
    index.add(fps)

    def work():
        index.query(fps[:20_000])
        sh.pairs_within(fps[:2000], 12)
        sh.near_duplicates(fps[:50_000], 12)
        sh.near_duplicates(fps, 12, recall=0.9)
        sh.clusters(fps, 3)
for trial in range(int(sys.argv[1])):
    try:
        print("ready", flush=True)
        while True:
            work()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


def _lines(p: subprocess.Popen) -> queue.Queue:
    """The child's lines of output, stripped, as a thread reads them (no line is left
    unseen in a buffer, as it could be behind ``select`` when two come at once)."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in p.stdout:
            lines.put(line.strip())

    threading.Thread(target=read, daemon=True).start()
    return lines


def _line(lines: queue.Queue, seconds: float) -> str | None:
    """The next line, or None if none comes within ``seconds``."""
    try:
        return lines.get(timeout=seconds)
    except queue.Empty:
        return None


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("work", ["text", "search"])
def test_ctrl_c_during_kernels_raises_keyboard_interrupt(work):
    rng = random.Random(13)
    trials = 8
    p = subprocess.Popen([sys.executable, "-c", _CHILD, str(trials), work],
                         stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    lines = _lines(p)
    try:
        for trial in range(trials):
            assert _line(lines, 120) == "ready"
            time.sleep(rng.uniform(0.05, 1.5))
            p.send_signal(signal.SIGINT)
            line = _line(lines, 30)
            assert line is not None, f"trial {trial}: no KeyboardInterrupt within 30 s"
            if line != "interrupted":  # a SystemError or a crash instead of KeyboardInterrupt
                p.wait(timeout=60)
                pytest.fail(f"rc {p.returncode}: {p.stderr.read()[-2000:]}")
        p.wait(timeout=60)
        err = p.stderr.read()
    finally:
        p.kill()
    assert p.returncode == 0, err[-2000:]


def _same(a, b) -> bool:
    return (a.k == b.k and a.bits == b.bits and a.spec == b.spec and a.blocks == b.blocks
            and a.ids.tolist() == b.ids.tolist()
            and np.array_equal(a.fingerprints, b.fingerprints)
            and a._next_id == b._next_id)


@pytest.mark.parametrize("bits", [64, 128])
def test_every_one_byte_flip_of_a_saved_index_fails_cleanly_or_changes_nothing(tmp_path, bits):
    import simhash_nb as sh

    rng = np.random.default_rng(bits)
    index = sh.SimhashIndex(k=3, spec=sh.FingerprintSpec.from_options(bits=bits))
    words = rng.integers(0, 2**64, (12, bits // 64), dtype=np.uint64)
    index.add(words[:, 0] if bits == 64 else words, ids=rng.permutation(100)[:12])
    path = tmp_path / "index.npz"
    index.save(path)
    data = path.read_bytes()
    flips = [(pos, 0xFF) for pos in range(len(data))]
    flips += [(int(p), int(x)) for p, x in zip(rng.integers(0, len(data), 300),
                                               rng.integers(1, 255, 300), strict=True)]
    damaged = tmp_path / "damaged.npz"
    loaded_same = 0
    for pos, x in flips:
        b = bytearray(data)
        b[pos] ^= x
        damaged.write_bytes(bytes(b))
        try:
            got = sh.SimhashIndex.load(damaged)
        except ValueError as exc:
            msg = str(exc)
            assert "damaged.npz" in msg, (pos, x, msg)
            assert "pickle=" not in msg and "pickle.load" not in msg, (pos, x, msg)
            continue
        assert _same(got, index), (pos, x)  # a flip in a field nobody reads
        loaded_same += 1
    assert loaded_same < len(flips) // 2


def test_loading_other_files_never_suggests_unpickling(tmp_path):
    import pickle

    import simhash_nb as sh

    cases = {
        "text.npz": b"not a zip file at all",
        "pickle.npz": pickle.dumps({"a": 1}),
        "empty.npz": b"",
    }
    obj = tmp_path / "object.npz"
    with open(obj, "wb") as f:
        np.savez(f, header=np.array([{"x": 1}], dtype=object))
    for name, blob in cases.items():
        (tmp_path / name).write_bytes(blob)
    np.save(tmp_path / "plain.npy", np.arange(3))
    for name in [*cases, "object.npz", "plain.npy"]:
        with pytest.raises(ValueError, match="cannot read a SimhashIndex") as info:
            sh.SimhashIndex.load(tmp_path / name)
        assert "allow_pickle" not in str(info.value) and "pickle.load" not in str(info.value)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="reads a dispatcher's on-disk cache: no "
                    "dispatchers under NUMBA_DISABLE_JIT")
def test_cold_numba_cache_is_noted_once_on_a_terminal(tmp_path, monkeypatch, capsys):
    from simhash_nb import _kernels
    from simhash_nb._kernels import cache
    cli = importlib.import_module("simhash_nb.cli.main")

    assert isinstance(_kernels.cache_is_cold(), bool)
    index_path = cache.index_path
    monkeypatch.setattr(cache, "index_path", lambda kernel: str(tmp_path / "absent.nbi"))
    assert _kernels.cache_is_cold()
    monkeypatch.setattr(cli.sys.stderr, "isatty", lambda: True, raising=False)
    cli._note_cold_cache()
    assert capsys.readouterr().err.count("compiling the Numba kernels") == 1
    monkeypatch.setattr(cache, "index_path", index_path)
    cli._note_cold_cache()
    if not _kernels.cache_is_cold():
        assert capsys.readouterr().err == ""


def test_cache_counts_as_warm_once_fingerprints_are_cached(tmp_path, monkeypatch):
    """Small searches never compile the table kernels: their absence is no first run."""
    import simhash_nb as sh
    from simhash_nb import _kernels
    from simhash_nb._kernels import cache, tables

    sh.fingerprint(["a first text", "and a second one"])
    index_path = cache.index_path
    monkeypatch.setattr(cache, "index_path", lambda kernel: str(tmp_path / "absent.nbi")
                        if kernel is tables.search_tables else index_path(kernel))
    assert not _kernels.cache_is_cold()
