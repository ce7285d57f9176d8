"""The option every parallel kernel compiles with: ``prange`` loops only.

With ``parallel=True`` Numba also turns array expressions and numpy calls
(``np.zeros``, ``np.full``, ``.min()``, slice copies) into parallel loops, each compiled
as one more gufunc: seconds on a first call (a cold cache), for work that is small
beside the ``prange`` loop. ``@njit(parallel=PRANGE_ONLY)`` keeps the ``prange`` loops
and compiles the rest as serial code. An options object, not a dict (Numba pops the
dict's keys when it reads it).
"""

from __future__ import annotations

from numba.core.cpu import ParallelOptions

PRANGE_ONLY = ParallelOptions({"comprehension": False, "reduction": False,
                               "inplace_binop": False, "setitem": False, "numpy": False,
                               "stencil": False, "fusion": False})
