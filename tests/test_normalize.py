import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core import spec as _spec
from simhash_nb._core.text import normalize, segments_numpy, text_buffers
from tests import naive


def norm(texts, *steps):
    return normalize(pa.array(texts, pa.large_string()), tuple(steps)).to_pylist()


def test_html_strips_tags_and_decodes_entities():
    got = norm(["<p>caf&eacute; &amp; th&#233;</p>", "&#x4e2d;&#22269;<br/>x",
                "&lt;b&gt;kept&lt;/b&gt;", "AT&amp;T", "no entity & here", None, ""], "html")
    assert got == [" café & thé ", "中国 x", "<b>kept</b>", "AT&T", "no entity & here", None,
                   ""]


def test_nfkc_folds_full_width_and_compatibility_forms():
    assert norm(["Ｈｅｌｌｏ１２３", "ﬁ", "①", "ｶﾞ"], "nfkc") == ["Hello123", "fi", "1", "ガ"]


def test_lower_folds_case_beyond_ascii():
    # simple per-character lowercase (Unicode's, as pyarrow): no final-sigma rule
    assert norm(["ÉCOLE Straße ΣΑΣ"], "lower") == ["école straße σασ"]


def test_punct_replaces_punctuation_and_symbols_by_spaces():
    assert norm(["a,b.c!d—e（f）g+h€", "中文，标点。"], "punct") == [
        "a b c d e f g h ", "中文 标点 "]


def test_digits_are_masked():
    assert norm(["room 101, 2024年", "٣ arabic-indic"], "digits") == [
        "room 000, 0000年", "0 arabic-indic"]


def test_whitespace_collapses_and_trims():
    assert norm(["  a \t\n b   c  ", "\u3000x\u00a0y"], "whitespace") == ["a b c", "x y"]


def test_steps_run_in_a_fixed_order_and_are_recorded_in_the_spec():
    spec = sh.FingerprintSpec.from_options(normalize=("whitespace", "html", "lower"))
    assert spec.normalize == ("html", "lower", "whitespace")
    text = ["<b>Ｆｕｌｌ&nbsp;WIDTH</b>   2024!"]
    got = norm(text, *_spec.NORMALIZERS)
    assert got == ["full width 0000"]


def test_normalisation_changes_fingerprints_as_documented():
    a = ["<p>Price: 100&nbsp;EUR!</p>"]
    b = ["price 250 eur"]
    steps = ("html", "nfkc", "lower", "punct", "digits", "whitespace")
    fa = sh.fingerprint(a, tokenizer="word", normalize=steps)
    fb = sh.fingerprint(b, tokenizer="word", normalize=steps)
    assert fa[0] == fb[0]
    assert sh.fingerprint(a, tokenizer="word")[0] != sh.fingerprint(b, tokenizer="word")[0]


def test_unknown_step_is_refused():
    with pytest.raises(ValueError, match="unknown normalisation"):
        sh.fingerprint(["a"], normalize=("stem",))


ALPHABET = list("ab Z1_,.!?-\t\n\r\x0b\x1c") + ["\u00a0", "\u3000", "\u2028", "。", "，", "中",
                                                 "€", "😀", "é", "\u0301", "\x00", "\x85"]


@given(st.lists(st.one_of(st.none(), st.text(alphabet=ALPHABET, max_size=40)), max_size=8),
       st.booleans(), st.booleans())
def test_punct_and_whitespace_kernel_matches_reference(texts, punct, collapse):
    steps = tuple(s for s, on in (("punct", punct), ("whitespace", collapse)) if on)
    got = normalize(texts, steps).to_pylist()
    want = [None if t is None else naive.squeeze(t, punct, collapse) for t in texts]
    assert got == want


@given(st.lists(st.text(alphabet=ALPHABET[:16], max_size=40), min_size=1, max_size=8),
       st.booleans(), st.booleans())
def test_ascii_texts_take_the_kernel_without_pieces_and_match(texts, punct, collapse):
    # all-ASCII batches compile the kernel without UTF-8 decoding (classes None): the
    # same texts beside a non-ASCII one take the full kernel, and both match the reference
    steps = tuple(s for s, on in (("punct", punct), ("whitespace", collapse)) if on)
    want = [naive.squeeze(t, punct, collapse) for t in texts]
    assert normalize(texts, steps).to_pylist() == want
    assert normalize(texts + ["é"], steps).to_pylist()[:-1] == want


# Pieces of non-ASCII text go through pyarrow alone; these characters interact with
# their neighbours in NFKC (combining marks, Hangul jamo, Indic vowel signs) or change
# case or length (fullwidth, ligatures, Kelvin and Angstrom signs, U+FDFA).
PIECE_ALPHABET = list("aZe1 ,.\t_") + [
    "\u0301", "\u0308", "\u0345", "\u0327", "ﬁ", "①", "㍿", "\u1100", "\u1161", "\u11a8",
    "가", "Ｚ", "１", "İ", "ẞ", "Σ", "\u212a", "\u212b", "\u0f73", "\ufdfa", "\u0b47",
    "\u0b3e", "ｶ", "ﾞ", "\u00a0", "\u3000", "中", "😀", "\x00", "٣", "，"]
STEPS = ("nfkc", "lower", "digits", "punct", "whitespace")


def _whole_text_reference(arr, steps):
    """The pyarrow steps on whole texts (as before pieces), then the reference squeeze."""
    from simhash_nb._core.text import normalize_arrow

    done = normalize_arrow(arr, tuple(s for s in steps if s in ("nfkc", "lower", "digits")))
    return [None if t is None else naive.squeeze(t, "punct" in steps, "whitespace" in steps)
            for t in done.to_pylist()]


@given(st.lists(st.one_of(st.none(), st.text(alphabet=PIECE_ALPHABET, max_size=30)),
                max_size=12),
       st.lists(st.sampled_from(STEPS), unique=True), st.integers(0, 3))
def test_pieces_normalise_as_whole_texts(texts, steps, cut):
    arr = pa.array(["skipped"] * cut + texts, pa.large_string()).slice(cut)
    steps = tuple(s for s in STEPS if s in steps)
    assert normalize(arr, steps).to_pylist() == _whole_text_reference(arr, steps)


def test_pieces_of_many_texts_across_chunks():
    import random

    rnd = random.Random(7)
    texts = ["".join(rnd.choice(PIECE_ALPHABET) for _ in range(rnd.randint(0, 40)))
             for _ in range(3000)]
    arr = pa.array(texts, pa.large_string())
    for steps in [("nfkc", "lower", "punct", "whitespace"), ("nfkc", "lower"), ("punct",)]:
        assert normalize(arr, steps).to_pylist() == _whole_text_reference(arr, steps)


def test_null_slots_holding_bytes_come_out_empty():
    data = "Ａb, c\u0301 Xy".encode()
    offsets = pa.py_buffer(np.array([0, 4, len(data)], np.int64))
    validity = pa.array([False, True]).buffers()[1]
    arr = pa.LargeStringArray.from_buffers(2, offsets, pa.py_buffer(data), validity, 1)
    buf = text_buffers(arr, ("nfkc", "lower", "punct", "whitespace"))
    assert buf.valid.tolist() == [False, True]
    assert buf.offsets.tolist() == [0, 0, len("c\u0301 xy".encode()) - 1]
    assert bytes(buf.data).decode() == "ć xy"


@given(st.lists(st.one_of(st.none(), st.text(alphabet=PIECE_ALPHABET, max_size=20)),
                max_size=10), st.integers(0, 3))
def test_nonascii_segments_matches_reference(texts, cut):
    from simhash_nb._core.parallel import balanced_chunks
    from simhash_nb._core.text import string_buffers
    from simhash_nb._kernels.normalize import nonascii_segments

    arr = pa.array(["é"] * cut + texts, pa.large_string()).slice(cut).fill_null("")
    data, offsets = string_buffers(arr)
    offsets = np.ascontiguousarray(offsets)
    starts, ends = nonascii_segments(data, offsets, balanced_chunks(offsets, 2))
    want = [(int(offsets[i]) + a, int(offsets[i]) + b) for i, t in enumerate(arr.to_pylist())
            for a, b in naive.nonascii_segments(t.encode())]
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == want
    starts, ends = segments_numpy(data, offsets)  # the small-batch path: the same pieces
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == want


@given(st.lists(st.one_of(st.none(), st.text(alphabet=PIECE_ALPHABET, max_size=20)),
                max_size=10), st.integers(1, 4))
def test_segments_on_a_sliced_buffer_stay_inside_the_documents(texts, cut):
    """Bytes of the buffer before the first or after the last document are no piece."""
    from simhash_nb._core.text import string_buffers

    arr = pa.array(["é!"] * cut + [t or "" for t in texts] + ["ü"] * cut,
                   pa.large_string()).slice(cut, len(texts))
    data, offsets = string_buffers(arr)
    offsets = np.ascontiguousarray(offsets)
    starts, ends = segments_numpy(data, offsets)
    want = [(int(offsets[i]) + a, int(offsets[i]) + b) for i, t in enumerate(arr.to_pylist())
            for a, b in naive.nonascii_segments(t.encode())]
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == want
