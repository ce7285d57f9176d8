"""The shipped code point classes of the word tokenizer (see ``tools/make_unicode_table.py``)."""

from __future__ import annotations

import functools
from importlib import resources

import numpy as np

N_CODE_POINTS = 0x110000


@functools.cache
def word_classes() -> np.ndarray:
    """uint8[0x110000]: 0 separator, 1 word character, 2 CJK ideograph or kana (a word alone)."""
    with resources.files("simhash_nb").joinpath("data/unicode_classes.npy").open("rb") as f:
        runs = np.load(f, allow_pickle=False)
    starts = runs[:, 0].astype(np.int64)
    lengths = np.diff(np.append(starts, N_CODE_POINTS))
    table = np.repeat(runs[:, 1].astype(np.uint8), lengths)
    table.setflags(write=False)
    return table
