"""WindyCatch's rules over one episode's record, as csuite's ``WindyCatch``.

The balls live in ``balls``, one entry per row: the column of the ball in that row, or -1. Balls
spawn one step apart and fall together, so no two share a row and the oldest is the lowest: this
is csuite's age-ordered list of balls for every state its rules reach. The paddle row's entry stays
-1 (a ball reaching it is scored and removed in the same step).

The wind is csuite's three mutually exclusive bits (no wind, left, right). Each step, in csuite's
order: the paddle moves, every ball falls one row and is blown one column (wrapping around the
board), the ball reaching the paddle row scores +1 (caught) or -1 (missed) and leaves, a new ball
spawns in row 0 with probability ``spawn_probability`` in a uniform column, and every
``change_every`` steps the wind is redrawn uniformly among the three (possibly unchanged).
"""

import numba as nb
import numpy as np
from vecenv.kernels.rng import integer, uniform

NO_BALL = -1
# Column shift of a falling ball under each wind: none, left, right.
WIND_DELTA = (0, -1, 1)
TIME_MAX = np.iinfo(np.int64).max - 1  # so the step counter's increment never overflows


def FIELDS(config):
    return [
        ("paddle_x", np.int64),
        ("paddle_y", np.int64),
        ("balls", np.int64, (config["rows"],)),
        ("wind_direction", np.bool_, (3,)),
        ("time_since_wind_change", np.int64),
    ]


STATE_BOUNDS = {"time_since_wind_change": (0, TIME_MAX)}


def check_state(records, config):
    """csuite's set_state checks, plus what its rules need to run a next step."""
    rows, columns = config["rows"], config["columns"]
    px, py = records["paddle_x"], records["paddle_y"]
    if ((px < 0) | (px >= columns) | (py != rows - 1)).any():
        return (
            f"paddle_x must be in [0, {columns}) and paddle_y must be {rows - 1}: the paddle "
            "sits in the bottom row"
        )
    balls = records["balls"]
    if ((balls < NO_BALL) | (balls >= columns)).any():
        return f"balls must hold a column in [0, {columns}) or {NO_BALL} (no ball in that row)"
    if (balls[:, rows - 1] != NO_BALL).any():
        # csuite's set_state admits a ball there, but its next step cannot run: the ball falls
        # out of the board without being scored.
        return "balls must be above the paddle row: its entry must be -1"
    if (records["wind_direction"].sum(axis=1) != 1).any():
        return "wind_direction must have exactly one True entry (no wind, left, right)"
    return None


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.paddle_x = cfg.columns // 2
    s.paddle_y = cfg.rows - 1
    s.balls[:] = NO_BALL
    s.balls[0] = integer(s, cfg.columns)
    s.wind_direction[0] = True
    s.wind_direction[1] = False
    s.wind_direction[2] = False
    s.time_since_wind_change = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    columns = cfg.columns
    bottom = cfg.rows - 1
    s.paddle_x = min(max(s.paddle_x + actions[0] - 1, 0), columns - 1)
    wd = 0
    for k in range(3):
        if s.wind_direction[k]:
            wd = WIND_DELTA[k]
    balls = s.balls
    # The ball one row above the paddle falls onto the paddle row: caught or missed.
    reward = 0.0
    if balls[bottom - 1] != NO_BALL:
        reward = 1.0 if (balls[bottom - 1] + wd) % columns == s.paddle_x else -1.0
    for y in range(bottom - 1, 0, -1):
        above = balls[y - 1]
        balls[y] = (above + wd) % columns if above != NO_BALL else NO_BALL
    balls[0] = NO_BALL
    if uniform(s) < cfg.spawn_probability:
        balls[0] = integer(s, columns)
    rewards[0] = reward
    t = s.time_since_wind_change + 1
    if t % cfg.change_every == 0:
        wind = integer(s, 3)
        for k in range(3):
            s.wind_direction[k] = k == wind
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
        out[i, 0, cells + k] = 1 if s.wind_direction[k] else 0
