"""DancingCatch's rules over one episode's record, as csuite's ``DancingCatch``.

The balls live in ``balls``, one entry per row: the column of the ball in that row, or -1. Balls
spawn one step apart and fall together, so no two share a row and the oldest is the lowest: this
is csuite's age-ordered list of balls for every state its rules reach. The paddle row's entry stays
-1 (a ball reaching it is scored and removed in the same step).

Each step, in csuite's order: the paddle moves, every ball falls one row, the ball reaching the
paddle row scores +1 (caught) or -1 (missed) and leaves, a new ball spawns in row 0 with probability
``spawn_probability`` in a uniform column, and every ``swap_every`` steps two uniform indices of
``shuffle_idx`` (drawn independently, so possibly the same) swap their entries. The observation is
the row-major board read through ``shuffle_idx``: entry k shows board cell ``shuffle_idx[k]``.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer, uniform

NO_BALL = -1
TIME_MAX = np.iinfo(np.int64).max - 1  # so the step counter's increment never overflows

# Error messages: csuite's DancingCatch.set_state words, and two for the checks csuite lacks.
INVALID_PADDLE_POS = "Invalid state: paddle should be positioned at the bottom of the board."
INVALID_BALLS_RANGE = (
    "Invalid state: positions of balls and paddle not in expected"
    " row range [0, {rows}) and column range [0, {columns})."
)
BALL_ON_PADDLE_ROW = (
    "Invalid state: a ball on the paddle's row ({row}) has already been scored; "
    "balls can only be in rows [0, {row})."
)
INVALID_SHUFFLE_IDX = "Invalid state: shuffle_idx entries not in expected range [0, {cells})."


def FIELDS(config):  # noqa: N802 (the protocol's name)
    rows, columns = config["rows"], config["columns"]
    return [
        ("paddle_x", np.int64),
        ("paddle_y", np.int64),
        ("balls", np.int64, (rows,)),
        ("shuffle_idx", np.int64, (rows * columns,)),
        ("time_since_swap", np.int64),
    ]


STATE_BOUNDS = {"time_since_swap": (0, TIME_MAX)}


def check_state(records, config):
    """csuite's set_state checks (with its messages), plus what its next step needs and csuite does
    not check: the paddle's row holds no ball (csuite accepts one there, and then fails: the ball
    falls off the board unscored) and ``shuffle_idx`` names board cells (csuite's next observation
    fails otherwise). Repeated indices are accepted, as csuite accepts them."""
    rows, columns = config["rows"], config["columns"]
    px, py = records["paddle_x"], records["paddle_y"]
    if ((px < 0) | (px >= columns) | (py != rows - 1)).any():
        return INVALID_PADDLE_POS
    balls = records["balls"]
    if ((balls < NO_BALL) | (balls >= columns)).any():
        return INVALID_BALLS_RANGE.format(rows=rows, columns=columns)
    if (balls[:, rows - 1] != NO_BALL).any():
        return BALL_ON_PADDLE_ROW.format(row=rows - 1)
    idx = records["shuffle_idx"]
    if ((idx < 0) | (idx >= rows * columns)).any():
        return INVALID_SHUFFLE_IDX.format(cells=rows * columns)
    return None


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.paddle_x = cfg.columns // 2
    s.paddle_y = cfg.rows - 1
    s.balls[:] = NO_BALL
    s.balls[0] = integer(s, cfg.columns)
    for k in range(s.shuffle_idx.shape[0]):
        s.shuffle_idx[k] = k
    s.time_since_swap = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    columns = cfg.columns
    bottom = cfg.rows - 1
    s.paddle_x = min(max(s.paddle_x + actions[0] - 1, 0), columns - 1)
    balls = s.balls
    # The ball one row above the paddle falls onto the paddle row: caught or missed.
    reward = 0.0
    if balls[bottom - 1] != NO_BALL:
        reward = 1.0 if balls[bottom - 1] == s.paddle_x else -1.0
    for y in range(bottom - 1, 0, -1):
        balls[y] = balls[y - 1]
    balls[0] = NO_BALL
    if uniform(s) < cfg.spawn_probability:
        balls[0] = integer(s, columns)
    rewards[0] = reward
    t = s.time_since_swap + 1
    if t % cfg.swap_every == 0:
        cells = s.shuffle_idx.shape[0]
        a = integer(s, cells)
        b = integer(s, cells)
        held = s.shuffle_idx[a]
        s.shuffle_idx[a] = s.shuffle_idx[b]
        s.shuffle_idx[b] = held
        t = 0
    s.time_since_swap = t
    return 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0][i, 0]
    columns = cfg.columns
    paddle = s.paddle_y * columns + s.paddle_x
    balls = s.balls
    idx = s.shuffle_idx
    # A cell's row without an integer division: (cell + 0.5) / columns lies at least 0.5 / columns
    # inside (row, row + 1), far beyond the multiplication's rounding for any board that fits in
    # memory, so truncating the product gives the row exactly.
    inv = 1.0 / columns
    for k in range(idx.shape[0]):
        cell = idx[k]
        y = np.int64((cell + 0.5) * inv)
        out[k] = 1 if cell == paddle or balls[y] == cell - y * columns else 0
