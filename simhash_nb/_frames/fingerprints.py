"""The fingerprint road of every face: a Series' fingerprints (:class:`Prints`) and pairs.

Fingerprint a text Series or read a fingerprint one (:func:`prints`), search pairs of
the rows that are present (:func:`search_pairs`) and give them the caller's index labels
(:func:`pairs_frame`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._core.fingerprint import fingerprint_texts
from .._core.pairs import Pairs
from .._core.search import near_duplicates
from .._core.spec import FingerprintSpec, check_compatible
from .._core.tokenizers import prepare, split_options  # the options, defined once there
from .attrs import SPEC_ATTR, spec_of, spec_record
from .columns import fingerprint_array, fingerprint_values


@dataclass
class Prints:
    """Fingerprints of a Series: core array, validity, spec (None: unknown)."""

    fps: np.ndarray
    valid: np.ndarray
    spec: FingerprintSpec | None

    @property
    def positions(self) -> np.ndarray:
        return np.flatnonzero(self.valid)

    def present(self) -> np.ndarray:
        return self.fps if self.valid.all() else self.fps[self.valid]


def prints(series, kind: str, options: dict[str, Any], what: str = "Series") -> Prints:
    """Fingerprint a text Series (with ``options``) or read a fingerprint Series."""
    spec_options, run = split_options(dict(options))
    if kind == "text":
        spec, extras = prepare(**spec_options)
        fps, _, valid = fingerprint_texts(series, spec, run["n_jobs"], extras, run["progress"])
        return Prints(fps, np.asarray(valid, dtype=bool), spec)
    if spec_options:
        raise TypeError(
            f"the {what} holds fingerprints already; fingerprint options "
            f"{sorted(spec_options)} apply only to text"
        )
    fps, valid = fingerprint_values(series)
    return Prints(fps, valid, spec_of(series))


def fingerprint_series(series, p: Prints, name):
    out = pd.Series(fingerprint_array(p.fps, p.valid), index=series.index, name=name, copy=False)
    attrs = {k: v for k, v in series.attrs.items() if k != SPEC_ATTR}
    if p.spec is not None:
        attrs[SPEC_ATTR] = spec_record(p.spec)
    out.attrs = attrs
    return out


def unique_index(index, what: str) -> None:
    if not index.is_unique:
        dup = index[index.duplicated()][:3].tolist()
        raise ValueError(
            f"the {what} index has duplicate labels (for example {dup}), so pairs of labels "
            "would be ambiguous; call .reset_index() first"
        )


def pairs_frame(pairs, left_index, left_pos, right_index, right_pos):
    i = left_pos[pairs.i]
    j = right_pos[pairs.j]
    return pd.DataFrame(
        {"left": left_index.take(i), "right": right_index.take(j), "distance": pairs.distance}
    )


SEARCH_OPTIONS = ("similarity", "recall", "method", "blocks", "random_state")
"""Options of the search itself (passed to the core with ``k`` and ``max_pairs``)."""


def split_search(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(search options, the rest)`` of a face method's ``**options``."""
    search = {k: options[k] for k in SEARCH_OPTIONS if k in options}
    return search, {k: v for k, v in options.items() if k not in SEARCH_OPTIONS}


def search_pairs(p: Prints, q: Prints | None, n_jobs=None, **search):
    """Pairs of the present rows (positions among them), as :func:`near_duplicates`."""
    if not p.valid.any() or (q is not None and not q.valid.any()):
        if q is not None:
            check_compatible(p.spec, q.spec)
        return Pairs.empty()
    if q is None:
        return near_duplicates(p.present(), n_jobs=n_jobs, **search)
    check_compatible(p.spec, q.spec)
    return near_duplicates(p.present(), against=q.present(), n_jobs=n_jobs, **search)
