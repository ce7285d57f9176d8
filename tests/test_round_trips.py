"""Issue 23, point 7: round trips and types. What is unambiguous is recognised; the rest is
refused with an error that names the argument."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import simhash_nb as sh
from simhash_nb.io import fingerprints_to_arrow

TEXTS = pd.Series(["the cat sat on the mat today", "the cat sat on a mat today", None,
                   "something else entirely, about dogs", "the cat sat on the mat today!"])


def _csv_round_trip(fps: pd.Series, **read_csv) -> pd.Series:
    valid = ~fps.isna().to_numpy()
    hexed = fingerprints_to_arrow(fps.simhash.to_numpy(missing="zero"), valid, hex=True)
    buf = io.StringIO()
    pd.DataFrame({"text": TEXTS, "simhash": hexed.to_pandas()}).to_csv(buf, index=False)
    return pd.read_csv(io.StringIO(buf.getvalue()), **read_csv)["simhash"]


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("read_csv", [{}, {"engine": "pyarrow"}, {"dtype_backend": "pyarrow"},
                                      {"dtype": str}])
def test_a_hex_column_read_back_from_csv_is_fingerprints(bits, read_csv):
    fps = TEXTS.simhash.fingerprint(bits=bits)
    back = _csv_round_trip(fps, **read_csv)
    assert back.simhash.is_fingerprint and back.simhash.bits == bits
    np.testing.assert_array_equal(back.simhash.to_numpy(missing="zero"),
                                  fps.simhash.to_numpy(missing="zero"))
    k = 12 if bits == 64 else 25
    pd.testing.assert_frame_equal(back.simhash.near_duplicates(k=k),
                                  fps.simhash.near_duplicates(k=k))


def test_concat_of_different_specs_refuses():
    a = TEXTS.simhash.fingerprint()
    b = TEXTS.simhash.fingerprint(tokenizer="word")
    c = TEXTS.simhash.fingerprint(bits=128)
    for other in (b, c):
        with pytest.raises(sh.SpecMismatchError, match="cannot combine"):
            pd.concat([a, other])
        with pytest.raises(sh.SpecMismatchError, match="cannot combine"):
            pd.concat([a.to_frame("simhash"), other.to_frame("simhash")])
    both = pd.concat([a, TEXTS.simhash.fingerprint()])  # the same spec is kept
    assert both.simhash.spec == a.simhash.spec


def test_concat_with_a_frame_without_spec_drops_it_rather_than_keep_one():
    a = TEXTS.simhash.fingerprint(tokenizer="word")
    bare = pd.Series(a.array, name=a.name)  # no attrs
    assert pd.concat([a, bare]).simhash.spec is None
    assert pd.concat([bare, a]).simhash.spec is None


@pytest.mark.parametrize("dtype", [np.uint32, np.uint16, np.uint8])
def test_narrow_unsigned_arrays_are_refused_naming_the_argument(dtype):
    fps = np.arange(4, dtype=dtype)
    with pytest.raises(TypeError, match=r"^fps has dtype uint\d+; fingerprints are 64-bit"):
        sh.near_duplicates(fps, k=3)
    with pytest.raises(TypeError, match=r"^against has dtype"):
        sh.near_duplicates(np.arange(4, dtype=np.uint64), against=fps, k=3)
    with pytest.raises(TypeError, match=r"^fps has dtype"):
        sh.clusters(fps, k=3)
    name = np.dtype(dtype).name
    for series in (pd.Series(fps), pd.Series(fps, dtype=name.capitalize().replace("Ui", "UI"))):
        with pytest.raises(AttributeError, match=f"(?i){name}; fingerprints are 64-bit words"):
            series.simhash  # noqa: B018


@pytest.mark.parametrize("shape", [(50,), (50, 2)])
def test_big_endian_uint64_is_converted_with_its_values(shape):
    rng = np.random.default_rng(3)
    fps = rng.integers(0, 2**64, size=shape, dtype=np.uint64)
    fps[1] = fps[0] ^ np.uint64(5)
    k = 12 if len(shape) == 1 else 25
    want = sh.near_duplicates(fps, k=k)
    got = sh.near_duplicates(fps.astype(">u8"), k=k)
    np.testing.assert_array_equal(got.i, want.i)
    np.testing.assert_array_equal(got.j, want.j)
    np.testing.assert_array_equal(got.distance, want.distance)
    if len(shape) == 1:
        s = pd.Series(fps.astype(">u8"))
        assert s.simhash.is_fingerprint
        np.testing.assert_array_equal(s.simhash.to_numpy(), fps)
