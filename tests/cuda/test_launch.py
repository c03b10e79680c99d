"""The prepared launches' parameter blocks (``vecenv.cuda.launch``), on any machine: the words an
argument becomes follow numba-cuda's marshalling, and the block holds the bytes cuda.core's own
``ParamHolder`` makes of the same words (what numba-cuda hands the driver). On a GPU,
``test_gpu.py`` checks them against numba-cuda's launch itself."""

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from . import require_numba_cuda

require_numba_cuda()

from numba.core import types  # noqa: E402

from vecenv.cuda import launch  # noqa: E402


def _holder(items):
    try:
        from cuda.core._kernel_arg_handler import ParamHolder
    except ImportError:  # another cuda.core layout: nothing to compare with here
        pytest.skip("cuda.core's ParamHolder is not importable here")
    return ParamHolder(items)


def _holder_bytes(holder, k, size):
    slot = ctypes.c_void_p.from_address(holder.ptr + k * ctypes.sizeof(ctypes.c_void_p)).value
    return ctypes.string_at(slot, size)


SCALARS = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False),
    st.integers(-(2**63), 2**63 - 1).map(ctypes.c_int64),
    st.integers(0, 2**64 - 1).map(ctypes.c_uint64),
    st.integers(-(2**31), 2**31 - 1).map(ctypes.c_int32),
    st.integers(0, 255).map(ctypes.c_uint8),
    st.floats(allow_nan=False).map(ctypes.c_double),
    st.floats(width=32, allow_nan=False).map(ctypes.c_float),
)


@settings(max_examples=60, deadline=None, database=None)
@given(items=st.lists(SCALARS, min_size=1, max_size=12))
def test_block_holds_what_param_holder_makes(items):
    block = launch.Block(items)
    holder = _holder(items)
    for k in range(len(items)):
        size = len(block.bytes(k))
        assert _holder_bytes(holder, k, size) == block.bytes(k), (k, items[k])
    pointers = (ctypes.c_void_p * len(items)).from_address(block.address)
    assert [p for p in pointers] == [ctypes.addressof(v) for v in block.values]


class _CudaArray:
    """An object seen through the CUDA array interface only (no GPU needed to read it)."""

    def __init__(self, address, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "data": (address, False),
            "version": 3,
        }


@pytest.fixture
def real_layout(monkeypatch):
    # The main test process runs numba-cuda's real mode: layout reads the interface.
    monkeypatch.setattr(launch, "_SIMULATOR", False)


def test_array_words_are_numba_cudas(real_layout):
    a = _CudaArray(0x7000, (5, 3), "<i8")
    b = _CudaArray(0x9000, (4,), "|b1", strides=(2,))
    out, marks = [], {}
    launch.words(types.int64[:, ::1], a, out, marks, 0)
    assert out == [0, 0, 15, 8, 0x7000, 5, 3, 24, 8]
    assert marks[0] == ("array", 4, (5, 3), (24, 8))
    launch.words(types.Tuple((types.boolean[:], types.int64[:, ::1])), (b, a), out, marks, 1)
    assert out[9:] == [0, 0, 4, 1, 0x9000, 4, 2, 0, 0, 15, 8, 0x7000, 5, 3, 24, 8]
    assert 1 not in marks  # a tuple's members are not updated one by one
    launch.words(types.int64, 7, out, marks, 2)
    launch.words(types.boolean, True, out, marks, 3)
    launch.words(types.int32, -2, out, marks, 4)
    assert isinstance(out[-3], ctypes.c_int64) and out[-3].value == 7
    assert out[-2] is True and isinstance(out[-1], ctypes.c_int32)
    with pytest.raises(TypeError):
        launch.words(types.unicode_type, "x", out)


def test_update_and_point_rewrite_one_word(real_layout):
    a = _CudaArray(0x7000, (5, 3), "<i8")
    run = launch.Launch.__new__(launch.Launch)
    run.name, run.args = "test", [a, 1]
    items, run._marks = [], {}
    launch.words(types.int64[:, ::1], a, items, run._marks, 0)
    launch.words(types.int64, 1, items, run._marks, 1)
    run.block_params = launch.Block(items)
    assert run.raw
    run.update(0, _CudaArray(0x8000, (5, 3), "<i8"))
    assert run.block_params.values[4].value == 0x8000
    run.point(0, 0xA000)
    assert run.block_params.values[4].value == 0xA000
    run.update(1, 33)
    assert run.block_params.values[-1].value == 33
    with pytest.raises(ValueError, match="prepared for shape"):
        run.update(0, _CudaArray(0x8000, (4, 3), "<i8"))
    with pytest.raises(TypeError):
        run.point(1, 0x1000)


def test_contiguous_strides():
    for shape, itemsize in (((3, 4, 5), 8), ((7,), 1), ((2, 1, 3), 4), ((), 8)):
        assert launch.contiguous_strides(shape, itemsize) == np.zeros(shape, f"V{itemsize}").strides


class _Memory:
    """Host bytes standing in for device memory: numba-cuda only reads their address here."""

    def __init__(self, nbytes):
        self.bytes = np.zeros(max(nbytes, 8), np.uint8)
        self.device_ctypes_pointer = ctypes.c_void_p(self.bytes.ctypes.data)
        self.handle, self.owner = self.device_ctypes_pointer, self


def test_prepared_words_are_numba_cudas_for_the_step(monkeypatch, real_layout):
    """The engine's step kernel compiled for sm_90 (no GPU: the compute capability given, no
    module loaded) and its real arguments' types (records, tuples of arrays, integers): the
    words ``Launch`` prepares are those numba-cuda's own marshalling makes
    (``_Kernel._prepare_args``), and the block holds what cuda.core's ``ParamHolder`` makes of
    numba-cuda's words."""
    from numba.cuda import codegen
    from numba.cuda.cudadrv import devicearray

    from vecenv.cuda.compile import kernels, target_capability
    from vecenv.cuda.tables import global_tables
    from vecenv.engine import Engine
    from vecenv.kernels.agents import AGENT_RNG

    class Module:
        initialized = True

    class Function:
        kernel, module = None, Module()

    monkeypatch.setattr(codegen.CUDACodeLibrary, "_ensure_cc", lambda self, cc: cc or (9, 0))
    monkeypatch.setattr(codegen.CUDACodeLibrary, "get_cufunc", lambda self: Function())

    def device(host):
        host = np.ascontiguousarray(host)
        return devicearray.DeviceNDArray(
            host.shape, host.strides, host.dtype, gpu_data=_Memory(host.nbytes)
        )

    n = 5
    host = Engine("cartpole", 1, seed=0)
    compiled = kernels(host.rules, None, True)
    records = np.zeros(n, host.state_dtype)
    obs = tuple(device(np.zeros((n, *o.shape[1:]), o.dtype)) for o in host._obs)
    undo = (device(records), device(np.zeros((n, 1))), device(np.zeros((n, 2), bool)))
    agents = (
        device(np.zeros((1, 2), np.int64)), device(np.zeros((1, 2, 1), np.int64)),
        device(np.zeros((1, 2), AGENT_RNG)), device(np.zeros((1, 2))),
        device(np.zeros(1, np.int64)),
    )  # fmt: skip
    args = (
        device(records), device(host._cfg), device(np.zeros((n, 1), np.int64)),
        device(host._act_low), device(host._act_high), device(np.zeros((n, 1))),
        device(np.zeros(n, bool)), device(np.zeros(n, bool)), obs, obs, 0, 500, undo,
        device(np.zeros(1, np.int64)), device(np.zeros(1, np.int32)), 3, agents,
    )  # fmt: skip
    argtypes = tuple(compiled.step.typeof_pyval(a) for a in args)
    with target_capability((9, 0)), global_tables():
        kernel = compiled.step.compile(argtypes)
    mine, theirs = [], []
    for argtype, value in zip(kernel.argument_types, args, strict=True):
        launch.words(argtype, value, mine)
        kernel._prepare_args(argtype, value, 0, [], theirs)

    def plain(word):
        return (type(word).__name__, word.value if hasattr(word, "value") else word)

    assert [plain(w) for w in mine] == [plain(w) for w in theirs]
    block, holder = launch.Block(mine), _holder(theirs)
    for k in range(len(mine)):
        size = len(block.bytes(k))
        assert _holder_bytes(holder, k, size) == block.bytes(k), k
