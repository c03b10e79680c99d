"""Othello's built-in agents as numba policies (the protocol: ``kernels/agents.py``).

- "random": a uniformly chosen legal action (the pass when it is the only one), as Pgx's
  random baseline;
- "greedy": the square that turns over the most discs, the lowest square among equals.

An agent reads only what its seat observes: the board and the legal mask.
"""

import numba as nb
import numpy as np

from vecenv.kernels.agents import uniform_choice

from .rules import PASS, SQUARES, count, flips

NAMES = ("random", "greedy")
MEMORY = 0

RANDOM = 0
GREEDY = 1

BOARD = 0
MARK = 1
LEGAL = 2


@nb.njit(cache=True, error_model="numpy")
def act(kind, obs, i, player, step, cfg, memory, r):
    legal = obs[LEGAL][i]
    if kind == GREEDY:
        board = obs[BOARD][i]
        mark = obs[MARK][i, player]
        mine = np.uint64(0)
        theirs = np.uint64(0)
        for c in range(SQUARES):
            if board[c] == mark:
                mine |= np.uint64(1) << np.uint64(c)
            elif board[c] != 0:
                theirs |= np.uint64(1) << np.uint64(c)
        best, most = PASS, -1
        for c in range(SQUARES):
            if legal[c]:
                turned = count(flips(mine, theirs, c))
                if turned > most:
                    best, most = c, turned
        if most >= 0 or legal[PASS]:
            return best
    return uniform_choice(r, legal)
