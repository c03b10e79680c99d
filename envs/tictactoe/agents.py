"""Kaggle's tictactoe agents as numba policies (the protocol: ``kernels/agents.py``).

- "random": a uniformly chosen empty cell;
- "reaction": along Kaggle's fixed order of lines, the first line it can complete (two of its
  marks, the third cell empty); else the first line where the opponent could (to block); else a
  uniformly chosen empty cell.

The agent's mark is its observation's ``mark`` (``player + 1``). With no empty cell there is no
move: the agent answers -1, an action outside the schema (Kaggle's agents raise there).
"""

import numba as nb

from vecenv.kernels.agents import uniform_equal

from .rules import EMPTY, LINES

NAMES = ("random", "reaction")
MEMORY = 0

RANDOM = 0
REACTION = 1

BOARD = 0
MARK = 1


@nb.njit(cache=True, error_model="numpy")
def completes(board, mark):
    """The cell that completes a line for ``mark``, as Kaggle's reaction agent looks for it: the
    first line (in ``LINES`` order) with exactly one cell not holding ``mark``, that cell empty;
    -1 when there is none."""
    for k in range(LINES.shape[0]):
        left = -1
        count = 0
        for j in range(3):
            c = LINES[k, j]
            if board[c] != mark:
                left = c
                count += 1
        if count == 1 and board[left] == EMPTY:
            return left
    return -1


@nb.njit(cache=True, error_model="numpy")
def act(kind, obs, i, player, step, cfg, memory, r):
    board = obs[BOARD][i]
    if kind == REACTION:
        mark = obs[MARK][i, player]
        cell = completes(board, mark)
        if cell >= 0:
            return cell
        opponent = 2 if mark == 1 else 1
        cell = completes(board, opponent)
        if cell >= 0:
            return cell
    return uniform_equal(r, board, EMPTY)
