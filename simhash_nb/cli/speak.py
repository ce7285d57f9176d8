"""Messages in the command line's words: the core names its keyword arguments
(``max_pairs=``, ``k``, ``memory_limit``) and its Python remedies (``sh.clusters(fps,
k)``); a command names its flags (``--max-pairs``, ``-k``, ``--memory-limit``) and its
commands. Numbers print as plain numbers, never as numpy reprs (``np.int64(1)``)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

ALIASES = {"text_column": "column", "id_column": "id", "threshold": "jaccard"}
"""Core parameter names that a command's flag stores under another name (its dest):
used where the command has no flag of the core's name."""

NUMPY_SCALAR = re.compile(r"\bnp\.(?:u?int\d*|float\d*|bool_?|str_|intp|uintp)\(([^()]*)\)")
_VALUE = (r"'[^']*'|\"[^\"]*\"|[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?"
          r"|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?: ?[kKMGT]i?B\b)?|[\w.]+")
_VERBS = re.compile(r"\b(?:pass|lower|raise|or|and|with)\s+$")

# (pattern, replacement, the flag the replacement names or None)
REMEDIES = (
    (re.compile(r"^sh\.\w+: "), "", None),
    (re.compile(r"^near_duplicates would"), "the search would", None),
    (re.compile(r"use sh\.clusters\(fps, k\) or sh\.dedupe\(fps, k\)"),
     "use the clusters or dedupe command", None),
    (re.compile(r"sh\.(?:cluster|dedupe|near_duplicate)_texts\(texts, threshold=([\d.]+)\)"),
     r"--threshold \1", "threshold"),
    (re.compile(r"sh\.(?:cluster|dedupe|near_duplicate)_texts(?:\(\))?"), "--threshold J",
     "threshold"),
    (re.compile(r"^pass (\S+) or (\S+), not both"), r"give \1 or \2, not both", None),
    (re.compile(r"\bid column '([^']*)'"), r"--id \1", "id"),
    (re.compile(r" or None\b"), "", None),
    (re.compile(r"\b2\*\*(\d+)"), r"2^\1", None),
)


# where the command has no flag of this name: the core's wording without it
WITHOUT_FLAG = (
    ("max_pairs", re.compile(r"\bmax_pairs=([\d,]+)"), r"the limit of \1 pairs"),
    ("max_pairs", re.compile(r"\braise max_pairs(?: \([^)]*\))? or "), ""),
)


def plain_numbers(text: str) -> str:
    """``np.int64(1)`` as ``1``, ``np.float64(0.5)`` as ``0.5``.

    Examples
    --------
    >>> plain_numbers("row 2 repeats the id np.int64(1), got np.float64(0.5)")
    'row 2 repeats the id 1, got 0.5'
    """
    return NUMPY_SCALAR.sub(r"\1", text)


def _typed(action: argparse.Action, argv: Sequence[str]) -> str:
    """The option string of ``action`` as the user typed it, else its usual name."""
    for token in argv:
        for opt in action.option_strings:
            if token == opt or token.startswith(opt + "=") and opt.startswith("--"):
                return opt
    long = [o for o in action.option_strings if o.startswith("--") and len(o) > 3]
    return long[0] if long else action.option_strings[0]


def flags_of(parser: argparse.ArgumentParser, argv: Sequence[str] = ()) -> dict[str, str]:
    """``{parameter name: flag}`` of a command's parser: each option's dest (and the core
    names in :data:`ALIASES`) to the option string typed in ``argv`` (else its usual
    name).

    Examples
    --------
    >>> from simhash_nb.cli import build_parser
    >>> flags = flags_of(build_parser().subcommands["pairs"], ["-k", "3"])
    >>> flags["max_pairs"], flags["k"], flags["text_column"]
    ('--max-pairs', '-k', '--column')
    """
    flags = {}
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        flags[action.dest] = _typed(action, argv)
    for core, dest in ALIASES.items():
        if dest in flags and core not in flags:
            flags[core] = flags[dest]
    return flags


def _unquote(value: str) -> str:
    if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" and \
            re.fullmatch(r"[\w.\-:/]+", value[1:-1]):
        return value[1:-1]
    return value


def speak(message: str, flags: dict[str, str]) -> str:
    """``message`` with the core's parameter names as the command's ``flags``.

    ``name=value`` becomes ``--flag value``; a bare name becomes its flag when it is an
    identifier (``max_pairs``), ``k``, the subject of "must", or follows "pass", "lower",
    "raise", "or", "and", "with". Names without a flag in this command stay as they are.

    Examples
    --------
    >>> flags = {"k": "-k", "similarity": "--similarity", "max_pairs": "--max-pairs",
    ...          "threshold": "--threshold", "bits": "--bits"}
    >>> speak("pass k or similarity, not both (got k=3, similarity=0.5)", flags)
    'give -k or --similarity, not both (got -k 3, --similarity 0.5)'
    >>> speak("more than max_pairs=1,000; raise max_pairs or the threshold", flags)
    'more than --max-pairs 1,000; raise --max-pairs or the threshold'
    >>> speak("k must be in [0, 63] for 64-bit fingerprints at 64 bits", flags)
    '-k must be in [0, 63] for 64-bit fingerprints at 64 bits'
    """
    text = plain_numbers(message)
    for pattern, replacement, needs in REMEDIES:
        if needs is None or needs in flags:
            text = pattern.sub(replacement, text)
    for name, pattern, replacement in WITHOUT_FLAG:
        if name not in flags:
            text = pattern.sub(replacement, text)
    if not flags:
        return text
    names = "|".join(re.escape(n) for n in sorted(flags, key=len, reverse=True))
    assign = re.compile(rf"(?<![\w.\-'\"\[/])({names})=({_VALUE})")
    text = assign.sub(lambda m: f"{flags[m.group(1)]} {_unquote(m.group(2))}", text)
    bare = re.compile(rf"(?<![\w.\-'\"\[=(/])({names})(?![\w\-'\"=(/])")

    def word(m: re.Match) -> str:
        name = m.group(1)
        if ("_" in name or name == "k" or text.startswith(" must", m.end())
                or _VERBS.search(text, 0, m.start())):
            return flags[name]
        return name

    return bare.sub(word, text)
