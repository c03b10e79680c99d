"""Kaggle's Tic Tac Toe over one episode's record.

The board is 3 x 3 cells, row-major with the top row first: 0 empty, 1 (X) and 2 (O) the agents'
marks. Agent 0 (mark 1) moves first; the mover marks an empty cell. Statuses and rewards are
kaggle-environments' (``kernels/turns``): a line of three of the mover's marks sets +1/-1 and ends
the episode, a full board ends it with 0/0, a move onto a marked cell makes the mover INVALID and
the other agent DONE. Kaggle's default episodeSteps (10) leaves room for the nine moves.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import observed, require_marks, write_turns
from vecenv.kernels.turns import (
    ACTIVE,
    INACTIVE,
    any_active,
    begin_rewards,
    end_step,
    mover,
    refuse,
    settle,
)

EMPTY = 0
CELLS = 9

# The eight lines, in the order Kaggle's tictactoe checks them (its reaction agent depends on it).
LINES = np.array(
    [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
        [0, 3, 6],
        [1, 4, 7],
        [2, 5, 8],
        [0, 4, 8],
        [2, 4, 6],
    ],
    dtype=np.int64,
)

FIELDS = [
    ("board", np.int8, (CELLS,)),
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
]

STATE_BOUNDS = {"board": (0, 2), "status": (0, 5)}

# Kaggle's reward schema: an agent's reward is one of these (a failed agent's is None in Kaggle,
# and the record's value is then not read).
REWARDS = (-1.0, 0.0, 1.0)


def check_state(records, config):
    """Rewards must be in Kaggle's reward enum."""
    if not np.isin(records["reward"], REWARDS).all():
        return f"state field 'reward' must be one of {list(REWARDS)}"
    return None


def position(record, config, given):
    """A position from its board, Kaggle's marks, statuses and rewards (any board: Kaggle's
    rules play on from whatever marks it holds)."""
    record["board"] = observed(given, "board", np.zeros(CELLS, dtype=np.int8))
    require_marks(observed(given, "mark", np.array([1, 2])), (1, 2))
    write_turns(record, given, (ACTIVE, INACTIVE))


@nb.njit(cache=True, error_model="numpy")
def wins(board, mark):
    """Whether some line holds three of ``mark`` (Kaggle looks at every line after a move)."""
    for k in range(LINES.shape[0]):
        if board[LINES[k, 0]] == mark and board[LINES[k, 1]] == mark and board[LINES[k, 2]] == mark:
            return True
    return False


@nb.njit(cache=True, error_model="numpy", inline="always")
def is_full(board):
    empty = 0
    for c in range(CELLS):
        empty += board[c] == EMPTY
    return empty == 0


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.board[:] = EMPTY
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[:] = 0.0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        board = s.board
        cell = actions[a]
        if cell < 0 or cell >= CELLS or board[cell] != EMPTY:
            refuse(s, a)
        else:
            mark = a + 1
            board[cell] = mark
            settle(s, a, wins(board, mark), is_full(board))
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = s.board
    for k in range(board.shape[0]):  # a loop: an array copy would need numba's runtime (CUDA)
        obs[0][i, k] = board[k]
    obs[1][i, 0] = 1
    obs[1][i, 1] = 2
    legal = obs[2][i]
    running = any_active(s)
    for c in range(CELLS):
        legal[c] = running and board[c] == EMPTY
