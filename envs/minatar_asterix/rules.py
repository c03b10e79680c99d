"""MinAtar's Asterix over one episode's record, step for step as ``minatar.environments.asterix``
behind MinAtar's ``Environment`` (its sticky actions included).

MinAtar keeps eight entity slots, slot ``i`` crossing row ``i + 1``; a slot holds nothing
(``alive`` 0) or one enemy or gold piece at column ``x`` moving right or left. Its randomness
(where and what spawns) is drawn in MinAtar's order from the record's stream: two uniforms (the
side, gold) and, when a slot is free, a uniform choice among the free slots. The previous action
(``last_action``, in MinAtar's full numbering) outlives the episode, as MinAtar's
``Environment.last_action`` does.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer, uniform

SIZE = 10
SLOTS = 8  # slot i crosses row i + 1
PLAYER, ENEMY, TRAIL, GOLD = 0, 1, 2, 3
LEFT, UP, RIGHT, DOWN = 1, 2, 3, 4  # in MinAtar's full action set
MINIMAL = np.array([0, 1, 2, 3, 4], dtype=np.int64)  # MinAtar's minimal_action_set()
RAMP_INTERVAL = 100
INIT_SPAWN_SPEED = 10
INIT_MOVE_INTERVAL = 5

# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True

FIELDS = [
    ("player_x", np.int64),
    ("player_y", np.int64),
    ("spawn_speed", np.int64),
    ("spawn_timer", np.int64),
    ("move_speed", np.int64),
    ("move_timer", np.int64),
    ("ramp_timer", np.int64),
    ("ramp_index", np.int64),
    ("last_action", np.int64),
    ("alive", np.uint8, (SLOTS,)),
    ("x", np.int64, (SLOTS,)),
    ("right", np.uint8, (SLOTS,)),  # moving right (MinAtar's lr), else left
    ("gold", np.uint8, (SLOTS,)),  # gold, else an enemy
]

STATE_BOUNDS = {
    "player_x": (0, SIZE - 1),
    "player_y": (1, SLOTS),  # MinAtar's player keeps to the rows entities cross
    "spawn_speed": (1, INIT_SPAWN_SPEED),
    "spawn_timer": (0, INIT_SPAWN_SPEED),
    "move_speed": (1, INIT_MOVE_INTERVAL),
    "move_timer": (0, INIT_MOVE_INTERVAL),
    "ramp_timer": (-1, RAMP_INTERVAL),
    "ramp_index": (0, 2**31),
    "last_action": (0, 5),
    "alive": (0, 1),
    "x": (0, SIZE - 1),
    "right": (0, 1),
    "gold": (0, 1),
}


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.player_x = 5
    s.player_y = 5
    s.alive[:] = 0
    s.x[:] = 0
    s.right[:] = 0
    s.gold[:] = 0
    s.spawn_speed = INIT_SPAWN_SPEED
    s.spawn_timer = INIT_SPAWN_SPEED
    s.move_speed = INIT_MOVE_INTERVAL
    s.move_timer = INIT_MOVE_INTERVAL
    s.ramp_timer = RAMP_INTERVAL
    s.ramp_index = 0


@nb.njit(cache=True, error_model="numpy", inline="always")
def _spawn(s):
    """MinAtar's ``_spawn_entity``: a side and a kind, then a uniform free slot (none: nothing)."""
    right = uniform(s) < 0.5
    gold = uniform(s) < 1.0 / 3.0
    free = 0
    for i in range(SLOTS):
        free += s.alive[i] == 0
    if free == 0:
        return
    k = integer(s, free)
    for i in range(SLOTS):
        if s.alive[i] == 0:
            if k == 0:
                s.alive[i] = 1
                s.x[i] = 0 if right else SIZE - 1
                s.right[i] = right
                s.gold[i] = gold
                return
            k -= 1


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    a = MINIMAL[actions[0]] if cfg.minimal_actions else actions[0]
    if uniform(s) < cfg.sticky_action_prob:  # drawn every step, as MinAtar draws it
        a = s.last_action
    s.last_action = a
    reward = 0.0
    terminal = 0
    if s.spawn_timer == 0:
        _spawn(s)
        s.spawn_timer = s.spawn_speed
    if a == LEFT:
        s.player_x = max(0, s.player_x - 1)
    elif a == RIGHT:
        s.player_x = min(SIZE - 1, s.player_x + 1)
    elif a == UP:
        s.player_y = max(1, s.player_y - 1)
    elif a == DOWN:
        s.player_y = min(SLOTS, s.player_y + 1)
    # Only the slot crossing the player's row can meet the player.
    mine = s.player_y - 1
    if s.alive[mine] and s.x[mine] == s.player_x:
        if s.gold[mine]:
            s.alive[mine] = 0
            reward += 1.0
        else:
            terminal = 1
    if s.move_timer == 0:
        s.move_timer = s.move_speed
        for i in range(SLOTS):
            if s.alive[i]:
                x = s.x[i] + 1 if s.right[i] else s.x[i] - 1
                if x < 0 or x > SIZE - 1:
                    s.alive[i] = 0
                    continue
                s.x[i] = x
                if i == mine and x == s.player_x:
                    if s.gold[i]:
                        s.alive[i] = 0
                        reward += 1.0
                    else:
                        terminal = 1
    s.spawn_timer -= 1
    s.move_timer -= 1
    if cfg.difficulty_ramping and (s.spawn_speed > 1 or s.move_speed > 1):
        if s.ramp_timer >= 0:
            s.ramp_timer -= 1
        else:
            if s.move_speed > 1 and s.ramp_index % 2:
                s.move_speed -= 1
            if s.spawn_speed > 1:
                s.spawn_speed -= 1
            s.ramp_index += 1
            s.ramp_timer = RAMP_INTERVAL
    rewards[0] = reward
    return terminal


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0][i, 0]
    out[:, :, :] = False
    out[s.player_y, s.player_x, PLAYER] = True
    for k in range(SLOTS):
        if s.alive[k]:
            x = s.x[k]
            out[k + 1, x, GOLD if s.gold[k] else ENEMY] = True
            back = x - 1 if s.right[k] else x + 1
            if 0 <= back < SIZE:
                out[k + 1, back, TRAIL] = True
