"""MinAtar's Breakout over one episode's record, step for step as ``minatar.environments.breakout``
behind MinAtar's ``Environment`` (its sticky actions included).

The ball moves one cell on a diagonal each step (``ball_dir`` 0 up-left, 1 up-right, 2
down-right, 3 down-left); ``strike`` is MinAtar's flag that the ball touched a brick at the last
step (a brick met again at once is not broken). The previous action (``last_action``, in MinAtar's
full numbering) outlives the episode, as MinAtar's ``Environment.last_action`` does.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer, uniform

SIZE = 10
PADDLE, BALL, TRAIL, BRICK = 0, 1, 2, 3
LEFT, RIGHT = 1, 3  # in MinAtar's full action set
MINIMAL = np.array([0, 1, 3], dtype=np.int64)  # MinAtar's minimal_action_set()
MOVE_X = np.array([-1, 1, 1, -1], dtype=np.int64)
MOVE_Y = np.array([-1, -1, 1, 1], dtype=np.int64)
FLIP_X = np.array([1, 0, 3, 2], dtype=np.int64)  # off a side wall
FLIP_Y = np.array([3, 2, 1, 0], dtype=np.int64)  # off the top, a brick or the paddle's middle
CORNER = np.array([2, 3, 0, 1], dtype=np.int64)  # off the paddle's corner: back the way it came

# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True

FIELDS = [
    ("ball_x", np.int64),
    ("ball_y", np.int64),
    ("ball_dir", np.int64),
    ("pos", np.int64),
    ("last_x", np.int64),
    ("last_y", np.int64),
    ("strike", np.uint8),
    ("last_action", np.int64),
    ("bricks", np.uint8, (SIZE, SIZE)),
    # What the last step changed beyond the ball, trail and paddle, for ``observe_step``: the
    # trail cell it left (-1: none), the brick it broke (-1: none), whether the rows came back.
    ("old_x", np.int64),
    ("old_y", np.int64),
    ("broke_x", np.int64),
    ("broke_y", np.int64),
    ("refilled", np.uint8),
]

STATE_BOUNDS = {
    "ball_x": (0, SIZE - 1),
    "ball_y": (0, SIZE - 1),
    "ball_dir": (0, 3),
    "pos": (0, SIZE - 1),
    "last_x": (0, SIZE - 1),
    "last_y": (0, SIZE - 1),
    "strike": (0, 1),
    "last_action": (0, 5),
    "bricks": (0, 1),
    "old_x": (-1, SIZE - 1),
    "old_y": (-1, SIZE - 1),
    "broke_x": (-1, SIZE - 1),
    "broke_y": (-1, SIZE - 1),
    "refilled": (0, 1),
}


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.ball_y = 3
    if integer(s, 2) == 0:
        s.ball_x, s.ball_dir = 0, 2
    else:
        s.ball_x, s.ball_dir = SIZE - 1, 3
    s.pos = 4
    s.bricks[:, :] = 0
    s.bricks[1:4, :] = 1
    s.strike = 0
    s.last_x = s.ball_x
    s.last_y = s.ball_y
    s.old_x = s.old_y = s.broke_x = s.broke_y = -1
    s.refilled = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    a = MINIMAL[actions[0]] if cfg.minimal_actions else actions[0]
    if uniform(s) < cfg.sticky_action_prob:  # drawn every step, as MinAtar draws it
        a = s.last_action
    s.last_action = a
    reward = 0.0
    terminal = 0
    if a == LEFT:
        s.pos = max(0, s.pos - 1)
    elif a == RIGHT:
        s.pos = min(SIZE - 1, s.pos + 1)
    s.old_x, s.old_y = s.last_x, s.last_y
    s.broke_x = s.broke_y = -1
    s.refilled = 0
    s.last_x = s.ball_x
    s.last_y = s.ball_y
    d = s.ball_dir
    new_x = s.ball_x + MOVE_X[d]
    new_y = s.ball_y + MOVE_Y[d]
    struck = False
    if new_x < 0 or new_x > SIZE - 1:
        new_x = min(max(new_x, 0), SIZE - 1)
        s.ball_dir = FLIP_X[s.ball_dir]
    if new_y < 0:
        new_y = 0
        s.ball_dir = FLIP_Y[s.ball_dir]
    elif new_y > SIZE - 1:  # only from a state set below the paddle (MinAtar's index fails)
        new_y = SIZE - 1
        terminal = 1
    elif s.bricks[new_y, new_x] == 1:
        struck = True
        if not s.strike:
            reward += 1.0
            s.strike = 1
            s.bricks[new_y, new_x] = 0
            s.broke_x, s.broke_y = new_x, new_y
            new_y = s.last_y
            s.ball_dir = FLIP_Y[s.ball_dir]
    elif new_y == SIZE - 1:
        if not s.bricks.any():
            s.bricks[1:4, :] = 1
            s.refilled = 1
        if s.ball_x == s.pos:
            s.ball_dir = FLIP_Y[s.ball_dir]
            new_y = s.last_y
        elif new_x == s.pos:
            s.ball_dir = CORNER[s.ball_dir]
            new_y = s.last_y
        else:
            terminal = 1
    if not struck:
        s.strike = 0
    s.ball_x = new_x
    s.ball_y = new_y
    rewards[0] = reward
    return terminal


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0][i, 0]
    out[:, :, :] = False
    out[s.ball_y, s.ball_x, BALL] = True
    out[SIZE - 1, s.pos, PADDLE] = True
    out[s.last_y, s.last_x, TRAIL] = True
    for y in range(SIZE):
        for x in range(SIZE):
            out[y, x, BRICK] = s.bricks[y, x] != 0


@nb.njit(cache=True, error_model="numpy")
def observe_step(s, cfg, obs, i):
    """``observe`` after a step that went on: a few cells change, not the 400."""
    out = obs[0][i, 0]
    out[SIZE - 1, :, PADDLE] = False
    out[SIZE - 1, s.pos, PADDLE] = True
    if s.old_x >= 0:
        out[s.old_y, s.old_x, TRAIL] = False
    out[s.last_y, s.last_x, BALL] = False  # the trail is where the ball was
    out[s.last_y, s.last_x, TRAIL] = True
    out[s.ball_y, s.ball_x, BALL] = True
    if s.broke_x >= 0:
        out[s.broke_y, s.broke_x, BRICK] = False
    if s.refilled:
        out[1:4, :, BRICK] = True
