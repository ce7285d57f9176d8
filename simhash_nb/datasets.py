"""Bundled sample corpora (see ``simhash_nb/data/README.md`` for sources and licences)."""

from __future__ import annotations

import gzip
import json
import numbers
import re
from importlib import resources
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = [
    "load_sample", "load_fortunes", "load_gospels", "load_licences", "load_debian_zh", "SAMPLES",
    "NearDuplicates", "make_near_duplicates",
]

SAMPLES = {
    "licences": "spdx_licences.jsonl.gz",
    "fortunes": "fortunes_en.jsonl.gz",
    "gospels": "kjv_gospels.jsonl.gz",
    "debian_zh": "debian_desc_zh_CN.jsonl.gz",
}


def load_sample(name: str) -> pd.DataFrame:
    """One bundled corpus as a DataFrame with columns ``id``, ``text``, ``group``.

    The loaders :func:`load_licences`, :func:`load_fortunes`, ... call it.

    Parameters
    ----------
    name : str
        A key of :data:`SAMPLES`: ``"licences"``, ``"fortunes"``, ``"gospels"``, ...

    Returns
    -------
    pandas.DataFrame
        Columns ``id``, ``text`` and ``group`` (``string`` dtype); rows of one
        ``group`` are near duplicates of each other.

    Raises
    ------
    ValueError
        If ``name`` is not a bundled sample.

    Examples
    --------
    >>> load_sample("licences").columns.tolist()
    ['id', 'text', 'group']
    """
    if name not in SAMPLES:
        raise ValueError(f"unknown sample {name!r}; choose from {sorted(SAMPLES)}")
    ref = resources.files("simhash_nb").joinpath("data", SAMPLES[name])
    with ref.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    df = pd.DataFrame(rows, columns=["id", "text", "group"])
    return df.astype({"id": "string", "text": "string", "group": "string"})


def _loader(name: str, summary: str, example: str):
    """The ``load_<name>()`` function of one bundled corpus: :func:`load_sample` of it."""
    def load() -> pd.DataFrame:
        return load_sample(name)

    load.__name__ = load.__qualname__ = f"load_{name}"
    load.__doc__ = f"""{summary}

    Returns
    -------
    pandas.DataFrame
        Columns ``id``, ``text`` and ``group`` (``string`` dtype).

    Examples
    --------
    {example}
    """
    return load


load_licences = _loader("licences", "104 SPDX licence texts (CC0); ``group`` is the licence "
                        "family.", ">>> len(load_licences())\n    104")
load_fortunes = _loader("fortunes", "3,000 English fortunes (BSD), rich in near duplicates.",
                        ">>> len(load_fortunes())\n    3000")
load_gospels = _loader("gospels", "3,779 King James Gospel verses (public domain), with "
                       "parallel passages.", ">>> load_gospels()[\"id\"].iloc[0]\n    'Mat1:1'")
load_debian_zh = _loader("debian_zh", "1,234 Debian package descriptions in Simplified "
                         "Chinese; ``group`` is the source package.",
                         ">>> load_debian_zh()[\"group\"].nunique()\n    808")


# --- synthetic near duplicates ------------------------------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+|\s+")
_IS_CJK = re.compile(rf"[{_CJK}]")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")

_BOILERPLATE = {
    "en": (
        "Sent from my phone.",
        "-- Forwarded message --",
        "Copyright (c) 2024. All rights reserved.",
        "Click here to unsubscribe from this list.",
        "This message and any attachments are confidential.",
        "Posted by admin on Monday.",
        "Read more at our website.",
    ),
    "zh": (
        "转载请注明出处。",
        "本文来自网络，如有侵权请联系删除。",
        "点击这里取消订阅。",
        "版权所有，保留一切权利。",
        "更多内容请访问我们的网站。",
    ),
}


class NearDuplicates(NamedTuple):
    """Result of :func:`make_near_duplicates`.

    Attributes
    ----------
    texts : list of str
        The original texts followed by the ``n`` edited copies.
    pairs : pandas.DataFrame
        Labelled pairs, columns ``i``, ``j`` (positions in ``texts``, ``i < j``),
        ``duplicate`` (bool) and ``edits`` (word edits made; 0 for non-duplicates):
        each copy with its original (``duplicate`` True) and as many random pairs of
        texts from different originals (False).
    labels : numpy.ndarray of int64
        For each text, the position of the original it comes from (originals: their
        own position): cluster labels for :func:`simhash_nb.threshold_table`.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> nd = sh.datasets.make_near_duplicates(["the cat sat on the mat", "a dog ran"], n=2,
    ...                                       random_state=0)
    >>> len(nd.texts), nd.pairs.columns.tolist()
    (4, ['i', 'j', 'duplicate', 'edits'])

    """

    texts: list
    pairs: pd.DataFrame
    labels: np.ndarray


def _check_rate(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _vocabulary(texts: list[str], limit: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    words: list[str] = []
    chars: list[str] = []
    for t in texts:
        for tok in _TOKEN.findall(t):
            if tok.isspace():
                continue
            (chars if _IS_CJK.fullmatch(tok) else words).append(tok)
        if len(words) + len(chars) >= limit:
            break
    return np.array(words or chars or ["x"], dtype=object), np.array(
        chars or words or ["x"], dtype=object)


def _edit_one(text: str, rng, edit_rate, boilerplate, reorder, words, chars):
    cjk = len(_IS_CJK.findall(text)) * 3 > len(text)
    if reorder and rng.random() < reorder:
        sentences = [s for s in _SENTENCE_END.split(text) if s]
        if len(sentences) >= 2:
            a, b = rng.choice(len(sentences), size=2, replace=False)
            sentences[a], sentences[b] = sentences[b], sentences[a]
            text = ("" if cjk else " ").join(sentences)
    tokens = _TOKEN.findall(text)
    hit = rng.random(len(tokens)) < edit_rate
    ops = rng.integers(0, 3, size=len(tokens))  # 0 delete, 1 substitute, 2 insert
    out: list[str] = []
    edits = 0
    skip_space = False
    for t, h, op in zip(tokens, hit, ops):
        if t.isspace():
            if not skip_space:
                out.append(t)
            skip_space = False
            continue
        skip_space = False
        if not h:
            out.append(t)
            continue
        edits += 1
        is_cjk = _IS_CJK.fullmatch(t) is not None
        pool = chars if is_cjk else words
        new = pool[rng.integers(0, pool.shape[0])]
        if op == 0:
            skip_space = not out or out[-1].isspace()
        elif op == 1:
            out.append(new)
        else:
            out.append(new)
            if not is_cjk:
                out.append(" ")
            out.append(t)
    text = "".join(out)
    if boilerplate and rng.random() < boilerplate:
        lines = _BOILERPLATE["zh" if cjk else "en"]
        line = lines[rng.integers(0, len(lines))]
        text = f"{line}\n{text}" if rng.random() < 0.5 else f"{text}\n{line}"
    return text, edits


def make_near_duplicates(
    texts,
    n: int = 1000,
    edit_rate: float = 0.05,
    random_state: int | np.random.Generator | None = None,
    *,
    boilerplate: float = 0.2,
    reorder: float = 0.2,
) -> NearDuplicates:
    """Edited copies of texts, with labels: a corpus for controlled experiments.

    Each of the ``n`` copies takes a random original and changes it the way real
    near duplicates differ: every word (every character in Chinese and Japanese text)
    is, with probability ``edit_rate``, deleted, replaced by a word of the corpus, or
    preceded by an inserted one; with probability ``reorder`` two sentences swap
    places; with probability ``boilerplate`` a boilerplate line ("Sent from my
    phone.", "转载请注明出处。", ...) is added at the start or end.

    Parameters
    ----------
    texts : sequence of str
        The originals (a list, array or pandas Series; no missing values).
    n : int, default 1000
        Number of copies.
    edit_rate : float, default 0.05
        Probability that a word is edited, in ``[0, 1]``.
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible copies.
    boilerplate, reorder : float, default 0.2
        Probabilities, per copy, of an added boilerplate line and of swapped sentences.

    Returns
    -------
    NearDuplicates
        Named tuple ``(texts, pairs, labels)``: the originals followed by the copies,
        labelled pairs (each copy with its original, plus as many random pairs of
        different originals), and for each text the position of its original.

    Raises
    ------
    TypeError
        If ``texts`` is one string or holds a value that is not a string.
    ValueError
        If ``texts`` is empty, ``n`` is not a non-negative integer, or a rate is not in
        ``[0, 1]``.

    Notes
    -----
    Labels know only the edits made here: originals that are already near duplicates
    of each other (common in real corpora) carry different labels.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> texts, pairs, labels = sh.datasets.make_near_duplicates(
    ...     ["The cat sat on the mat. It was happy.", "Dogs bark at night."], n=3,
    ...     edit_rate=0.2, random_state=0)
    >>> len(texts), labels.tolist()
    (5, [0, 1, 1, 1, 1])
    >>> pairs.columns.tolist()
    ['i', 'j', 'duplicate', 'edits']
    """
    originals = _check_originals(texts)
    n, rates = _check_counts(n, edit_rate=edit_rate, boilerplate=boilerplate, reorder=reorder)
    rng = np.random.default_rng(random_state)
    m = len(originals)
    sources = rng.integers(0, m, size=n)
    copies, edits = _edited_copies(originals, sources, rng, *rates)
    labels = np.concatenate([np.arange(m), sources]).astype(np.int64)
    pairs = _labelled_pairs(sources, m, edits, labels, rng)
    return NearDuplicates(originals + copies, pairs, labels)


def _check_counts(n, **rates) -> tuple[int, tuple[float, ...]]:
    """``n`` as a non-negative int and each rate as a float in [0, 1], in their order."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    return int(n), tuple(_check_rate(name, value) for name, value in rates.items())


def _edited_copies(originals: list[str], sources: np.ndarray, rng, edit_rate: float,
                   boilerplate: float, reorder: float) -> tuple[list[str], np.ndarray]:
    """The copy of ``originals[s]`` for each ``s`` of ``sources``, and its word edits."""
    words, chars = _vocabulary(originals)
    copies: list[str] = []
    edits = np.zeros(sources.shape[0], dtype=np.int64)
    for c, src in enumerate(sources):
        text, edits[c] = _edit_one(originals[src], rng, edit_rate, boilerplate, reorder,
                                   words, chars)
        copies.append(text)
    return copies, edits


def _check_originals(texts) -> list[str]:
    """The originals as a non-empty list of strings, naming the first bad value."""
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not one string")
    originals = list(texts)
    for pos, t in enumerate(originals):
        if not isinstance(t, str):
            raise TypeError(
                f"texts[{pos}] is {type(t).__name__} ({t!r:.40}), not a string; drop or "
                "fill missing texts first"
            )
    if not originals:
        raise ValueError("texts is empty: there is nothing to copy")
    return originals


def _labelled_pairs(sources: np.ndarray, m: int, edits: np.ndarray, labels: np.ndarray,
                    rng) -> pd.DataFrame:
    """Each copy with its original (duplicates), then as many random non-duplicates."""
    n = sources.shape[0]
    pos_i = sources.astype(np.int64)
    pos_j = m + np.arange(n, dtype=np.int64)
    neg_i, neg_j = _negative_pairs(labels, n, rng)
    return pd.DataFrame({
        "i": np.concatenate([pos_i, neg_i]),
        "j": np.concatenate([pos_j, neg_j]),
        "duplicate": np.concatenate([np.ones(pos_i.shape[0], bool),
                                     np.zeros(neg_i.shape[0], bool)]),
        "edits": np.concatenate([edits, np.zeros(neg_i.shape[0], np.int64)]),
    })


def _negative_pairs(labels: np.ndarray, count: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``count`` distinct random pairs ``i < j`` with different labels."""
    total = labels.shape[0]
    if count == 0 or np.unique(labels).shape[0] < 2:
        e = np.empty(0, dtype=np.int64)
        return e, e.copy()
    found = np.empty(0, dtype=np.int64)
    for _ in range(20):
        a = rng.integers(0, total, size=2 * count + 16)
        b = rng.integers(0, total, size=2 * count + 16)
        ok = labels[a] != labels[b]
        lo, hi = np.minimum(a[ok], b[ok]), np.maximum(a[ok], b[ok])
        found = np.unique(np.concatenate([found, lo * total + hi]))
        if found.shape[0] >= count:
            break
    found = np.sort(rng.permutation(found)[:count])
    return found // total, found % total
