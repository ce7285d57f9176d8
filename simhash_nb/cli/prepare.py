"""``simhash-nb prepare``: compile the Numba kernels now, into Numba's on-disk cache.

Run it when a Docker image or a cluster environment is built, with ``NUMBA_CACHE_DIR``
set to a folder that ships with it; see ``docs/user_guide/cold_start.md``.
"""

from __future__ import annotations

import argparse

from .._core.prepare import PATHS, prepare

HELP = "compile the kernels ahead of time (for images and clusters)"
DESCRIPTION = (
    "Compile the Numba kernels of the named paths (default: all) on tiny inputs, so that "
    "they land in Numba's on-disk cache (NUMBA_CACHE_DIR, or __pycache__ beside the "
    "package) and no later process waits for the compiler. Run it at image build time "
    "with NUMBA_CACHE_DIR set to a folder that ships in the image.")


def add_prepare_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``prepare`` command to ``subparsers`` (an ``add_subparsers()`` result).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="simhash-nb")
    >>> p = add_prepare_parser(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["prepare", "--path", "fingerprint"]).paths
    ['fingerprint']
    """
    p = subparsers.add_parser("prepare", help=HELP, description=DESCRIPTION)
    p.add_argument("--path", dest="paths", action="append", choices=list(PATHS),
                   metavar="PATH",
                   help=f"a path to compile (repeat for several): {', '.join(PATHS)}; "
                        "default all")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing (the exit status says it worked)")
    return p


def cmd_prepare(args) -> int:
    """``simhash-nb prepare``: compile, then print what was compiled and how long it took."""
    quiet = getattr(args, "quiet", False)
    report = prepare(paths=args.paths or "all", progress=not quiet)
    if not quiet:
        print(report)
    return 0
