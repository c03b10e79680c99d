"""Kernel launches whose arguments are prepared once: the host's cost of a step is one driver call.

numba-cuda's launch (``kernel[grid, block](*args)``) types every argument, looks the kernel up,
turns each array into its words (pointer, shape, strides) and builds the driver's parameter block,
every call: tens of microseconds for the engine's kernels of a dozen arrays, per step. The engine's
arguments are the same arrays every step (its records and buffers), so ``Launch`` does all of that
once: it compiles the kernel for their types, writes their words into a block of ``ctypes`` values
and launches with one ``cuLaunchKernel`` on the legacy default stream (numba-cuda's). An argument
that does change (the actions a caller hands over, a mask, a policy's parameters, a count) is
updated in place: an array of the compiled type takes one pointer written into the block.

The words follow numba-cuda's own marshalling (``_Kernel._prepare_args`` and cuda.core's
``ParamHolder``): an array is ``(meminfo, parent, size, itemsize, data, *shape, *strides)``, each
an ``intptr_t`` (Python ints are pointer-sized there), integers their own C type, float64 a
double, a boolean a C ``bool``, a tuple its members' words in order. ``tests/cuda/test_launch.py``
checks the block against ``ParamHolder``'s bytes on any machine and against numba-cuda's launch
on a GPU.

Under numba's CUDA simulator (and wherever ``VECENV_CUDA_LAUNCH=numba``, or a block cannot be
prepared) a ``Launch`` calls the kernel through numba-cuda as before: the same kernel, the same
arguments. Every launch, either way, is counted in ``launches()`` (the tests count a step's).
"""

import ctypes
import os
import threading

import numba
import numpy as np

_SIMULATOR = numba.config.ENABLE_CUDASIM
_count = [0]
_with_context = set()  # threads on which numba-cuda's context has been made current


def _context():
    """Make numba-cuda's context current on this thread (once a thread): the driver calls below
    act on the current context, which numba-cuda sets per thread as it works."""
    thread = threading.get_ident()
    if thread not in _with_context:
        from numba import cuda

        cuda.current_context()
        _with_context.add(thread)


def launches():
    """How many kernels vecenv's GPU code has launched in this process."""
    return _count[0]


def raw_launches():
    """Whether launches go straight to the driver (a GPU, and ``VECENV_CUDA_LAUNCH`` not
    ``numba``)."""
    return not _SIMULATOR and os.environ.get("VECENV_CUDA_LAUNCH", "raw") != "numba"


def layout(array):
    """``(address, shape, strides in bytes, dtype)`` of a device array: numba's (real, mapped or
    the simulator's) or any object with ``__cuda_array_interface__``."""
    if _SIMULATOR:
        host = getattr(array, "_ary", array)
        if not isinstance(host, np.ndarray):  # a record or a wrapper of one
            host = np.asarray(host)
        return host.ctypes.data, host.shape, host.strides, host.dtype
    desc = array.__cuda_array_interface__
    dtype = np.dtype(desc["typestr"]) if desc["typestr"][1] != "V" else array.dtype
    shape = tuple(desc["shape"])
    strides = desc.get("strides")
    if strides is None:
        strides = contiguous_strides(shape, dtype.itemsize)
    return desc["data"][0], shape, tuple(strides), dtype


def contiguous_strides(shape, itemsize):
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def words(argtype, value, out, marks=None, index=None):
    """Append the kernel-parameter words of ``value`` (of numba type ``argtype``) to ``out``, as
    numba-cuda's launch does; ``marks[index]`` records where an array's data pointer went (so a
    later array of the same type replaces only that word) or where a scalar went."""
    from numba.core import types

    if isinstance(argtype, types.Array):
        address, shape, strides, dtype = layout(value)
        size = int(np.prod(shape, dtype=np.int64))
        out.extend((0, 0, size, dtype.itemsize))
        if marks is not None and index is not None:
            marks[index] = ("array", len(out), tuple(shape), tuple(strides))
        out.append(int(address))
        out.extend(int(s) for s in shape)
        out.extend(int(s) for s in strides)
    elif isinstance(argtype, types.BaseTuple):
        for item_type, item in zip(argtype, value, strict=True):
            words(item_type, item, out)
    elif isinstance(argtype, types.Boolean):
        if marks is not None and index is not None:
            marks[index] = ("scalar", len(out))
        out.append(bool(value))  # numba-cuda hands a bool on as it is
    elif isinstance(argtype, types.Integer):
        if marks is not None and index is not None:
            marks[index] = ("scalar", len(out))
        out.append(getattr(ctypes, f"c_{argtype}")(value))
    elif argtype == types.float64:
        out.append(ctypes.c_double(value))
    elif argtype == types.float32:
        out.append(ctypes.c_float(value))
    else:
        raise TypeError(f"no prepared launch for an argument of type {argtype}")


class Block:
    """The driver's parameter block of a list of words: ``address`` is the ``void**`` that
    ``cuLaunchKernel`` takes; Python ints become ``intptr_t``, bools a C ``bool`` and floats
    doubles, as cuda.core's ``ParamHolder`` makes them."""

    def __init__(self, items):
        self.values = []
        for item in items:
            if isinstance(item, bool):
                item = ctypes.c_bool(item)
            elif isinstance(item, int):
                item = ctypes.c_ssize_t(item)
            elif isinstance(item, float):
                item = ctypes.c_double(item)
            elif not isinstance(item, ctypes._SimpleCData):
                raise TypeError(f"no kernel parameter of type {type(item).__name__}")
            self.values.append(item)
        self.pointers = (ctypes.c_void_p * max(len(self.values), 1))(
            *(ctypes.addressof(v) for v in self.values)
        )
        self.address = ctypes.addressof(self.pointers)

    def bytes(self, k):
        """The bytes parameter ``k`` holds (what the kernel reads)."""
        value = self.values[k]
        return ctypes.string_at(ctypes.addressof(value), ctypes.sizeof(value))


def _check(result):
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        from cuda.bindings import driver

        name = driver.cuGetErrorName(err)[1]
        raise RuntimeError(f"CUDA driver call failed: {name.decode() if name else err}")
    return result


class Launch:
    """One kernel, its grid and its arguments, launched as often as needed (see the module).

    ``update(index, value)`` replaces argument ``index``: an array of the type it was prepared
    with and the same shape and strides (only its address changes), or an integer."""

    def __init__(self, dispatcher, grid, block, args, name="kernel", on_error=None):
        self.dispatcher, self.grid, self.block = dispatcher, int(grid), int(block)
        self.args = list(args)
        self.name = name
        self._on_error = on_error
        self.block_params = None
        if raw_launches():
            try:
                self._prepare()
            except Exception as exc:  # a compile error is the caller's to describe
                if on_error is not None and type(exc).__module__.startswith("numba"):
                    raise on_error(exc) from None
                raise

    def _prepare(self):
        from cuda.bindings import driver

        from .tables import global_tables

        argtypes = tuple(self.dispatcher.typeof_pyval(a) for a in self.args)
        with global_tables():
            kernel = self.dispatcher.compile(argtypes)
        self.kernel = kernel
        cufunc = kernel._codelibrary.get_cufunc()
        self._function = driver.CUfunction(int(cufunc.handle))
        items, self._marks = [], {}
        for k, (argtype, value) in enumerate(zip(argtypes, self.args, strict=True)):
            words(argtype, value, items, self._marks, k)
        self.block_params = Block(items)
        self._driver = driver

    @property
    def raw(self):
        """Whether this launch goes straight to the driver (its arguments prepared)."""
        return self.block_params is not None

    def point(self, index, address):
        """Array argument ``index`` reads the memory at ``address`` from the next launch on: an
        array the caller has checked to have the prepared array's type and layout."""
        kind, slot, *_ = self._marks[index]
        if kind != "array":
            raise TypeError(f"{self.name}: argument {index} is not an array")
        self.block_params.values[slot].value = int(address)

    def update(self, index, value):
        """Argument ``index`` is ``value`` from the next launch on."""
        self.args[index] = value
        if self.block_params is None:
            return
        kind, slot, *expected = self._marks[index]
        if kind == "array":
            address, shape, strides, _ = layout(value)
            if (tuple(shape), tuple(strides)) != tuple(expected):
                raise ValueError(
                    f"{self.name}: argument {index} was prepared for shape {expected[0]}, "
                    f"strides {expected[1]}; got {shape}, {strides}"
                )
            self.block_params.values[slot].value = int(address)
        else:
            self.block_params.values[slot].value = int(value)

    def __call__(self):
        _count[0] += 1
        if self.block_params is None:
            from .tables import global_tables

            try:
                with global_tables():  # the first call compiles
                    self.dispatcher[self.grid, self.block](*self.args)
            except Exception as exc:
                failed = type(exc).__module__.startswith("numba") and "pipeline" in str(exc)
                if failed and self._on_error is not None:
                    raise self._on_error(exc) from None
                raise
            return
        _context()
        _check(
            self._driver.cuLaunchKernel(
                self._function, self.grid, 1, 1, self.block, 1, 1, 0, 0,
                self.block_params.address, 0,
            )
        )  # fmt: skip


def launch(kernel, grid, block, *args):
    """An occasional launch through numba-cuda (a cast of actions, say), counted."""
    from .tables import global_tables

    _count[0] += 1
    with global_tables():
        kernel[grid, block](*args)


def copy_in(device, host):
    """Copy the host array ``host`` into the device array ``device`` (same size, contiguous),
    ordered after the kernels queued before it."""
    if not raw_launches():
        device.copy_to_device(host)
        return
    from cuda.bindings import driver

    _context()
    address, _, _, dtype = layout(device)
    host = np.ascontiguousarray(host)
    if host.nbytes != int(np.prod(device.shape, dtype=np.int64)) * dtype.itemsize:
        raise ValueError("copy_in: sizes differ")
    _check(driver.cuMemcpyHtoD(address, host.ctypes.data, host.nbytes))


def synchronize():
    """Wait for every kernel queued so far."""
    if _SIMULATOR:
        return
    if raw_launches():
        from cuda.bindings import driver

        _context()
        _check(driver.cuCtxSynchronize())
        return
    from numba import cuda

    cuda.synchronize()
