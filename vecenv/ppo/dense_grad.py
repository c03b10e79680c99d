"""The backward pass of ``vecenv.ppo.dense``'s layers, in float32 over the same transposed
activations (one buffer row per feature, one column per batch row, columns a multiple of
``LANES``).

A layer ``y = W x + b`` passes back three products of its output gradient ``dy``:

- ``dW[j, k] = sum_r dy[j, r] * x[k, r]`` (``weight_grad``): a sum over the batch's columns.
  An intrinsic holds a block of ``BLOCK_J x BLOCK_K`` vector accumulators of ``LANES`` columns
  in registers across the whole sum, then folds each to a scalar by a fixed tree of halvings, so
  the result is deterministic (the same on every run, whatever the thread count) though not the
  left-to-right sum.
- ``db[j] = sum_r dy[j, r]`` (``row_sums``): lane-wise partial sums folded the same way.
- ``dx[k, r] = sum_j W[j, k] * dy[j, r]`` (``input_grad``): the forward pass's register blocks
  run across columns, reading ``W`` by columns, with ``BACK_HEIGHT`` inputs a block.

The sums use multiply-adds (fused where the CPU has them): unlike the forward pass, nothing here
has to repeat PyTorch's or the rollout's roundings bit for bit.

Through an activation, ``activation_grad`` multiplies by ``1 - y * y`` for a tanh and by
``y > 0`` for a ReLU, as PyTorch's backward passes do (both from the layer's output ``y``).
"""

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .dense import LANES, TANH, _splat

BLOCK_J, BLOCK_K = 4, 4  # a 4 x 4 block: 16 accumulators and 8 operands in 32 vector registers


def _fma(builder, vec):
    """LLVM's multiply-add on ``vec``: fused where the CPU has FMA (these sums need not match a
    plain loop's, only be the same on every run on one machine)."""
    fn = ir.FunctionType(vec, [vec, vec, vec])
    return cgutils.get_or_insert_function(builder.module, fn, f"llvm.fmuladd.v{vec.count}f32")


def _fold(builder, acc):
    """A vector's lanes summed by halving: (lanes 0..7 + 8..15), then (0..3 + 4..7), ..."""
    width = acc.type.count
    i32 = ir.IntType(32)
    while width > 1:
        half = width // 2
        low = ir.Constant(ir.VectorType(i32, half), list(range(half)))
        high = ir.Constant(ir.VectorType(i32, half), list(range(half, width)))
        acc = builder.fadd(
            builder.shuffle_vector(acc, acc, low), builder.shuffle_vector(acc, acc, high)
        )
        width = half
    return builder.extract_element(acc, ir.Constant(i32, 0))


def _outer_of(height, depth):
    """An intrinsic ``block(dy, x, dw, j0, k0, width)``: for ``j`` in ``j0 .. j0+height`` and
    ``k`` in ``k0 .. k0+depth``, ``dw[j, k] = sum over the first width columns of dy[j] * x[k]``
    (``width`` a multiple of ``LANES``). It trusts its caller with the bounds."""

    @intrinsic
    def block(typingctx, dy, x, dw, j0, k0, width):
        f32_2d = types.Array(types.float32, 2, "C")
        if not (
            dy == f32_2d
            and x == f32_2d
            and dw == f32_2d
            and isinstance(j0, types.Integer)
            and isinstance(k0, types.Integer)
            and isinstance(width, types.Integer)
        ):
            return None
        sig = types.void(dy, x, dw, types.intp, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            ya, xa, wa = (
                context.make_array(t)(context, builder, v)
                for t, v in zip(signature.args[:3], args[:3], strict=True)
            )
            j0, k0, width = args[3], args[4], args[5]
            intp = j0.type
            vec = ir.VectorType(ir.FloatType(), LANES)
            y_cols = builder.extract_value(ya.shape, 1)
            x_cols = builder.extract_value(xa.shape, 1)
            w_cols = builder.extract_value(wa.shape, 1)
            js = [builder.add(j0, ir.Constant(intp, i)) for i in range(height)]
            ks = [builder.add(k0, ir.Constant(intp, i)) for i in range(depth)]
            y_rows = [builder.gep(ya.data, [builder.mul(j, y_cols)]) for j in js]
            x_rows = [builder.gep(xa.data, [builder.mul(k, x_cols)]) for k in ks]
            zero = ir.Constant(vec, [0.0] * LANES)
            accs = [[cgutils.alloca_once_value(builder, zero) for _ in ks] for _ in js]
            steps = builder.udiv(width, ir.Constant(intp, LANES))
            fma = _fma(builder, vec)
            with cgutils.for_range(builder, steps) as loop:
                c = builder.mul(loop.index, ir.Constant(intp, LANES))

                def load(row):
                    at = builder.bitcast(builder.gep(row, [c]), vec.as_pointer())
                    return builder.load(at, align=4)

                ys = [load(row) for row in y_rows]
                xs = [load(row) for row in x_rows]
                for yv, row in zip(ys, accs, strict=True):
                    for xv, acc in zip(xs, row, strict=True):
                        builder.store(builder.call(fma, [yv, xv, builder.load(acc)]), acc)
            for j, row in zip(js, accs, strict=True):
                for k, acc in zip(ks, row, strict=True):
                    at = builder.gep(wa.data, [builder.add(builder.mul(j, w_cols), k)])
                    builder.store(_fold(builder, builder.load(acc)), at)
            return context.get_dummy_value()

        return sig, codegen

    return block


_outer = _outer_of(BLOCK_J, BLOCK_K)
_outer_j = _outer_of(BLOCK_J, 1)
_outer_k = _outer_of(1, BLOCK_K)
_outer_1 = _outer_of(1, 1)


def _back_of(height):
    """An intrinsic ``block(w, dy, dx, k0, r0)``: for inputs ``k`` in ``k0 .. k0+height`` and
    columns ``r0 .. r0+LANES``, ``dx[k, r] = sum_j w[j, k] * dy[j, r]`` over all of ``w``'s rows
    (multiply-adds in row order). It trusts its caller with the bounds."""

    @intrinsic
    def block(typingctx, w, dy, dx, k0, r0):
        f32_2d = types.Array(types.float32, 2, "C")
        if not (
            w == f32_2d
            and dy == f32_2d
            and dx == f32_2d
            and isinstance(k0, types.Integer)
            and isinstance(r0, types.Integer)
        ):
            return None
        sig = types.void(w, dy, dx, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            wa, ya, xa = (
                context.make_array(t)(context, builder, v)
                for t, v in zip(signature.args[:3], args[:3], strict=True)
            )
            k0, r0 = args[3], args[4]
            intp = k0.type
            vec = ir.VectorType(ir.FloatType(), LANES)
            n_rows = builder.extract_value(wa.shape, 0)
            w_cols = builder.extract_value(wa.shape, 1)
            y_cols = builder.extract_value(ya.shape, 1)
            x_cols = builder.extract_value(xa.shape, 1)
            ks = [builder.add(k0, ir.Constant(intp, i)) for i in range(height)]
            zero = ir.Constant(vec, [0.0] * LANES)
            accs = [cgutils.alloca_once_value(builder, zero) for _ in ks]
            fma = _fma(builder, vec)
            with cgutils.for_range(builder, n_rows) as loop:
                j = loop.index
                at = builder.gep(ya.data, [builder.add(builder.mul(j, y_cols), r0)])
                y = builder.load(builder.bitcast(at, vec.as_pointer()), align=4)
                w_row = builder.mul(j, w_cols)
                for k, acc in zip(ks, accs, strict=True):
                    wjk = builder.load(builder.gep(wa.data, [builder.add(w_row, k)]))
                    builder.store(
                        builder.call(fma, [_splat(builder, wjk, vec), y, builder.load(acc)]), acc
                    )
            for k, acc in zip(ks, accs, strict=True):
                at = builder.gep(xa.data, [builder.add(builder.mul(k, x_cols), r0)])
                builder.store(builder.load(acc), builder.bitcast(at, vec.as_pointer()), align=4)
            return context.get_dummy_value()

        return sig, codegen

    return block


BACK_HEIGHT = 8  # inputs per register block: 8 accumulators hide the multiply-add latency
_back = _back_of(BACK_HEIGHT)
_back4 = _back_of(4)
_back1 = _back_of(1)


@intrinsic
def _lane_sum(typingctx, y, j, width):
    """``sum over the first width columns of y[j]`` (``width`` a multiple of ``LANES``), as
    lane-wise partial sums folded by halving."""
    if not (
        y == types.Array(types.float32, 2, "C")
        and isinstance(j, types.Integer)
        and isinstance(width, types.Integer)
    ):
        return None
    sig = types.float32(y, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        ya = context.make_array(signature.args[0])(context, builder, args[0])
        j, width = args[1], args[2]
        intp = j.type
        vec = ir.VectorType(ir.FloatType(), LANES)
        row = builder.gep(ya.data, [builder.mul(j, builder.extract_value(ya.shape, 1))])
        acc = cgutils.alloca_once_value(builder, ir.Constant(vec, [0.0] * LANES))
        steps = builder.udiv(width, ir.Constant(intp, LANES))
        with cgutils.for_range(builder, steps) as loop:
            c = builder.mul(loop.index, ir.Constant(intp, LANES))
            at = builder.bitcast(builder.gep(row, [c]), vec.as_pointer())
            builder.store(builder.fadd(builder.load(acc), builder.load(at, align=4)), acc)
        return _fold(builder, builder.load(acc))

    return sig, codegen


@nb.njit(cache=True, error_model="numpy")
def weight_grad(dy, x, dw, width):
    """``dw[j, k] = sum_r dy[j, r] * x[k, r]`` over the first ``width`` columns (a multiple of
    ``LANES``) for every ``j < dw.shape[0]``, ``k < dw.shape[1]``: ``dy`` needs at least
    ``dw.shape[0]`` rows, ``x`` at least ``dw.shape[1]``, both at least ``width`` columns."""
    n_out, n_in = dw.shape
    j = 0
    while j + BLOCK_J <= n_out:
        k = 0
        while k + BLOCK_K <= n_in:
            _outer(dy, x, dw, j, k, width)
            k += BLOCK_K
        while k < n_in:
            _outer_j(dy, x, dw, j, k, width)
            k += 1
        j += BLOCK_J
    while j < n_out:
        k = 0
        while k + BLOCK_K <= n_in:
            _outer_k(dy, x, dw, j, k, width)
            k += BLOCK_K
        while k < n_in:
            _outer_1(dy, x, dw, j, k, width)
            k += 1
        j += 1


@nb.njit(cache=True, error_model="numpy")
def row_sums(dy, db, width):
    """``db[j] = sum_r dy[j, r]`` over the first ``width`` columns, for ``j < db.shape[0]``."""
    for j in range(db.shape[0]):
        db[j] = _lane_sum(dy, j, width)


@nb.njit(cache=True, error_model="numpy")
def input_grad(w, dy, dx, width):
    """``dx[k, r] = sum_j w[j, k] * dy[j, r]`` for every input ``k < w.shape[1]`` and the first
    ``width`` columns (a multiple of ``LANES``): ``dy`` needs at least ``w.shape[0]`` rows,
    ``dx`` at least ``w.shape[1]``."""
    n_in = w.shape[1]
    for r0 in range(0, width, LANES):
        k = 0
        while k + BACK_HEIGHT <= n_in:
            _back(w, dy, dx, k, r0)
            k += BACK_HEIGHT
        while k + 4 <= n_in:
            _back4(w, dy, dx, k, r0)
            k += 4
        while k < n_in:
            _back1(w, dy, dx, k, r0)
            k += 1


@nb.njit(cache=True, error_model="numpy")
def activation_grad(dx, y, rows, width, activation):
    """The gradient ``dx`` through ``y = activation(.)``, in place for the first ``rows`` rows
    and ``width`` columns: ``dx *= 1 - y ** 2`` for TANH; for RELU ``dx`` is 0 where ``y <= 0``
    (PyTorch's ``threshold_backward``: a NaN output passes its gradient on)."""
    one = np.float32(1.0)
    zero = np.float32(0.0)
    if activation == TANH:
        for k in range(rows):
            d = dx[k]
            t = y[k]
            for r in range(width):
                d[r] = d[r] * (one - t[r] * t[r])
    else:
        for k in range(rows):
            d = dx[k]
            t = y[k]
            for r in range(width):
                d[r] = zero if t[r] <= zero else d[r]
