"""Population count that compiles to the hardware ``popcnt`` instruction.

LLVM's ``ctpop`` intrinsic is emitted directly, so on x86-64 with POPCNT (and
AVX-512 VPOPCNTDQ where the loop vectorises) the count is one instruction.
``tests/test_hamming.py`` checks the assembly.
"""

from __future__ import annotations

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


@njit(inline="always", cache=True)
def popcount64(x):
    """Number of set bits of a ``uint64``."""
    return _ctpop_u64(x)
