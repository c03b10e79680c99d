"""MinAtar's Freeway over one episode's record, step for step as ``minatar.environments.freeway``
behind MinAtar's ``Environment`` (its sticky actions included).

Car ``i`` drives along row ``i + 1`` at ``car_speed`` (-5..5: its direction and how many steps
it waits between moves, ``car_timer`` counting them down), wrapping around the edges. The chicken
stays in column 4. Each crossing draws every car's speed again, as MinAtar does: eight integers in
[1, 5], then eight uniforms whose side of 1/2 gives the direction (exactly 1/2, one chance in
2**53, gives MinAtar's speed 0: the car moves left every step). The previous action
(``last_action``, in MinAtar's full numbering) outlives the episode, as MinAtar's
``Environment.last_action`` does.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer, uniform

SIZE = 10
CARS = 8  # car i drives along row i + 1
CHICKEN_X = 4
CHICKEN, CAR = 0, 1  # channels; 2 + |speed| - 1 is the trail's channel
UP, DOWN = 2, 4  # in MinAtar's full action set
MINIMAL = np.array([0, 2, 4], dtype=np.int64)  # MinAtar's minimal_action_set()
PLAYER_SPEED = 3
TIME_LIMIT = 2500

# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True

FIELDS = [
    ("pos", np.int64),  # the chicken's row
    ("move_timer", np.int64),
    ("terminate_timer", np.int64),
    ("last_action", np.int64),
    ("car_x", np.int64, (CARS,)),
    ("car_timer", np.int64, (CARS,)),
    ("car_speed", np.int64, (CARS,)),
]

STATE_BOUNDS = {
    "pos": (0, SIZE - 1),
    "move_timer": (0, PLAYER_SPEED),
    "terminate_timer": (-1, TIME_LIMIT),
    "last_action": (0, 5),
    "car_x": (0, SIZE - 1),
    "car_timer": (0, 5),
    "car_speed": (-5, 5),
}


@nb.njit(cache=True, error_model="numpy", inline="always")
def _randomize_cars(s):
    """MinAtar's ``_randomize_cars``: all eight speeds, then all eight directions."""
    for i in range(CARS):
        s.car_speed[i] = 1 + integer(s, 5)
    for i in range(CARS):
        u = uniform(s)
        sign = -1 if u < 0.5 else (1 if u > 0.5 else 0)  # numpy's sign of u - 0.5
        s.car_speed[i] *= sign
        s.car_timer[i] = abs(s.car_speed[i])


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    _randomize_cars(s)
    s.car_x[:] = 0
    s.pos = SIZE - 1
    s.move_timer = PLAYER_SPEED
    s.terminate_timer = TIME_LIMIT


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    a = MINIMAL[actions[0]] if cfg.minimal_actions else actions[0]
    if uniform(s) < cfg.sticky_action_prob:  # drawn every step, as MinAtar draws it
        a = s.last_action
    s.last_action = a
    reward = 0.0
    if a == UP and s.move_timer == 0:
        s.move_timer = PLAYER_SPEED
        s.pos = max(0, s.pos - 1)
    elif a == DOWN and s.move_timer == 0:
        s.move_timer = PLAYER_SPEED
        s.pos = min(SIZE - 1, s.pos + 1)
    if s.pos == 0:
        reward += 1.0
        _randomize_cars(s)
        s.pos = SIZE - 1
    for i in range(CARS):
        if s.car_x[i] == CHICKEN_X and i + 1 == s.pos:
            s.pos = SIZE - 1
        if s.car_timer[i] == 0:
            s.car_timer[i] = abs(s.car_speed[i])
            x = s.car_x[i] + 1 if s.car_speed[i] > 0 else s.car_x[i] - 1
            if x < 0:
                x = SIZE - 1
            elif x > SIZE - 1:
                x = 0
            s.car_x[i] = x
            if x == CHICKEN_X and i + 1 == s.pos:
                s.pos = SIZE - 1
        else:
            s.car_timer[i] -= 1
    if s.move_timer > 0:
        s.move_timer -= 1
    s.terminate_timer -= 1
    rewards[0] = reward
    return 1 if s.terminate_timer < 0 else 0  # MinAtar's time limit


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0][i, 0]
    out[:, :, :] = False
    out[s.pos, CHICKEN_X, CHICKEN] = True
    trail = -1  # MinAtar's loop variable: a car of speed 0 repeats the car before's channel
    for k in range(CARS):
        x = s.car_x[k]
        out[k + 1, x, CAR] = True
        back = x - 1 if s.car_speed[k] > 0 else x + 1
        if back < 0:
            back = SIZE - 1
        elif back > SIZE - 1:
            back = 0
        if s.car_speed[k] != 0:
            trail = 1 + abs(s.car_speed[k])
        if trail >= 0:  # the first car at speed 0: MinAtar's state() fails; ours leaves no trail
            out[k + 1, back, trail] = True
