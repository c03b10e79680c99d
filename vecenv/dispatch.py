"""Calling a game's compiled drivers: numba's compile errors reported as the game's, and the
machine code of a driver looked up once so that a small batch's step skips numba's dispatch."""

import contextlib
import re

import numba
import numpy as np

from . import registry


def _type_key(a):
    """What numba's type of ``a`` depends on, cheaper to compute than ``numba.typeof``."""
    if isinstance(a, np.ndarray):
        f = a.flags
        return (a.dtype, a.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    if isinstance(a, tuple):
        return tuple(_type_key(x) for x in a)
    return type(a)


_ENTRY_POINTS = {}


@contextlib.contextmanager
def compiling(game):
    """numba's compile errors in a game's rules as a ``GameError`` naming the game, the rules'
    function and numba's own message, without the drivers' part of numba's report."""
    try:
        yield
    except numba.core.errors.NumbaError as exc:
        raise registry.GameError(_compile_report(game, str(exc))) from None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _compile_report(game, text):
    # numba colours its report where pygments is installed: the message is read, and shown, plain.
    lines = _ANSI.sub("", text).splitlines()
    where = ""
    for k, line in enumerate(lines):
        if line.startswith('File "') and "vecenv_drivers_" not in line:
            function = lines[k + 1].strip() if k + 1 < len(lines) else ""
            name = function[4:].split("(")[0] if function.startswith("def ") else "?"
            where = f" in {name} ({line[5:].rstrip(':')})"
            break
    # Numba's report up to where it enters the drivers that call the rules.
    cut = next((k for k, line in enumerate(lines) if "resolving callee type" in line), len(lines))
    body = "\n".join(lines[:cut]).strip()
    return f"{game}: the rules do not compile{where}:\n{body}"


def entry_point(dispatcher, args):
    """The machine code compiled for exactly these arguments' types, callable without numba's
    type dispatch (about 1.3 us per call, most of a small batch's step). It checks no types, so it
    is only ever called with arguments of the very types it was looked up with. None if this numba
    keeps no such entry. Looked up once per dispatcher and argument types (numba's own lookup
    costs a millisecond or so: more than a small engine's whole episode)."""
    key = (dispatcher, tuple(_type_key(a) for a in args))
    if key not in _ENTRY_POINTS:
        try:
            found = dispatcher.overloads[tuple(numba.typeof(a) for a in args)].entry_point
        except (AttributeError, KeyError, TypeError, ValueError):
            found = None
        _ENTRY_POINTS[key] = found
    return _ENTRY_POINTS[key]
