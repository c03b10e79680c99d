"""Acrobot's rules over one episode's record, in float64 exactly as gymnasium's AcrobotEnv.

Every expression keeps gymnasium's operand order (rk4 over [0, dt], the dynamics, the wrap loops and
the velocity clamps), so one step from the same state gives the same bits.
"""

import math

import numba as nb
import numpy as np

from vecenv.kernels.npmath import square
from vecenv.kernels.rng import uniform_range

FIELDS = [
    ("theta1", np.float64),
    ("theta2", np.float64),
    ("dtheta1", np.float64),
    ("dtheta2", np.float64),
]

DT = 0.2
LINK_LENGTH_1 = 1.0
LINK_LENGTH_2 = 1.0
LINK_MASS_1 = 1.0
LINK_MASS_2 = 1.0
LINK_COM_POS_1 = 0.5
LINK_COM_POS_2 = 0.5
LINK_MOI = 1.0
GRAVITY = 9.8
PI = math.pi
MAX_VEL_1 = 4 * PI
MAX_VEL_2 = 9 * PI
BOOK = 0  # index of "book" in the configuration's enum; 1 is "nips"

# What follows the engine's precision (float64 by default; see vecenv/kernels/precision.py).
PRECISION = (
    *("theta1", "theta2", "dtheta1", "dtheta2"),
    *("DT", "LINK_LENGTH_1", "LINK_LENGTH_2", "LINK_MASS_1", "LINK_MASS_2"),
    *("LINK_COM_POS_1", "LINK_COM_POS_2", "LINK_MOI", "GRAVITY", "PI", "MAX_VEL_1", "MAX_VEL_2"),
)

# Every state the dynamics reach lies in these bounds (wrap and clamp keep it there). They also keep
# the wrap loops short and the integration finite, which arbitrary restored states would not.
STATE_BOUNDS = {
    "theta1": (-PI, PI),
    "theta2": (-PI, PI),
    "dtheta1": (-MAX_VEL_1, MAX_VEL_1),
    "dtheta2": (-MAX_VEL_2, MAX_VEL_2),
}


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    # gymnasium stores its initial state as float32; the later steps run in float64 from it.
    s.theta1 = np.float64(np.float32(uniform_range(s, -0.1, 0.1)))
    s.theta2 = np.float64(np.float32(uniform_range(s, -0.1, 0.1)))
    s.dtheta1 = np.float64(np.float32(uniform_range(s, -0.1, 0.1)))
    s.dtheta2 = np.float64(np.float32(uniform_range(s, -0.1, 0.1)))


# Inlined by LLVM, not forced at numba's level: rk4 calls this four times, and forcing it
# doubled the cold compile time without making the step faster.
@nb.njit(cache=True, error_model="numpy")
def _accelerations(theta1, theta2, dtheta1, dtheta2, a, book):
    m1 = LINK_MASS_1
    m2 = LINK_MASS_2
    l1 = LINK_LENGTH_1
    lc1 = LINK_COM_POS_1
    lc2 = LINK_COM_POS_2
    I1 = LINK_MOI
    I2 = LINK_MOI
    g = GRAVITY
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * math.cos(theta2)) + I1 + I2
    d2 = m2 * (lc2**2 + l1 * lc2 * math.cos(theta2)) + I2
    phi2 = m2 * lc2 * g * math.cos(theta1 + theta2 - PI / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * square(dtheta2) * math.sin(theta2)
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * math.sin(theta2)
        + (m1 * lc1 + m2 * l1) * g * math.cos(theta1 - PI / 2)
        + phi2
    )
    if book:
        ddtheta2 = (
            a + d2 / d1 * phi1 - m2 * l1 * lc2 * square(dtheta1) * math.sin(theta2) - phi2
        ) / (m2 * lc2**2 + I2 - square(d2) / d1)
    else:
        # The NIPS paper's equation lacks the dtheta1**2 term.
        ddtheta2 = (a + d2 / d1 * phi1 - phi2) / (m2 * lc2**2 + I2 - square(d2) / d1)
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return ddtheta1, ddtheta2


@nb.njit(cache=True, error_model="numpy", inline="always")
def _wrap(x, m, big_m):
    # Repeated subtraction, not fmod: the two round differently.
    diff = big_m - m
    while x > big_m:
        x = x - diff
    while x < m:
        x = x + diff
    return x


@nb.njit(cache=True, error_model="numpy", inline="always")
def _bound(x, m, big_m):
    # min(max(x, m), M) as Python evaluates it.
    if m > x:
        x = m
    if big_m < x:
        x = big_m
    return x


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    torque = np.float64(actions[0] - 1)
    book = cfg.book_or_nips == BOOK
    dt = DT
    dt2 = dt / 2.0
    y0, y1, y2, y3 = s.theta1, s.theta2, s.dtheta1, s.dtheta2
    # rk4: a stage's derivative is (dtheta1, dtheta2, ddtheta1, ddtheta2); the torque is constant.
    k1a, k1b = y2, y3
    k1c, k1d = _accelerations(y0, y1, y2, y3, torque, book)
    u0, u1, u2, u3 = y0 + dt2 * k1a, y1 + dt2 * k1b, y2 + dt2 * k1c, y3 + dt2 * k1d
    k2a, k2b = u2, u3
    k2c, k2d = _accelerations(u0, u1, u2, u3, torque, book)
    u0, u1, u2, u3 = y0 + dt2 * k2a, y1 + dt2 * k2b, y2 + dt2 * k2c, y3 + dt2 * k2d
    k3a, k3b = u2, u3
    k3c, k3d = _accelerations(u0, u1, u2, u3, torque, book)
    u0, u1, u2, u3 = y0 + dt * k3a, y1 + dt * k3b, y2 + dt * k3c, y3 + dt * k3d
    k4a, k4b = u2, u3
    k4c, k4d = _accelerations(u0, u1, u2, u3, torque, book)
    h = dt / 6.0
    n0 = y0 + h * (k1a + 2 * k2a + 2 * k3a + k4a)
    n1 = y1 + h * (k1b + 2 * k2b + 2 * k3b + k4b)
    n2 = y2 + h * (k1c + 2 * k2c + 2 * k3c + k4c)
    n3 = y3 + h * (k1d + 2 * k2d + 2 * k3d + k4d)
    s.theta1 = _wrap(n0, -PI, PI)
    s.theta2 = _wrap(n1, -PI, PI)
    s.dtheta1 = _bound(n2, -MAX_VEL_1, MAX_VEL_1)
    s.dtheta2 = _bound(n3, -MAX_VEL_2, MAX_VEL_2)
    terminated = -math.cos(s.theta1) - math.cos(s.theta2 + s.theta1) > 1.0
    rewards[0] = 0.0 if terminated else -1.0
    return 1 if terminated else 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0]
    out[i, 0, 0] = math.cos(s.theta1)
    out[i, 0, 1] = math.sin(s.theta1)
    out[i, 0, 2] = math.cos(s.theta2)
    out[i, 0, 3] = math.sin(s.theta2)
    out[i, 0, 4] = s.dtheta1
    out[i, 0, 5] = s.dtheta2
