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


# --- bits must be the integer 64 or 128 --------------------------------------------------


@pytest.mark.parametrize("bad", [64.0, 128.0, True, "64"])
def test_bits_must_be_an_int(bad):
    with pytest.raises(TypeError, match="bits"):
        sh.make_spec(bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.FingerprintSpec(bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.fingerprint(["abc"], bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.fingerprint_features([np.array([1], np.uint64)], bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.window_fingerprints(["a b c d"], window=2, bits=bad)
    with pytest.raises(TypeError, match="bits"):
        sh.SimhashIndex(k=3, bits=bad)


def test_bits_as_numpy_int_is_stored_as_int():
    spec = sh.make_spec(bits=np.int64(128))
    assert type(spec.bits) is int and '"bits":128' in spec.to_json()
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        sh.make_spec(bits=32)


def test_bits_float_refused_by_the_faces():
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match="bits"):
        pd.Series(["abc"]).simhash.fingerprint(bits=64.0)
    pytest.importorskip("sklearn")
    from simhash_nb.sklearn import SimhashVectorizer

    with pytest.raises(TypeError, match="bits"):
        SimhashVectorizer(bits=64.0).fit_transform(["abc def"])
