"""Pendulum's rules over one episode's record, exactly as gymnasium's PendulumEnv.

The state is float64 as gymnasium's. The torque is a float32, as the action space says (a float64
action is rounded to float32 first), and NumPy keeps float32 arithmetic wherever gymnasium combines
it with Python constants: the torque's square and its two products are float32 operations, emulated
here as the float64 operation rounded once to float32 (exact for *). Squares are the C library's
pow and powf results, as NumPy's scalar power gives them (see ``vecenv.kernels.npmath``): they are
not always the correctly rounded product x * x.
"""

import math

import numba as nb
import numpy as np

from vecenv.kernels.npmath import f32, powf, square
from vecenv.kernels.rng import uniform_range

# last_u is the torque of the last step, kept only for drawing (gymnasium's ``last_u``).
FIELDS = [("theta", np.float64), ("theta_dot", np.float64), ("last_u", np.float64)]

# Every finite state is playable: the angle is normalised when it is scored, the angular velocity
# is clipped by the next step, and last_u is only drawn; so no field needs bounds.
STATE_BOUNDS = {}

MAX_SPEED = 8.0
MAX_TORQUE = 2.0
DT = 0.05
M = 1.0
L = 1.0

TWO_PI = 2 * np.pi
TORQUE_GAIN = 3.0 / (M * L**2)
TORQUE_COST32 = float(np.float32(0.001))

# What follows the engine's precision (float64 by default; see vecenv/kernels/precision.py).
PRECISION = (
    *("theta", "theta_dot", "last_u", "g"),
    *("MAX_SPEED", "MAX_TORQUE", "DT", "M", "L", "TWO_PI", "TORQUE_GAIN", "TORQUE_COST32"),
)


@nb.njit(cache=True, error_model="numpy", inline="always")
def angle_normalize(x):
    # Python's float modulo (the sign of the divisor), as NumPy's remainder.
    return ((x + np.pi) % TWO_PI) - np.pi


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.theta = uniform_range(s, -np.pi, np.pi)
    s.theta_dot = uniform_range(s, -1.0, 1.0)
    s.last_u = 0.0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    u = min(max(f32(actions[0]), -MAX_TORQUE), MAX_TORQUE)
    th = s.theta
    thdot = s.theta_dot
    u_sq = np.float64(powf(np.float32(u), np.float32(2.0)))
    costs = square(angle_normalize(th)) + 0.1 * square(thdot) + f32(TORQUE_COST32 * u_sq)
    newthdot = thdot + (3 * cfg.g / (2 * L) * math.sin(th) + f32(TORQUE_GAIN * u)) * DT
    newthdot = min(max(newthdot, -MAX_SPEED), MAX_SPEED)
    s.theta = th + newthdot * DT
    s.theta_dot = newthdot
    s.last_u = u
    rewards[0] = -costs
    return 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0]
    out[i, 0, 0] = math.cos(s.theta)
    out[i, 0, 1] = math.sin(s.theta)
    out[i, 0, 2] = s.theta_dot
