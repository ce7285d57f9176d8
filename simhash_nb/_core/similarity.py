"""The angle relation: shingle-set similarity to Hamming threshold, and back.

With binary weights a SimHash bit is the sign of a random projection of the document's
0/1 shingle vector (Charikar 2002), so two documents whose vectors make the angle
``theta`` differ in each bit with probability ``theta / pi``: their expected distance
is ``bits * theta / pi``, with ``cos(theta) = |A & B| / sqrt(|A| |B|)``. For a Jaccard
similarity ``s = |A & B| / |A | B|`` the cosine is smallest, ``2 s / (1 + s)``, when the
two sets have the same size, so

    k(s) = round(bits * arccos(2 s / (1 + s)) / pi)

is the distance of a pair *at* similarity ``s`` in that worst case. Jaccard 0.7 gives
k = 12 of 64 bits and 25 of 128; on the bundled corpora these are the best thresholds
(or within 0.01-0.04 F1 of them) against exact Jaccard >= 0.7 ground truth.
"""

from __future__ import annotations

import math
import numbers

from ..config import config
from .validation import check_fraction, check_k

__all__ = ["k_for_similarity", "similarity_for_k"]


def check_similarity(similarity, name: str = "similarity") -> float:
    """A similarity in (0, 1]."""
    return check_fraction(similarity, name)


def k_for_similarity(similarity: float, bits: int = 64) -> int:
    """Hamming threshold matching a shingle-set Jaccard ``similarity``.

    Parameters
    ----------
    similarity : float
        Jaccard similarity in (0, 1] of the documents' shingle sets.
    bits : {64, 128}, default 64
        Fingerprint width.

    Returns
    -------
    int
        ``round(bits * arccos(2 s / (1 + s)) / pi)``: the expected distance of two
        equal-sized documents at similarity ``s`` (the largest for that similarity).

    Raises
    ------
    ValueError
        If ``similarity`` is not in (0, 1] or ``bits`` is not 64 or 128.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> sh.k_for_similarity(0.7), sh.k_for_similarity(0.7, bits=128)
    (12, 25)
    >>> sh.k_for_similarity(1.0)
    0
    """
    s = check_similarity(similarity)
    bits = _check_bits(bits)
    cosine = min(1.0, 2.0 * s / (1.0 + s))
    return int(round(bits * math.acos(cosine) / math.pi))


def similarity_for_k(k: int, bits: int = 64) -> float:
    """The Jaccard similarity whose equal-sized pairs are expected ``k`` bits apart.

    Parameters
    ----------
    k : int
        Hamming threshold.
    bits : {64, 128}, default 64
        Fingerprint width.

    Returns
    -------
    float
        ``c / (2 - c)`` with ``c = cos(pi * k / bits)`` (0 when ``k >= bits / 2``).

    Examples
    --------
    >>> import simhash_nb as sh
    >>> round(sh.similarity_for_k(12), 3)
    0.712
    """
    bits = _check_bits(bits)
    k = check_k(k, bits)
    c = math.cos(math.pi * k / bits)
    return max(0.0, c / (2.0 - c))


def resolve_k(k, similarity, bits: int) -> int:
    """The threshold of a search: ``k`` as given, else from ``similarity``, else from
    ``config["default_similarity"]``. Giving both is an error."""
    if k is not None and similarity is not None:
        raise ValueError(
            f"pass k or similarity, not both (got k={k!r}, similarity={similarity!r}); "
            f"similarity={similarity!r} means k={k_for_similarity(similarity, bits)} at "
            f"{bits} bits"
        )
    if k is not None:
        return check_k(k, bits)
    if similarity is None:
        similarity = config["default_similarity"]
    return k_for_similarity(similarity, bits)


def _check_bits(bits) -> int:
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral) or bits not in (64, 128):
        raise ValueError(f"bits must be 64 or 128, got {bits!r}")
    return int(bits)
