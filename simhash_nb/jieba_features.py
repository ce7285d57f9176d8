"""The documented path of the jieba tokenizer (now in ``simhash_nb._core.jieba``); re-exports."""

from ._core.features import fit_idf
from ._core.idf import IdfTable
from ._core.jieba import default_stop_words, jieba_features, jieba_tokens

__all__ = ["IdfTable", "default_stop_words", "fit_idf", "jieba_features", "jieba_tokens"]
