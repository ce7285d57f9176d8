import unicodedata

import jieba
import numpy as np
import pytest

import simhash_nb as sh
from simhash_nb._core.tokenizers import prepare
from simhash_nb.jieba_features import (
    IdfTable,
    default_stop_words,
    jieba_features,
    jieba_tokens,
)
from tests import naive
from tests.conftest import fp_ints

TEXTS = [
    "我们在北京天安门广场看升旗。",
    "Debian 是一个自由的操作系统，我用Python写代码！",
    "的了",  # only stop words
    "",
    "一个用于管理软件包的工具，支持 APT 和 dpkg 。",
    "一个用于管理软件包的工具，支持APT与dpkg。",
]


def _jieba_idf():
    idf = {}
    with open(jieba.__path__[0] + "/analyse/idf.txt", encoding="utf-8") as f:
        for line in f:
            w, v = line.split()
            idf[w] = float(v)
    return idf, sorted(idf.values())[len(idf) // 2]


IDF, MEDIAN = _jieba_idf()


def ref_tokens(text, stop=None, hmm=True):
    stop = default_stop_words() if stop is None else stop
    text = unicodedata.normalize("NFKC", text).lower()
    out = []
    for t in jieba.lcut(text, HMM=hmm):
        if not any(unicodedata.category(c)[0] in "LN" for c in t):
            continue
        if t in stop:
            continue
        out.append(t)
    return out


def ref_features(text, weights="tfidf", n=1):
    toks = ref_tokens(text)
    if len(toks) >= n:
        grams = [" ".join(toks[i:i + n]) for i in range(len(toks) - n + 1)]
    else:
        grams = [" ".join(toks)] if toks else []
    counts = {}
    for g in grams:
        counts[g] = counts.get(g, 0) + 1
    rows = []
    for g, c in counts.items():
        w = {"tf": float(c), "binary": 1.0, "tfidf": c * IDF.get(g, MEDIAN)}[weights]
        rows.append((naive.xxh64(g.encode("utf-8")), w))
    return sorted(rows)


def batch_rows(fb, i):
    lo, hi = fb.indptr[i], fb.indptr[i + 1]
    return list(zip(fb.hashes[lo:hi].tolist(), fb.weights[lo:hi].tolist(), strict=True))


def test_tokens_are_jieba_precise_mode_without_stop_words_and_punctuation():
    got = jieba_tokens(TEXTS)
    assert got == [ref_tokens(t) for t in TEXTS]
    assert got[2] == [] and got[3] == []
    assert "python" in got[1] and "debian" in got[1]  # mixed-language text, lowercased
    assert "的" not in sum(got, [])


@pytest.mark.parametrize("weights", ["tfidf", "tf", "binary"])
@pytest.mark.parametrize("n", [1, 2])
def test_features_match_reference(weights, n):
    fb = sh.features(TEXTS, tokenizer="jieba", weights=weights, ngram=n)
    for i, t in enumerate(TEXTS):
        got = batch_rows(fb, i)
        want = ref_features(t, weights, n)
        assert [h for h, _ in got] == [h for h, _ in want]
        np.testing.assert_allclose([w for _, w in got], [w for _, w in want], rtol=1e-12)


def test_fingerprints_go_through_the_shared_kernel():
    fb = jieba_features(TEXTS)
    fps = sh.fingerprint(TEXTS, tokenizer="jieba")
    assert fps.tolist() == sh.fingerprint_features(fb).tolist()
    want = [naive.simhash([h for h, _ in ref_features(t)], [w for _, w in ref_features(t)])
            for t in TEXTS]
    assert fp_ints(fps) == want
    fps128 = sh.fingerprint(TEXTS, tokenizer="jieba", bits=128)
    assert fps128.shape == (len(TEXTS), 2) and fps128[:, 0].tolist() == fps.tolist()


def test_empty_after_stop_words_is_zero_with_a_flag_not_an_error():
    fb = sh.features(["的了吗", "，。！", "", "北京"], tokenizer="jieba")
    assert fb.n_features.tolist() == [0, 0, 0, 1]
    fps = sh.fingerprint(["的了吗", "，。！", "", "北京"], tokenizer="jieba")
    assert fps[:3].tolist() == [0, 0, 0] and fps[3] != 0


def test_missing_texts():
    with pytest.raises(ValueError, match=r"texts\[1\] is missing"):
        sh.fingerprint(["北京", None], tokenizer="jieba")
    fps = sh.fingerprint(["北京", None], tokenizer="jieba", missing="zero")
    assert fps[1] == 0 and fps[0] == sh.fingerprint(["北京"], tokenizer="jieba")[0]


def test_near_duplicates_are_close():
    fps = sh.fingerprint(TEXTS, tokenizer="jieba")
    assert sh.hamming(fps[4], fps[5]) <= 8
    assert sh.hamming(fps[0], fps[4]) > 16


def test_spec_records_the_options_and_round_trips():
    spec, _ = prepare(tokenizer="jieba")
    assert spec.weights == "tfidf"  # the tokenizer's defaults...
    assert sh.FingerprintSpec.from_options(tokenizer="jieba") == spec  # ...in the one builder
    assert dict(spec.params) == {"hmm": True, "idf": "jieba", "stop_words": "default"}
    again = sh.FingerprintSpec.from_json(spec.to_json())
    assert (sh.fingerprint(TEXTS, spec=again) == sh.fingerprint(TEXTS, tokenizer="jieba")).all()
    tf = sh.fingerprint(TEXTS, tokenizer="jieba", weights="tf")
    assert not (tf == sh.fingerprint(TEXTS, tokenizer="jieba")).all()


def test_stop_word_options(tmp_path):
    text = ["我们的北京"]
    keep_all = sh.features(text, tokenizer="jieba", params={"stop_words": "none"})
    assert keep_all.n_features[0] == 3
    assert sh.features(text, tokenizer="jieba").n_features[0] == 1
    custom = sh.features(text, tokenizer="jieba", params={"stop_words": ["北京"]})
    assert custom.n_features[0] == 2
    f = tmp_path / "stop.txt"
    f.write_text("北京\n\n", encoding="utf-8")
    from_file = sh.features(text, tokenizer="jieba", params={"stop_words": str(f)})
    assert from_file.hashes.tolist() == custom.hashes.tolist()
    tag = dict(prepare(tokenizer="jieba", params={"stop_words": ["北京"]})[0].params)
    assert tag["stop_words"].startswith("sha1:")
    spec = prepare(tokenizer="jieba", params={"stop_words": ["北京"]})[0]
    with pytest.raises(ValueError, match="pass them again"):
        sh.fingerprint(text, spec=spec)
    assert sh.fingerprint(text, spec=spec, params={"stop_words": {"北京"}})[0] == \
        sh.fingerprint(text, tokenizer="jieba", params={"stop_words": ["北京"]})[0]
    with pytest.raises(sh.SpecMismatchError):
        sh.fingerprint(text, spec=spec, params={"stop_words": ["我们"]})
    with pytest.raises(FileNotFoundError, match="stop-word file"):
        sh.features(text, tokenizer="jieba", params={"stop_words": str(tmp_path / "no")})
    assert "的" in default_stop_words()


def test_user_dictionary(tmp_path):
    text = ["我在研究云计算平台的架构"]
    plain = jieba_tokens(text)[0]
    assert "云计算平台" not in plain
    d = tmp_path / "dict.txt"
    d.write_text("云计算平台 100 n\n", encoding="utf-8")
    assert "云计算平台" in jieba_tokens(text, user_dict=str(d))[0]
    a = sh.fingerprint(text, tokenizer="jieba", params={"user_dict": str(d)})
    assert a[0] != sh.fingerprint(text, tokenizer="jieba")[0]
    # the global jieba tokenizer is left alone
    assert "云计算平台" not in jieba.lcut(text[0])
    spec = prepare(tokenizer="jieba", params={"user_dict": str(d)})[0]
    assert dict(spec.params)["user_dict"].startswith("sha1:")
    with pytest.raises(ValueError, match="user dictionary"):
        sh.fingerprint(text, spec=spec)
    assert sh.fingerprint(text, spec=spec, params={"user_dict": str(d)})[0] == a[0]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        sh.fingerprint(text, tokenizer="jieba", params={"user_dict": str(tmp_path / "none")})


def test_fitted_idf():
    table = sh.fit_idf(TEXTS, tokenizer="jieba")
    assert isinstance(table, IdfTable) and table.n_docs == len(TEXTS)
    fb_tf = sh.features(TEXTS, tokenizer="jieba", weights="tf")
    df = {}
    for i in range(len(TEXTS)):
        for h in batch_rows(fb_tf, i):
            df[h[0]] = df.get(h[0], 0) + 1
    n = len(TEXTS)
    h0 = fb_tf.hashes[0]
    assert table.lookup(np.array([h0]))[0] == pytest.approx(np.log((1 + n) / (1 + df[h0])) + 1)
    fitted = sh.fingerprint(TEXTS, tokenizer="jieba", params={"idf": table})
    fit_here = sh.fingerprint(TEXTS, tokenizer="jieba", params={"idf": "fit"})
    assert fitted.tolist() == fit_here.tolist()
    fb = jieba_features(TEXTS, idf=table)
    np.testing.assert_allclose(fb.weights, fb_tf.weights * table.lookup(fb_tf.hashes))
    spec = prepare(tokenizer="jieba", params={"idf": table})[0]
    assert dict(spec.params)["idf"] == table.tag and table.tag.startswith("sha1:")
    with pytest.raises(ValueError, match="not stored in the spec"):
        sh.fingerprint(TEXTS, spec=spec)
    assert sh.fingerprint(TEXTS, spec=spec, params={"idf": table}).tolist() == fitted.tolist()


def test_idf_table_lookup_and_mapping():
    t = IdfTable.from_mapping({"cat": 2.0, "dog": 4.0, "the": 0.5})
    fb = sh.features(["the cat", "a dog"], tokenizer="word")
    w = t.weigh(fb)
    got = dict(zip(fb.hashes.tolist(), w.weights.tolist(), strict=True))
    assert got[naive.xxh64(b"cat")] == 2.0
    assert got[naive.xxh64(b"the")] == 0.5
    assert got[naive.xxh64(b"a")] == 2.0  # unknown: the median
    jt = IdfTable.from_jieba()
    assert jt.tag == "jieba" and len(jt) > 200_000
    assert jt.lookup(np.array([naive.xxh64("北京".encode())], np.uint64))[0] == IDF["北京"]
    with pytest.raises(ValueError, match="finite"):
        IdfTable(np.array([1], np.uint64), np.array([-1.0]), 1.0)


def test_processes_give_identical_results():
    df = sh.datasets.load_debian_zh()
    texts = df["text"].iloc[:120].tolist()
    one = sh.features(texts, tokenizer="jieba", n_jobs=1)
    two = sh.features(texts, tokenizer="jieba", n_jobs=2)
    assert one.indptr.tolist() == two.indptr.tolist()
    assert one.hashes.tolist() == two.hashes.tolist()
    assert one.weights.tolist() == two.weights.tolist()
    assert jieba_tokens(texts[:20], n_jobs=2) == jieba_tokens(texts[:20], n_jobs=1)


def test_progress_bar(capsys):
    jieba_features(TEXTS * 3, progress=True)
    err = capsys.readouterr().err
    assert "tokenising" in err and "100%" in err
    jieba_features(TEXTS, progress=False)
    assert "tokenising" not in capsys.readouterr().err


def test_bad_options():
    with pytest.raises(ValueError, match="jieba weights"):
        sh.fingerprint(["北京"], tokenizer="jieba", weights="given")
    with pytest.raises(ValueError, match="unknown jieba params"):
        sh.fingerprint(["北京"], tokenizer="jieba", params={"dict": "x"})
    with pytest.raises(TypeError, match="hmm"):
        sh.fingerprint(["北京"], tokenizer="jieba", params={"hmm": "yes"})
    with pytest.raises(ValueError, match="only with weights='tfidf'"):
        sh.fingerprint(["北京"], tokenizer="jieba", weights="tf", params={"idf": "jieba"})
    with pytest.raises(ValueError, match="n_jobs"):
        sh.fingerprint(["北京"], tokenizer="jieba", n_jobs=0)
    with pytest.raises(TypeError, match="not a string"):
        sh.fingerprint(["北京", 3], tokenizer="jieba")
    with pytest.raises(TypeError, match="params must be a dict"):
        sh.fingerprint(["北京"], tokenizer="jieba", params=[("hmm", True)])


def test_hmm_option_is_recorded():
    spec = prepare(tokenizer="jieba", params={"hmm": False})[0]
    assert dict(spec.params)["hmm"] is False
    assert jieba_tokens(["他来到了网易杭研大厦"], hmm=False) == [
        ref_tokens("他来到了网易杭研大厦", hmm=False)]
