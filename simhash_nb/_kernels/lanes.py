"""Eight Hamming tests at once, written as LLVM vector IR.

:func:`clear_lanes2` answers the same for eight key masks: which of them a pair agrees
on (the owner rule of :mod:`simhash_nb._kernels.dense_tables`).

:func:`near_lanes` answers, for the eight fingerprints ``v[y], ..., v[y + 7]``, which
are within ``k`` bits of ``f``: an 8-bit mask, lane ``j`` set iff
``popcount(f ^ v[y + j]) <= k`` (128-bit fingerprints: the two words' counts added).
The scan of a table's runs (:mod:`simhash_nb._kernels.dense_tables`) calls it over
runs of a few dozen rows, where a plain loop leaves most rows to LLVM's scalar
epilogue: here each step is one ``<8 x i64>`` load, ``xor``, ``ctpop`` and compare
(on AVX-512 ``vpopcntq`` and ``vpcmpuq`` into a mask register; elsewhere LLVM splits
the vectors into the widths the machine has).

Under ``NUMBA_DISABLE_JIT=1`` (the coverage run) an intrinsic cannot be called, so
both are replaced by numpy twins with the same results.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import errors
from numba.extending import intrinsic

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_V8I = ir.VectorType(_I64, 8)


def _splat(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    one = builder.insert_element(ir.Constant(_V8I, ir.Undefined), x, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(_V8I, ir.Undefined),
                                  ir.Constant(ir.VectorType(_I32, 8), [0] * 8))


def _load8(builder, context, aty, arr, y):
    ptr = context.make_array(aty)(context, builder, arr).data
    vptr = builder.bitcast(builder.gep(ptr, [y]), _V8I.as_pointer())
    load = builder.load(vptr)
    load.align = 8
    return load


def _ctpop(builder, v):
    name = "llvm.ctpop.v8i64"
    fn = builder.module.globals.get(name)
    if fn is None:
        fn = ir.Function(builder.module, ir.FunctionType(_V8I, [_V8I]), name=name)
    return builder.call(fn, [v])


def _is_c_u64(ty) -> bool:
    return isinstance(ty, types.Array) and ty.ndim == 1 and ty.layout == "C" and (
        ty.dtype == types.uint64)


@intrinsic
def near_lanes(typingctx, v, y, f, k):
    """``uint8``: bit ``j`` set iff ``popcount(f ^ v[y + j]) <= k``, ``j < 8``.

    ``v`` is C-contiguous ``uint64[:]``; ``y + 8 <= len(v)`` is the caller's duty.
    """
    if not _is_c_u64(v):
        raise errors.TypingError("near_lanes: v must be a C-contiguous uint64[:]")
    sig = types.uint8(v, types.int64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        va, yy, ff, kk = args
        x = builder.xor(_load8(builder, context, signature.args[0], va, yy), _splat(builder, ff))
        near = builder.icmp_unsigned("<=", _ctpop(builder, x), _splat(builder, kk))
        return builder.bitcast(near, _I8)

    return sig, codegen


@intrinsic
def near_lanes2(typingctx, v0, v1, y, f0, f1, k):
    """``uint8``: bit ``j`` set iff ``popcount(f0 ^ v0[y + j]) + popcount(f1 ^ v1[y + j])
    <= k`` (128-bit fingerprints, a word per array), ``j < 8``."""
    if not (_is_c_u64(v0) and _is_c_u64(v1)):
        raise errors.TypingError("near_lanes2: v0, v1 must be C-contiguous uint64[:]")
    sig = types.uint8(v0, v1, types.int64, types.uint64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        a0, a1, yy, g0, g1, kk = args
        x0 = builder.xor(_load8(builder, context, signature.args[0], a0, yy), _splat(builder, g0))
        x1 = builder.xor(_load8(builder, context, signature.args[1], a1, yy), _splat(builder, g1))
        d = builder.add(_ctpop(builder, x0), _ctpop(builder, x1))
        near = builder.icmp_unsigned("<=", d, _splat(builder, kk))
        return builder.bitcast(near, _I8)

    return sig, codegen


@intrinsic
def clear_lanes2(typingctx, m0, m1, u, d0, d1):
    """``uint8``: bit ``j`` set iff ``d0 & m0[u + j]`` and ``d1 & m1[u + j]`` are both 0
    (a pair differing by ``(d0, d1)`` agrees on every bit of mask ``u + j``), ``j < 8``.

    ``m0``, ``m1`` are C-contiguous ``uint64[:]``; ``u + 8 <= len`` is the caller's duty.
    """
    if not (_is_c_u64(m0) and _is_c_u64(m1)):
        raise errors.TypingError("clear_lanes2: m0, m1 must be C-contiguous uint64[:]")
    sig = types.uint8(m0, m1, types.int64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        a0, a1, uu, g0, g1 = args
        x0 = builder.and_(_load8(builder, context, signature.args[0], a0, uu), _splat(builder, g0))
        x1 = builder.and_(_load8(builder, context, signature.args[1], a1, uu), _splat(builder, g1))
        clear = builder.icmp_unsigned("==", builder.or_(x0, x1), ir.Constant(_V8I, 0))
        return builder.bitcast(clear, _I8)

    return sig, codegen


def _lane_mask(near):
    """``uint8`` whose bit ``j`` is ``near[j]`` (the bitcast of an ``<8 x i1>``)."""
    return np.uint8(np.packbits(near, bitorder="little")[0])


def _near_lanes_py(v, y, f, k):
    """The twin of :func:`near_lanes` in numpy, for ``NUMBA_DISABLE_JIT=1``."""
    d = np.bitwise_count(v[y:y + 8] ^ np.uint64(f))
    return _lane_mask(d <= np.uint64(k))


def _near_lanes2_py(v0, v1, y, f0, f1, k):
    """The twin of :func:`near_lanes2` in numpy, for ``NUMBA_DISABLE_JIT=1``."""
    d = (np.bitwise_count(v0[y:y + 8] ^ np.uint64(f0)).astype(np.uint64)
         + np.bitwise_count(v1[y:y + 8] ^ np.uint64(f1)))
    return _lane_mask(d <= np.uint64(k))


def _clear_lanes2_py(m0, m1, u, d0, d1):
    """The twin of :func:`clear_lanes2` in numpy, for ``NUMBA_DISABLE_JIT=1``."""
    return _lane_mask(((m0[u:u + 8] & np.uint64(d0)) | (m1[u:u + 8] & np.uint64(d1))) == 0)


if numba.config.DISABLE_JIT:
    near_lanes = _near_lanes_py
    near_lanes2 = _near_lanes2_py
    clear_lanes2 = _clear_lanes2_py
