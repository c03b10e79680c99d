"""The action checks every game's step runs first, compiled once for all games.

They depend on a game only through whether its actions are discrete, so they live here rather
than in the drivers' template (``drivers.py``), whose copy per game would compile them again for
every game and configuration: a game's drivers bind the pair of its kind (``build.py``).
"""

import numba as nb
import numpy as np

from vecenv.kernels.state import ACTION_MAX


@nb.njit(cache=True, error_model="numpy")
def first_bad_discrete(actions, low, high):
    """Index of the first episode whose action row is out of ``[low, high]``, else -1."""
    for i in range(actions.shape[0]):
        for j in range(actions.shape[1]):
            a = actions[i, j]
            if a < low[j] or a > high[j]:
                return i
    return -1


@nb.njit(cache=True, error_model="numpy")
def first_bad_continuous(actions, low, high):
    """Index of the first episode with an action component that is not a finite float32 (within
    ``ACTION_MAX``; NaN fails), else -1."""
    for i in range(actions.shape[0]):
        for j in range(actions.shape[1]):
            if not abs(actions[i, j]) <= ACTION_MAX:
                return i
    return -1


@nb.njit(cache=True, error_model="numpy")
def count_bad_discrete(actions, low, high):
    """How many action components are out of range. Every step pays it, while the ``first_bad``
    search runs only when it is non-zero, so it is written to vectorise: one unit-stride loop over
    the flat array, branch-free integer compares. A discrete action is one choice per agent, every
    agent with the same bounds, so the first column's bounds are every column's."""
    flat = actions.reshape(actions.size)
    lo = low[0]
    hi = high[0]
    bad = 0
    for k in range(flat.size):
        a = flat[k]
        bad += np.int64(a < lo) + np.int64(a > hi)
    return bad


@nb.njit(cache=True, error_model="numpy")
def count_bad_continuous(actions, low, high):
    """How many action components are not finite float32s (as ``count_bad_discrete``)."""
    flat = actions.reshape(actions.size)
    bad = 0
    for k in range(flat.size):
        bad += np.int64(not abs(flat[k]) <= ACTION_MAX)
    return bad
