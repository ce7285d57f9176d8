"""What keeps the kernels' signatures few: Numba compiles a kernel once per signature
(the types of its arguments), and every signature is a compile on a cold cache."""

from __future__ import annotations

import numpy as np

__all__ = ["read_only"]


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` as a read-only view (``a`` itself when it is read-only already).

    Numba compiles a kernel once per signature, and an array's signature includes
    whether it can be written: a kernel given read-only arrays by one caller and
    writable ones by another is compiled twice. Giving it read-only views throughout
    compiles it once.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros(3)
    >>> read_only(a).flags.writeable, a.flags.writeable
    (False, True)
    """
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view
