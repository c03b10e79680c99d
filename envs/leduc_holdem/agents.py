"""Leduc hold'em's built-in agent as a numba policy (the protocol: ``kernels/agents.py``).

- "random": a uniformly chosen legal action, as Pgx's random baseline chooses.

It reads only what its seat observes: the legal mask, shared by both agents.
"""

import numba as nb

from vecenv.kernels.agents import uniform_choice

NAMES = ("random",)
MEMORY = 0

LEGAL = 5  # the observation's fields: card, public, mark, chips, turn, legal, features


@nb.njit(cache=True, error_model="numpy")
def act(kind, obs, i, player, step, cfg, memory, r):
    return uniform_choice(r, obs[LEGAL][i])
