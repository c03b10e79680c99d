"""DancingCatch's rules over one episode's record, as csuite's ``DancingCatch``.

The board is Catch's (``vecenv.envs.catch.rules``): ``balls`` holds one entry per row, the column of
the ball in that row, or -1. Balls spawn one step apart and fall together, so no two share a row
and the oldest is the lowest: this is csuite's age-ordered list of balls for every state its rules
reach. The paddle row's entry stays -1 (a ball reaching it is scored and removed in the same step).

Each step, in csuite's order: the paddle moves, every ball falls one row, the ball reaching the
paddle row scores +1 (caught) or -1 (missed) and leaves, a new ball spawns in row 0 with probability
``spawn_probability`` in a uniform column, and every ``swap_every`` steps two uniform indices of
``shuffle_idx`` (drawn independently, so possibly the same) swap their entries. The observation is
the row-major board read through ``shuffle_idx``: entry k shows board cell ``shuffle_idx[k]``.
"""

import numba as nb
import numpy as np

from vecenv.envs.catch.rules import advance, board_fields, check_board, reset_board
from vecenv.kernels.rng import integer

TIME_MAX = np.iinfo(np.int64).max - 1  # so the step counter's increment never overflows

# The message of a check csuite lacks.
INVALID_SHUFFLE_IDX = "Invalid state: shuffle_idx entries not in expected range [0, {cells})."


# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True


def FIELDS(config):  # noqa: N802 (the protocol's name)
    return board_fields(config) + [
        ("shuffle_idx", np.int64, (config["rows"] * config["columns"],)),
        ("time_since_swap", np.int64),
    ]


STATE_BOUNDS = {"time_since_swap": (0, TIME_MAX)}


def check_state(records, config):
    """Catch's checks (csuite's, with its messages, and the empty paddle row), plus what the next
    observation needs and csuite does not check: ``shuffle_idx`` names board cells (csuite's next
    observation fails otherwise). Repeated indices are accepted, as csuite accepts them."""
    message = check_board(records, config)
    cells = config["rows"] * config["columns"]
    idx = records["shuffle_idx"]
    if message is None and ((idx < 0) | (idx >= cells)).any():
        return INVALID_SHUFFLE_IDX.format(cells=cells)
    return message


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    reset_board(s, cfg)
    for k in range(s.shuffle_idx.shape[0]):
        s.shuffle_idx[k] = k
    s.time_since_swap = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    rewards[0] = advance(s, cfg, actions[0])
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
