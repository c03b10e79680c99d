"""The Python a GPU step costs around its launch, measured on any machine (no GPU needed).

Two figures, each in a process of its own, the driver's calls stubbed in both:

- ``vecenv``: ``CudaEngine.step`` on numba's CUDA simulator with its driver calls stubbed (the
  prepared launch replaced by one that records the address it is pointed at, the wait by
  nothing) and the actions handed over as a CUDA array interface, as a PyTorch tensor hands
  them: what remains is exactly the Python of the GPU path (its checks, pointing the prepared
  launch at the actions, reading the refusal word).
- ``numba``: numba-cuda's own launch (``kernel[grid, block](*args)``) of the same step kernel
  with the same arguments, the kernel compiled for sm_90 and the driver stubbed below numba-cuda
  (no module is loaded, cuda.core's ``launch`` builds its parameter block and returns): the
  typing of the arguments, the kernel's lookup and their marshalling, every call. It is what a
  step cost the host before the launches were prepared (twice: the step and the action check).

    python benchmarks/cuda_host_overhead.py [--calls 3000]

prints microseconds per call (best of 5 rounds). The driver's own calls (a launch, a wait: a few
microseconds each on current GPUs) come on top of both: ``benchmarks/test_bench_cuda.py::
test_host_overhead`` measures everything on a GPU.
"""

import argparse
import ctypes
import os
import subprocess
import sys
import time

import numpy as np

N = 4096


def per_call_us(fn, calls):
    """Microseconds a call of ``fn``: the best of five runs of ``calls`` calls."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


class _Actions:
    """Actions seen through the CUDA array interface only, as a PyTorch CUDA tensor offers them
    (its address, shape and dtype; written on the legacy default stream)."""

    def __init__(self, array):
        self._array = array
        self.__cuda_array_interface__ = {
            "shape": array.shape,
            "typestr": array.dtype.str,
            "strides": None,
            "data": (array.ctypes.data, False),
            "version": 3,
            "stream": 1,
        }


class _StubLaunch:
    """A prepared launch that launches nothing: its address book only."""

    raw = True

    def __init__(self):
        self.calls, self.address = 0, None

    def point(self, index, address):
        self.address = address

    def update(self, index, value):
        raise AssertionError("the GPU path points at CUDA actions, it does not replace them")

    def __call__(self):
        self.calls += 1


def vecenv_part(game, calls):
    """``CudaEngine.step``'s Python, on the simulator, its driver calls stubbed."""
    import vecenv
    from vecenv.cuda import engine as engine_module

    engine = vecenv.make(game, N, seed=0, device="cuda")
    stub = engine._launches["step"] = _StubLaunch()
    engine_module.synchronize = lambda: None
    actions = _Actions(np.zeros((N, 1), dtype=engine._act_dtype))
    engine.step(actions)
    assert stub.calls == 1 and stub.address == actions._array.ctypes.data
    return per_call_us(lambda: engine.step(actions), calls)


class _Memory:
    """Host bytes standing in for device memory: numba-cuda only reads their address here."""

    def __init__(self, nbytes):
        self.bytes = np.zeros(max(nbytes, 8), np.uint8)
        self.device_ctypes_pointer = ctypes.c_void_p(self.bytes.ctypes.data)
        self.handle, self.owner = self.device_ctypes_pointer, self


def numba_part(game, calls):
    """numba-cuda's own launch of the engine's step kernel, the driver stubbed."""
    from cuda.core._kernel_arg_handler import ParamHolder
    from numba.cuda import codegen
    from numba.cuda import dispatcher as numba_dispatcher
    from numba.cuda.cudadrv import devicearray

    from vecenv.cuda.compile import kernels, target_capability
    from vecenv.cuda.tables import global_tables
    from vecenv.engine import Engine
    from vecenv.kernels.agents import AGENT_RNG

    class Module:
        initialized = True

    class Function:  # what numba-cuda loads: nothing here
        kernel, module = None, Module()

    # No device: the compute capability is given, no module is loaded, and the launch stops at
    # cuda.core's parameter block (made, as for a real launch, and dropped).
    codegen.CUDACodeLibrary._ensure_cc = lambda self, cc: cc or (9, 0)
    codegen.CUDACodeLibrary.get_cufunc = lambda self: Function()
    numba_dispatcher.launch = lambda stream, config, kernel, *words: ParamHolder(words)

    def device(host):
        host = np.ascontiguousarray(host)
        return devicearray.DeviceNDArray(
            host.shape, host.strides, host.dtype, gpu_data=_Memory(host.nbytes)
        )

    host = Engine(game, 1, seed=0)
    compiled = kernels(host.rules, None, host.action.discrete)
    records = np.zeros(N, host.state_dtype)
    obs = tuple(device(np.zeros((N, *o.shape[1:]), o.dtype)) for o in host._obs)
    undo = (device(records), device(np.zeros((N, 1))), device(np.zeros((N, 2), bool)))
    agents = (
        device(np.zeros((1, 2), np.int64)), device(np.zeros((1, 2, 1), np.int64)),
        device(np.zeros((1, 2), AGENT_RNG)), device(np.zeros((1, 2))),
        device(np.zeros(1, np.int64)),
    )  # fmt: skip
    args = (
        device(records), device(host._cfg), device(np.zeros((N, host._act_width), host._act_dtype)),
        device(host._act_low), device(host._act_high), device(np.zeros((N, 1))),
        device(np.zeros(N, bool)), device(np.zeros(N, bool)), obs, obs, 0, 500, undo,
        device(np.zeros(1, np.int64)), device(np.zeros(1, np.int32)), 1, agents,
    )  # fmt: skip
    argtypes = tuple(compiled.step.typeof_pyval(a) for a in args)
    with target_capability((9, 0)), global_tables():
        compiled.step.compile(argtypes)
    grid = (N + 127) // 128
    compiled.step[grid, 128](*args)
    return per_call_us(lambda: compiled.step[grid, 128](*args), calls)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--game", default="cartpole")
    parser.add_argument("--part", choices=("vecenv", "numba"), help="one figure, in this process")
    args = parser.parse_args(argv)
    if args.part is not None:
        if args.part == "vecenv":
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
            us = vecenv_part(args.game, args.calls)
        else:
            us = numba_part(args.game, args.calls)
        print(f"{us:.3f}")
        return us
    figures = {}
    for part in ("vecenv", "numba"):
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        if part == "vecenv":
            env["NUMBA_ENABLE_CUDASIM"] = "1"  # before numba.cuda is imported
        command = [sys.executable, __file__, "--part", part, "--game", args.game,
                   "--calls", str(args.calls)]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        figures[part] = float(done.stdout.strip().splitlines()[-1])
    print(f"{args.game}, N = {N}, driver calls stubbed (us per call, best of 5 rounds):")
    print(f"  CudaEngine.step (one prepared launch):  {figures['vecenv']:8.2f}")
    print(f"  numba-cuda's own launch of its kernel:  {figures['numba']:8.2f}")
    return figures


if __name__ == "__main__":
    main()
