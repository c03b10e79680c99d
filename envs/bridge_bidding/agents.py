"""Bridge bidding's built-in agent as a numba policy (the protocol: ``kernels/agents.py``).

- "random": a uniformly chosen legal call, as Pgx's random baseline chooses.

It reads only what its seat observes: the legal mask, shared by the four agents.
"""

import numba as nb

from vecenv.kernels.agents import uniform_choice

NAMES = ("random",)
MEMORY = 0

LEGAL = 3  # the observation's fields: hand, turn, mark, legal, features


@nb.njit(cache=True, error_model="numpy")
def act(kind, obs, i, player, step, cfg, memory, r):
    return uniform_choice(r, obs[LEGAL][i])
