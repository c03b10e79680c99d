"""WindyCatch's rules over one episode's record, as csuite's ``WindyCatch``.

The balls live in ``balls``, one entry per row: the column of the ball in that row, or -1. Balls
spawn one step apart and fall together, so no two share a row and the oldest is the lowest: this
is csuite's age-ordered list of balls for every state its rules reach. The paddle row's entry stays
-1 (a ball reaching it is scored and removed in the same step).

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

from vecenv.kernels.rng import integer, uniform

NO_BALL = -1
# Column shift of a falling ball under each wind: none, left, right.
WIND_DELTA = (0, -1, 1)
TIME_MAX = np.iinfo(np.int64).max - 1  # so the step counter's increment never overflows

# Error messages: csuite's WindyCatch.set_state words, and one for the check csuite lacks.
INVALID_PADDLE_POS = "Invalid state: paddle should be positioned at the bottom of the board."
INVALID_BALLS_RANGE = (
    "Invalid state: positions of balls and paddle not in expected"
    " row range [0, {rows}) and column range [0, {columns})."
)
BALL_ON_PADDLE_ROW = (
    "Invalid state: a ball on the paddle's row ({row}) has already been scored; "
    "balls can only be in rows [0, {row})."
)
INVALID_WIND_DIRECTION = "Invalid state: expected exactly one entry of wind_direction to be True."


def FIELDS(config):  # noqa: N802 (the protocol's name)
    return [
        ("paddle_x", np.int64),
        ("paddle_y", np.int64),
        ("balls", np.int64, (config["rows"],)),
        ("wind_direction", np.uint8, (3,)),
        ("time_since_wind_change", np.int64),
    ]


STATE_BOUNDS = {"wind_direction": (0, 1), "time_since_wind_change": (0, TIME_MAX)}


def check_state(records, config):
    """csuite's set_state checks (with its messages), plus: the paddle's row holds no ball (csuite
    accepts one there, and then fails at the next step: the ball falls off the board unscored)."""
    rows, columns = config["rows"], config["columns"]
    px, py = records["paddle_x"], records["paddle_y"]
    if ((px < 0) | (px >= columns) | (py != rows - 1)).any():
        return INVALID_PADDLE_POS
    balls = records["balls"]
    if ((balls < NO_BALL) | (balls >= columns)).any():
        return INVALID_BALLS_RANGE.format(rows=rows, columns=columns)
    if (balls[:, rows - 1] != NO_BALL).any():
        return BALL_ON_PADDLE_ROW.format(row=rows - 1)
    if (records["wind_direction"].sum(axis=1, dtype=np.int64) != 1).any():
        return INVALID_WIND_DIRECTION
    return None


@nb.njit(cache=True, error_model="numpy", inline="always")
def _blow(x, wd, columns):
    """Column ``x`` moved by the wind's ``wd`` (-1, 0 or 1), wrapping: (x + wd) % columns."""
    x += wd
    if x < 0:
        x += columns
    elif x >= columns:
        x -= columns
    return x


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.paddle_x = cfg.columns // 2
    s.paddle_y = cfg.rows - 1
    s.balls[:] = NO_BALL
    s.balls[0] = integer(s, cfg.columns)
    s.wind_direction[0] = 1
    s.wind_direction[1] = 0
    s.wind_direction[2] = 0
    s.time_since_wind_change = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    columns = cfg.columns
    bottom = cfg.rows - 1
    s.paddle_x = min(max(s.paddle_x + actions[0] - 1, 0), columns - 1)
    wd = 0
    for k in range(3):
        if s.wind_direction[k] != 0:
            wd = WIND_DELTA[k]
    balls = s.balls
    # The ball one row above the paddle falls onto the paddle row: caught or missed.
    reward = 0.0
    if balls[bottom - 1] != NO_BALL:
        reward = 1.0 if _blow(balls[bottom - 1], wd, columns) == s.paddle_x else -1.0
    for y in range(bottom - 1, 0, -1):
        above = balls[y - 1]
        balls[y] = _blow(above, wd, columns) if above != NO_BALL else NO_BALL
    balls[0] = NO_BALL
    if uniform(s) < cfg.spawn_probability:
        balls[0] = integer(s, columns)
    rewards[0] = reward
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
