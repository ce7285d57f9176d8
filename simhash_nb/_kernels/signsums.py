"""Bit sums of 64-bit feature hashes, written as LLVM vector IR.

:func:`signed_bit_sums` serves real weights. For features ``lo..hi-1`` with hashes
``h`` and weights ``w``, the sum for bit ``b`` is ``sum(+w if bit b of h else -w)``,
added in float64 in feature order; the result is a ``uint64`` whose bit ``b`` is 1 iff
that sum is ``> 0``. It also reports whether every weight it read was finite and
``>= 0``, so callers need no separate pass over the weights to validate them.

:func:`bit_majority` serves unit weights (binary, or one feature per occurrence):
bit ``b`` is 1 iff more than half of the ``m`` features have it set. That is the same
test, ``count - (m - count) > 0``, done exactly in integers.

Numba keeps a ``float64[64]`` accumulator in memory, so every feature would load and
store all 64 sums and the loop would run at the speed of store-to-load forwarding.
Here the sums live in SSA vector registers: eight ``<8 x double>`` (real weights), or
four ``<16 x i32>`` counters (unit weights). Per feature, a lane mask made from the
hash's bits selects ``+w`` or ``-w`` (or adds 0/1) in each vector. On AVX-512 LLVM
moves the hash into a mask register and shifts it (``kshiftrq``) for each vector: one
``vblendmpd`` and one ``vaddpd`` per eight bits, or one ``vpmovm2d`` and one ``vpsubd``
per sixteen. Elsewhere LLVM splits the vectors into the widths the machine has. (For
the float sums the mask is written ``splat(h) & (1 << bit) != 0`` rather than as a
bitcast byte: the same code on AVX-512, twice as fast on AVX2, which has no mask
registers.)
The float additions are the same IEEE operations in the same order as a scalar loop, so
results are identical bit for bit.

Under ``NUMBA_DISABLE_JIT=1`` (the coverage run) an intrinsic cannot be called, so
both are replaced by numpy twins with the same results (the same float additions in the
same order).
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
_F64 = ir.DoubleType()
_V8 = ir.VectorType(_F64, 8)
_V16I = ir.VectorType(_I32, 16)
_V8I = ir.VectorType(_I64, 8)
_ZERO8I = ir.Constant(_V8I, [0] * 8)
_MASK16 = ir.VectorType(ir.IntType(1), 16)


def _u64(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _splitmix64(builder: ir.IRBuilder, h: ir.Value) -> ir.Value:
    """The IR twin of :func:`simhash_nb._kernels.xxh64.splitmix64`."""
    z = builder.add(h, _u64(0x9E3779B97F4A7C15))
    z = builder.mul(builder.xor(z, builder.lshr(z, _u64(30))), _u64(0xBF58476D1CE4E5B9))
    z = builder.mul(builder.xor(z, builder.lshr(z, _u64(27))), _u64(0x94D049BB133111EB))
    return builder.xor(z, builder.lshr(z, _u64(31)))


def _splat(builder: ir.IRBuilder, x: ir.Value, vt: ir.VectorType = _V8) -> ir.Value:
    one = builder.insert_element(ir.Constant(vt, ir.Undefined), x, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(vt, ir.Undefined),
                                  ir.Constant(ir.VectorType(_I32, vt.count), [0] * vt.count))


def _as_i1(builder: ir.IRBuilder, flag: ir.Value) -> ir.Value:
    if flag.type == ir.IntType(1):
        return flag
    return builder.icmp_unsigned("!=", flag, ir.Constant(flag.type, 0))


def _feature_loop(builder, lo, hi, inits, step):
    """Emit ``for f in range(lo, hi): carried = step(f, carried)``; return the final values.

    ``inits`` are the loop-carried values on entry; they stay SSA phis, so LLVM keeps
    them in registers.
    """
    entry = builder.block
    head = builder.append_basic_block("features.head")
    body = builder.append_basic_block("features.body")
    done = builder.append_basic_block("features.done")
    builder.branch(head)

    builder.position_at_end(head)
    f = builder.phi(_I64)
    f.add_incoming(lo, entry)
    carried = []
    for init in inits:
        phi = builder.phi(init.type)
        phi.add_incoming(init, entry)
        carried.append(phi)
    builder.cbranch(builder.icmp_signed("<", f, hi), body, done)

    builder.position_at_end(body)
    updated = step(f, carried)
    f.add_incoming(builder.add(f, _u64(1)), builder.block)
    for phi, value in zip(carried, updated):
        phi.add_incoming(value, builder.block)
    builder.branch(head)

    builder.position_at_end(done)
    return carried


def _load_hash(builder, hptr, f, mixed):
    h = builder.load(builder.gep(hptr, [f]))
    return builder.select(mixed, _splitmix64(builder, h), h)


def _is_c_array(ty, dtypes) -> bool:
    return isinstance(ty, types.Array) and ty.ndim == 1 and ty.layout == "C" and ty.dtype in dtypes


@intrinsic
def signed_bit_sums(typingctx, hashes, weights, lo, hi, mixed):
    """``(uint64, bool)``: bit ``b`` is 1 iff features ``lo..hi-1`` sum ``> 0`` at bit ``b``;
    the flag is true iff all their weights are finite and ``>= 0``.

    ``hashes`` is C-contiguous ``uint64[:]``, ``weights`` C-contiguous float32 or
    float64 of the same length; ``0 <= lo <= hi <= len`` is the caller's duty. With
    ``mixed`` true each hash is first passed through ``splitmix64`` (bits 64..127).
    """
    if not _is_c_array(hashes, (types.uint64,)):
        raise errors.TypingError("signed_bit_sums: hashes must be a C-contiguous uint64[:]")
    if not _is_c_array(weights, (types.float32, types.float64)):
        raise errors.TypingError("signed_bit_sums: weights must be C-contiguous float32/64[:]")
    result = types.Tuple((types.uint64, types.boolean))
    sig = result(hashes, weights, types.int64, types.int64, types.boolean)

    def codegen(context, builder, signature, args):
        hs, ws, lo, hi, mixed = args
        hptr = context.make_array(signature.args[0])(context, builder, hs).data
        wptr = context.make_array(signature.args[1])(context, builder, ws).data
        mixed = _as_i1(builder, mixed)
        zero = ir.Constant(_V8, [0.0] * 8)

        def step(f, carried):
            valid, sums = carried[0], carried[1:]
            h = _load_hash(builder, hptr, f, mixed)
            w = builder.load(builder.gep(wptr, [f]))
            if w.type != _F64:
                w = builder.fpext(w, _F64)
            w_ok = builder.and_(builder.fcmp_ordered(">=", w, ir.Constant(_F64, 0.0)),
                                builder.fcmp_ordered("!=", w, ir.Constant(_F64, float("inf"))))
            plus = _splat(builder, w)
            minus = builder.fneg(plus)
            hv = _splat(builder, h, _V8I)
            added = []
            for k, s in enumerate(sums):  # lane j of vector k: bit 8k + j
                bit = ir.Constant(_V8I, [1 << (8 * k + j) for j in range(8)])
                mask = builder.icmp_unsigned("!=", builder.and_(hv, bit), _ZERO8I)
                added.append(builder.fadd(s, builder.select(mask, plus, minus)))
            return [builder.and_(valid, w_ok), *added]

        valid, *sums = _feature_loop(builder, lo, hi, [ir.Constant(ir.IntType(1), 1)]
                                     + [zero] * 8, step)
        fp = _u64(0)
        for k, s in enumerate(sums):
            positive = builder.bitcast(builder.fcmp_ordered(">", s, zero), _I8)
            fp = builder.or_(fp, builder.shl(builder.zext(positive, _I64), _u64(8 * k)))
        return context.make_tuple(builder, result, [fp, valid])

    return sig, codegen


@intrinsic
def bit_majority(typingctx, hashes, lo, hi, mixed):
    """``uint64``: bit ``b`` is 1 iff more than half of features ``lo..hi-1`` have it set.

    ``hashes`` is C-contiguous ``uint64[:]``; ``0 <= lo <= hi <= len`` and
    ``hi - lo < 2**31`` are the caller's duty. ``mixed`` as in :func:`signed_bit_sums`.
    """
    if not _is_c_array(hashes, (types.uint64,)):
        raise errors.TypingError("bit_majority: hashes must be a C-contiguous uint64[:]")
    sig = types.uint64(hashes, types.int64, types.int64, types.boolean)

    def codegen(context, builder, signature, args):
        hs, lo, hi, mixed = args
        hptr = context.make_array(signature.args[0])(context, builder, hs).data
        mixed = _as_i1(builder, mixed)

        def step(f, counts):
            h = _load_hash(builder, hptr, f, mixed)
            out = []
            for k, c in enumerate(counts):  # bits 16k..16k+15 of h, one per lane
                mask = builder.bitcast(builder.trunc(builder.lshr(h, _u64(16 * k)),
                                                     ir.IntType(16)), _MASK16)
                out.append(builder.add(c, builder.zext(mask, _V16I)))
            return out

        counts = _feature_loop(builder, lo, hi, [ir.Constant(_V16I, [0] * 16)] * 4, step)
        m = _splat(builder, builder.trunc(builder.sub(hi, lo), _I32), _V16I)
        fp = _u64(0)
        for k, c in enumerate(counts):  # set > unset, i.e. c > m - c (2c could overflow)
            above = builder.bitcast(builder.icmp_signed(">", c, builder.sub(m, c)),
                                    ir.IntType(16))
            fp = builder.or_(fp, builder.shl(builder.zext(above, _I64), _u64(16 * k)))
        return fp

    return sig, codegen


_BITS = np.arange(64, dtype=np.uint64)


def _hash_bits(hashes, lo, hi, mixed):
    """``(hi - lo, 64)`` bools: bit ``b`` of each hash (``splitmix64``-ed if ``mixed``)."""
    h = np.array(hashes[lo:hi], dtype=np.uint64)
    if mixed:
        z = h + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h = z ^ (z >> np.uint64(31))
    return ((h[:, None] >> _BITS) & np.uint64(1)).astype(bool)


def _pack_bits(bits):
    """``uint64`` whose bit ``b`` is ``bits[b]``."""
    return np.bitwise_or.reduce(bits.astype(np.uint64) << _BITS)


def _signed_bit_sums_py(hashes, weights, lo, hi, mixed):
    """The twin of :func:`signed_bit_sums` in numpy, for ``NUMBA_DISABLE_JIT=1``."""
    w = np.asarray(weights[lo:hi], dtype=np.float64)
    signed = np.where(_hash_bits(hashes, lo, hi, mixed), w[:, None], -w[:, None])
    sums = np.zeros(64)
    # infinite weights of both signs add to nan: the compiled loop gives that nan silently
    # (and the result says ``valid=False``), so numpy's "invalid value" warning is not raised
    with np.errstate(invalid="ignore"):
        for row in signed:  # feature order, as the compiled loop adds them
            sums += row
    valid = bool(np.all((w >= 0.0) & (w != np.inf)))
    return _pack_bits(sums > 0.0), valid


def _bit_majority_py(hashes, lo, hi, mixed):
    """The twin of :func:`bit_majority` in numpy, for ``NUMBA_DISABLE_JIT=1``."""
    counts = _hash_bits(hashes, lo, hi, mixed).sum(axis=0, dtype=np.int64)
    return _pack_bits(counts > (hi - lo) - counts)


if numba.config.DISABLE_JIT:
    signed_bit_sums = _signed_bit_sums_py
    bit_majority = _bit_majority_py
