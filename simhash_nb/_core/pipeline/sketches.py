"""The sketches' check of the verified path: a candidate whose documents' one-permutation
MinHash sketches (:mod:`simhash_nb._kernels.sketches`, 16 bins of 4 bits, 8 bytes a
document) agree in too few bins is turned away before its shingles are read.

Most candidates of a large corpus are unrelated documents whose 128-bit fingerprints
fell within ``k`` bits by chance (the binomial tail of random pairs grows with the
square of the corpus: 97% of the 39M candidates at 10M documents). Their sketches agree
in about one bin of 16; a pair at the threshold ``t`` agrees in at least as many bins
as a Binomial(16, t) count. The least count kept is the largest at which such a pair
falls short with probability at most ``config["verify_sketch_miss"]`` (1e-4): the
check lowers the recall by at most that, and every pair kept is still verified exactly.
"""

from __future__ import annotations

import math

import numpy as np

from ..._kernels import sketches as _sk
from ...config import config
from ..parallel import deferred_interrupt

__all__ = ["least_agreeing", "sketch", "sketches_agree"]


def least_agreeing(threshold: float, miss: float | None = None, bins: int = _sk.BINS) -> int:
    """The fewest agreeing bins (of ``bins``, each agreeing with probability at least
    the Jaccard) that a candidate needs at Jaccard ``threshold``: a pair at the threshold
    agrees in fewer with probability at most ``miss`` (default
    ``config["verify_sketch_miss"]``); 0 keeps every candidate.

    Examples
    --------
    >>> least_agreeing(0.7), least_agreeing(0.9), least_agreeing(0.3), least_agreeing(0.7, 0)
    (4, 9, 0, 0)
    >>> least_agreeing(0.7, bins=64)
    31
    """
    miss = float(config["verify_sketch_miss"] if miss is None else miss)
    n, least, below = int(bins), 0, 0.0
    while least < n:
        below += math.comb(n, least) * threshold**least * (1 - threshold) ** (n - least)
        if below > miss:  # P(count <= least) is past the miss: keep from least on
            break
        least += 1
    return least


def sketch(indptr: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """The 64-bit sketch of each document of a CSR of shingle hashes.

    Examples
    --------
    >>> import numpy as np
    >>> sk = sketch(np.array([0, 2, 4, 4]), np.array([1, 2**63, 1, 2**63], np.uint64))
    >>> [hex(int(x)) for x in sk]
    ['0x900000002', '0x900000002', '0x0']
    """
    out = np.empty(indptr.shape[0] - 1, dtype=np.uint64)
    with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
        return _sk.oph_sketches(np.asarray(indptr, np.int64), hashes, out)


def sketches_agree(sketch_a: np.ndarray, sketch_b: np.ndarray, threshold: float) -> np.ndarray:
    """Whether each pair of sketches agrees in enough bins to be verified at
    ``threshold`` (:func:`least_agreeing`).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([0x1111111111111111, 0x1111111111111111], np.uint64)
    >>> b = np.array([0x1111111111111111, 0x2222222222222222], np.uint64)
    >>> sketches_agree(a, b, 0.7).tolist()
    [True, False]
    """
    out = np.ones(sketch_a.shape[0], dtype=np.bool_)
    least = least_agreeing(threshold)
    if least == 0 or out.shape[0] == 0:
        return out
    with deferred_interrupt():  # boxing the result must finish (see deferred_interrupt)
        return _sk.sketches_agree(sketch_a, sketch_b, least, out)
