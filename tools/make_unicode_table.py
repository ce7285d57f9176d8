"""Regenerate ``simhash_nb/data/unicode_classes.npy``: the code point classes of the word tokenizer.

The table is shipped (not computed at run time) so that word tokenisation, and so every
fingerprint, is the same whatever Unicode version the running Python has. Changing it
changes fingerprints: bump ``simhash_nb._core.spec.FORMAT_VERSION`` when you do.

Classes: 0 = other separator, 1 = word character (Unicode general category L*, M*, N* or
Pc, the UTS #18 notion of ``\\w``), 2 = a CJK ideograph or kana, which is a word on its own,
3 = punctuation or symbol (P* or S*, not Pc), 4 = white space (``str.isspace``). The word
tokenizer treats 0, 3 and 4 alike; the ``punct`` and ``whitespace`` normalisations use 3 and 4.
Stored as run-length ranges, int32 ``[m, 2]``: (first code point of the run, class).

Run: ``python tools/make_unicode_table.py``.
"""

import unicodedata
from pathlib import Path

import numpy as np

CJK_RANGES = [
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x2FA1F),  # Extensions B-F, Compatibility Supplement
    (0x30000, 0x323AF),  # Extensions G-H
]


def classify(cp: int) -> int:
    ch = chr(cp)
    cat = unicodedata.category(ch)
    if ch.isspace():
        return 4
    if cat[0] not in "LMN" and cat != "Pc":
        return 3 if cat[0] in "PS" else 0
    if any(lo <= cp <= hi for lo, hi in CJK_RANGES):
        return 2
    return 1


def main() -> None:
    runs = []
    prev = None
    for cp in range(0x110000):
        c = classify(cp)
        if c != prev:
            runs.append((cp, c))
            prev = c
    out = Path(__file__).resolve().parents[1] / "simhash_nb" / "data" / "unicode_classes.npy"
    np.save(out, np.array(runs, dtype=np.int32), allow_pickle=False)
    print(f"{len(runs)} runs, Unicode {unicodedata.unidata_version} -> {out}")


if __name__ == "__main__":
    main()
