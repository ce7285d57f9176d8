"""Population count that compiles to the hardware ``popcnt`` instruction.

LLVM's ``ctpop`` intrinsic is emitted directly, so on x86-64 with POPCNT (and
AVX-512 VPOPCNTDQ where the loop vectorises) the count is one instruction.
``tests/test_hamming.py`` checks the assembly.

Under ``NUMBA_DISABLE_JIT=1`` (the coverage run) an intrinsic cannot be called, so
``_ctpop_u64`` is replaced by a numpy twin with the same results.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def _ctpop_u64(typingctx, x):
    if x != types.uint64:
        return None
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


def _ctpop_u64_py(x):
    """The twin of ``_ctpop_u64`` in numpy, for ``NUMBA_DISABLE_JIT=1``."""
    return np.uint64(np.bitwise_count(np.uint64(x)))


if numba.config.DISABLE_JIT:
    _ctpop_u64 = _ctpop_u64_py


@njit(inline="always", cache=True)
def popcount64(x):
    """Number of set bits of a ``uint64``."""
    return _ctpop_u64(x)
