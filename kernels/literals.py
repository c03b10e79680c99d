"""Calls between vecenv's jitted functions compile once per type, not once per constant.

When a jitted function calls another with a constant argument (``slide(0, sq, occ)``), numba types
the constant as a literal (``Literal[int](0)``) and compiles the callee once for each constant it is
called with: chess's ray walk was compiled 24 times for its first step, connect four's line test
16 times. Each compile costs about 40 ms of numba's own work before any machine code, so a game's
cold first step paid seconds for copies that LLVM's inliner and constant folding would have
specialised anyway (the callees are small and inlined into their callers' machine code).

``install`` makes a call to a function of vecenv's modules (and of its games, bundled or not: the
modules ``cache.owns``) try the arguments' plain types first, and the literal ones only where the
callee does not compile with plain types (it indexes a heterogeneous tuple with the argument, or
asks for ``numba.literally``): the same machine code, one compile. Other numba functions of the
process keep numba's rule.
"""

import functools


@functools.cache
def install(owns):
    """Patch numba's typing of calls to dispatchers (once): ``owns(module name)`` tells the
    modules whose functions it applies to (``cache.owns``)."""
    from numba.core import errors, types
    from numba.core.types import functions

    resolve = functions.Dispatcher.get_call_type

    def get_call_type(self, context, args, kws):
        if any(isinstance(a, types.Literal) for a in (*args, *kws.values())):
            module = getattr(self.dispatcher.py_func, "__module__", None) or ""
            if owns(module):
                plain = tuple(types.unliteral(a) for a in args)
                plain_kws = {k: types.unliteral(v) for k, v in kws.items()}
                try:
                    found = resolve(self, context, plain, plain_kws)
                except errors.TypingError:
                    found = None  # the callee needs its constants: numba's rule
                if found is not None:
                    return found
        return resolve(self, context, args, kws)

    functions.Dispatcher.get_call_type = get_call_type
