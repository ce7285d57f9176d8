import pytest

import simhash_nb as sh
from simhash_nb._core.spec import FORMAT_VERSION, FingerprintSpec, SpecMismatchError


def test_json_round_trip_and_canonical_form():
    spec = FingerprintSpec(bits=128, tokenizer="word", ngram=3, normalize=("lower", "nfkc"),
                           params={"b": 2, "a": "x"})
    again = FingerprintSpec.from_json(spec.to_json())
    assert again == spec
    assert spec.normalize == ("nfkc", "lower")  # canonical order
    assert spec.to_json() == again.to_json()
    assert f'"version":{FORMAT_VERSION}' in spec.to_json()


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"bits": 32}, ValueError),
        ({"bits": 256}, ValueError),
        ({"ngram": 0}, ValueError),
        ({"ngram": 2.0}, ValueError),
        ({"tokenizer": "bpe"}, ValueError),
        ({"weights": "idf"}, ValueError),
        ({"normalize": ("upper",)}, ValueError),
        ({"seed": -1}, ValueError),
        ({"seed": 2**64}, ValueError),
        ({"seed": 1.5}, TypeError),
        ({"hash": "md5"}, ValueError),
    ],
)
def test_invalid_specs(kwargs, exc):
    with pytest.raises(exc):
        FingerprintSpec(**kwargs)


def test_other_version_is_refused():
    d = FingerprintSpec().to_dict()
    d["version"] = FORMAT_VERSION + 1
    with pytest.raises(SpecMismatchError, match="format version"):
        FingerprintSpec.from_json(d)


def test_unknown_field_is_refused():
    d = FingerprintSpec().to_dict()
    d["colour"] = "red"
    with pytest.raises(ValueError, match="colour"):
        FingerprintSpec.from_json(d)


def test_check_compatible_names_the_difference():
    sh.check_compatible(FingerprintSpec(), None)
    with pytest.raises(SpecMismatchError, match="ngram: 5 != 4"):
        sh.check_compatible(FingerprintSpec(), FingerprintSpec(ngram=4))


def test_from_options_refuses_spec_and_options_together():
    with pytest.raises(ValueError, match="either spec"):
        FingerprintSpec.from_options(FingerprintSpec(), bits=128)
    assert FingerprintSpec.from_options(tokenizer="word").ngram == 1
    assert FingerprintSpec.from_options() == FingerprintSpec()  # one set of defaults
    assert FingerprintSpec().ngram == 5 and FingerprintSpec().weights == "binary"
