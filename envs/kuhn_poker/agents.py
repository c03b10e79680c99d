"""Kuhn poker's built-in agent as a numba policy (the protocol: ``kernels/agents.py``).

- "random": bet or pass with equal chances, as Pgx's random baseline chooses among the legal
  actions (both are legal while the game goes on).

It reads only what its seat observes: the legal mask, shared by both agents.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer

NAMES = ("random",)
MEMORY = 0

LEGAL = 4  # the observation's fields: card, mark, chips, turn, legal, features


@nb.njit(cache=True, error_model="numpy")
def act(kind, obs, i, player, step, cfg, memory, r):
    """``uniform_choice`` over the two actions' mask, the same draw and action, with no branch on
    the drawn action (a coin flip, which a branch mispredicts half the time)."""
    legal = obs[LEGAL][i]
    count = np.int64(legal[0]) + np.int64(legal[1])
    if count == 0:
        return -1
    # Both legal: the draw is the action; one legal: the draw is 0, the action that one.
    return integer(r, count) + (1 - np.int64(legal[0]))
