"""Where a kernel's constant tables live: large ones in global memory, so that every game links.

numba-cuda puts every numpy array a device function reads from its globals (a game's lookup
tables) in the kernel's constant memory, a copy for each function that reads it. A kernel has
64 KB of constant memory; chess's move tables, read by a dozen functions, took 113 KB and its
kernels did not link on a GPU (``nvJitLink``: "File uses too much global constant data").

Within ``global_tables()`` (every compile of vecenv's kernels runs inside it), an array of
``GLOBAL_BYTES`` or more is placed in global memory instead, once per kernel whatever the number
of functions reading it: it is named by a hash of its bytes with ODR linkage, so the copies made
for different functions are one symbol when NVVM links them. Reads of a table indexed by each
thread's own board go through the L1 cache either way; constant memory serialises a warp's
different addresses, so large, divergently indexed tables lose nothing there. Small arrays
(read-mostly scalars and short tables) stay in constant memory.

``const_bytes(ptx)`` reads a compiled kernel's constant data from its PTX, which is how
``tests/cuda/test_ptx.py`` checks every game's kernels fit a device without one.
"""

import contextlib
import hashlib
import re
import threading

import numpy as np

GLOBAL_BYTES = 1024  # arrays this large or larger go to global memory
CONSTANT_LIMIT = 64 * 1024  # a kernel's constant memory on every CUDA device

_state = threading.local()
_installed = False
_lock = threading.Lock()


def _inside():
    return getattr(_state, "depth", 0) > 0


def _install():
    """Wrap numba-cuda's ``make_constant_array`` once; outside ``global_tables()`` it behaves as
    numba-cuda's own, so other code compiled in the same process is left as it was."""
    global _installed
    with _lock:
        if _installed:
            return
        from numba.cuda import target

        original = target.CUDATargetContext.make_constant_array

        def make_constant_array(self, builder, aryty, arr):
            if not _inside() or arr.nbytes < GLOBAL_BYTES:
                return original(self, builder, aryty, arr)
            return _global_array(self, builder, aryty, arr)

        target.CUDATargetContext.make_constant_array = make_constant_array
        _installed = True


def _global_array(context, builder, aryty, arr):
    """numba-cuda's constant array, its bytes in a read-only global variable."""
    from llvmlite import ir
    from numba.core import types
    from numba.cuda.cudadrv import nvvm

    if any(s < 0 for s in arr.strides) or not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    data = arr.tobytes(order="A")
    module = builder.module
    # The same bytes make the same symbol in every function's module: one copy once linked.
    name = f"_vecenv_table_{hashlib.sha1(data).hexdigest()[:24]}_{len(data)}"
    try:
        variable = module.get_global(name)
    except KeyError:
        kind = ir.ArrayType(ir.IntType(8), len(data))
        variable = ir.GlobalVariable(module, kind, name, addrspace=nvvm.ADDRSPACE_GLOBAL)
        variable.linkage = "linkonce_odr"
        variable.global_constant = True
        variable.initializer = ir.Constant(kind, bytearray(data))
        size = context.get_abi_sizeof(context.get_data_type(aryty.dtype))
        variable.align = 2 ** (size - 1).bit_length()
    generic = builder.addrspacecast(variable, ir.PointerType(ir.IntType(8)), "generic")
    ary = context.make_array(aryty)(context, builder)
    context.populate_array(
        ary,
        data=builder.bitcast(generic, ary.data.type),
        shape=[context.get_constant(types.intp, s) for s in arr.shape],
        strides=[context.get_constant(types.intp, s) for s in arr.strides],
        itemsize=ary.itemsize,
        parent=ary.parent,
        meminfo=None,
    )
    return ary._getvalue()


@contextlib.contextmanager
def global_tables():
    """Within it, kernels compiled on this thread keep large tables in global memory."""
    import numba

    if numba.config.ENABLE_CUDASIM:  # the simulator compiles nothing
        yield
        return
    _install()
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


# A PTX variable declaration in the constant state space: `.const .align 8 .b8 name[512] = ...`
# (an array of bytes, as numba-cuda writes them) or a scalar (`.const .align 4 .u32 name;`).
_CONST = re.compile(
    r"^\s*(?:\.\w+\s+)*?\.const\b[^;=]*?\.[bsuf](\d+)\s+[^\s\[;=]+(?:\[(\d+)\])?", re.M
)


def const_bytes(ptx):
    """The bytes of constant memory a kernel's PTX declares (what must fit ``CONSTANT_LIMIT``)."""
    return sum(int(bits) // 8 * int(count or 1) for bits, count in _CONST.findall(ptx))
