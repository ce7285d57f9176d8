"""The entry point ``simhash-nb`` (``simhash_nb.cli:main``): parse, run, one-line errors."""


from __future__ import annotations

import gc
import importlib
import sys
import threading
import warnings
from collections.abc import Callable, Sequence

from .._core.spec import SpecMismatchError
from .._kernels import cache_is_cold
from .parser import COMMANDS, build_parser
from .settle import settle
from .speak import flags_of, speak
from .usage import EXIT_USAGE, PROG, UsageError

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
    if cache_is_cold():
        print(f"{PROG}: first run: compiling the Numba kernels (about half a minute, once; later "
              "runs load them from the cache)", file=sys.stderr, flush=True)


def command_function(name: str) -> Callable:
    """The function that runs the command ``name`` (:data:`~simhash_nb.cli.parser.COMMANDS`),
    its module imported now: only the command that runs loads what it needs.

    Examples
    --------
    >>> command_function("fingerprint").__name__
    'cmd_fingerprint'
    """
    module, _, function = COMMANDS[name].run.partition(":")
    return getattr(importlib.import_module(module), function)


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
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        names = ", ".join(parser.commands)
        print(f"{PROG}: error: choose a command: {names} (see {PROG} --help)", file=sys.stderr)
        return EXIT_USAGE
    # the core's messages name keyword arguments; this command names its flags
    flags = flags_of(parser.subcommands[args.command], argv)
    where = f"{PROG} {args.command}"
    try:
        settle(args)  # options refused before the command's module is imported
        run = command_function(args.command)
        _note_cold_cache()
        with warnings.catch_warnings():
            warnings.showwarning = _warning_line(where, flags)
            return int(run(args) or 0)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (UsageError, SpecMismatchError, ValueError, TypeError, KeyError, OSError) as e:
        if getattr(args, "traceback", False):
            raise
        print(f"{where}: error: {speak(_one_line(e), flags)}", file=sys.stderr)
        return EXIT_USAGE


def console_main() -> int:
    """The ``simhash-nb`` console script (and ``python -m simhash_nb``): :func:`main` on the
    command line, then every object left is frozen (``gc.freeze``), so that the
    interpreter's last garbage collection at exit skips them: that collection walked the
    compiled kernels' and the libraries' objects for 0.4-0.5 s after a verified run had
    written its output (measured on a corpus-store query: 0.48-0.53 s to exit, 0.06-0.07 s
    frozen). Nothing is left to collect that matters: temporary folders are removed by the
    commands and by their finalizers' exit hooks, which still run. Only when the main
    thread is the last one: after Ctrl-C or SIGTERM a reader thread may still be running,
    and the final collection is what closes its generator and stops it (frozen, the
    interpreter could tear down under it: a segfault at exit in 2 of 15 interrupted runs).

    Examples
    --------
    >>> import subprocess, sys
    >>> code = ("import gc, sys; from simhash_nb.cli.main import console_main; "
    ...         "sys.argv = ['simhash-nb']; console_main(); print(gc.get_freeze_count() > 0)")
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    'True'
    """
    code = main()
    if threading.active_count() == 1:  # see above: no thread of ours still running
        gc.freeze()
    return code


def _warning_line(where: str, flags: dict):
    """``warnings.showwarning`` for a command: one line in its words, no source line."""

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        print(f"{where}: warning: {speak(text, flags)}", file=file or sys.stderr)

    return show


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console_main())
