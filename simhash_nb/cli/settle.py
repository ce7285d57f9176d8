"""Options checked against each other before a command runs: a flag the command would
not use is refused (never silently ignored), then the defaults are filled in."""


from __future__ import annotations

import glob
import os

from .usage import UsageError

DEFAULTS = {"column": "text", "batch_rows": 65536, "out_column": "simhash",
            "cluster_column": "cluster"}
"""Defaults filled in after :func:`settle` has seen which options were given."""


def _inputs(args) -> list[str]:
    if getattr(args, "inputs", None):
        return list(args.inputs)
    return [args.input] if getattr(args, "input", None) else []


def _several(path: str) -> bool:
    """True for a folder or a glob: an input that may name several shards."""
    return os.path.isdir(path) or glob.has_magic(path)


def _check_batch_rows(args) -> None:
    if args.batch_rows is None:
        return
    if args.batch_rows < 1:
        raise UsageError(f"--batch-rows must be at least 1, got {args.batch_rows}")
    paths = _inputs(args)
    if paths and not any(".parquet" in os.path.basename(p) or _several(p) for p in paths):
        raise UsageError("--batch-rows applies to parquet input; CSV and JSON Lines are read "
                         "in blocks (drop it)")


def _check_names(args) -> None:
    for dest, flag in (("out_column", "--out-column"), ("cluster_column", "--cluster-column")):
        name = getattr(args, dest, None)
        if name is not None and not name.strip():
            raise UsageError(f"{flag} must name a column, got an empty name")
        if name is not None and name == (args.column or DEFAULTS["column"]):
            raise UsageError(f"{flag} {name} would overwrite the text column; choose "
                             "another name")
    paths = _inputs(args)
    if getattr(args, "cluster_column", None) is not None and getattr(args, "threshold", None) \
            is not None and (len(paths) > 1 or any(_several(p) for p in paths)):
        raise UsageError("--cluster-column applies to one input file: with several, OUT is "
                         "a table of id (or row) and cluster")


def settle(args) -> None:
    """Refuse options that contradict each other or that this run would not use; then
    fill in :data:`DEFAULTS`."""
    if getattr(args, "quiet", False) and getattr(args, "progress", False):
        raise UsageError("-q and --progress contradict each other: give one of them")
    if getattr(args, "fingerprints", None) and args.column is not None:
        raise UsageError("--column cannot be used with --fingerprints: the fingerprints are "
                         "read from the --fingerprints column")
    if hasattr(args, "batch_rows"):
        _check_batch_rows(args)
    _check_names(args)
    for dest, value in DEFAULTS.items():
        if hasattr(args, dest) and getattr(args, dest) is None:
            setattr(args, dest, value)
