import os
import platform
import subprocess
import sys

import numba
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from tests import naive
from tests.conftest import fp_ints
from tests.early import Early

# Letters, digits, punctuation, spaces, CJK, kana, combining marks, emoji, 4-byte CJK.
ALPHABET = list("abcXYZ019 ,.!-_\t\n") + list("中国人民的é")
ALPHABET += ["\u0301", "\u3042", "😀", "\U00020000"]
texts_st = st.lists(st.text(alphabet=ALPHABET, max_size=60), min_size=0, max_size=12)


def _naive_fps(texts, tokenizer, n, bits, weights):
    return [naive.fingerprint_text(t, tokenizer, n, bits, weights) for t in texts]


@pytest.mark.parametrize("tokenizer", ["char", "word"])
@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("weights", ["tf", "binary"])
@given(texts=texts_st, n=st.integers(1, 5))
def test_matches_reference(texts, n, tokenizer, bits, weights):
    fps = sh.fingerprint(texts, tokenizer=tokenizer, ngram=n, bits=bits, weights=weights,
                         normalize=())
    assert fp_ints(fps) == _naive_fps(texts, tokenizer, n, bits, weights)
    fb = sh.features(texts, tokenizer=tokenizer, ngram=n, weights=weights, normalize=())
    assert fp_ints(sh.fingerprint_features(fb, bits=bits)) == fp_ints(fps)


@given(texts=texts_st, n=st.integers(1, 4), tokenizer=st.sampled_from(["char", "word"]))
def test_features_are_the_distinct_shingle_hashes_with_counts(texts, n, tokenizer):
    fb = sh.features(texts, tokenizer=tokenizer, ngram=n, weights="tf", normalize=())
    for i, t in enumerate(texts):
        hs = naive.feature_hashes(t, tokenizer, n)
        lo, hi = fb.indptr[i], fb.indptr[i + 1]
        want = sorted((h, float(hs.count(h))) for h in set(hs))
        got = list(zip(fb.hashes[lo:hi].tolist(), fb.weights[lo:hi].tolist(), strict=True))
        assert got == want


@given(st.lists(st.tuples(st.lists(st.integers(0, 2**64 - 1), max_size=20),
                          st.floats(0, 1e6)), max_size=8),
       st.sampled_from([64, 128]))
def test_weighted_features_match_reference(docs, bits):
    rng = np.random.default_rng(len(docs))
    hashes = [np.array(h, dtype=np.uint64) for h, _ in docs]
    weights = [rng.random(len(h)) * scale for h, scale in docs]
    fps = sh.fingerprint_features(list(zip(hashes, weights, strict=True)), bits=bits)
    assert fp_ints(fps) == [naive.simhash(h.tolist(), w.tolist(), bits)
                            for h, w in zip(hashes, weights, strict=True)]


@given(st.lists(st.lists(st.tuples(st.integers(0, 2**64 - 1),
                                   st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, 3.0, 1e-300, 7e12])),
                         max_size=12), max_size=6),
       st.sampled_from([64, 128]), st.sampled_from([np.float32, np.float64]))
def test_weighted_sums_match_reference_with_ties_and_float32(docs, bits, dtype):
    # Few distinct weights make exact cancellations (sum == 0 gives bit 0) common;
    # float32 weights are widened to float64 before they are added, in feature order.
    fb = sh.FeatureBatch.from_lists([[h for h, _ in d] for d in docs],
                                    [[w for _, w in d] for d in docs])
    fb = sh.FeatureBatch(fb.indptr, fb.hashes, fb.weights.astype(dtype))
    want = [naive.simhash([h for h, _ in d], [float(dtype(w)) for _, w in d], bits) for d in docs]
    assert fp_ints(sh.fingerprint_features(fb, bits=bits)) == want


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unit_weight_documents_take_the_count_path_with_the_same_bits(dtype):
    # A CSR document whose weights are all 1 is counted in integers; others are summed in
    # float64. Both must agree with the reference, also when the two kinds are mixed.
    rng = np.random.default_rng(5)
    docs = [rng.integers(0, 2**64 - 1, m, dtype=np.uint64, endpoint=True)
            for m in (0, 1, 2, 3, 64, 65, 300)]
    weights = [np.ones(d.shape[0]) for d in docs]
    weights[3] = weights[3] * 2.0  # all 2: float path, same bits as all 1
    weights[4][7] = 1.5  # mixed: float path
    fb = sh.FeatureBatch.from_lists(docs, weights)
    fb = sh.FeatureBatch(fb.indptr, fb.hashes, fb.weights.astype(dtype))
    for bits in (64, 128):
        want = [naive.simhash(d.tolist(), w.tolist(), bits)
                for d, w in zip(docs, weights, strict=True)]
        assert fp_ints(sh.fingerprint_features(fb, bits=bits)) == want
        unit = [naive.simhash(d.tolist(), None, bits) for d in docs]
        assert want[3] == unit[3]


def test_documents_of_2_gib_are_refused(monkeypatch):
    from simhash_nb._kernels import bitsums

    monkeypatch.setattr(bitsums, "MAX_UNIT_FEATURES", 10)  # the Python-side check only
    with pytest.raises(ValueError, match=r"texts\[1\] has 20 bytes"):
        sh.fingerprint(["short", "x" * 20])
    with pytest.raises(ValueError, match=r"texts\[0\] has 11 bytes"):
        sh.window_fingerprints(["x" * 11], window=3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1e-9])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_kernel_refuses_bad_weights_naming_the_first(bad, dtype, n_jobs):
    # A FeatureBatch built directly is checked by the fingerprint kernel as it reads the
    # weights; the error names the first bad feature and its document, whatever the chunking.
    rng = np.random.default_rng(0)
    indptr = np.arange(0, 3001 * 4, 4, dtype=np.int64)
    hashes = rng.integers(0, 2**63, indptr[-1], dtype=np.uint64)
    weights = rng.random(indptr[-1]).astype(dtype)
    weights[[2222 * 4 + 3, 2900 * 4 + 1]] = bad
    fb = sh.FeatureBatch(indptr, hashes, weights)
    for bits in (64, 128):
        with pytest.raises(ValueError, match=r"feature 8891 \(document 2222\)"):
            sh.fingerprint_features(fb, bits=bits, n_jobs=n_jobs)
    weights[[2222 * 4 + 3, 2900 * 4 + 1]] = 0.0
    assert sh.fingerprint_features(fb, n_jobs=n_jobs).shape == (3000,)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="checks Numba typing errors: no "
                    "typing under NUMBA_DISABLE_JIT (tests/test_jitless.py checks the twins)")
def test_signed_bit_sums_type_checks():
    from numba import njit
    from numba.core.errors import TypingError

    from simhash_nb._kernels.signsums import signed_bit_sums

    @njit
    def call(h, w):
        return signed_bit_sums(h, w, 0, h.shape[0], False)

    h = np.array([3, 5], dtype=np.uint64)
    assert call(h, np.array([1.0, 2.0])) == (5, True)
    assert call(h, np.array([1.0, -2.0], np.float32))[1] is False
    with pytest.raises(TypingError, match="uint64"):
        call(h.astype(np.int64), np.ones(2))
    with pytest.raises(TypingError, match="C-contiguous"):
        call(h, np.ones(4)[::2])


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="checks Numba typing errors: no "
                    "typing under NUMBA_DISABLE_JIT (tests/test_jitless.py checks the twins)")
def test_bit_majority_type_checks_and_ties():
    from numba import njit
    from numba.core.errors import TypingError

    from simhash_nb._kernels.signsums import bit_majority

    @njit
    def call(h):
        return bit_majority(h, 0, h.shape[0], False)

    assert call(np.array([3, 5, 1], dtype=np.uint64)) == 1  # bit 0: 3 of 3; bits 1, 2: 1 of 3
    assert call(np.array([3, 5], dtype=np.uint64)) == 1  # bits 1 and 2 tie: 0
    assert call(np.empty(0, dtype=np.uint64)) == 0
    with pytest.raises(TypingError, match="uint64"):
        call(np.array([1], dtype=np.int64))


def test_long_documents_count_exactly():
    # unit weights are counted in int32 lanes: go past 8- and 16-bit counter limits
    rng = np.random.default_rng(3)
    for m in (126, 127, 128, 254, 255, 256, 1000, 5000, 70_000):
        h = rng.integers(0, 2**64 - 1, m, dtype=np.uint64, endpoint=True)
        text_fp = sh.fingerprint_features([h], bits=128)
        assert fp_ints(text_fp) == [naive.simhash(h.tolist(), None, 128)]
    text = " ".join(f"w{i % 300}" for i in range(3000))
    assert fp_ints(sh.fingerprint([text], tokenizer="word", normalize=())) == [
        naive.fingerprint_text(text, "word", 1)
    ]


# Pinned values: these must never change within FORMAT_VERSION 1.
_V1 = {"weights": "tf", "normalize": ("nfkc", "lower")}  # explicit: defaults may change
GOLDEN = [
    ("The quick brown fox jumps over the lazy dog.", {"ngram": 4, **_V1}),
    ("The quick brown fox jumps over the lazy dog.", {"tokenizer": "word", **_V1}),
    ("The quick brown fox jumps over the lazy dog.", {"tokenizer": "word", "ngram": 3, **_V1}),
    ("中华人民共和国成立了", {"tokenizer": "word", "ngram": 2, **_V1}),
    ("Ｈｅｌｌｏ　Ｗｏｒｌｄ", {"tokenizer": "char", "ngram": 3, **_V1}),
    ("simhash", {"bits": 128, "seed": 42, "ngram": 4, **_V1}),
    ("The quick brown fox jumps over the lazy dog.", {}),  # today's defaults
    ("中华人民共和国成立了！", {"spec": sh.FingerprintSpec.for_language("zh", bits=128)}),
]


def test_golden_fingerprints():
    got = [fp_ints(sh.fingerprint([t], **kw))[0] for t, kw in GOLDEN]
    assert got == PINNED


PINNED = [
    418565937545014706,
    6429736338967749806,
    4174202982523779191,
    10782020948152097844,
    14879046190107959586,
    48030696880953776898338537672659755792,
    11385820363632912031,
    64903656118670853853829554924004301003,
]


def test_same_fingerprints_in_processes_with_other_hash_seeds():
    code = (
        "import simhash_nb as sh;"
        "print(sh.fingerprint(['near duplicate text', '重复的文本'], tokenizer='word').tolist())"
    )
    outs = set()
    for seed in ("0", "123", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout
        outs.add(out)
    assert len(outs) == 1


_PORTABLE = """
import json, sys
import numpy as np
import simhash_nb as sh
rng = np.random.default_rng(11)
docs = [rng.integers(0, 2**64 - 1, m, dtype=np.uint64, endpoint=True) for m in (0, 1, 7, 300)]
real = [rng.random(d.shape[0]) * 3 for d in docs]
out = {"texts": sh.fingerprint(["near duplicate text", "重复的文本", ""], bits=128).tolist(),
       "unit": sh.fingerprint_features(docs, bits=128).tolist(),
       "real": sh.fingerprint_features(list(zip(docs, real)), bits=128).tolist()}
json.dump(out, sys.stdout)
"""


_X86 = platform.machine().lower() in ("x86_64", "amd64")


def _other_cpus() -> list[str]:
    """The CPUs to compile for besides this one: SSE2 only (``x86-64``) always, and AVX2
    (``haswell``) where this one has AVX-512. On an AVX2 machine a haswell build lowers
    the vector IR to the same instructions as the native one, and a cold compile of the
    fingerprint path costs about 7 s of CPU."""
    from llvmlite import binding

    features = binding.get_host_cpu_features()
    return ["x86-64"] + (["haswell"] if features.get("avx512f", False) else [])


_OTHER_CPUS = _other_cpus() if _X86 else []
# compiled for each other CPU with an empty cache each: started when the session's tests are
# collected (tests/early.py), so the cold compiles run beside the tests before these
_OTHER_CPU_RUNS = {cpu: Early(_PORTABLE, env={"NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": ""},
                              cold_cache=True)
                   for cpu in _OTHER_CPUS}


@pytest.fixture(scope="module")
def portable_runs() -> dict:
    """The output of ``_PORTABLE`` compiled for this machine and for each other CPU."""
    if not _X86:
        pytest.skip("x86 CPU names")
    native = subprocess.run([sys.executable, "-c", _PORTABLE], capture_output=True, text=True)
    assert native.returncode == 0, native.stderr
    runs = {"native": native.stdout}
    for cpu, process in _OTHER_CPU_RUNS.items():
        done = process.result()
        assert done.returncode == 0, done.stderr
        runs[cpu] = done.stdout
    return runs


@pytest.mark.early(*_OTHER_CPU_RUNS.values())
@pytest.mark.parametrize("cpu", _OTHER_CPUS)
def test_same_fingerprints_when_compiled_for_other_cpus(cpu, portable_runs):
    # The bit-sum kernels are hand-written LLVM vector IR; LLVM lowers it differently for
    # SSE2-only, AVX2 and AVX-512 machines. All of them must give the same bits.
    assert portable_runs["native"] == portable_runs[cpu]
    assert '"real": [[' in portable_runs["native"]


# --- big batches go through in pieces -----------------------------------------------

PIECE_TEXTS = [f"text number {i} " * (i % 7) + ("中文" if i % 5 == 0 else "") for i in range(3000)]
PIECE_TEXTS[17] = None
PIECE_TEXTS[2500] = ""


@pytest.mark.parametrize("make", [
    list, tuple, lambda t: np.array(t, dtype=object), lambda t: pd.Series(t, dtype=object),
    lambda t: pd.Series(t, dtype="string[pyarrow]"), lambda t: pa.array(t),
    lambda t: pa.chunked_array([t[:1234], t[1234:]]),
])
def test_pieces_give_the_same_fingerprints(make, monkeypatch):
    whole = sh.fingerprint(make(PIECE_TEXTS), bits=128, missing="zero")
    monkeypatch.setitem(sh.config, "text_slice_bytes", 2000)  # ~100 pieces
    pieces = sh.fingerprint(make(PIECE_TEXTS), bits=128, missing="zero")
    np.testing.assert_array_equal(pieces, whole)
    assert pieces.shape == (3000, 2) and pieces[17].tolist() == [0, 0]


def test_text_slices_cover_the_batch_in_order():
    from simhash_nb._core.text import text_slices

    for make in (list, pa.array, lambda t: pd.Series(t, dtype="string[pyarrow]")):
        got = list(text_slices(make(PIECE_TEXTS), 5000))
        assert len(got) >= 3  # Python sequences: at least 1,024 texts a piece
        starts = np.cumsum([0] + [len(p) for _, p in got[:-1]]).tolist()
        assert [start for start, _ in got] == starts
        flat = [x for _, p in got for x in (p.to_pylist() if hasattr(p, "to_pylist") else list(p))]
        assert [None if x is None or x is pd.NA else x for x in flat] == PIECE_TEXTS
    assert [s for s, _ in text_slices([], 10)] == [0]
    assert len(list(text_slices(pa.array(["ab", "cd", "ef"]), 0))) == 3  # a bad setting: 1 byte
    it = iter(["a", "b"])
    assert list(text_slices(it, 1)) == [(0, it)]  # an iterator is one piece


def test_errors_in_later_pieces_name_the_global_position(monkeypatch):
    monkeypatch.setitem(sh.config, "text_slice_bytes", 2000)
    texts = list(PIECE_TEXTS)
    texts[17] = "fine"
    texts[2222] = 42
    with pytest.raises(TypeError, match=r"texts\[2222\] is a int"):
        sh.fingerprint(texts)
    texts[2222] = b"\xff bad"
    with pytest.raises(ValueError, match=r"texts\[2222\] is not valid UTF-8"):
        sh.fingerprint(texts)
    texts[2222] = None
    with pytest.raises(ValueError, match=r"texts\[2222\] is missing"):
        sh.fingerprint(texts)


# --- inputs ---------------------------------------------------------------------------

TEXTS = ["Near-duplicate detection", "near duplicate detection!", "", "中文 text", "x"]


@pytest.mark.parametrize(
    "make",
    [
        list,
        tuple,
        lambda t: np.array(t, dtype=object),
        lambda t: np.array(t),
        lambda t: pd.Series(t, dtype=object),
        lambda t: pd.Series(t, dtype="string"),
        lambda t: pd.Series(t, dtype="string[pyarrow]"),
        lambda t: pd.Series(t, index=list("abcde"), dtype="str"),
        pa.array,
        lambda t: pa.chunked_array([t[:2], t[2:]]),
        lambda t: pa.array(t, pa.string_view()),
        lambda t: pa.array(t).dictionary_encode(),
        lambda t: [s.encode() for s in t],
        lambda t: iter(t),
    ],
)
def test_every_input_container_gives_the_same_fingerprints(make):
    want = sh.fingerprint(list(TEXTS))
    np.testing.assert_array_equal(sh.fingerprint(make(TEXTS)), want)


def test_sliced_arrow_array_with_offset():
    arr = pa.array(["zero", "one", "two", "three"])
    np.testing.assert_array_equal(sh.fingerprint(arr.slice(1, 2)), sh.fingerprint(["one", "two"]))


def test_empty_batch_and_empty_texts():
    assert sh.fingerprint([]).shape == (0,)
    assert sh.fingerprint([], bits=128).shape == (0, 2)
    fps = sh.fingerprint(["", "   ", "!!!"], tokenizer="word")
    assert fps.tolist() == [0, 0, 0]  # no features: fingerprint 0, not a shared non-zero value


def test_short_texts_still_get_a_full_fingerprint():
    fps = sh.fingerprint(["a", "ab", "abc"], ngram=4)
    assert len(set(fps.tolist())) == 3 and 0 not in fps.tolist()
    assert sh.fingerprint(["hello"], tokenizer="word", ngram=3)[0] != 0


def test_normalisation_nfkc_and_lowercase():
    a, b = sh.fingerprint(["ＨＥＬＬＯ　Ｗｏｒｌｄ", "hello world"])
    assert a == b
    a, b = sh.fingerprint(["ＨＥＬＬＯ", "hello"], normalize=())
    assert a != b


def test_similar_texts_are_closer_than_unrelated_ones():
    fps = sh.fingerprint([
        "the quick brown fox jumps over the lazy dog near the river bank today",
        "the quick brown fox jumped over the lazy dog near the river bank today",
        "completely unrelated sentence about stock markets and interest rates",
    ])
    assert sh.hamming(fps[0], fps[1]) < sh.hamming(fps[0], fps[2])


def test_huge_document():
    big = ("lorem ipsum dolor sit amet " * 400_000)  # ~10.8 MB
    fps = sh.fingerprint([big, "x"], tokenizer="word")
    # tf weights over a repeated text: the same proportions as one copy
    assert fps[0] == sh.fingerprint(["lorem ipsum dolor sit amet"], tokenizer="word")[0] != 0
    one = sh.fingerprint(["lorem ipsum dolor sit amet"], tokenizer="word", weights="binary")[0]
    assert sh.fingerprint([big], tokenizer="word", weights="binary")[0] == one


def test_n_jobs_does_not_change_results():
    texts = [f"document number {i} with some words" for i in range(3000)]
    np.testing.assert_array_equal(sh.fingerprint(texts, n_jobs=1), sh.fingerprint(texts, n_jobs=-1))


# --- bad input ------------------------------------------------------------------------


def test_missing_values_raise_with_position_or_become_zero():
    with pytest.raises(ValueError, match=r"texts\[1\] is missing"):
        sh.fingerprint(["a", None, "b"])
    with pytest.raises(ValueError, match=r"texts\[2\] is missing"):
        sh.fingerprint(pd.Series(["a", "b", np.nan]))
    fps = sh.fingerprint(["a", None, float("nan"), pd.NA], missing="zero")
    assert fps[1:].tolist() == [0, 0, 0] and fps[0] != 0
    with pytest.raises(ValueError, match="missing must be"):
        sh.fingerprint(["a"], missing="drop")


@pytest.mark.parametrize(
    "bad, pos", [(["a", 3, "b"], 1), (["a", "b", 2.5], 2), ([b"ok", "x", ["l"]], 2)]
)
def test_non_strings_are_refused_with_position(bad, pos):
    with pytest.raises(TypeError, match=rf"texts\[{pos}\]"):
        sh.fingerprint(bad)


def test_invalid_utf8_is_refused_with_position():
    with pytest.raises(ValueError, match=r"texts\[1\] is not valid UTF-8"):
        sh.fingerprint([b"fine", b"\xff\xfe bad", b"ok"])


def test_single_string_is_refused():
    with pytest.raises(TypeError, match="single string"):
        sh.fingerprint("just one text")


@pytest.mark.parametrize("kwargs", [{"bits": 32}, {"ngram": 0}, {"tokenizer": "nope"},
                                    {"weights": "idf"}, {"normalize": ("casefold",)}])
def test_bad_options(kwargs):
    with pytest.raises(ValueError):
        sh.fingerprint(["text"], **kwargs)


def test_python_int_hashes_above_2_63_stay_exact():
    # numpy would read [2**64 - 1, 5] as float64; hashes must arrive bit for bit
    h = [2**64 - 1, 2**63 + 1, 5]
    fb = sh.FeatureBatch.from_lists([h])
    assert fb.hashes.tolist() == h and fb.hashes.dtype == np.uint64
    assert fp_ints(sh.fingerprint_features([h])) == [naive.simhash(h)]
    with pytest.raises(ValueError, match="below 2\\*\\*64"):
        sh.FeatureBatch.from_lists([[2**64]])
    with pytest.raises(TypeError, match="got float64"):
        sh.FeatureBatch.from_lists([[1.5, 2]])


def test_bad_features():
    with pytest.raises(ValueError, match="finite"):
        sh.fingerprint_features([(np.array([1], np.uint64), [np.nan])])
    with pytest.raises(ValueError, match="finite"):
        sh.fingerprint_features([(np.array([1, 2], np.uint64), [1.0, -1.0])])
    with pytest.raises(ValueError, match="2 hashes but 1 weights"):
        sh.fingerprint_features([(np.array([1, 2], np.uint64), [1.0])])
    with pytest.raises(ValueError, match="non-negative"):
        sh.fingerprint_features([np.array([-1, 2])])
    with pytest.raises(TypeError, match="unsigned"):
        sh.fingerprint_features([np.array([1.5])])
    bad = sh.FeatureBatch(np.array([0, 3]), np.zeros(2, np.uint64), np.ones(2))
    with pytest.raises(ValueError, match="indptr"):
        sh.fingerprint_features(bad)
    with pytest.raises(TypeError, match="hashes must be uint64"):
        sh.fingerprint_features(
            sh.FeatureBatch(np.array([0, 1]), np.zeros(1, np.int64), np.ones(1))
        )
    with pytest.raises(ValueError, match="bits"):
        sh.fingerprint_features([np.array([1], np.uint64)], bits=96)
    with pytest.raises(TypeError):
        sh.fingerprint_features("abc")


def test_ascii_fast_path_matches_unicode_lowercase():
    texts = ["MiXeD Case @[`{ ASCII", None, "UPPER lower", "x" * 50]
    arr = pa.array(["drop me"] + texts).slice(1)  # sliced input, with a null
    got = sh.fingerprint(arr, missing="zero", normalize=("nfkc", "lower"))
    want = sh.fingerprint([t.lower() if t else t for t in texts], normalize=(), missing="zero")
    np.testing.assert_array_equal(got, want)
    # one non-ASCII text switches the whole batch to Unicode lowercasing
    mixed = sh.fingerprint(["ÀB", "AB"], normalize=("nfkc", "lower"))
    np.testing.assert_array_equal(mixed, sh.fingerprint(["àb", "ab"], normalize=()))
