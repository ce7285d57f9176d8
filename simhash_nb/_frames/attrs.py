"""The fingerprint spec in pandas ``attrs``, in records that make mixing specs raise.

pandas keeps ``attrs`` through most operations, and through ``pd.concat`` / ``pd.merge``
only when every input's ``attrs`` compare equal (it compares them with ``==``); frames
fingerprinted with different specs would lose their specs silently. The two records
below compare like a str and a dict, except that two records of different specs for
the same column raise SpecMismatchError: that comparison is pandas' own, so the
concat or merge itself refuses to combine them.
"""

from __future__ import annotations

from collections.abc import Mapping

from .._core.spec import FingerprintSpec, SpecMismatchError, check_compatible

SPEC_ATTR = "simhash_spec"
"""Key of the fingerprint spec in ``Series.attrs`` / ``DataFrame.attrs``."""


def _spec_or_none(value) -> FingerprintSpec | None:
    if isinstance(value, FingerprintSpec):
        return value
    try:
        return FingerprintSpec.from_json(value)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _refuse_different(a, b, column) -> None:
    """Raise SpecMismatchError if ``a`` and ``b`` record different specs."""
    if isinstance(a, str) and isinstance(b, str) and str.__eq__(a, b):
        return
    sa, sb = _spec_or_none(a), _spec_or_none(b)
    if sa is None or sb is None:
        return
    try:
        check_compatible(sa, sb)
    except SpecMismatchError as e:
        where = "" if column is None else f"column {column!r}: "
        raise SpecMismatchError(
            f"cannot combine these (pd.concat, pd.merge): {where}{e}. Fingerprint both with one "
            f"spec (.simhash.fingerprint(spec=...)), or drop the fingerprint column and "
            f"its spec (df.attrs.pop({SPEC_ATTR!r})) before combining"
        ) from None


class SpecJSON(str):
    """A spec's JSON in ``Series.attrs``; two of different specs refuse to compare equal."""

    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, SpecJSON):
            _refuse_different(self, other, None)
        return str.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__


class ColumnSpecs(dict):
    """``{column: spec JSON}`` in ``DataFrame.attrs``; two that give one column different
    specs refuse to compare equal."""

    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, ColumnSpecs):
            for col in self.keys() & other.keys():
                _refuse_different(self[col], other[col], col)
        return dict.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None


def spec_record(spec: FingerprintSpec) -> SpecJSON:
    """The ``Series.attrs[SPEC_ATTR]`` value for ``spec``."""
    return SpecJSON(spec.to_json())


def column_specs(specs: Mapping) -> ColumnSpecs:
    """The ``DataFrame.attrs[SPEC_ATTR]`` value: ``{column: JSON}`` of specs or JSON."""
    return ColumnSpecs({col: s.to_json() if isinstance(s, FingerprintSpec) else str(s)
                        for col, s in specs.items()})


def spec_of(series) -> FingerprintSpec | None:
    """The spec recorded in a Series' attrs (its own, or its frame's entry for its name)."""
    got = series.attrs.get(SPEC_ATTR)
    if isinstance(got, dict):
        got = got.get(series.name)
    if got is None:
        return None
    if isinstance(got, FingerprintSpec):
        return got
    return FingerprintSpec.from_json(got)
