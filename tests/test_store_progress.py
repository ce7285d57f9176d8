"""A corpus store's reads show the shard runs' bar over the documents read (issue 23.3:
every step over ~2 s shows progress): CorpusStore.add and query take progress=."""

from __future__ import annotations

import re

import pandas as pd

import simhash_nb as sh


def _frame(n, start=0):
    return pd.DataFrame({"text": [f"document number {i} says hello to {i % 7} friends"
                                  for i in range(start, start + n)]})


def _final_count(err: str) -> int:
    counts = re.findall(r"shingling: (\d+)(?:/\d+)? ?doc", err)
    return int(counts[-1]) if counts else -1


def test_add_and_query_show_a_bar_over_the_documents_read(tmp_path, capsys):
    store = sh.CorpusStore.create(tmp_path / "store", tokenizer="word", ngram=2)
    store.add(_frame(300), progress=True)
    err = capsys.readouterr().err
    assert "shingling" in err and _final_count(err) == 300
    got = store.query(_frame(120, start=250), 0.7, progress=True)
    err = capsys.readouterr().err
    assert "shingling" in err and _final_count(err) == 120
    assert len(got) >= 50  # the 50 shared documents match themselves


def test_no_bar_when_asked_for_none(tmp_path, capsys):
    store = sh.CorpusStore.create(tmp_path / "store", tokenizer="word", ngram=2)
    store.add(_frame(300), progress=False)
    store.query(_frame(50), 0.7, progress=False)
    assert "shingling" not in capsys.readouterr().err
    assert sh.CorpusStore.open(tmp_path / "store").n == 300
