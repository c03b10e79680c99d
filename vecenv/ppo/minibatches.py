"""The minibatch order of ``CompiledUpdate.update``, where the caller gives none: counter-based
streams. With ``mix64`` splitmix64's finaliser and ``G`` its golden-ratio increment
(``vecenv.kernels.rng``), epoch ``e`` of update ``u`` shuffles ``0 .. rows-1`` by Fisher-Yates
from the stream

    word = mix64(mix64(mix64(seed ^ KEY) + u * G) + e * G),  draw j = mix64(word + (j + 1) * G)

swapping position ``i`` (from ``rows - 1`` down to 1) with ``floor(U * (i + 1))`` for the next
draw's float64 uniform ``U`` (its top 53 bits), so an order depends only on ``(seed, u, e)`` and
the row count.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import GOLDEN, mix64

from .compiled import _word

_KEY = np.uint64(0x5BD1E9955BD1E995)  # keeps these streams apart from the rollout's
_INV53 = 1.0 / 9007199254740992.0  # 2**-53
_S11 = np.uint64(11)


@nb.njit(cache=True, error_model="numpy")
def _permute(seed, update, size, out):
    """``out[e]`` the shuffle of ``0 .. size-1`` for epoch ``e`` of ``update`` (see the module)."""
    base = mix64(mix64(seed ^ _KEY) + update * GOLDEN)
    for e in range(out.shape[0]):
        word = mix64(base + np.uint64(e) * GOLDEN)
        row = out[e]
        for i in range(size):
            row[i] = i
        for i in range(size - 1, 0, -1):
            # the stream's draws in order: draw size - 1 - i, from 0
            u = np.float64(mix64(word + np.uint64(size - i) * GOLDEN) >> _S11) * _INV53
            k = int(u * (i + 1))
            row[i], row[k] = row[k], row[i]


def permutations(seed, update, epochs, size):
    """The (epochs, size) int64 minibatch orders of update number ``update`` under ``seed``."""
    out = np.empty((_count(epochs, "epochs"), _count(size, "size")), dtype=np.int64)
    _permute(_word(seed, "seed"), _word(update, "update"), out.shape[1], out)
    return out


@nb.njit(cache=True, error_model="numpy")
def are_permutations(order, seen):
    """Whether every row of ``order`` holds each of ``0 .. order.shape[1]-1`` once."""
    size = order.shape[1]
    for e in range(order.shape[0]):
        seen[:size] = False
        for i in range(size):
            v = order[e, i]
            if v < 0 or v >= size or seen[v]:
                return False
            seen[v] = True
    return True


def _count(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)
