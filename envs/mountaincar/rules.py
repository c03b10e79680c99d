"""MountainCar's rules over one episode's record, in float64 as gymnasium's MountainCarEnv."""

import math

import numba as nb
import numpy as np

from vecenv.kernels.rng import uniform_range

FIELDS = [("position", np.float64), ("velocity", np.float64)]

# Every finite state is playable: a step clips the velocity and the position back onto the track,
# as gymnasium does for a state set from outside, so no field needs bounds.
STATE_BOUNDS = {}

MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GOAL_POSITION = 0.5
FORCE = 0.001
GRAVITY = 0.0025

# What follows the engine's precision (float64 by default; see vecenv/kernels/precision.py).
PRECISION = (
    *("position", "velocity", "goal_velocity"),
    *("MIN_POSITION", "MAX_POSITION", "MAX_SPEED", "GOAL_POSITION", "FORCE", "GRAVITY"),
)


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.position = uniform_range(s, -0.6, -0.4)
    s.velocity = 0.0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    # gymnasium adds the summed force and gravity terms to the velocity in one go.
    accel = (actions[0] - 1) * FORCE + math.cos(3 * s.position) * (-GRAVITY)
    velocity = min(max(s.velocity + accel, -MAX_SPEED), MAX_SPEED)
    position = min(max(s.position + velocity, MIN_POSITION), MAX_POSITION)
    if position == MIN_POSITION and velocity < 0:
        velocity = 0.0  # the left wall is inelastic
    s.position = position
    s.velocity = velocity
    rewards[0] = -1.0
    return 1 if position >= GOAL_POSITION and velocity >= cfg.goal_velocity else 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0]
    out[i, 0, 0] = s.position
    out[i, 0, 1] = s.velocity
