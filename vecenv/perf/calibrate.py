"""The calibration kernel: a fixed amount of work timed before each of a benchmark's rounds.

A round of it is a few calls of a small numba compute loop (float arithmetic with a sine and a
cosine per element over 32 KiB: the kind of work a game's step does, held in the L1/L2 caches),
then a pass over 1 MiB of memory, on one thread. Timed just before a benchmark round, it sees the
same machine as that round: the same clock speed, the same share of a core (and of a core shared
with another hardware thread), the same caches left by other processes. A benchmark's round time
over the calibration time before it is then a figure that stays put when the machine gets busier
or slower, where the raw time does not.

Measured on a loaded 2-vCPU machine, choices that looked natural did worse: an integer-only chain
with a 4 MiB pass tracked the engine's step worse than no calibration at all (the kernel must do
the same kind of work as the code it calibrates), and a two-thread calibration for two-thread
benchmarks stalled, whole runs at a time, waiting for its second thread while the benchmark did not
(numba's parallel regions wake their workers on each call): one thread it is, for every benchmark.
"""

import math
import time

import numba as nb
import numpy as np

LANE = 4096  # float64 elements the compute loop works on (32 KiB, two arrays)
CALLS = 8  # calls of the compute loop in a round: a round is about 0.3 ms
MEMORY_BYTES = 1 << 20  # the memory pass: two arrays of 512 KiB


@nb.njit(cache=True, error_model="numpy")
def _compute(x, y):
    for i in range(x.shape[0]):
        s, k = math.sin(x[i]), math.cos(x[i])
        y[i] = (y[i] * 0.999 + s * k) / (1.0 + 0.01 * x[i] * x[i])
        x[i] = x[i] + 0.02 * y[i]


@nb.njit(cache=True, error_model="numpy")
def _memory(src, dst):
    for i in range(src.shape[0]):
        dst[i] = src[i] * 1.0000001


class Calibration:
    """Rounds of the calibration kernel."""

    def __init__(self):
        self._start = np.linspace(0.0, 1.0, LANE)
        self._x = self._start.copy()
        self._y = np.zeros_like(self._x)
        self._src = np.linspace(0.0, 1.0, MEMORY_BYTES // 16)
        self._dst = np.empty_like(self._src)
        self.time_round()  # compile (or load from the cache) and touch the memory

    def time_round(self):
        """Seconds of one round."""
        # The state is reset outside the clock, so every round does exactly the same work.
        self._x[:] = self._start
        self._y[:] = 0.0
        start = time.perf_counter()
        for _ in range(CALLS):
            _compute(self._x, self._y)
        _memory(self._src, self._dst)
        return time.perf_counter() - start
