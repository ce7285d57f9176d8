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
two different known specs raises :class:`~simhash_nb.SpecMismatchError`.

Missing texts (None, NaN, ``pd.NA``) get a missing fingerprint and are left out of pairs
and clusters (their cluster label is ``<NA>``); :meth:`SimhashSeriesAccessor.dedupe`
keeps them (a missing text is nobody's duplicate).
"""

from .._frames import SPEC_ATTR
from .frame import SimhashDataFrameAccessor
from .registration import install, register
from .series import SimhashSeriesAccessor

__all__ = ["SPEC_ATTR", "SimhashDataFrameAccessor", "SimhashSeriesAccessor", "install",
           "register"]
