"""Kaggle's ConnectX over one episode's record.

The board is ``rows`` x ``columns`` cells, row-major with the top row first: 0 empty, 1 and 2 the
agents' marks. Agent 0 (mark 1) moves first; the mover drops a checker into a column, where it
falls to the lowest empty cell. Statuses and rewards are kaggle-environments' (``kernels/turns``):
a win sets +1/-1 and ends the episode, a full board ends it with 0/0, a move into a full column
(or off the board) makes the mover INVALID and the other agent DONE.
"""

import numba as nb
import numpy as np

from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INACTIVE,
    INVALID,
    any_active,
    begin_rewards,
    end_step,
    mover,
)

EMPTY = 0


def FIELDS(config):
    return [
        ("board", np.int8, (config["rows"] * config["columns"],)),
        ("status", np.int8, (2,)),
        ("reward", np.float64, (2,)),
    ]


STATE_BOUNDS = {"board": (0, 2), "status": (0, 5)}


@nb.njit(cache=True, error_model="numpy", inline="always")
def drop(board, columns, column, mark):
    """Put ``mark`` on the lowest empty cell of ``column`` (whose top cell is empty)."""
    r = board.shape[0] // columns - 1
    while board[column + r * columns] != EMPTY:
        r -= 1
    board[column + r * columns] = mark


@nb.njit(cache=True, error_model="numpy", inline="always")
def top_of(board, columns, column, mark):
    """The highest row of ``column`` holding ``mark``: where Kaggle looks for a line after a move
    (the checker just dropped, on any board reached by play)."""
    r = 0
    while board[column + r * columns] != mark:
        r += 1
    return r


@nb.njit(cache=True, error_model="numpy", inline="always")
def run_length(board, rows, columns, row, column, d_row, d_column, mark, limit):
    """How many of ``mark``'s checkers follow (row, column) in direction (d_row, d_column), up to
    ``limit``."""
    for i in range(1, limit + 1):
        r = row + d_row * i
        c = column + d_column * i
        if r < 0 or r >= rows or c < 0 or c >= columns or board[c + r * columns] != mark:
            return i - 1
    return limit


@nb.njit(cache=True, error_model="numpy")
def wins(board, rows, columns, inarow, row, column, mark):
    """Whether ``mark`` at (row, column) completes ``inarow`` in a line."""
    need = inarow - 1
    return (
        run_length(board, rows, columns, row, column, 1, 0, mark, need) >= need
        or run_length(board, rows, columns, row, column, 0, 1, mark, need)
        + run_length(board, rows, columns, row, column, 0, -1, mark, need)
        >= need
        or run_length(board, rows, columns, row, column, -1, -1, mark, need)
        + run_length(board, rows, columns, row, column, 1, 1, mark, need)
        >= need
        or run_length(board, rows, columns, row, column, -1, 1, mark, need)
        + run_length(board, rows, columns, row, column, 1, -1, mark, need)
        >= need
    )


@nb.njit(cache=True, error_model="numpy", inline="always")
def is_full(board, columns):
    for c in range(columns):  # noqa: SIM110 (a plain loop: numba compiles no generators here)
        if board[c] == EMPTY:
            return False
    return True


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
        other = 1 - a
        board = s.board
        column = actions[a]
        if column < 0 or column >= cfg.columns or board[column] != EMPTY:
            s.status[a] = INVALID
            s.status[other] = DONE
        else:
            mark = a + 1
            drop(board, cfg.columns, column, mark)
            row = top_of(board, cfg.columns, column, mark)
            if wins(board, cfg.rows, cfg.columns, cfg.inarow, row, column, mark):
                s.reward[a] = 1.0
                s.reward[other] = -1.0
                s.status[a] = DONE
                s.status[other] = DONE
            elif is_full(board, cfg.columns):
                s.status[a] = DONE
                s.status[other] = DONE
            else:
                s.status[a] = INACTIVE
                s.status[other] = ACTIVE
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = s.board
    obs[0][i, :] = board
    obs[1][i, 0] = 1
    obs[1][i, 1] = 2
    legal = obs[2][i]
    running = any_active(s)
    for c in range(cfg.columns):
        legal[c] = running and board[c] == EMPTY
