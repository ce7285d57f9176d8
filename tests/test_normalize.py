import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simhash_nb as sh
from simhash_nb._core.text import normalize
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
    got = norm(text, *sh.spec.NORMALIZERS)
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
