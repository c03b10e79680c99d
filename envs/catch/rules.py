"""csuite's continuing Catch over one episode's record.

The board has ``rows`` x ``columns`` cells; the paddle sits on the bottom row. Every step moves the
paddle (clipped at the walls), moves every ball down one row, scores the ball that reaches the
paddle's row (+1 when it lands on the paddle, -1 beside it) and removes it, then spawns a ball in
a uniform column of the top row with probability ``spawn_probability`` (the uniform is drawn every
step). A ball appears at most once per step, so balls sit in distinct rows: ``balls[r]`` is the
column of the ball in row ``r``, or -1 when that row has none. The paddle's row never holds a
ball between steps.

WindyCatch and DancingCatch are this game with more in it: they take the board's fields, checks
and mechanics from here (``board_fields``, ``check_board``, ``reset_board``, ``advance`` or, for
balls that do not fall straight, its parts ``move_paddle``, ``score`` and ``spawn``).
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer, uniform

NO_BALL = -1

# Error messages, as csuite's Catch.set_state (and its variants') words them.
INVALID_PADDLE_POS = "Invalid state: paddle should be positioned at the bottom of the board."
INVALID_BALLS_RANGE = (
    "Invalid state: positions of balls and paddle not in expected"
    " row range [0, {rows}) and column range [0, {columns})."
)
BALL_ON_PADDLE_ROW = (
    "Invalid state: a ball on the paddle's row ({row}) has already been scored; "
    "balls can only be in rows [0, {row})."
)


def board_fields(config):
    """The paddle's and the balls' fields."""
    return [
        ("paddle_x", np.int64),
        ("paddle_y", np.int64),
        ("balls", np.int64, (config["rows"],)),
    ]


# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True

FIELDS = board_fields


@nb.njit(cache=True, error_model="numpy", inline="always")
def reset_board(s, cfg):
    """The paddle centred on the bottom row, one ball in a uniform column of the top row."""
    s.paddle_x = cfg.columns // 2
    s.paddle_y = cfg.rows - 1
    balls = s.balls
    for r in range(balls.shape[0]):
        balls[r] = NO_BALL
    balls[0] = integer(s, cfg.columns)


@nb.njit(cache=True, error_model="numpy", inline="always")
def move_paddle(s, cfg, action):
    """Move the paddle by ``action`` (0 left, 1 stay, 2 right), clipped at the walls; returns its
    new column."""
    x = s.paddle_x + action - 1
    if x < 0:
        x = 0
    elif x > cfg.columns - 1:
        x = cfg.columns - 1
    s.paddle_x = x
    return x


@nb.njit(cache=True, error_model="numpy", inline="always")
def score(landing, paddle_x):
    """The reward of the ball landing in column ``landing`` of the paddle's row: +1 on the paddle,
    -1 beside it, 0 when there is none (``NO_BALL``)."""
    if landing == NO_BALL:
        return 0.0
    return 1.0 if landing == paddle_x else -1.0


@nb.njit(cache=True, error_model="numpy", inline="always")
def land_and_fall(balls, paddle_x):
    """The ball one row above the paddle falls onto the paddle's row: scored and removed; every
    other ball falls one row. Row 0 is left for ``spawn``. Returns the reward."""
    rows = balls.shape[0]
    reward = score(balls[rows - 2], paddle_x)
    for r in range(rows - 2, 0, -1):
        balls[r] = balls[r - 1]
    return reward


@nb.njit(cache=True, error_model="numpy", inline="always")
def spawn(s, cfg, balls):
    """Row 0 holds a new ball in a uniform column with probability ``spawn_probability``, else
    none (the uniform is drawn every step)."""
    balls[0] = NO_BALL
    if uniform(s) < cfg.spawn_probability:
        balls[0] = integer(s, cfg.columns)


@nb.njit(cache=True, error_model="numpy", inline="always")
def advance(s, cfg, action):
    """Catch's step on the board: the paddle moves, the balls fall (the landing one is scored), a
    ball may spawn. Returns the reward."""
    x = move_paddle(s, cfg, action)
    balls = s.balls
    reward = land_and_fall(balls, x)
    spawn(s, cfg, balls)
    return reward


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    reset_board(s, cfg)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    rewards[0] = advance(s, cfg, actions[0])
    return 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = obs[0][i, 0]
    board[:, :] = 0
    board[s.paddle_y, s.paddle_x] = 1
    balls = s.balls
    for r in range(balls.shape[0]):
        if balls[r] != NO_BALL:
            board[r, balls[r]] = 1


def check_board(records, config):
    """csuite's checks (paddle on the bottom row, positions on the board), plus: the paddle's row
    holds no ball (csuite accepts one there, and then fails at the next step: the ball falls off
    the board unscored)."""
    rows, columns = config["rows"], config["columns"]
    px, py = records["paddle_x"], records["paddle_y"]
    if ((px < 0) | (px >= columns) | (py != rows - 1)).any():
        return INVALID_PADDLE_POS
    balls = records["balls"]
    if ((balls < NO_BALL) | (balls >= columns)).any():
        return INVALID_BALLS_RANGE.format(rows=rows, columns=columns)
    if (balls[:, rows - 1] != NO_BALL).any():
        return BALL_ON_PADDLE_ROW.format(row=rows - 1)
    return None


check_state = check_board
