"""The fingerprint spec: everything that decides a fingerprint, in one frozen object."""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Mapping
from typing import Any

from .validation import check_bits

FORMAT_VERSION = 1
"""Version of the fingerprint definition. Bump it whenever a fingerprint could change."""

TOKENIZERS = ("char", "word", "jieba", "sklearn", "hashes", "callable")
WEIGHTINGS = ("tf", "binary", "tfidf", "given")
NORMALIZERS = ("html", "nfkc", "lower", "punct", "digits", "whitespace")
"""Normalisation steps, always applied in this order whatever order they are given in."""


class SpecMismatchError(ValueError):
    """Fingerprints made with different specs were compared or combined.

    Examples
    --------
    >>> import simhash_nb as sh
    >>> try:
    ...     sh.check_compatible(sh.FingerprintSpec(), sh.FingerprintSpec(bits=128))
    ... except sh.SpecMismatchError as e:
    ...     print(e)
    fingerprints were made with different specs: bits: 64 != 128
    """


SpecMismatchError.__module__ = "simhash_nb"  # its public home (as numpy's set_module)


@dataclasses.dataclass(frozen=True)
class FingerprintSpec:
    """Every choice that decides a fingerprint.

    Two fingerprints are comparable only when their specs are equal. The spec
    serialises to JSON (:meth:`to_json`) and travels with parquet files and saved
    indexes.

    Parameters
    ----------
    bits : {64, 128}
        Fingerprint width.
    tokenizer : str
        ``"char"`` (character n-grams over code points), ``"word"`` (word n-grams over
        Unicode word characters, CJK ideographs as one-character words), ``"jieba"``,
        ``"sklearn"``, ``"hashes"`` (features the user hashed) or ``"callable"``.
    ngram : int
        Shingle length in code points (char) or words (word).
    weights : str
        ``"tf"`` (occurrence count), ``"binary"``, ``"tfidf"`` or ``"given"``.
    normalize : tuple of str
        Normalisation steps from :data:`NORMALIZERS`.
    seed : int
        Seed of the xxh64 feature hash (0 <= seed < 2**64).
    hash : str
        Feature hash; only ``"xxh64"``.
    params : tuple of (str, value) pairs
        Tokenizer-specific settings (for example a vocabulary checksum).
    version : int
        :data:`FORMAT_VERSION` of the library that made the fingerprints.

    Examples
    --------
    >>> spec = FingerprintSpec(bits=64, tokenizer="word", ngram=1)
    >>> FingerprintSpec.from_json(spec.to_json()) == spec
    True
    """

    bits: int = 64
    tokenizer: str = "char"
    ngram: int = 5
    weights: str = "binary"
    normalize: tuple[str, ...] = ("nfkc", "lower", "punct", "whitespace")
    seed: int = 0
    hash: str = "xxh64"
    params: tuple[tuple[str, Any], ...] = ()
    version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "bits", check_bits(self.bits))
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {TOKENIZERS}, got {self.tokenizer!r}")
        if isinstance(self.ngram, bool) or not isinstance(self.ngram, int) or self.ngram < 1:
            raise ValueError(f"ngram must be an integer >= 1, got {self.ngram!r}")
        if self.weights not in WEIGHTINGS:
            raise ValueError(f"weights must be one of {WEIGHTINGS}, got {self.weights!r}")
        if isinstance(self.normalize, str):
            object.__setattr__(self, "normalize", (self.normalize,))
        steps = tuple(self.normalize or ())
        unknown = [s for s in steps if s not in NORMALIZERS]
        if unknown:
            raise ValueError(f"unknown normalisation steps {unknown}; choose from {NORMALIZERS}")
        object.__setattr__(self, "normalize", tuple(s for s in NORMALIZERS if s in steps))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise TypeError(f"seed must be an int, got {type(self.seed).__name__}")
        if not 0 <= self.seed < 2**64:
            raise ValueError(f"seed must be in [0, 2**64), got {self.seed}")
        if self.hash != "xxh64":
            raise ValueError(f"hash must be 'xxh64', got {self.hash!r}")
        params = self.params.items() if isinstance(self.params, Mapping) else self.params
        object.__setattr__(self, "params", tuple(sorted((str(k), v) for k, v in params)))

    # FingerprintSpec.from_options, the one builder from options, is defined with the
    # options themselves in simhash_nb._core.tokenizers (which builds on this module)

    @property
    def words(self) -> int:
        """Number of uint64 words per fingerprint (1 or 2)."""
        return self.bits // 64

    @classmethod
    def for_language(cls, language: str, *, bits: int = 64) -> FingerprintSpec:
        """The recommended spec for a language (evidence: ``benchmarks/bench_features.py``).

        ``"en"`` and other space-separated languages: character 5-grams; ``"zh"``,
        ``"ja"``: character bigrams (no segmenter needed). Both with binary weights and
        NFKC, lowercase, punctuation and white-space normalisation.

        Parameters
        ----------
        language : str
            A language code such as ``"en"``, ``"zh"`` or ``"ja"``.
        bits : {64, 128}, default 64

        Returns
        -------
        FingerprintSpec

        Raises
        ------
        ValueError
            If ``language`` does not look like a language code.

        Examples
        --------
        >>> FingerprintSpec.for_language("zh").ngram
        2
        """
        cjk = {"zh", "ja", "zh-cn", "zh-tw", "zh-hans", "zh-hant"}
        lang = language.lower()
        if len(lang) < 2 or not lang.replace("-", "").isalpha():
            raise ValueError(f"language must be a code such as 'en' or 'zh', got {language!r}")
        return cls(bits=bits, tokenizer="char", ngram=2 if lang in cjk else 5)

    def replace(self, **changes: Any) -> FingerprintSpec:
        """Return a copy with some fields changed.

        Parameters
        ----------
        **changes
            Fields and their new values.

        Returns
        -------
        FingerprintSpec
        """
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form, as stored in JSON."""
        d = dataclasses.asdict(self)
        d["normalize"] = list(self.normalize)
        d["params"] = dict(self.params)
        return d

    def to_json(self) -> str:
        """Canonical JSON (sorted keys): equal specs give equal strings."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes | Mapping[str, Any]) -> FingerprintSpec:
        """Read a spec written by :meth:`to_json` (or its dict form).

        Parameters
        ----------
        text : str, bytes or mapping
            JSON from :meth:`to_json`, or :meth:`to_dict`'s dict.

        Returns
        -------
        FingerprintSpec
        """
        d = dict(text) if isinstance(text, Mapping) else json.loads(text)
        version = d.get("version")
        if version != FORMAT_VERSION:
            raise SpecMismatchError(
                f"fingerprints were made with format version {version}, this library "
                f"makes version {FORMAT_VERSION}; recompute them"
            )
        known = {f.name for f in dataclasses.fields(cls)}
        extra = set(d) - known
        if extra:
            raise ValueError(f"unknown spec fields {sorted(extra)}")
        d["normalize"] = tuple(d.get("normalize", ()))
        d["params"] = tuple(sorted(dict(d.get("params", {})).items()))
        return cls(**d)


def check_compatible(a: FingerprintSpec | None, b: FingerprintSpec | None) -> None:
    """Raise :class:`SpecMismatchError` if two known specs differ.

    ``None`` stands for "unknown" and is compatible with anything.

    Parameters
    ----------
    a, b : FingerprintSpec or None
        The specs of two sets of fingerprints (``None``: unknown).

    Raises
    ------
    SpecMismatchError
        If both specs are known and differ; the message lists the differing fields.

    Examples
    --------
    >>> check_compatible(FingerprintSpec(), FingerprintSpec())
    >>> check_compatible(FingerprintSpec(bits=64), FingerprintSpec(bits=128))
    Traceback (most recent call last):
    ...
    simhash_nb.SpecMismatchError: fingerprints were made with different specs: bits: 64 != 128
    """
    if a is None or b is None or a == b:
        return
    diffs = [
        f"{f.name}: {getattr(a, f.name)!r} != {getattr(b, f.name)!r}"
        for f in dataclasses.fields(FingerprintSpec)
        if getattr(a, f.name) != getattr(b, f.name)
    ]
    raise SpecMismatchError("fingerprints were made with different specs: " + "; ".join(diffs))


DEFAULT_NGRAM = {"char": 5, "word": 1}


def build_spec(spec: FingerprintSpec | None = None, **options) -> FingerprintSpec:
    """The plain dataclass step under :meth:`FingerprintSpec.from_options`: ``spec`` as
    it is, or a spec of the options set (``ngram`` defaulting by tokenizer), with no
    tokenizer-specific defaults or params resolved."""
    given = {k: v for k, v in options.items() if v is not None}
    if spec is not None:
        if not isinstance(spec, FingerprintSpec):
            raise TypeError(f"spec must be a FingerprintSpec, got {type(spec).__name__}")
        if given:
            raise ValueError(f"pass either spec= or options, not both (got {sorted(given)})")
        return spec
    if "normalize" in given and isinstance(given["normalize"], str):
        given["normalize"] = (given["normalize"],)
    tokenizer = given.get("tokenizer", "char")
    given.setdefault("ngram", DEFAULT_NGRAM.get(tokenizer, 1))
    return FingerprintSpec(**given)


_WARNED: set[str] = set()


def make_spec(spec: FingerprintSpec | None = None, **options) -> FingerprintSpec:
    """Deprecated alias of :meth:`FingerprintSpec.from_options`.

    Warns ``FutureWarning`` once per process; it will be removed in a later release.

    Parameters
    ----------
    spec : FingerprintSpec, optional
        Returned as it is.
    **options
        As in :meth:`FingerprintSpec.from_options`.

    Returns
    -------
    FingerprintSpec
        The spec :meth:`FingerprintSpec.from_options` makes of the same arguments.

    Raises
    ------
    TypeError, ValueError
        Where :meth:`FingerprintSpec.from_options` raises them (an unknown option, a
        ``spec`` that is not one, both ``spec`` and options, an invalid value).

    Examples
    --------
    >>> import warnings, simhash_nb as sh
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     sh.make_spec(tokenizer="word") == sh.FingerprintSpec.from_options(tokenizer="word")
    True
    """
    if "make_spec" not in _WARNED:
        _WARNED.add("make_spec")
        warnings.warn("simhash_nb.make_spec is deprecated; use "
                      "simhash_nb.FingerprintSpec.from_options", FutureWarning, stacklevel=2)
    return FingerprintSpec.from_options(spec, **options)  # type: ignore[attr-defined]
