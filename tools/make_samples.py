"""Rebuild the small sample corpora bundled in ``simhash_nb/data/`` from ``../shared/data``.

Excerpts only (licences in ``simhash_nb/data/README.md``). Deterministic: the same
source files give the same samples. Run: ``python tools/make_samples.py``.
"""

import gzip
import json
import re
from pathlib import Path

import numpy as np

import simhash_nb as sh

SRC = Path(__file__).resolve().parents[2] / "shared" / "data"
DST = Path(__file__).resolve().parents[1] / "simhash_nb" / "data"


def read(name):
    with gzip.open(SRC / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def write(name, rows):
    keep = ("id", "text", "group")
    with gzip.GzipFile(DST / name, "wb", mtime=0) as raw:
        for r in rows:
            line = json.dumps({k: r.get(k) for k in keep}, ensure_ascii=False) + "\n"
            raw.write(line.encode("utf-8"))
    print(f"{name}: {len(rows)} documents, {(DST / name).stat().st_size:,} bytes")


def licences():
    rows = read("spdx_2_5_1_texts.jsonl.gz")
    family = re.compile(r"^(GPL|LGPL|AGPL|GFDL|CC-BY|BSD|MIT|Apache|MPL|EPL|OFL|Artistic|"
                        r"CECILL|EUPL|OLDAP|Zlib|ISC|X11|0BSD)")
    picked = [r for r in rows if family.match(r["id"]) and len(r["text"]) < 40_000]
    for r in picked:
        r["group"] = re.split(r"[-.]", r["id"])[0]
    write("spdx_licences.jsonl.gz", picked)


def fortunes(n=3000):
    rows = read("fortunes_en.jsonl.gz")
    texts = [r["text"] for r in rows]
    fps = sh.fingerprint(texts, tokenizer="word", ngram=1)
    p = sh.pairs_within(fps, 12)
    near = np.unique(np.concatenate([p.i, p.j]))
    rng = np.random.default_rng(0)
    rest = np.setdiff1d(np.arange(len(rows)), near)
    fill = rng.choice(rest, size=max(0, n - near.size), replace=False)
    idx = np.sort(np.concatenate([near, fill]))[:n]
    write("fortunes_en.jsonl.gz", [rows[i] for i in idx])


def gospels():
    rows = read("kjv_verses.jsonl.gz")
    picked = [r for r in rows if re.match(r"^(Mat|Mark|Luke|John)\d", r["id"])]
    write("kjv_gospels.jsonl.gz", picked)


def debian_zh():
    write("debian_desc_zh_CN.jsonl.gz", read("debian_desc_zh_CN.jsonl.gz"))


if __name__ == "__main__":
    licences()
    fortunes()
    gospels()
    debian_zh()
