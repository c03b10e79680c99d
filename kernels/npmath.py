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


@nb.njit(cache=True, error_model="numpy", inline="always")
def square(x):
    """``x**2`` as NumPy computes it for a float64 scalar."""
    return pow(x, 2.0)


@nb.njit(cache=True, error_model="numpy", inline="always")
def f32(x):
    """``x`` rounded to float32 (to nearest, ties to even), as a float64."""
    return np.float64(np.float32(x))
