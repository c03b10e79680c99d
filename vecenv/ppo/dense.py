"""Dense layers and tanh over tiles of rows, in float32 as ``nn.Linear`` computes, for the
compiled policy's kernels.

Activations are held transposed, one buffer row per feature and one column per batch row, so
that the arithmetic runs across batch rows: every row goes through the same operations in the
same order, whatever its place in the batch, and gets bit-identical results. No sum is
reordered (each output is its bias plus the products in input order, each product rounded and
then added, never fused), so the results are exactly those of the plain scalar loop, only faster.

numba's loop vectoriser alone keeps the accumulators in memory (it cannot prove the buffers
apart) and spends its time on loads, stores and loop set-up, and numba does not run LLVM's SLP
vectoriser by default: 4 times slower. So ``layer`` calls a small intrinsic that holds
``HEIGHT`` outputs times ``LANES`` rows of accumulators in vector registers across the whole
input sum. ``tanh`` is a branch-free float32 tanh (expm1 by Cody-Waite reduction and a Taylor
polynomial, within 3 ulp where PyTorch's is within about 1) that the loop vectoriser turns into
vector code, where the C library's tanh is one scalar call per value.
"""

import math

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

LANES = 16  # batch rows per vector: tiles of rows are multiples of this
HEIGHT = 4  # outputs per register block

_F = np.float32
_INV_LN2 = _F(1.0 / math.log(2.0))
# ln 2 split so that n * _LN2_HI is exact for the |n| <= 29 used here: _LN2_HI has 15
# significant bits.
_LN2_HI = _F(0.693145751953125)
_LN2_LO = _F(math.log(2.0) - 0.693145751953125)
_HALF, _ONE, _TWO = _F(0.5), _F(1.0), _F(2.0)
_C2, _C3, _C4, _C5, _C6, _C7 = (_F(1.0 / math.factorial(i)) for i in range(2, 8))
# tanh(10) is 1.0 in float32 (1 - 4e-9), so larger magnitudes are clamped to 10 first.
_SATURATE = _F(10.0)
_FLOOR = _F(-64.0)


@intrinsic
def _pow2(typingctx, n):
    """2.0**n for a whole float32 ``n`` in [-126, 127], built from its exponent bits."""
    if n != types.float32:
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        n32 = builder.fptosi(args[0], i32)
        bits = builder.shl(builder.add(n32, ir.Constant(i32, 127)), ir.Constant(i32, 23))
        return builder.bitcast(bits, ir.FloatType())

    return types.float32(n), codegen


@nb.njit(cache=True, inline="always", error_model="numpy")
def tanh(x):
    """tanh of a float32 as ``-expm1(-2|x|) / (2 + expm1(-2|x|))`` with the sign of ``x``, all
    in float32 (within 2 ulp of the correctly rounded value)."""
    a = abs(x)
    a = _SATURATE if a > _SATURATE else a  # NaN stays NaN
    t = -_TWO * a
    n = np.floor(t * _INV_LN2 + _HALF)
    # n is in [-29, 0]; a NaN x would give a NaN n, whose conversion to an integer is undefined.
    n = n if n >= _FLOOR else _FLOOR
    f = (t - n * _LN2_HI) - n * _LN2_LO  # |f| <= ln(2) / 2
    q = _C7
    q = q * f + _C6
    q = q * f + _C5
    q = q * f + _C4
    q = q * f + _C3
    q = q * f + _C2
    q = f + f * f * q  # expm1(f), the degree-7 Taylor polynomial: 2e-8 relative
    s = _pow2(n)
    em1 = s * q + (s - _ONE)  # expm1(t) = 2**n * (expm1(f) + 1) - 1, without cancellation
    return _F(math.copysign(-em1 / (_TWO + em1), x))


def _splat(builder, value, vec):
    i32 = ir.IntType(32)
    one = builder.insert_element(ir.Constant(vec, ir.Undefined), value, ir.Constant(i32, 0))
    zeros = ir.Constant(ir.VectorType(i32, vec.count), [0] * vec.count)
    return builder.shuffle_vector(one, ir.Constant(vec, ir.Undefined), zeros)


def _block_of(height):
    """An intrinsic ``block(w, b, src, dst, j0, r0)``: for outputs ``j0 .. j0+height`` and rows
    ``r0 .. r0+LANES``, ``dst[j, r] = b[j] + w[j, 0] * src[0, r] + w[j, 1] * src[1, r] + ...``,
    summed left to right in float32 (each product rounded, then added: no fused multiply-add).
    It trusts its caller with the bounds."""

    @intrinsic
    def block(typingctx, w, b, src, dst, j0, r0):
        f32_2d = types.Array(types.float32, 2, "C")
        f32_1d = types.Array(types.float32, 1, "C")
        if not (
            w == f32_2d
            and b == f32_1d
            and src == f32_2d
            and dst == f32_2d
            and isinstance(j0, types.Integer)
            and isinstance(r0, types.Integer)
        ):
            return None
        sig = types.void(w, b, src, dst, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            wa, ba, sa, da = (
                context.make_array(t)(context, builder, v)
                for t, v in zip(signature.args[:4], args[:4], strict=True)
            )
            j0, r0 = args[4], args[5]
            intp = j0.type
            vec = ir.VectorType(ir.FloatType(), LANES)
            n_in = builder.extract_value(wa.shape, 1)
            src_cols = builder.extract_value(sa.shape, 1)
            dst_cols = builder.extract_value(da.shape, 1)
            rows = [builder.add(j0, ir.Constant(intp, i)) for i in range(height)]
            accs = []
            for j in rows:
                bias = builder.load(builder.gep(ba.data, [j]))
                acc = cgutils.alloca_once(builder, vec)  # promoted to a register by LLVM
                builder.store(_splat(builder, bias, vec), acc)
                accs.append(acc)
            with cgutils.for_range(builder, n_in) as loop:
                k = loop.index
                at = builder.gep(sa.data, [builder.add(builder.mul(k, src_cols), r0)])
                x = builder.load(builder.bitcast(at, vec.as_pointer()), align=4)
                for j, acc in zip(rows, accs, strict=True):
                    wjk = builder.load(builder.gep(wa.data, [builder.add(builder.mul(j, n_in), k)]))
                    term = builder.fmul(_splat(builder, wjk, vec), x)
                    builder.store(builder.fadd(builder.load(acc), term), acc)
            for j, acc in zip(rows, accs, strict=True):
                at = builder.gep(da.data, [builder.add(builder.mul(j, dst_cols), r0)])
                builder.store(builder.load(acc), builder.bitcast(at, vec.as_pointer()), align=4)
            return context.get_dummy_value()

        return sig, codegen

    return block


_block = _block_of(HEIGHT)
_block1 = _block_of(1)


# A layer's activation, as the kernels take it: none (the last layer), tanh or ReLU.
NONE, TANH, RELU = 0, 1, 2


@nb.njit(cache=True, inline="always", error_model="numpy")
def relu(x):
    """max(x, 0) as torch.relu takes it: a NaN stays NaN (the comparison is false for it), and
    -0.0 stays -0.0."""
    zero = np.float32(0.0)
    return zero if x < zero else x


@nb.njit(cache=True, error_model="numpy")
def layer(w, b, src, dst, m, activation):
    """``dst[j, r] = b[j] + sum_k w[j, k] * src[k, r]`` (then ``activation``) for the
    first ``m`` columns, rounded up to whole ``LANES``: the buffers' columns must be a multiple
    of ``LANES`` and at least that many, ``src`` at least ``w.shape[1]`` rows and ``dst`` at least
    ``w.shape[0]``. All float32; ``w`` (out, in) and ``b`` as ``nn.Linear`` holds them."""
    n_out = w.shape[0]
    width = (m + LANES - 1) // LANES * LANES
    for r0 in range(0, width, LANES):
        j = 0
        while j + HEIGHT <= n_out:
            _block(w, b, src, dst, j, r0)
            j += HEIGHT
        while j < n_out:
            _block1(w, b, src, dst, j, r0)
            j += 1
    if activation == TANH:
        for j in range(n_out):
            row = dst[j]
            for r in range(width):
                row[r] = tanh(row[r])
    elif activation == RELU:
        for j in range(n_out):
            row = dst[j]
            for r in range(width):
                row[r] = relu(row[r])
