"""A walk on a line: the walker starts inside it and ends at either end."""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer

from .moves import STEP

FIELDS = [("position", np.int64)]


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.position = 1 + integer(s, cfg.length - 2)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    s.position += STEP if actions[0] == 1 else -STEP
    rewards[0] = 1.0 if s.position == cfg.length - 1 else 0.0
    return 1 if s.position == 0 or s.position == cfg.length - 1 else 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    obs[0][i, 0] = s.position


def position(record, config, given):
    """Any cell inside the line."""
    from vecenv.kernels.position import observed

    record["position"] = observed(given, "position", np.array([1]))[0]
