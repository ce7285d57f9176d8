"""Progress bars of long calls: whether one shows, and the tqdm bar itself.

Every public call with a ``progress`` option decides with :func:`show_progress`:
``True`` shows a bar, ``False`` never, and ``None`` (the default) shows one only when the
job is large (its size against a threshold from :data:`simhash_nb.config`, so small calls
and doctests stay silent) and stderr is a terminal or a notebook runs. The bar is drawn by
:func:`progress_bar`, which imports tqdm only when a bar is shown.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

__all__ = ["chunk_steps", "interactive", "progress_bar", "show_progress"]


def interactive() -> bool:
    """Whether a person is likely watching: stderr is a terminal, or a notebook runs."""
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        terminal = bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        terminal = False
    return terminal or "ipykernel" in sys.modules


def show_progress(progress: bool | None, size: int, minimum: int) -> bool:
    """Whether a call of ``size`` units of work shows a bar under ``progress=``.

    ``None``: when ``size >= minimum`` (a threshold from the config, in the same units)
    and :func:`interactive`; otherwise ``bool(progress)``.

    Examples
    --------
    >>> show_progress(True, 0, 10), show_progress(False, 10**9, 10)
    (True, False)
    """
    if progress is None:
        return size >= minimum and interactive()
    return bool(progress)


@contextlib.contextmanager
def progress_bar(show: bool, total: int | None, *, desc: str, unit: str,
                 **options) -> Iterator[Callable[[int], object] | None]:
    """A tqdm bar on stderr, yielding its ``update(n)`` (None when not ``show``).

    ``total`` is the work in ``unit`` (None when unknown); ``options`` go to tqdm (for
    instance ``unit_scale=True``). The bar is closed, showing its final count, when the
    block ends, however it ends.

    Examples
    --------
    >>> with progress_bar(False, 10, desc="working", unit="item") as advance:
    ...     advance is None
    True
    """
    if not show:
        yield None
        return
    from tqdm.auto import tqdm  # optional display: imported only when a bar is shown

    with tqdm(total=total, desc=desc, unit=unit, **options) as bar:
        yield bar.update


def chunk_steps(bounds, advance: Callable[[int], object] | None):
    """The ``done(c0, c1)`` of :func:`~simhash_nb._core.text.over_chunks` that advances a
    bar by the items of the chunks finished (``bounds``: chunk ``c`` holds items
    ``[bounds[c], bounds[c + 1])``), or None without a bar.

    Examples
    --------
    >>> steps = []
    >>> chunk_steps([0, 3, 10], steps.append)(0, 2); steps
    [10]
    """
    if advance is None:
        return None
    return lambda c0, c1: advance(int(bounds[c1]) - int(bounds[c0]))
