"""Faults: Ctrl-C during kernels, damaged files (issue 13)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

_CHILD = r"""
import sys
import simhash_nb as sh
texts = [f"short text number {i} with a few words" for i in range(1_000_000)]
sh.fingerprint(texts[:100]); sh.features(texts[:100])
for trial in range(int(sys.argv[1])):
    try:
        print("ready", flush=True)
        while True:
            sh.fingerprint(texts)
            sh.features(texts[:200_000])
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
def test_ctrl_c_during_fingerprint_raises_keyboard_interrupt():
    rng = random.Random(13)
    trials = 8
    p = subprocess.Popen([sys.executable, "-c", _CHILD, str(trials)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    try:
        for _ in range(trials):
            assert p.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.05, 1.5))
            p.send_signal(signal.SIGINT)
            line = p.stdout.readline().strip()
            if line != "interrupted":  # a SystemError or a crash instead of KeyboardInterrupt
                p.wait(timeout=60)
                pytest.fail(f"rc {p.returncode}: {p.stderr.read()[-2000:]}")
        _, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 0, err[-2000:]
