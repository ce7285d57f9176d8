"""How the command line speaks to its user: its name, the exit status of a mistake, an
argument parser whose errors are one line, and :class:`UsageError`.

Light on purpose (the standard library only): the parser, ``--help`` and argument
errors import this module, never the commands' tables, readers or plots.
"""

from __future__ import annotations

import argparse

PROG = "simhash-nb"
EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit status 2."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class UsageError(Exception):
    """A user mistake: reported as one line, exit status 2."""
