"""CartPole's rules over one episode's record, in float64 exactly as gymnasium's CartPoleEnv."""

import math

import numba as nb
import numpy as np

from vecenv.kernels.rng import uniform_range

FIELDS = [
    ("x", np.float64),
    ("x_dot", np.float64),
    ("theta", np.float64),
    ("theta_dot", np.float64),
]

GRAVITY = 9.8
MASSCART = 1.0
MASSPOLE = 0.1
TOTAL_MASS = MASSPOLE + MASSCART
LENGTH = 0.5  # half the pole's length
POLEMASS_LENGTH = MASSPOLE * LENGTH
FORCE_MAG = 10.0
TAU = 0.02
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4

# What follows the engine's precision (float64 by default; see vecenv/kernels/precision.py).
PRECISION = (
    *("x", "x_dot", "theta", "theta_dot"),
    *("GRAVITY", "MASSCART", "MASSPOLE", "TOTAL_MASS", "LENGTH", "POLEMASS_LENGTH"),
    *("FORCE_MAG", "TAU", "THETA_THRESHOLD", "X_THRESHOLD"),
)


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.x = uniform_range(s, -0.05, 0.05)
    s.x_dot = uniform_range(s, -0.05, 0.05)
    s.theta = uniform_range(s, -0.05, 0.05)
    s.theta_dot = uniform_range(s, -0.05, 0.05)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    force = FORCE_MAG if actions[0] == 1 else -FORCE_MAG
    costheta = math.cos(s.theta)
    sintheta = math.sin(s.theta)
    temp = (force + POLEMASS_LENGTH * (s.theta_dot * s.theta_dot) * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS)
    )
    xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    # Explicit Euler: positions move with the old velocities.
    s.x = s.x + TAU * s.x_dot
    s.x_dot = s.x_dot + TAU * xacc
    s.theta = s.theta + TAU * s.theta_dot
    s.theta_dot = s.theta_dot + TAU * thetaacc
    terminated = (
        s.x < -X_THRESHOLD
        or s.x > X_THRESHOLD
        or s.theta < -THETA_THRESHOLD
        or s.theta > THETA_THRESHOLD
    )
    if cfg.sutton_barto_reward:
        rewards[0] = -1.0 if terminated else 0.0
    else:
        rewards[0] = 1.0
    return 1 if terminated else 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0]
    out[i, 0, 0] = s.x
    out[i, 0, 1] = s.x_dot
    out[i, 0, 2] = s.theta
    out[i, 0, 3] = s.theta_dot
