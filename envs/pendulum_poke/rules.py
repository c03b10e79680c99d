"""CSuite's pendulum_poke over one episode's record: csuite's pendulum, poked near the top.

Before each action, if the pendulum is in the reward region (strictly within 30 degrees of
upright), it is poked with probability ``perturb_prob``: ``perturb_torque`` is subtracted from or
added to the action's torque (each with probability 1/2) for all of that action's substeps. The
draws follow csuite's: one uniform only when in the region, a second only when poked.
"""

import numba as nb
import numpy as np

from vecenv.envs.csuite_pendulum.rules import (  # noqa: F401 (check_state: the protocol's hook)
    check_state,
    in_reward_region,
    integrate,
    write_observation,
)
from vecenv.kernels.rng import uniform

FIELDS = [
    ("angle", np.float64),
    ("velocity", np.float64),
    ("torque", np.int64),  # the last action's torque, -1, 0 or +1 (drawn by the renderer)
    ("perturb_direction", np.int64),  # the last poke: -1, +1, or 0 for none (drawn too)
]

# The renderer's fields; csuite's own (angle, velocity) are checked by check_state.
STATE_BOUNDS = {"torque": (-1, 1), "perturb_direction": (-1, 1)}

# What follows the engine's precision (float64 by default; see vecenv/kernels/precision.py).
# (csuite_pendulum's constants follow its own declaration.)
PRECISION = (
    *("angle", "velocity"),
    *("friction", "gravity", "simulation_step_size", "max_speed"),
    *("perturb_prob", "perturb_torque"),
)


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    # Hanging down at rest; the stream of pokes is the episode's own.
    s.angle = 0.0
    s.velocity = 0.0
    s.torque = 0
    s.perturb_direction = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    tau = actions[0] - 1
    s.torque = tau
    applied = np.float64(tau)
    s.perturb_direction = 0
    if in_reward_region(s.angle) and uniform(s) < cfg.perturb_prob:
        if uniform(s) < 0.5:
            applied = tau - cfg.perturb_torque
            s.perturb_direction = -1
        else:
            applied = tau + cfg.perturb_torque
            s.perturb_direction = 1
    integrate(s, cfg, applied)
    rewards[0] = 1.0 if in_reward_region(s.angle) else 0.0
    return 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    write_observation(s, obs, i)
