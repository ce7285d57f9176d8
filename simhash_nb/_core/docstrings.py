"""Numpydoc blocks shared by functions that take the same parameters.

A docstring names a shared block with a line holding only ``{{name}}``;
:func:`shared_docs` replaces that line with the block, indented as the line was. One
wording per parameter, written once: the in-memory, streaming and Dask faces of the
verified path describe ``threshold`` (and the rest) in the same words.

Examples
--------
>>> @shared_docs(greeting="who : str\\n    The one to greet.")
... def hello(who):
...     '''Say hello.
...
...     Parameters
...     ----------
...     {{greeting}}
...     '''
>>> print(hello.__doc__.splitlines()[-3])
    who : str
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

_SLOT = re.compile(r"^(?P<indent>[ \t]*)\{\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}\}[ \t]*$",
                   re.MULTILINE)


def fill_docstring(doc: str, blocks: dict[str, str]) -> str:
    """``doc`` with every ``{{name}}`` line replaced by ``blocks[name]``, indented.

    Raises ``KeyError`` naming a slot that ``blocks`` lacks, so that a misspelt slot
    fails at import, never in a rendered page.

    Examples
    --------
    >>> fill_docstring("A.\\n  {{x}}\\n", {"x": "x : int\\n    One."})
    'A.\\n  x : int\\n      One.\\n'
    """
    def block(match: re.Match) -> str:
        name = match["name"]
        if name not in blocks:
            raise KeyError(f"docstring slot {{{{{name}}}}} has no shared block")
        return textwrap.indent(textwrap.dedent(blocks[name]).strip("\n"), match["indent"])

    return _SLOT.sub(block, doc)


def shared_docs(**blocks: str) -> Callable[[F], F]:
    """Decorator: fill the function's ``{{name}}`` docstring slots from ``blocks``.

    Examples
    --------
    >>> @shared_docs(n="n : int\\n    How many.")
    ... def f(n):
    ...     '''F.
    ...
    ...     {{n}}
    ...     '''
    >>> "n : int" in f.__doc__
    True
    """
    def decorate(func: F) -> F:
        if func.__doc__:
            func.__doc__ = fill_docstring(func.__doc__, blocks)
        return func

    return decorate
