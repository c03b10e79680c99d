"""The Python a GPU step costs around its launch, measured on any machine (no GPU needed).

``CudaEngine.step`` on a GPU does its checks in Python, points the prepared launch at the actions
and makes three driver calls (the launch, a synchronisation, nothing else: the refusal word is
host memory). This script runs the engine on numba's CUDA simulator with those three calls
stubbed (the prepared launch replaced by one that records the address it is pointed at, the
synchronisation by nothing) and actions handed over as a CUDA array interface, as a PyTorch
tensor hands them: what remains is exactly the Python of the GPU path, timed per call.

    python benchmarks/cuda_host_overhead.py [--calls 20000]

prints microseconds per ``step`` (best of 5 rounds). The driver calls' own cost (about 2-5 us
each on current GPUs) comes on top: ``benchmarks/test_bench_cuda.py::test_host_overhead``
measures them on a GPU.
"""

import argparse
import os
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402


class _Actions:
    """Actions seen through the CUDA array interface only, as a PyTorch CUDA tensor offers them
    (its address, shape and dtype; the stream it was written on is the legacy default one)."""

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


def measure(game="cartpole", num_envs=4096, calls=20000):
    import vecenv
    from vecenv.cuda import engine as engine_module

    engine = vecenv.make(game, num_envs, seed=0, device="cuda")
    stub = engine._launches["step"] = _StubLaunch()
    engine_module.synchronize = lambda: None
    actions = _Actions(np.zeros((num_envs, 1), dtype=engine._act_dtype))
    engine.step(actions)
    assert stub.calls == 1 and stub.address == actions._array.ctypes.data
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            engine.step(actions)
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--game", default="cartpole")
    args = parser.parse_args(argv)
    us = measure(args.game, calls=args.calls)
    print(f"{args.game}: {us:.2f} us of Python per CudaEngine.step around its launch")
    return us


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
