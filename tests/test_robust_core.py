"""Bad input and edge cases of the core API (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest

import simhash_nb as sh
from simhash_nb.spec import SpecMismatchError

# --- SimhashIndex without a spec ---------------------------------------------------------


def test_index_without_spec_adopts_the_first_spec(tmp_path):
    word = sh.make_spec(tokenizer="word")
    char = sh.make_spec(tokenizer="char")
    fps = sh.fingerprint(["a b c", "d e f"], spec=word)
    index = sh.SimhashIndex(k=3)
    index.add(fps[:1])  # no spec: nothing adopted yet
    assert index.spec is None
    index.add(fps[1:], spec=word)
    assert index.spec == word
    with pytest.raises(SpecMismatchError):
        index.add(fps[:1], spec=char)
    with pytest.raises(SpecMismatchError):
        index.query(fps[:1], spec=char)
    assert len(index) == 2
    index.save(tmp_path / "i.npz")
    loaded = sh.SimhashIndex.load(tmp_path / "i.npz")
    assert loaded.spec == word
    with pytest.raises(SpecMismatchError):
        loaded.add(fps[:1], spec=char)


def test_index_refuses_a_spec_of_another_width():
    index = sh.SimhashIndex(k=3)
    with pytest.raises(SpecMismatchError, match="128-bit"):
        index.add(np.zeros(1, np.uint64), spec=sh.make_spec(bits=128))
    assert index.spec is None and len(index) == 0
