"""Weighted sign sums of 64 hash bits, written as LLVM vector IR.

For features ``lo..hi-1`` with hashes ``h`` and weights ``w``, the sum for bit ``b`` is
``sum(+w if bit b of h else -w)``, added in float64 in feature order; the result is a
``uint64`` whose bit ``b`` is 1 iff that sum is ``> 0``. This is the CSR fingerprint's
inner loop. It also reports whether every weight it read was finite and ``>= 0``, so
callers need no separate pass over the weights to validate them.

Numba keeps a ``float64[64]`` accumulator in memory, so every feature loads and stores
all 64 sums and the loop runs at the speed of store-to-load forwarding. Here the 64
sums are eight ``<8 x double>`` values in SSA registers: per feature, eight byte-wide
masks select ``+w`` or ``-w`` and eight vector adds accumulate them. On AVX-512 that is
one ``vblendmpd`` and one ``vaddpd`` per eight bits; elsewhere LLVM splits the vectors
into the widths the machine has. The additions are the same IEEE operations in the same
order as the scalar loop, so the results are identical bit for bit.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import errors
from numba.extending import intrinsic

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F64 = ir.DoubleType()
_V8 = ir.VectorType(_F64, 8)
_MASK8 = ir.VectorType(ir.IntType(1), 8)


def _u64(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _splitmix64(builder: ir.IRBuilder, h: ir.Value) -> ir.Value:
    """The IR twin of :func:`simhash_nb._kernels.xxh64.splitmix64`."""
    z = builder.add(h, _u64(0x9E3779B97F4A7C15))
    z = builder.mul(builder.xor(z, builder.lshr(z, _u64(30))), _u64(0xBF58476D1CE4E5B9))
    z = builder.mul(builder.xor(z, builder.lshr(z, _u64(27))), _u64(0x94D049BB133111EB))
    return builder.xor(z, builder.lshr(z, _u64(31)))


def _splat(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    one = builder.insert_element(ir.Constant(_V8, ir.Undefined), x, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(_V8, ir.Undefined),
                                  ir.Constant(ir.VectorType(_I32, 8), [0] * 8))


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
        if mixed.type != ir.IntType(1):
            mixed = builder.icmp_unsigned("!=", mixed, ir.Constant(mixed.type, 0))
        zero = ir.Constant(_V8, [0.0] * 8)
        true = ir.Constant(ir.IntType(1), 1)
        entry = builder.block
        head = builder.append_basic_block("signsums.head")
        body = builder.append_basic_block("signsums.body")
        done = builder.append_basic_block("signsums.done")
        builder.branch(head)

        builder.position_at_end(head)
        f = builder.phi(_I64)
        f.add_incoming(lo, entry)
        valid = builder.phi(ir.IntType(1))
        valid.add_incoming(true, entry)
        sums = []
        for _ in range(8):
            s = builder.phi(_V8)
            s.add_incoming(zero, entry)
            sums.append(s)
        builder.cbranch(builder.icmp_signed("<", f, hi), body, done)

        builder.position_at_end(body)
        h = builder.load(builder.gep(hptr, [f]))
        h = builder.select(mixed, _splitmix64(builder, h), h)
        w = builder.load(builder.gep(wptr, [f]))
        if w.type != _F64:
            w = builder.fpext(w, _F64)
        w_ok = builder.and_(builder.fcmp_ordered(">=", w, ir.Constant(_F64, 0.0)),
                            builder.fcmp_ordered("!=", w, ir.Constant(_F64, float("inf"))))
        plus = _splat(builder, w)
        minus = builder.fneg(plus)
        added = []
        for k in range(8):  # byte k of h holds bits 8k..8k+7; its bit j picks lane j
            byte = builder.trunc(builder.lshr(h, _u64(8 * k)), _I8)
            mask = builder.bitcast(byte, _MASK8)
            added.append(builder.fadd(sums[k], builder.select(mask, plus, minus)))
        f.add_incoming(builder.add(f, _u64(1)), builder.block)
        valid.add_incoming(builder.and_(valid, w_ok), builder.block)
        for s, a in zip(sums, added):
            s.add_incoming(a, builder.block)
        builder.branch(head)

        builder.position_at_end(done)
        fp = _u64(0)
        for k in range(8):
            positive = builder.bitcast(builder.fcmp_ordered(">", sums[k], zero), _I8)
            fp = builder.or_(fp, builder.shl(builder.zext(positive, _I64), _u64(8 * k)))
        return context.make_tuple(builder, result, [fp, valid])

    return sig, codegen
