"""A command's fingerprint options as a spec and the objects it stands for: the flags,
a spec saved as JSON (``--params FILE``), a tokenizer given as ``MODULE:FUNCTION``, an
IDF table file (``--idf FILE``, made by ``fit-idf``)."""


from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import Any, NamedTuple

from .._core.idf import IdfTable
from .._core.spec import NORMALIZERS, FingerprintSpec, SpecMismatchError
from .._core.tokenizers import prepare
from .usage import PROG, UsageError

BUILT_IN = ("char", "word", "jieba")
"""The tokenizers named on the command line; anything else is ``MODULE:FUNCTION``."""
SPEC_FLAGS = {"bits": "--bits", "tokenizer": "--tokenizer", "ngram": "--ngram",
              "weights": "--weights", "normalize": "--normalize", "seed": "--seed"}
"""The fingerprint flags and the spec field each sets."""


class Recipe(NamedTuple):
    """A spec and the objects it stands for (see :func:`simhash_nb._core.tokenizers.prepare`)."""

    spec: Any
    extras: dict


def tokenizer_arg(text: str) -> str:
    """``--tokenizer``: a built-in name or ``MODULE:FUNCTION`` (imported later).

    Examples
    --------
    >>> tokenizer_arg("word"), tokenizer_arg("mypkg.tok:split")
    ('word', 'mypkg.tok:split')
    """
    if text in BUILT_IN:
        return text
    module, sep, func = text.partition(":")
    if sep and all(p.isidentifier() for p in module.split(".") + func.split(".")):
        return text
    raise argparse.ArgumentTypeError(f"choose char, word, jieba or MODULE:FUNCTION (a "
                                     f"function of yours, as mypkg.tokens:split), got {text!r}")


def load_tokenizer(text: str):
    """The function ``MODULE:FUNCTION`` names, imported (the working folder is searched
    too, as ``python -m`` does)."""
    module_name, _, func_name = text.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and (module_name + ".").startswith(e.name + "."):
            raise UsageError(f"--tokenizer {text}: no module named {e.name!r} (on the "
                             "Python path or in the working folder)") from None
        raise UsageError(f"--tokenizer {text}: importing {module_name} failed: {e}") from None
    except Exception as e:  # the user's module failed while importing
        raise UsageError(f"--tokenizer {text}: importing {module_name} failed: "
                         f"{type(e).__name__}: {e}") from None
    obj = module
    for part in func_name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UsageError(f"--tokenizer {text}: module {module_name} has no function "
                             f"{func_name!r}")
    if not callable(obj):
        raise UsageError(f"--tokenizer {text}: {func_name} is not a function (it is of type "
                         f"{type(obj).__name__})")
    return obj


def read_params(path: str):
    """The :class:`~simhash_nb.FingerprintSpec` saved as JSON in ``path`` (``--params``)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"--params {path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise UsageError(f"--params {path}: not a JSON file (a spec saved with "
                         "FingerprintSpec.to_json())") from None
    if not isinstance(data, dict) or "version" not in data:
        raise UsageError(f"--params {path}: not a fingerprint spec (the JSON of "
                         "FingerprintSpec.to_json())")
    try:
        return FingerprintSpec.from_json(data)
    except SpecMismatchError as e:
        raise UsageError(f"--params {path}: {e}") from None
    except (TypeError, ValueError) as e:
        raise UsageError(f"--params {path}: not a fingerprint spec ({e})") from None


def read_idf(path: str):
    """The :class:`~simhash_nb.IdfTable` saved in ``path`` (``--idf``)."""
    try:
        return IdfTable.load(path)
    except FileNotFoundError:
        raise UsageError(f"--idf {path}: no such file (make one with {PROG} fit-idf)") from None
    except ValueError as e:
        raise UsageError(f"--idf {e} (make one with {PROG} fit-idf)") from None


def _normalize(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    steps = [s.strip() for s in text.split(",") if s.strip()]
    if steps in ([], ["none"]):
        return ()
    unknown = [s for s in steps if s not in NORMALIZERS]
    if unknown:
        raise UsageError(f"--normalize: unknown step {', '.join(unknown)}; choose among "
                         f"{','.join(NORMALIZERS)} (or none)")
    return tuple(s for s in NORMALIZERS if s in steps)


def given_options(args) -> dict:
    """The fingerprint flags given, by spec field (``normalize`` as the spec orders it)."""
    values = {name: getattr(args, name, None) for name in SPEC_FLAGS}
    values["normalize"] = _normalize(values["normalize"])
    return {k: v for k, v in values.items() if v is not None}


def describe(spec) -> str:
    """A spec's features in words: ``char 5-grams, normalize nfkc,lower, seed 0``."""
    name = dict(spec.params).get("name") if spec.tokenizer == "callable" else spec.tokenizer
    return (f"{name} {spec.ngram}-grams, normalize {','.join(spec.normalize) or 'none'}, "
            f"seed {spec.seed}")


def _features_of(spec) -> tuple:
    params = {k: v for k, v in dict(spec.params).items() if k != "idf"}
    return spec.tokenizer, spec.ngram, spec.normalize, spec.seed, sorted(params.items())


def check_idf_fits(table, spec, path: str) -> None:
    """Refuse an IDF table fitted on other features than ``spec`` makes."""
    if table is None or table.spec is None:
        return
    if _features_of(table.spec) != _features_of(spec):
        raise UsageError(f"--idf {path} was fitted on {describe(table.spec)}; these "
                         f"fingerprints use {describe(spec)}: give the same --tokenizer, "
                         "--ngram, --normalize and --seed as to fit-idf")


def _prepare(**options):
    try:
        return Recipe(*prepare(**options))
    except SpecMismatchError:
        raise
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None


def _from_flags(args, given: dict, func, idf, verified: bool, fit: bool) -> Recipe:
    tokenizer = given.get("tokenizer", "char")
    if verified or fit:
        given["weights"] = "binary" if verified else "tf"
    weights = given.get("weights") or ("tfidf" if tokenizer == "jieba" else None)
    if idf is not None and weights != "tfidf":
        raise UsageError("--idf applies to --weights tfidf")
    if weights == "tfidf" and idf is None and tokenizer != "jieba":
        raise UsageError(f"--weights tfidf needs --idf FILE: an IDF table made by '{PROG} "
                         "fit-idf' with the same tokenizer options")
    if func is not None:
        given["tokenizer"] = func
    recipe = _prepare(**given, params={"idf": idf} if idf is not None else None)
    check_idf_fits(idf, recipe.spec, getattr(args, "idf", None))
    return recipe


def _from_file(args, given: dict, func, idf, verified: bool, fit: bool) -> Recipe:
    path = args.params
    spec = read_params(path)
    if fit:
        spec = spec.replace(weights="tf", bits=64, params={
            k: v for k, v in dict(spec.params).items() if k != "idf"})
    if func is not None:
        given["tokenizer"] = "callable"
    differ = [f"{SPEC_FLAGS[k]} {args.normalize if k == 'normalize' else getattr(args, k)}"
              for k, v in given.items() if v != getattr(spec, k)]
    if differ:
        raise UsageError(f"{', '.join(differ)} {'differs' if len(differ) == 1 else 'differ'} "
                         f"from the spec in --params {path} "
                         f"({spec.bits} bits, {spec.weights} weights of {describe(spec)}); "
                         "drop them: the saved spec decides")
    if spec.tokenizer == "callable" and func is None:
        raise UsageError(f"--params {path} was made with the tokenizer "
                         f"{dict(spec.params).get('name')}: pass it as --tokenizer "
                         "MODULE:FUNCTION")
    name = dict(spec.params).get("name")
    if func is not None and name != f"{func.__module__}.{func.__qualname__}":
        raise UsageError(f"--tokenizer {args.tokenizer} is {func.__module__}."
                         f"{func.__qualname__}; the spec in --params {path} was made with "
                         f"{name}")
    tag = dict(spec.params).get("idf")
    if isinstance(tag, str) and tag.startswith("sha1:") and idf is None:
        raise UsageError(f"--params {path} weighs by an IDF table ({tag[:17]}...): pass its "
                         "file with --idf FILE")
    if idf is not None and spec.weights != "tfidf":
        raise UsageError(f"--idf applies to a tfidf spec; --params {path} has "
                         f"{spec.weights} weights")
    check_idf_fits(idf, spec, args.idf if idf is not None else None)
    if idf is not None and isinstance(tag, str) and tag != idf.tag:
        raise UsageError(f"--idf {args.idf} is not the IDF table of the spec in --params "
                         f"{path} (its table is {tag[:17]}..., this file's {idf.tag[:17]}...)")
    if verified and spec.weights != "binary":
        raise UsageError(f"--threshold compares shingle sets: the spec in --params {path} "
                         f"must have binary weights, not {spec.weights}")
    try:
        recipe = _prepare(spec=spec, tokenizer=func,
                          params={"idf": idf} if idf is not None else None)
    except SpecMismatchError as e:
        given_objects = " and ".join(f"--{k} {getattr(args, k)}" for k in ("tokenizer", "idf")
                                     if getattr(args, k, None) and (k != "idf" or idf))
        raise UsageError(f"{given_objects} do not make the spec in --params {path}: "
                         f"{e}") from None
    if verified and args.bits is None:
        args.bits = spec.bits  # the verified road reads the width from args.bits
    return recipe


def recipe_of(args, fit: bool = False) -> Recipe | None:
    """The spec of the command's fingerprint options and the objects it stands for;
    None with ``--fingerprints`` (then no fingerprint option may be given). ``fit``: the
    features ``fit-idf`` counts (tf weights, no IDF)."""
    given = given_options(args)
    objects = [f for f in ("--params", "--idf") if getattr(args, f[2:], None)]
    if getattr(args, "fingerprints", None):
        used = [SPEC_FLAGS[k] for k in given] + objects
        if used:
            raise UsageError(f"{', '.join(used)} cannot be used with --fingerprints "
                             "(the fingerprints are made already)")
        return None
    verified = getattr(args, "threshold", None) is not None
    tokenizer = given.get("tokenizer")
    func = None
    if tokenizer is not None and tokenizer not in BUILT_IN:
        if verified:
            raise UsageError(f"--tokenizer {tokenizer} cannot be used with --threshold: the "
                             "verified road shingles with char, word or jieba")
        func = load_tokenizer(tokenizer)
    if verified and getattr(args, "idf", None):
        raise UsageError("--idf cannot be used with --threshold: the verified road compares "
                         "shingle sets (binary weights)")
    if getattr(args, "idf", None) and not getattr(args, "params", None) and (
            given.get("weights") or ("tfidf" if tokenizer == "jieba" else None)) != "tfidf":
        raise UsageError("--idf applies to --weights tfidf")
    idf = read_idf(args.idf) if getattr(args, "idf", None) else None
    build = _from_file if getattr(args, "params", None) else _from_flags
    return build(args, given, func, idf, verified, fit)
