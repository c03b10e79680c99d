"""Sparrow mahjong's built-in agent as a numba policy (the protocol: ``kernels/agents.py``).

- "random": a uniformly chosen tile type among those the agent holds, as Pgx's random baseline
  chooses among the legal actions.

It reads only what its seat observes: its own row of the legal mask.
"""

import numba as nb

from vecenv.kernels.agents import uniform_choice

NAMES = ("random",)
MEMORY = 0

LEGAL = 6  # the observation's fields: hand, seat, mark, dora, rivers, turn, legal, features


@nb.njit(cache=True, error_model="numpy")
def act(kind, obs, i, player, step, cfg, memory, r):
    return uniform_choice(r, obs[LEGAL][i, player])
