"""The arithmetic of a game's float32 rules: what ``precision.py``'s rewritten copy calls.

numba types an operation as NumPy promotes it: a float32 combined with a Python float, a float64
or an integer gives a float64, so rules written for float64 (``2 * x``, ``x * 0.5``, ``x - 1``)
would compute in float64 again however their state is stored. In a float32 copy of the rules every
arithmetic operator, comparison and two-argument ``min``/``max`` is a call of the function of the
same meaning here, typed by its operands: where one is a float32 and the other a number of another
type (an integer, a bool, a float64), both are taken as float32 first; otherwise it is the
operator itself, so integer arithmetic (indices, counts, actions) and float64 arithmetic (a random
draw, the configuration) keep their types. Each function compiles to the one instruction it
stands for, and LLVM inlines it.

The NumPy-exact helpers of ``npmath`` have float32 counterparts here of the same names (the copy
imports them instead): their exactness is float64's, and in float32 a square is a product.
"""

import operator

import numba as nb
import numpy as np
from numba import types
from numba.extending import overload

FLOAT = np.float32  # the type a float32 copy of the rules computes in

# The flags the rules compile with (``error_model="numpy"``: no zero-divisor branch); an
# overload's implementation is compiled by itself, with its own flags.
_OPTIONS = {"error_model": "numpy"}


def _number(t):
    return isinstance(t, (types.Integer, types.Float, types.Boolean))


def narrows(a, b):
    """Whether an operation on values of numba types ``a`` and ``b`` runs in float32: one is a
    float32 and the other a number of another type."""
    return (a == types.float32 and _number(b) and b != types.float32) or (
        b == types.float32 and _number(a) and a != types.float32
    )


def _binary(name, op):
    """``name(a, b)``, ``op(a, b)`` in float32 where ``narrows``, else ``op`` itself."""

    def stub(a, b):
        return op(a, b)

    stub.__name__ = stub.__qualname__ = name

    @overload(stub, jit_options=_OPTIONS)
    def impl(a, b):
        if narrows(a, b):
            return lambda a, b: op(np.float32(a), np.float32(b))
        return lambda a, b: op(a, b)

    return stub


add = _binary("add", operator.add)
sub = _binary("sub", operator.sub)
mul = _binary("mul", operator.mul)
truediv = _binary("truediv", operator.truediv)
floordiv = _binary("floordiv", operator.floordiv)
mod = _binary("mod", operator.mod)
pow_ = _binary("pow_", operator.pow)
lt = _binary("lt", operator.lt)
le = _binary("le", operator.le)
gt = _binary("gt", operator.gt)
ge = _binary("ge", operator.ge)
eq = _binary("eq", operator.eq)
ne = _binary("ne", operator.ne)
min2 = _binary("min2", min)
max2 = _binary("max2", max)


# npmath's counterparts (same names, same arguments).


@nb.njit(cache=True, error_model="numpy", inline="always")
def square(x):
    """``x * x`` (npmath's ``square`` reproduces libm's ``pow(x, 2)`` in float64)."""
    return x * x


@nb.njit(cache=True, error_model="numpy", inline="always")
def f32(x):
    """``x`` as a float32 (npmath's ``f32`` rounds to float32 and widens back to float64)."""
    return np.float32(x)


@nb.njit(cache=True, error_model="numpy", inline="always")
def pow(x, y):  # noqa: A001 (npmath's name, which it takes from the C library)
    """``x ** y`` in float32 (a builtin LLVM may simplify, where npmath's may not be)."""
    return np.float32(x) ** np.float32(y)


powf = pow
