"""Bundled sample corpora (see ``simhash_nb/data/README.md`` for sources and licences)."""

from __future__ import annotations

import gzip
import json
from importlib import resources

import pandas as pd

__all__ = ["load_fortunes", "load_gospels", "load_licences", "load_debian_zh", "SAMPLES"]

SAMPLES = {
    "licences": "spdx_licences.jsonl.gz",
    "fortunes": "fortunes_en.jsonl.gz",
    "gospels": "kjv_gospels.jsonl.gz",
    "debian_zh": "debian_desc_zh_CN.jsonl.gz",
}


def load_sample(name: str) -> pd.DataFrame:
    """One bundled corpus as a DataFrame with columns ``id``, ``text``, ``group``.

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


def load_licences() -> pd.DataFrame:
    """104 SPDX licence texts (CC0); ``group`` is the licence family.

    Examples
    --------
    >>> len(load_licences())
    104
    """
    return load_sample("licences")


def load_fortunes() -> pd.DataFrame:
    """3,000 English fortunes (BSD), rich in near duplicates.

    Examples
    --------
    >>> len(load_fortunes())
    3000
    """
    return load_sample("fortunes")


def load_gospels() -> pd.DataFrame:
    """3,779 King James Gospel verses (public domain), with parallel passages.

    Examples
    --------
    >>> load_gospels()["id"].iloc[0]
    'Mat1:1'
    """
    return load_sample("gospels")


def load_debian_zh() -> pd.DataFrame:
    """1,234 Debian package descriptions in Simplified Chinese; ``group`` is the source package.

    Examples
    --------
    >>> load_debian_zh()["group"].nunique()
    808
    """
    return load_sample("debian_zh")
