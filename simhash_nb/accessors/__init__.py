"""pandas accessors: ``Series.simhash`` and ``DataFrame.simhash``.

``import simhash_nb`` registers them without importing pandas: if pandas is already
imported they are registered at once, otherwise the moment pandas is first imported (a
one-shot import hook), so ``import simhash_nb`` stays as fast as it is without pandas.

Fingerprints in pandas
----------------------
- **64 bits**: a nullable ``UInt64`` Series; a missing text gives ``<NA>``.
- **128 bits**: an Arrow ``fixed_size_binary(16)`` Series (``binary[16][pyarrow]``): the
  16 bytes are the 128-bit fingerprint ``hi * 2**64 + lo`` in big-endian order, so
  ``value.hex()`` is its 32-digit hexadecimal form; a missing text gives ``<NA>``.
  (The core API's ``uint64[n, 2]`` holds ``lo, hi`` in each row.)

Every accessor method takes either kind. The :class:`~simhash_nb.FingerprintSpec` that
made a fingerprint Series travels in ``Series.attrs["simhash_spec"]`` (JSON); a
DataFrame keeps ``attrs["simhash_spec"] = {column: JSON}``. Comparing fingerprints of
two different known specs raises :class:`~simhash_nb.SpecMismatchError`, and so does
``pd.concat`` or ``pd.merge`` of frames (or Series) whose fingerprint column of one
name has different specs (pandas compares the inputs' ``attrs``; the records there
refuse to compare equal). Equal specs survive the concat; where pandas drops ``attrs``
(inputs with differing ``attrs``, one of them without a spec, say) the spec is unknown,
and :func:`~simhash_nb.write_parquet` warns.

Hexadecimal fingerprints, as ``simhash-nb fingerprint`` writes them to CSV and JSON
Lines, are read as fingerprints from a ``"simhash"`` string column whose every present
value has 16 hexadecimal digits (or every one 32); see
:class:`SimhashSeriesAccessor` and :meth:`SimhashSeriesAccessor.from_hex`.

Missing texts (None, NaN, ``pd.NA``) get a missing fingerprint and are left out of pairs
and clusters (their cluster label is ``<NA>``); :meth:`SimhashSeriesAccessor.dedupe`
keeps them (a missing text is nobody's duplicate).
"""

import importlib

from .registration import install, register

__all__ = ["SPEC_ATTR", "SimhashDataFrameAccessor", "SimhashSeriesAccessor", "install",
           "register"]

# the accessor classes import pandas: they load on first use, not with ``import simhash_nb``
_LAZY = {"SPEC_ATTR": ".._frames.attrs", "SimhashDataFrameAccessor": ".frame",
         "SimhashSeriesAccessor": ".series"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
