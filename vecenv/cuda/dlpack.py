"""DLPack for the GPU engine: its outputs exported, actions imported, without copies.

``DeviceArray`` is what the engine hands out (``obs``, ``final_obs``, ``rewards``,
``terminated``, ``truncated``): the numba device array it wraps (``.array``, the buffer the
kernels write), with ``__dlpack__``/``__dlpack_device__`` added and ``__cuda_array_interface__``
kept, so ``torch.from_dlpack``, ``jax.dlpack.from_dlpack``, ``cupy.from_dlpack`` and
``torch.as_tensor(..., device="cuda")`` all read the engine's memory in place. Every other
attribute (``shape``, ``copy_to_host``, ``reshape``, ...) is the numba array's.

The capsule is a legacy ``DLManagedTensor`` (named ``"dltensor"``, which every consumer accepts)
built with ctypes. It keeps the buffer alive until the consumer calls its deleter (a capsule never
consumed is deleted with the capsule). On a GPU it declares ``kDLCUDA`` and the current device;
under numba's CUDA simulator the arrays live in host memory and it declares ``kDLCPU``, so numpy's
``np.from_dlpack`` reads them.
"""

import ctypes

import numba
import numpy as np

KDL_CPU, KDL_CUDA = 1, 2
_INT, _UINT, _FLOAT, _BOOL = 0, 1, 2, 6
_CODES = {"i": _INT, "u": _UINT, "f": _FLOAT, "b": _BOOL}
_KINDS = {code: kind for kind, code in _CODES.items()}
_NAME, _USED = b"dltensor", b"used_dltensor"  # module constants: capsules point at their bytes
_SIMULATOR = numba.config.ENABLE_CUDASIM


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int),
        ("dtype", _DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_LIVE = {}  # address of a DLManagedTensor -> what it points into, until its deleter runs


@_DELETER
def _delete(address):
    _LIVE.pop(address, None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_gone(capsule):
    # A capsule dropped unconsumed still owns its tensor; a consumer renames the ones it takes.
    if _api.PyCapsule_IsValid(capsule, _NAME):
        _delete(_api.PyCapsule_GetPointer(capsule, _NAME))


def _layout(array):
    """(address, shape, strides in bytes, dtype, device) of a numba device array."""
    if _SIMULATOR:
        host = array._ary
        return host.ctypes.data, host.shape, host.strides, host.dtype, (KDL_CPU, 0)
    from numba import cuda

    desc = array.__cuda_array_interface__
    dtype = np.dtype(desc["typestr"])
    shape = tuple(desc["shape"])
    strides = desc.get("strides") or tuple(
        int(np.prod(shape[k + 1 :], dtype=np.int64)) * dtype.itemsize for k in range(len(shape))
    )
    return desc["data"][0], shape, strides, dtype, (KDL_CUDA, cuda.get_current_device().id)


def to_capsule(array):
    """A DLPack capsule of a numba device array (its memory, no copy), keeping it alive until
    the consumer deletes the tensor."""
    address, shape, strides, dtype, device = _layout(array)
    if dtype.kind not in _CODES or dtype.byteorder == ">":
        raise BufferError(f"DLPack cannot describe dtype {dtype}")
    if any(s % dtype.itemsize for s in strides):
        raise BufferError("DLPack strides count elements: this array's are not whole elements")
    ndim = len(shape)
    shape_c = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_c = (ctypes.c_int64 * max(ndim, 1))(*(s // dtype.itemsize for s in strides))
    managed = _Managed()
    t = managed.dl_tensor
    t.data = address
    t.device = _Device(*device)
    t.ndim = ndim
    t.dtype = _DataType(_CODES[dtype.kind], dtype.itemsize * 8, 1)
    t.shape = ctypes.cast(shape_c, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_c, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    managed.deleter = _delete
    pointer = ctypes.addressof(managed)
    _LIVE[pointer] = (managed, shape_c, strides_c, array)
    return _api.PyCapsule_New(pointer, _NAME, ctypes.cast(_capsule_gone, ctypes.c_void_p))


def describe(capsule):
    """What a DLPack capsule holds, taken over (renamed ``used_dltensor``): ``(address, shape,
    strides in bytes, dtype, device, release)``; ``release()`` calls the producer's deleter."""
    if not _api.PyCapsule_IsValid(ctypes.c_void_p(id(capsule)), _NAME):
        raise BufferError("not an unused DLPack capsule (a 'dltensor')")
    pointer = _api.PyCapsule_GetPointer(ctypes.c_void_p(id(capsule)), _NAME)
    managed = _Managed.from_address(pointer)
    t = managed.dl_tensor
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    if lanes != 1 or code not in _KINDS or bits % 8:
        raise BufferError(f"DLPack dtype (code {code}, {bits} bits, {lanes} lanes) unsupported")
    dtype = np.dtype(f"{_KINDS[code]}{bits // 8}") if code != _BOOL else np.dtype(np.bool_)
    shape = tuple(t.shape[k] for k in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[k] * dtype.itemsize for k in range(t.ndim))
    else:
        strides = tuple(
            int(np.prod(shape[k + 1 :], dtype=np.int64)) * dtype.itemsize for k in range(t.ndim)
        )
    _api.PyCapsule_SetName(capsule, _USED)
    deleter = managed.deleter

    def release():
        if deleter:
            deleter(pointer)

    address = (t.data or 0) + t.byte_offset
    return address, shape, strides, dtype, (t.device.device_type, t.device.device_id), release


class _Imported:
    """A consumed CUDA DLPack tensor seen through ``__cuda_array_interface__``: numba's array of
    it holds this object, whose end calls the producer's deleter."""

    _release = None

    def __init__(self, capsule):
        address, shape, strides, dtype, _, self._release = describe(capsule)
        self.__cuda_array_interface__ = {
            "shape": shape,
            "strides": strides,
            "typestr": dtype.str,
            "data": (address, False),
            "version": 3,
        }

    def __del__(self):
        if self._release is not None:
            self._release()


def import_actions(obj):
    """An object with ``__dlpack__`` only (no ``__cuda_array_interface__``, e.g. a JAX array):
    a numpy array if it lives on the host, a numba device array (no copy) if on a GPU."""
    device_type, _ = obj.__dlpack_device__()
    if device_type == KDL_CPU:
        return np.from_dlpack(obj)
    if device_type != KDL_CUDA:
        raise ValueError(f"actions on DLPack device type {device_type} (neither host nor CUDA)")
    from numba import cuda

    # Stream 1, CUDA's legacy default stream, where numba queues the engine's kernels.
    try:
        return cuda.as_cuda_array(_Imported(obj.__dlpack__(stream=1)))
    except BufferError as exc:
        raise ValueError(f"actions given by DLPack cannot be read: {exc}") from None


class DeviceArray:
    """A numba device array (``.array``) that also exports DLPack. Everything but
    ``__dlpack__``/``__dlpack_device__`` is the wrapped array's."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("the engine's buffers are exported in place (copy=True refused)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"the buffer lives on {self.__dlpack_device__()}, not {dl_device}")
        if not _SIMULATOR and stream not in (None, -1, 1):
            # Another stream than the legacy default one, where the engine's kernels run: its
            # work must wait for theirs.
            from numba import cuda

            cuda.synchronize()
        return to_capsule(self.array)

    def __dlpack_device__(self):
        if _SIMULATOR:
            return (KDL_CPU, 0)
        from numba import cuda

        return (KDL_CUDA, cuda.get_current_device().id)

    @property
    def __cuda_array_interface__(self):
        return self.array.__cuda_array_interface__

    def __getattr__(self, name):
        if name == "array":  # not set yet (while unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.array, name)

    def __getitem__(self, index):
        return self.array[index]

    def __len__(self):
        return len(self.array)

    def __repr__(self):
        return f"DeviceArray(shape={self.array.shape}, dtype={self.array.dtype})"


def dlpack(array):
    """``array`` (a numba device array) as a :class:`DeviceArray`, exporting DLPack."""
    return array if isinstance(array, DeviceArray) else DeviceArray(array)
