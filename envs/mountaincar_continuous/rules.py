"""MountainCarContinuous's rules over one episode's record, exactly as gymnasium's
Continuous_MountainCarEnv.

gymnasium keeps this game's state in a float32 array between steps, so under NumPy's promotion
rules every step after the first runs in float32 (Python constants are cast to float32 first),
while the first step after a reset runs in float64. The rules keep float64 fields and round to
float32 wherever gymnasium's arithmetic does: a float32 operation is the float64 operation of the
same float32 operands rounded once to float32 (exact for +, -, *). The action is a float32, as the
action space says: a float64 action is rounded to float32 before anything else. goal_velocity is
compared as the Python float gymnasium.make passes.
"""

import math

import numba as nb
import numpy as np

# The state's fields, the start and the observation are the discrete game's, as are the track and
# gravity. As there, every finite state is playable: a step clips the velocity and the position
# back onto the track, so no field needs bounds. (A float32 state may even lie a hair outside the
# float64 track: float32(-1.2) < -1.2.)
from vecenv.envs.mountaincar.rules import (  # noqa: F401 (FIELDS, STATE_BOUNDS, reset, observe)
    FIELDS,
    GRAVITY,
    MAX_POSITION,
    MAX_SPEED,
    MIN_POSITION,
    STATE_BOUNDS,
    observe,
    reset,
)
from vecenv.kernels.npmath import f32

MIN_ACTION = -1.0
MAX_ACTION = 1.0
GOAL_POSITION = 0.45
POWER = 0.0015

# The constants as float32 arithmetic sees them.
POWER32 = float(np.float32(POWER))
MIN_POSITION32 = float(np.float32(MIN_POSITION))
MAX_POSITION32 = float(np.float32(MAX_POSITION))
MAX_SPEED32 = float(np.float32(MAX_SPEED))
GOAL_POSITION32 = float(np.float32(GOAL_POSITION))

# What follows the engine's precision (float64 by default; see vecenv/kernels/precision.py).
# (In float32 the float64 constants and their float32 roundings are the same numbers.)
PRECISION = (
    *("position", "velocity", "goal_velocity"),
    *("MIN_ACTION", "MAX_ACTION", "GOAL_POSITION", "POWER", "POWER32"),
    *("MIN_POSITION32", "MAX_POSITION32", "MAX_SPEED32", "GOAL_POSITION32"),
)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    action = f32(actions[0])
    # min(max(action, -1.0), 1.0) keeps the float32 action in range and yields a Python float
    # bound outside it; the product with the power is float32 or float64 accordingly.
    if action < MIN_ACTION:
        push, push32 = MIN_ACTION * POWER, False
    elif action > MAX_ACTION:
        push, push32 = MAX_ACTION * POWER, False
    else:
        push, push32 = f32(action * POWER32), True
    # After a reset the state is float64; after any step it is float32 (a restored state too).
    narrow = s.step > 0
    position = f32(s.position) if narrow else s.position
    velocity = f32(s.velocity) if narrow else s.velocity
    slope = GRAVITY * math.cos(f32(3.0 * position) if narrow else 3.0 * position)
    accel = f32(push - f32(slope)) if push32 else push - slope
    velocity = f32(velocity + f32(accel)) if narrow else velocity + accel

    # A value assigned from a Python constant is compared in float64 from then on; a float32 one
    # against the float32 rounding of the constant.
    v_narrow = narrow
    if velocity > (MAX_SPEED32 if narrow else MAX_SPEED):
        velocity, v_narrow = MAX_SPEED, False
    elif velocity < (-MAX_SPEED32 if narrow else -MAX_SPEED):
        velocity, v_narrow = -MAX_SPEED, False
    position = f32(position + f32(velocity)) if narrow else position + velocity
    p_narrow = narrow
    if position > (MAX_POSITION32 if narrow else MAX_POSITION):
        position, p_narrow = MAX_POSITION, False
    elif position < (MIN_POSITION32 if narrow else MIN_POSITION):
        position, p_narrow = MIN_POSITION, False
    if position == (MIN_POSITION32 if p_narrow else MIN_POSITION) and velocity < 0:
        velocity, v_narrow = 0.0, False  # the left wall is inelastic

    goal_velocity = cfg.goal_velocity
    terminated = position >= (GOAL_POSITION32 if p_narrow else GOAL_POSITION) and velocity >= (
        f32(goal_velocity) if v_narrow else goal_velocity
    )
    s.position = f32(position)
    s.velocity = f32(velocity)
    # The cost is of the unclipped action; its square is exact in float64.
    rewards[0] = (100.0 if terminated else 0.0) - action * action * 0.1
    return 1 if terminated else 0
