"""One fingerprint-options path: the same options through every entry point give the
same fingerprints (core, accessors, scikit-learn, CLI, Dask, windows)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import simhash_nb as sh
from simhash_nb import cli
from simhash_nb._core import spec as _spec
from simhash_nb._core.tokenizers import FINGERPRINT_OPTIONS, prepare, split_options

TEXTS = [
    "the quick brown fox jumps over the lazy dog near the river bank",
    "the quick brown fox jumped over the lazy dog near the river bank",
    "a completely different sentence about the weather in the mountains",
    "我们今天去公园散步了天气非常好",
    "我们今天去公园散步天气很好的",
    "stock prices fell sharply on monday after the report was published",
]


def split_words(text):
    """A module-level tokenizer: it pickles by reference, so it travels to Dask workers."""
    return text.split()


IDF = sh.fit_idf(TEXTS, tokenizer="word")

CASES = {
    "default": {},
    "callable": {"tokenizer": split_words, "params": {"name": "tests.split_words_v1"}},
    "jieba": {"tokenizer": "jieba", "params": {"stop_words": ["的", "了", "我们"]}},
    "bits128": {"bits": 128},
    "tfidf": {"tokenizer": "word", "weights": "tfidf", "params": {"idf": IDF}},
}

# the CLI and the windows take the built-in Numba tokenizers only
CLI_ARGS = {"default": [], "bits128": ["--bits", "128"]}
WINDOWED = {"default", "bits128"}
# SimhashVectorizer settings that make the same features and weights as the core
CHAR5 = dict(analyzer="char", ngram_range=(5, 5), token_pattern=None, weights="binary")
SKLEARN = {
    "default": CHAR5,
    "bits128": {**CHAR5, "bits": 128},
    "callable": dict(tokenizer=split_words, lowercase=False, weights="tf"),
}


def _ints(fps) -> list[int]:
    """Fingerprints of any entry point as Python ints (128 bits: ``hi << 64 | lo``)."""
    if isinstance(fps, pd.Series):
        if isinstance(fps.dtype, pd.ArrowDtype):  # binary[16], big-endian
            return [int.from_bytes(b, "big") for b in fps.tolist()]
        return [int(x) for x in fps.tolist()]
    fps = np.asarray(fps)
    if fps.ndim == 2:
        return [int(lo) | int(hi) << 64 for lo, hi in fps]
    return [int(x) for x in fps]


@pytest.fixture(scope="module")
def client(dask_cluster):  # the session's cluster (tests/conftest.py)
    distributed = pytest.importorskip("distributed")
    with distributed.Client(dask_cluster) as cl:
        yield cl


@pytest.fixture(scope="module")
def expected():
    pytest.importorskip("jieba")
    return {name: _ints(sh.fingerprint(TEXTS, **opts)) for name, opts in CASES.items()}


@pytest.mark.parametrize("case", CASES)
def test_pandas_accessors(case, expected):
    opts = CASES[case]
    s = pd.Series(TEXTS, name="text")
    got = s.simhash.fingerprint(**opts)
    assert _ints(got) == expected[case]
    spec = sh.FingerprintSpec.from_options(**opts)
    assert sh.FingerprintSpec.from_json(got.attrs["simhash_spec"]) == spec
    df = pd.DataFrame({"text": TEXTS}).simhash.fingerprint(**opts)
    assert _ints(df["simhash"]) == expected[case]


@pytest.mark.parametrize("case", CASES)
def test_spec_from_options_is_the_spec_of_fingerprint(case):
    pytest.importorskip("jieba")
    opts = CASES[case]
    spec = sh.FingerprintSpec.from_options(**opts)
    assert spec == prepare(**opts)[0]
    extra = {"tokenizer": opts["tokenizer"]} if callable(opts.get("tokenizer")) else {}
    extra.update({"params": opts["params"]} if "params" in opts else {})
    again = sh.fingerprint(TEXTS, spec=spec, **extra)
    assert (again == sh.fingerprint(TEXTS, **opts)).all()


@pytest.mark.parametrize("case", SKLEARN)
def test_sklearn_vectorizer(case, expected):
    sk = pytest.importorskip("simhash_nb.sklearn")
    vec = sk.SimhashVectorizer(**SKLEARN[case])
    assert _ints(vec.fit_transform(TEXTS)) == expected[case]


@pytest.mark.parametrize("case", CLI_ARGS)
def test_cli(case, expected, tmp_path):
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    pd.DataFrame({"id": range(len(TEXTS)), "text": TEXTS}).to_csv(src, index=False)
    assert cli.main(["fingerprint", str(src), str(out), "-q", *CLI_ARGS[case]]) == 0
    got = pd.read_csv(out, dtype={"simhash": str})
    assert [int(h, 16) for h in got["simhash"]] == expected[case]


@pytest.mark.parametrize("case", sorted(WINDOWED))
def test_one_window_is_the_whole_text(case, expected):
    opts = {"tokenizer": "char", **CASES[case]}
    w = sh.window_fingerprints(TEXTS, window=10_000, as_frame=False, **opts)
    assert w.doc.tolist() == list(range(len(TEXTS)))
    assert _ints(w.fingerprints) == expected[case]


def test_dask_takes_every_option(client, expected):
    dd = pytest.importorskip("dask.dataframe")
    pdf = pd.DataFrame({"text": TEXTS, "n": range(len(TEXTS))})
    ddf = dd.from_pandas(pdf, npartitions=2)
    for case, opts in CASES.items():
        got = sh.distributed.fingerprint(ddf, progress=False, **opts).compute()
        assert _ints(got["simhash"]) == expected[case], case
        series = sh.distributed.fingerprint(ddf["text"], **opts).compute()
        assert _ints(series) == expected[case], case
    # a search on Dask fingerprints text with the same options
    pairs = sh.distributed.near_duplicates(ddf, k=63, **CASES["callable"]).compute()
    assert len(pairs) == len(TEXTS) * (len(TEXTS) - 1) // 2


def test_dask_refuses_what_cannot_travel():
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    ddf = dd.from_pandas(pd.DataFrame({"text": TEXTS}), npartitions=2)

    class Unpicklable:
        def __call__(self, text):
            return text.split()

        def __reduce__(self):
            raise TypeError("no pickling")

    with pytest.raises(TypeError, match="must be picklable"):
        sh.distributed.fingerprint(ddf, tokenizer=Unpicklable(), params={"name": "u"})
    with pytest.raises(ValueError, match="fit a table first"):
        sh.distributed.fingerprint(ddf, tokenizer="word", weights="tfidf",
                                   params={"idf": "fit"})


def test_the_options_are_defined_once():
    assert set(FINGERPRINT_OPTIONS) == {"bits", "tokenizer", "ngram", "weights", "normalize",
                                        "seed", "spec", "params", "n_jobs", "progress"}
    spec_options, run = split_options({"bits": 128, "ngram": None, "n_jobs": 2})
    assert spec_options == {"bits": 128} and run == {"n_jobs": 2, "progress": None}
    with pytest.raises(TypeError, match="fingerprint options are"):
        split_options({"bitz": 128})
    with pytest.raises(TypeError, match="unknown fingerprint options"):
        sh.FingerprintSpec.from_options(bitz=128)


def test_make_spec_is_a_deprecated_alias():
    _spec._WARNED.discard("make_spec")
    with pytest.warns(FutureWarning, match="from_options"):
        assert sh.make_spec(tokenizer="word") == sh.FingerprintSpec.from_options(tokenizer="word")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        assert sh.make_spec() == sh.FingerprintSpec()


def test_for_language_is_a_spec_of_options():
    assert sh.FingerprintSpec.for_language("zh") == sh.FingerprintSpec.from_options(ngram=2)
    assert sh.FingerprintSpec.from_options(tokenizer="hashes").tokenizer == "hashes"


# --- the public API: result types exported, one name per thing ---------------------------


def test_result_types_are_exported():
    w = sh.window_fingerprints(["one two three four five"], window=2, as_frame=False)
    assert isinstance(w, sh.Windows) and "Windows" in sh.__all__
    for name in ("SimilarPairs", "Matches", "Recommendation", "Pairs", "TableDesign",
                 "FeatureBatch", "IdfTable"):
        assert name in sh.__all__ and hasattr(sh, name), name
    import simhash_nb.datasets as ds

    assert {"load_sample", "NearDuplicates"} <= set(ds.__all__)


def test_feature_batch_from_sparse_is_what_fingerprint_sparse_fingerprints():
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction.text import CountVectorizer

    cv = CountVectorizer(token_pattern=r"(?u)\b\w+\b").fit(TEXTS)
    X = cv.transform(TEXTS)
    fb = sh.FeatureBatch.from_sparse(X, cv.vocabulary_)
    assert (sh.fingerprint_features(fb) == sh.fingerprint_sparse(X, cv.vocabulary_)).all()
    with pytest.raises(ValueError, match="columns"):
        sh.FeatureBatch.from_sparse(X, ["one"])


def test_the_pair_similarity_kernel_is_not_named_like_the_join():
    from simhash_nb._kernels import jaccard as jk

    assert hasattr(jk, "pair_similarities") and not hasattr(jk, "jaccard_pairs")
    fps = sh.fingerprint(TEXTS[:3])
    assert (sh.near_duplicates(fps, k=40, method="brute").i
            == sh.pairs_within(fps, k=40).i).all()
