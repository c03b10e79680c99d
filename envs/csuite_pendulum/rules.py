"""CSuite's continuing pendulum over one episode's record, in float64 with csuite's operations.

Each action holds a torque of -1, 0 or +1 for ``act_step_period`` semi-implicit Euler substeps of
``theta'' = tau - friction * theta' - gravity * sin(theta)`` (the velocity first, then the angle
with the new velocity); the angle is then wrapped into [0, 2 pi] with Python's float modulo and the
velocity clipped to [-max_speed, max_speed]. The angle is 0 hanging down and pi upright.
"""

import math

import numba as nb
import numpy as np

FIELDS = [
    ("angle", np.float64),
    ("velocity", np.float64),
    ("torque", np.int64),  # the last action's torque, -1, 0 or +1 (drawn by the renderer)
]

TWO_PI = 2 * np.pi
RADIAN_MULTIPLIER = np.pi / 180
REWARD_ANGLE = 30  # degrees either side of upright
REWARD_ANGLE_RADIANS = REWARD_ANGLE * RADIAN_MULTIPLIER
REWARD_LOW = np.pi - REWARD_ANGLE_RADIANS
REWARD_HIGH = np.pi + REWARD_ANGLE_RADIANS
# The renderer's fields; csuite's own (angle, velocity) are checked by check_state.
STATE_BOUNDS = {"torque": (-1, 1)}

# What follows the engine's precision (float64 by default; see vecenv/kernels/precision.py).
PRECISION = (
    *("angle", "velocity"),
    *("friction", "gravity", "simulation_step_size", "max_speed"),
    *("TWO_PI", "RADIAN_MULTIPLIER", "REWARD_ANGLE_RADIANS", "REWARD_LOW", "REWARD_HIGH"),
)

# As csuite's set_state words it.
INVALID_ANGLE = "Invalid state: expected angle to be in range [0, 2pi]."


def check_state(records, config):
    """csuite's check: the angle lies in [0, 2 pi] (any velocity is accepted)."""
    angle = records["angle"]
    if ((angle < 0) | (angle > TWO_PI)).any():
        return INVALID_ANGLE
    return None


@nb.njit(cache=True, error_model="numpy", inline="always")
def in_reward_region(angle):
    """csuite's sparse reward region: strictly within 30 degrees of upright."""
    return REWARD_LOW < angle < REWARD_HIGH


@nb.njit(cache=True, error_model="numpy", inline="always")
def clip_speed(velocity, max_speed):
    """``np.clip(velocity, -max_speed, max_speed)`` as numpy computes it: NaN passes through and
    a tie keeps the velocity (so -0.0 clipped to [-0.0, 0.0] stays -0.0)."""
    low = -max_speed
    v = velocity if (velocity != velocity or velocity >= low) else low
    return v if (v != v or v <= max_speed) else max_speed


@nb.njit(cache=True, error_model="numpy", inline="always")
def integrate(s, cfg, torque):
    """Advance ``s.angle`` and ``s.velocity`` by one action holding ``torque`` (a float)."""
    angle = s.angle
    velocity = s.velocity
    friction = cfg.friction
    gravity = cfg.gravity
    dt = cfg.simulation_step_size
    for _ in range(cfg.act_step_period):
        velocity += (torque - friction * velocity - gravity * math.sin(angle)) * dt
        angle += velocity * dt
    s.angle = angle % TWO_PI
    s.velocity = clip_speed(velocity, cfg.max_speed)


@nb.njit(cache=True, error_model="numpy", inline="always")
def write_observation(s, obs, i):
    out = obs[0]
    out[i, 0, 0] = math.cos(s.angle)
    out[i, 0, 1] = math.sin(s.angle)
    out[i, 0, 2] = s.velocity


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    # Hanging down at rest; no randomness.
    s.angle = 0.0
    s.velocity = 0.0
    s.torque = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    s.torque = actions[0] - 1
    integrate(s, cfg, np.float64(s.torque))
    rewards[0] = 1.0 if in_reward_region(s.angle) else 0.0
    return 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    write_observation(s, obs, i)
