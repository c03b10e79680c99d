"""Scalar arithmetic as NumPy computes it, for rules that must match a NumPy reference bit for bit.

NumPy squares a float scalar (``x**2``) with the C library's ``pow``/``powf``, which is not always
the correctly rounded ``x * x`` (about one value in a thousand differs by an ulp). LLVM rewrites any
``pow(x, 2)`` it recognises into that product, so ``pow``/``powf`` here are calls LLVM may not treat
as builtins. ``f32`` rounds to float32 where a reference's arithmetic runs in float32.
"""

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _libm(name, nbtype):
    """An njit-callable ``name(x, y)`` of the C library that LLVM may not rewrite as a builtin."""

    @intrinsic
    def call(typingctx, x, y):
        def codegen(context, builder, signature, args):
            lty = context.get_value_type(nbtype)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(lty, [lty, lty]), name
            )
            fn.attributes.add("nobuiltin")
            return builder.call(fn, args)

        return nbtype(nbtype, nbtype), codegen

    return call


pow = _libm("pow", types.float64)  # the C library's name, on purpose
powf = _libm("powf", types.float32)


@intrinsic
def _binade(typingctx, x):
    """The power of two at or below a positive normal float64 (its exponent bits alone)."""

    def codegen(context, builder, signature, args):
        bits = builder.bitcast(args[0], ir.IntType(64))
        exponent = builder.and_(bits, ir.Constant(ir.IntType(64), 0x7FF0000000000000))
        return builder.bitcast(exponent, ir.DoubleType())

    return types.float64(types.float64), codegen


_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitter for float64
_EPS = 2.0**-52
# pow's error is below 0.54 ulp (glibc's bound; measured here: pow(x, 2) and x * x never differed
# while the square's rounding error was under 0.494 ulp, in 10^8 draws); so while the exact square
# is more than 0.46 ulp from hi's neighbours, pow can only return hi. 0.45 leaves a margin.
_SAFE = 0.45
_TINY = 2.0**-960  # below it (or above _HUGE) the exact-error trick could under- or overflow
_HUGE = 2.0**1000


@nb.njit(cache=True, error_model="numpy", inline="always")
def square(x):
    """``x**2`` as NumPy computes it for a float64 scalar (libm's pow), bit for bit.

    pow costs about 11 ns; it is only needed when the exact square lies near the midpoint between
    two doubles, where pow's own rounding may pick the other one. Dekker's exact product gives the
    rounding error of ``x * x`` in a few flops, so the common case stays a multiplication.
    """
    hi = x * x
    if _TINY < hi < _HUGE:
        c = _SPLIT * x
        xh = c - (c - x)
        xl = x - xh
        lo = ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl  # hi + lo == x * x exactly
        ulp = _binade(hi) * _EPS
        if hi == _binade(hi) and lo < 0.0:
            ulp *= 0.5  # just below a power of two the doubles are twice as dense
        if abs(lo) < _SAFE * ulp:
            return hi
    return pow(x, 2.0)


@nb.njit(cache=True, error_model="numpy", inline="always")
def f32(x):
    """``x`` rounded to float32 (to nearest, ties to even), as a float64."""
    return np.float64(np.float32(x))
