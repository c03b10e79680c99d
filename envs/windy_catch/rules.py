"""WindyCatch's rules over one episode's record, as csuite's ``WindyCatch``.

The board is Catch's (``vecenv.envs.catch.rules``): ``balls`` holds one entry per row, the column of
the ball in that row, or -1. Balls spawn one step apart and fall together, so no two share a row
and the oldest is the lowest: this is csuite's age-ordered list of balls for every state its rules
reach. The paddle row's entry stays -1 (a ball reaching it is scored and removed in the same step).

The wind is csuite's three mutually exclusive bits (no wind, left, right), held as uint8 0/1
(numba records hold no nested bool arrays). Each step, in csuite's order: the paddle moves, every
ball falls one row and is blown one column by the wind (wrapping around the board), the ball
reaching the paddle row scores +1 (caught) or -1 (missed) and leaves, a new ball spawns in row 0
with probability ``spawn_probability`` in a uniform column, and ``time_since_wind_change`` counts
the step: when it reaches a multiple of ``change_every`` it restarts at 0 and the wind is redrawn
uniformly among the three (possibly unchanged).
"""

import numba as nb
import numpy as np

from vecenv.envs.catch.rules import (
    NO_BALL,
    board_fields,
    check_board,
    move_paddle,
    reset_board,
    score,
    spawn,
)
from vecenv.kernels.rng import integer

# Column shift of a falling ball under each wind: none, left, right.
WIND_DELTA = (0, -1, 1)
TIME_MAX = np.iinfo(np.int64).max - 1  # so the step counter's increment never overflows

# The message of the check csuite lacks.
INVALID_WIND_DIRECTION = "Invalid state: expected exactly one entry of wind_direction to be True."


# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True


def FIELDS(config):  # noqa: N802 (the protocol's name)
    return board_fields(config) + [
        ("wind_direction", np.uint8, (3,)),
        ("time_since_wind_change", np.int64),
    ]


STATE_BOUNDS = {"wind_direction": (0, 1), "time_since_wind_change": (0, TIME_MAX)}


def check_state(records, config):
    """Catch's checks (csuite's, with its messages, and the empty paddle row), plus exactly one
    wind bit set."""
    message = check_board(records, config)
    if message is None and (records["wind_direction"].sum(axis=1, dtype=np.int64) != 1).any():
        return INVALID_WIND_DIRECTION
    return message


@nb.njit(cache=True, error_model="numpy", inline="always")
def _blown(ball, wd, columns):
    """The column of a ball falling from column ``ball`` under the wind's ``wd`` (-1, 0 or 1),
    wrapping: (ball + wd) % columns; ``NO_BALL`` stays ``NO_BALL``."""
    if ball == NO_BALL:
        return NO_BALL
    x = ball + wd
    if x < 0:
        x += columns
    elif x >= columns:
        x -= columns
    return x


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    reset_board(s, cfg)
    s.wind_direction[0] = 1
    s.wind_direction[1] = 0
    s.wind_direction[2] = 0
    s.time_since_wind_change = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    columns = cfg.columns
    x = move_paddle(s, cfg, actions[0])
    wd = 0
    for k in range(3):
        if s.wind_direction[k] != 0:
            wd = WIND_DELTA[k]
    balls = s.balls
    bottom = balls.shape[0] - 1
    # The ball one row above the paddle falls onto the paddle row, blown as it falls: scored there.
    rewards[0] = score(_blown(balls[bottom - 1], wd, columns), x)
    for y in range(bottom - 1, 0, -1):
        balls[y] = _blown(balls[y - 1], wd, columns)
    spawn(s, cfg, balls)
    t = s.time_since_wind_change + 1
    if t % cfg.change_every == 0:
        wind = integer(s, 3)
        for k in range(3):
            s.wind_direction[k] = 1 if k == wind else 0
        t = 0
    s.time_since_wind_change = t
    return 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0]
    rows, columns = cfg.rows, cfg.columns
    cells = rows * columns
    for k in range(cells):
        out[i, 0, k] = 0
    out[i, 0, s.paddle_y * columns + s.paddle_x] = 1
    for y in range(rows):
        if s.balls[y] != NO_BALL:
            out[i, 0, y * columns + s.balls[y]] = 1
    for k in range(3):
        out[i, 0, cells + k] = s.wind_direction[k]
