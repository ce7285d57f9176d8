"""Specs through pd.concat / pd.merge and into parquet (issue 13, item 4).

pandas keeps ``attrs`` through a concat or merge only when every input's compare equal;
the spec records make that comparison refuse different specs, and write_parquet warns
when a fingerprint column's spec was lost.
"""

import copy
import pickle
import warnings

import pandas as pd
import pytest

import simhash_nb as sh
from simhash_nb.io import read_specs

TEXTS = ["the cat sat", "the cat sat!", None, "a dog"]


def _frame(**options):
    return pd.DataFrame({"text": TEXTS}).simhash.fingerprint(**options)


@pytest.mark.parametrize("bits", [64, 128])
def test_concat_of_equal_specs_keeps_the_spec_and_writes_it(tmp_path, bits):
    a, b = _frame(bits=bits), _frame(bits=bits)
    both = pd.concat([a, b], ignore_index=True)
    want = sh.FingerprintSpec.from_options(bits=bits)
    assert both["simhash"].simhash.spec == want
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sh.write_parquet(both, tmp_path / "both.parquet")
    assert read_specs(tmp_path / "both.parquet") == {"simhash": want}
    back = sh.read_parquet(tmp_path / "both.parquet")
    pd.testing.assert_frame_equal(back.simhash.near_duplicates(k=3),
                                  both.simhash.near_duplicates(k=3))
    assert back["simhash"].simhash.spec == want
    s = pd.concat([a["text"].simhash.fingerprint(bits=bits)] * 2, ignore_index=True)
    assert s.simhash.spec == want


@pytest.mark.parametrize("other", [dict(seed=7), dict(bits=128), dict(tokenizer="word")])
def test_concat_of_different_specs_raises(other):
    a, b = _frame(), _frame(**other)
    with pytest.raises(sh.SpecMismatchError, match=r"column 'simhash'.*attrs.pop"):
        pd.concat([a, b])
    with pytest.raises(sh.SpecMismatchError, match="column 'simhash'"):
        pd.concat([a["simhash"], b["simhash"]])
    with pytest.raises(sh.SpecMismatchError, match="different specs"):
        pd.concat([a["text"].simhash.fingerprint(), b["text"].simhash.fingerprint(**other)])
    with pytest.raises(sh.SpecMismatchError, match="column 'simhash'"):
        a.merge(b, on="text")
    # the way out the message gives
    b.attrs.pop("simhash_spec")
    a.attrs.pop("simhash_spec")
    assert len(pd.concat([a.drop(columns="simhash"), b.drop(columns="simhash")])) == 8


def test_specs_of_other_columns_do_not_conflict():
    a = _frame()
    b = pd.DataFrame({"text": TEXTS}).simhash.fingerprint(out="fp", seed=7)
    both = pd.concat([a, b])  # no column in common with different specs: pandas drops attrs
    assert both.attrs == {}


def test_a_lost_spec_is_warned_about_on_write(tmp_path):
    a = _frame()
    meta = pd.DataFrame({"text": TEXTS[:2], "n": [1, 2]})
    merged = a.merge(meta, on="text")  # pandas drops attrs: meta has none
    assert merged["simhash"].simhash.spec is None
    with pytest.warns(UserWarning, match=r"no fingerprint spec is known for column\(s\) "
                                         r"\['simhash'\].*spec="):
        sh.write_parquet(merged, tmp_path / "m.parquet")
    assert read_specs(tmp_path / "m.parquet") == {}
    mixed = pd.concat([a, pd.DataFrame({"text": ["x"], "simhash": pd.array([1], "UInt64")})])
    with pytest.warns(UserWarning, match="no fingerprint spec"):
        sh.write_parquet(mixed, tmp_path / "x.parquet")
    spec = sh.FingerprintSpec.from_options()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sh.write_parquet(merged, tmp_path / "s.parquet", spec=spec)
        sh.write_parquet(merged, tmp_path / "n.parquet", spec={})  # explicitly none
        sh.write_parquet(merged[["text", "n"]], tmp_path / "t.parquet")  # no fingerprints
    assert read_specs(tmp_path / "s.parquet") == {"simhash": spec}
    assert read_specs(tmp_path / "n.parquet") == {}


def test_spec_records_behave_as_json_and_dicts():
    a = _frame(seed=3)
    record = a.attrs["simhash_spec"]
    assert isinstance(record, dict) and set(record) == {"simhash"}
    assert sh.FingerprintSpec.from_json(record["simhash"]).seed == 3
    assert copy.deepcopy(a.attrs) == a.attrs
    assert pickle.loads(pickle.dumps(a)).attrs == a.attrs
    assert type(copy.deepcopy(record)) is type(record)
    s = a["text"].simhash.fingerprint(seed=3)
    json = s.attrs["simhash_spec"]
    assert json == sh.FingerprintSpec.from_options(seed=3).to_json()
    assert json != sh.FingerprintSpec.from_options().to_json()  # plain strings: no error
    assert {json: 1}[json] == 1
    assert pd.DataFrame({"x": [1]}).attrs == {}
    assert a.attrs != {"simhash_spec": {"simhash": "other"}}
