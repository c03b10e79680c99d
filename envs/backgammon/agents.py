"""Backgammon's built-in agent as a numba policy (the protocol: ``kernels/agents.py``).

- "random": a uniformly chosen legal action (one of the six no-move actions where no checker can
  move), as Pgx's ``act_randomly`` on its legal mask.

It reads only what its seat observes: the legal mask.
"""

import numba as nb

from vecenv.kernels.agents import uniform_choice

from .rules import LEGAL

NAMES = ("random",)
MEMORY = 0


@nb.njit(cache=True, error_model="numpy")
def act(kind, obs, i, player, step, cfg, memory, r):
    return uniform_choice(r, obs[LEGAL][i])
