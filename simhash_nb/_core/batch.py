"""FeatureBatch, the hub type: features of a batch of documents in CSR layout (a leaf)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["FeatureBatch", "invalid_weight_error"]


@dataclass(frozen=True)
class FeatureBatch:
    """Features of a batch of documents in CSR layout.

    Document ``i`` has features ``hashes[indptr[i]:indptr[i + 1]]`` with the matching
    ``weights``. Every feature source (built-in shingles, jieba, scikit-learn, hashes
    users bring) ends here, and one kernel fingerprints them all.

    Attributes
    ----------
    indptr : ndarray of int64, shape (n + 1,)
    hashes : ndarray of uint64, shape (nnz,)
    weights : ndarray of float32 or float64, shape (nnz,)
        Finite and non-negative.

    Examples
    --------
    >>> import numpy as np
    >>> fb = FeatureBatch.from_lists([np.array([1, 2], dtype=np.uint64), []])
    >>> len(fb), fb.indptr.tolist(), fb.weights.tolist()
    (2, [0, 2, 2], [1.0, 1.0])
    """

    indptr: np.ndarray
    hashes: np.ndarray
    weights: np.ndarray

    def __len__(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def n_features(self) -> np.ndarray:
        """Number of features of each document."""
        return np.diff(self.indptr)

    def validated(self, *, check_weights: bool = True) -> FeatureBatch:
        """Check dtypes, shapes and values; return a batch ready for the kernels.

        ``check_weights=False`` skips the pass over the weights, for callers whose
        kernel checks each weight as it reads it (see :func:`invalid_weight_error`).

        Parameters
        ----------
        check_weights : bool, default True
            Check that every weight is finite and >= 0.

        Returns
        -------
        FeatureBatch
            ``int64`` indptr, ``uint64`` hashes and ``float32`` or ``float64`` weights
            (integer or boolean weights become ``float64``), contiguous.

        Raises
        ------
        TypeError
            If indptr is not integers, hashes not ``uint64`` or weights not numbers.
        ValueError
            If the shapes or offsets are inconsistent, or (with ``check_weights``) a
            weight is negative or not finite.
        """
        indptr = np.asarray(self.indptr)
        hashes = np.asarray(self.hashes)
        weights = np.asarray(self.weights)
        if indptr.ndim != 1 or indptr.shape[0] < 1:
            raise ValueError("indptr must be a 1-D array of n + 1 offsets")
        if not np.issubdtype(indptr.dtype, np.integer):
            raise TypeError(f"indptr must be integers, got {indptr.dtype}")
        indptr = indptr.astype(np.int64, copy=False)
        if hashes.dtype != np.uint64:
            raise TypeError(f"hashes must be uint64, got {hashes.dtype}")
        if weights.dtype not in (np.float32, np.float64):
            if np.issubdtype(weights.dtype, np.integer) or weights.dtype == np.bool_:
                weights = weights.astype(np.float64)
            else:
                raise TypeError(f"weights must be float32 or float64, got {weights.dtype}")
        if hashes.ndim != 1 or weights.shape != hashes.shape:
            raise ValueError(
                f"hashes and weights must be 1-D of equal length, got {hashes.shape} "
                f"and {weights.shape}"
            )
        if indptr[0] != 0 or indptr[-1] != hashes.shape[0] or np.any(np.diff(indptr) < 0):
            raise ValueError(
                "indptr must start at 0, never decrease, and end at len(hashes) "
                f"({hashes.shape[0]}); got start {indptr[0]}, end {indptr[-1]}"
            )
        if check_weights:
            if (~np.isfinite(weights) | (weights < 0)).any():
                raise invalid_weight_error(indptr, weights)
        return FeatureBatch(
            np.ascontiguousarray(indptr),
            np.ascontiguousarray(hashes),
            np.ascontiguousarray(weights),
        )

    @classmethod
    def from_lists(
        cls,
        hashes: Sequence[Sequence[int]],
        weights: Sequence[Sequence[float]] | None = None,
    ) -> FeatureBatch:
        """Build a batch from per-document hash arrays (and optional weight arrays).

        Parameters
        ----------
        hashes : sequence of sequences of int
            The feature hashes of each document (non-negative, below ``2**64``).
        weights : sequence of sequences of float, optional
            Their weights, one array per document (default: 1 each).

        Returns
        -------
        FeatureBatch
            Validated (see :meth:`validated`).

        Raises
        ------
        TypeError
            If a document's hashes are not integers.
        ValueError
            If ``weights`` does not match ``hashes`` document by document, a hash is
            negative or too large, or a weight is negative or not finite.

        Examples
        --------
        >>> FeatureBatch.from_lists([[5, 6]], [[1.0, 0.5]]).weights.tolist()
        [1.0, 0.5]
        """
        arrays = [_as_hash_array(h, i) for i, h in enumerate(hashes)]
        lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
        indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        flat = np.concatenate(arrays) if arrays else np.empty(0, np.uint64)
        if weights is None:
            w = np.ones(flat.shape[0], dtype=np.float64)
        else:
            if len(weights) != len(arrays):
                raise ValueError(f"got {len(arrays)} hash arrays but {len(weights)} weight arrays")
            ws = [np.asarray(x, dtype=np.float64).reshape(-1) for x in weights]
            for i, (a, x) in enumerate(zip(arrays, ws, strict=True)):
                if a.shape != x.shape:
                    raise ValueError(
                        f"document {i} has {a.shape[0]} hashes but {x.shape[0]} weights"
                    )
            w = np.concatenate(ws) if ws else np.empty(0, np.float64)
        return cls(indptr, flat, w).validated()


def invalid_weight_error(indptr: np.ndarray, weights: np.ndarray, doc: int = 0) -> ValueError:
    """The error naming the first weight from document ``doc`` on that is < 0 or not finite."""
    start = int(indptr[doc])
    rest = weights[start:]
    f = start + int(np.flatnonzero(~np.isfinite(rest) | (rest < 0))[0])
    doc = int(np.searchsorted(indptr, f, side="right") - 1)
    return ValueError(
        f"weights must be finite and >= 0; feature {f} (document {doc}) has {weights[f]}"
    )


def _as_hash_array(h, i: int) -> np.ndarray:
    arr = np.asarray(h)
    if arr.dtype == object or arr.dtype.kind == "f" and not isinstance(h, np.ndarray):
        # numpy reads a list holding Python ints >= 2**63 as float64: redo it exactly
        values = np.asarray(h, dtype=object).reshape(-1)
        if values.size and all(isinstance(x, (int, np.integer))
                               and not isinstance(x, (bool, np.bool_)) for x in values):
            if any(x < 0 for x in values):
                raise ValueError(f"document {i}: feature hashes must be non-negative (uint64)")
            try:
                return np.array(values.tolist(), dtype=np.uint64)
            except OverflowError:
                raise ValueError(f"document {i}: feature hashes must be below 2**64") from None
        if arr.dtype == object:
            arr = np.asarray(values.tolist())
    if arr.size == 0:
        return np.empty(0, np.uint64)
    if arr.dtype == np.uint64:
        return arr.reshape(-1)
    if np.issubdtype(arr.dtype, np.integer):
        if (arr < 0).any():
            raise ValueError(f"document {i}: feature hashes must be non-negative (uint64)")
        return arr.astype(np.uint64).reshape(-1)
    raise TypeError(
        f"document {i}: feature hashes must be unsigned 64-bit integers, got {arr.dtype}"
    )
