"""The entry point ``simhash-nb`` (``simhash_nb.cli:main``): parse, run, one-line errors."""


from __future__ import annotations

import sys
from collections.abc import Sequence

from .parser import build_parser
from .steps import EXIT_USAGE, PROG, UsageError

# --- entry point --------------------------------------------------------------------------


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    if isinstance(e, KeyError) and len(e.args) == 1 and isinstance(e.args[0], str):
        text = e.args[0]
    if isinstance(e, FileNotFoundError) and e.filename:
        text = f"{e.filename}: no such file"
    return (text.splitlines()[0] if text else type(e).__name__)


def _note_cold_cache() -> None:
    """One line on a terminal's stderr when the kernels must be compiled (first run)."""
    if not sys.stderr.isatty():
        return
    from .._kernels import cache_is_cold

    if cache_is_cold():
        print(f"{PROG}: first run: compiling the Numba kernels (about half a minute, once; later "
              "runs load them from the cache)", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``simhash-nb`` with ``argv`` (default: the command line); the exit status.

    Examples
    --------
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     main([])
    2
    >>> err.getvalue().split(":")[1]
    ' error'
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        names = ", ".join(parser.commands)
        print(f"{PROG}: error: choose a command: {names} (see {PROG} --help)", file=sys.stderr)
        return EXIT_USAGE
    from .._core.spec import SpecMismatchError

    _note_cold_cache()
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (UsageError, SpecMismatchError, ValueError, TypeError, KeyError, OSError) as e:
        if getattr(args, "traceback", False):
            raise
        print(f"{PROG} {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
