"""Choosing k: :class:`Recommendation` and :func:`recommend_k` from a threshold table."""


from __future__ import annotations

import dataclasses

import numpy as np

from ..similarity import similarity_for_k
from ..validation import check_fraction
from .inputs import check_table

# --- recommendation -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Recommendation:
    """A Hamming threshold chosen from a :func:`threshold_table`, and why.

    Attributes
    ----------
    k : int
        The threshold (pairs within ``k`` bits are duplicates).
    criterion : str
        What was asked: ``"max f1"``, ``"precision >= 0.95"`` or ``"recall >= 0.95"``.
    met : bool
        False when no threshold reaches the target (then ``k`` is the closest).
    reason : str
        One sentence saying why this ``k``.
    precision, recall, f1 : float
        The table's values at ``k`` (NaN where undefined).
    tp, fp, fn : int
        Counts at ``k``.
    similarity : float
        The Jaccard similarity the angle relation maps ``k`` to
        (:func:`~simhash_nb.similarity_for_k`, at the table's width): pass it as
        ``similarity=`` to search with this ``k`` at another width; NaN if unknown.

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> table = sh.threshold_table(np.array([0, 1, 7, 255], dtype=np.uint64), [0, 0, 0, 1])
    >>> rec = sh.recommend_k(table)
    >>> rec.k, rec.criterion, rec.met, int(rec)
    (3, 'max f1', True, 3)
    """

    k: int
    criterion: str
    met: bool
    reason: str
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    similarity: float = float("nan")

    def __repr__(self) -> str:
        return (
            f"Recommendation(k={self.k}, precision={self.precision:.3f}, "
            f"recall={self.recall:.3f}, f1={self.f1:.3f}, similarity={self.similarity:.3f}, "
            f"met={self.met})\n  {self.reason}"
        )

    def __int__(self) -> int:
        return self.k

    def __index__(self) -> int:
        return self.k


def recommend_k(
    table,
    target: str | None = None,
    *,
    precision: float | None = None,
    recall: float | None = None,
) -> Recommendation:
    """Choose a Hamming threshold from a :func:`threshold_table`.

    Give one target:

    - ``target="f1"`` (the default): the ``k`` with the highest F1 (ties: the smallest);
    - ``precision=p``: among thresholds with precision ``>= p``, the one with the highest
      recall (ties: the smallest ``k``) — "as many duplicates as possible while at most
      ``1 - p`` of the reported pairs are wrong";
    - ``recall=r``: among thresholds with recall ``>= r``, the one with the highest
      precision (ties: the smallest ``k``).

    When no threshold reaches a precision or recall target, the closest one is returned
    with ``met=False`` and the reason says so.

    Parameters
    ----------
    table : pandas.DataFrame
        As returned by :func:`threshold_table`.
    target : {"f1"}, optional
    precision, recall : float, optional
        Targets in ``(0, 1]``.

    Returns
    -------
    Recommendation
        ``k``, its precision, recall and F1, and ``reason``; usable as an int.

    Raises
    ------
    TypeError
        If ``table`` is not a DataFrame, or ``precision`` or ``recall`` is not a number.
    ValueError
        If more than one target is given, ``target`` is not "f1", ``precision`` or
        ``recall`` is not in ``(0, 1]``, ``table`` is empty or lacks the columns of
        :func:`threshold_table`, or the target is undefined at every threshold (for
        instance recall with a ground truth without duplicate pairs).

    Examples
    --------
    >>> import numpy as np, simhash_nb as sh
    >>> fps = np.array([0b0000, 0b0001, 0b0111, 0b1111_1111], dtype=np.uint64)
    >>> table = sh.threshold_table(fps, [0, 0, 0, 1])
    >>> rec = sh.recommend_k(table)
    >>> rec.k, rec.f1
    (3, 1.0)
    >>> sh.recommend_k(table, recall=0.5).k
    2
    """
    c = _Columns.of(_check_request(table, target, precision, recall))
    if precision is not None:
        return _for_precision(c, check_fraction(precision, "precision"))
    if recall is not None:
        return _for_recall(c, check_fraction(recall, "recall"))
    return _best_f1(c)


_COLUMNS = ("k", "tp", "fp", "fn", "precision", "recall", "f1")


def _check_request(table, target, precision, recall):
    """Validation of :func:`recommend_k`: one target, a table from threshold_table."""
    given = [name for name, v in (("target", target), ("precision", precision),
                                  ("recall", recall)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give one target, not {' and '.join(given)}")
    if target is not None and target != "f1":
        raise ValueError(
            f"target must be 'f1'; for precision or recall targets pass precision=0.95 "
            f"or recall=0.95 (got target={target!r})"
        )
    return check_table(table, _COLUMNS)


@dataclasses.dataclass(frozen=True)
class _Columns:
    """A threshold table's columns as arrays, and how to make a Recommendation of a row."""

    table: object
    k: np.ndarray
    p: np.ndarray
    r: np.ndarray
    f: np.ndarray

    @classmethod
    def of(cls, table) -> _Columns:
        return cls(table, table["k"].to_numpy(),
                   *(table[c].to_numpy(dtype=np.float64) for c in ("precision", "recall", "f1")))

    @property
    def span(self) -> str:
        return f"k = {int(self.k.min())}..{int(self.k.max())}"

    def pick(self, row: int, criterion: str, met: bool, reason: str) -> Recommendation:
        bits, k = self.table.attrs.get("bits"), int(self.k[row])
        sim = similarity_for_k(k, bits) if bits in (64, 128) and k < bits else float("nan")
        tp, fp, fn = (int(self.table[c].iloc[row]) for c in ("tp", "fp", "fn"))
        return Recommendation(k, criterion, met, reason, float(self.p[row]),
                              float(self.r[row]), float(self.f[row]), tp, fp, fn, sim)


def _first_max(values: np.ndarray, mask: np.ndarray) -> int:
    """The first row of the largest value among ``mask`` (ties: the smallest k)."""
    v = np.where(mask, values, -np.inf)
    return int(np.flatnonzero(v == v.max())[0])


def _best_f1(c: _Columns) -> Recommendation:
    ok = ~np.isnan(c.f)
    if not ok.any():
        raise ValueError(
            "no threshold has a defined F1: " + (c.table.attrs.get("note") or
            "no pairs are predicted or the truth has no duplicates")
        )
    row = _first_max(c.f, ok)
    return c.pick(row, "max f1", True,
                  f"k={int(c.k[row])} has the highest F1 ({c.f[row]:.3f}) among {c.span}: "
                  f"precision {c.p[row]:.3f}, recall {c.r[row]:.3f}")


def _for_precision(c: _Columns, goal: float) -> Recommendation:
    k, p, r = c.k, c.p, c.r
    ok = ~np.isnan(p) & (p >= goal)
    if ok.any():
        row = _first_max(np.nan_to_num(r, nan=-1.0), ok)
        return c.pick(row, f"precision >= {goal:g}", True,
                      f"k={int(k[row])} has the highest recall ({r[row]:.3f}) among the "
                      f"thresholds with precision >= {goal:g} (its precision: {p[row]:.3f})")
    defined = ~np.isnan(p)
    if not defined.any():
        raise ValueError("no threshold has a defined precision: no pairs are predicted")
    row = _first_max(p, defined)
    return c.pick(row, f"precision >= {goal:g}", False,
                  f"no threshold in {c.span} reaches precision {goal:g}; k={int(k[row])} has "
                  f"the highest precision ({p[row]:.3f}), recall {r[row]:.3f}")


def _for_recall(c: _Columns, goal: float) -> Recommendation:
    k, p, r = c.k, c.p, c.r
    defined = ~np.isnan(r)
    if not defined.any():
        raise ValueError(
            "recall is undefined at every threshold: the ground truth has no duplicate pairs"
        )
    ok = defined & (r >= goal)
    if ok.any():
        row = _first_max(np.nan_to_num(p, nan=-1.0), ok)
        return c.pick(row, f"recall >= {goal:g}", True,
                      f"k={int(k[row])} has the highest precision ({p[row]:.3f}) among the "
                      f"thresholds with recall >= {goal:g} (its recall: {r[row]:.3f})")
    row = _first_max(r, defined)
    return c.pick(row, f"recall >= {goal:g}", False,
                  f"no threshold in {c.span} reaches recall {goal:g}; k={int(k[row])} has the "
                  f"highest recall ({r[row]:.3f}), precision {p[row]:.3f}")
