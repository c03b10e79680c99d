"""MinAtar's Space Invaders over one episode's record, step for step as
``minatar.environments.space_invaders`` behind MinAtar's ``Environment`` (its sticky actions
included). The game draws no random numbers; only the sticky actions do.

MinAtar's three 10x10 maps (aliens, the cannon's bullets, the aliens' bullets) are rows of bits
here, bit ``x`` of ``aliens[y]`` the cell at row ``y``, column ``x``: moving a map a row, or every
alien a column, is then a few shifts instead of a hundred cells, as ``np.roll`` moves them in
MinAtar. The previous action (``last_action``, in MinAtar's full numbering) outlives the
episode, as MinAtar's ``Environment.last_action`` does.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import uniform

SIZE = 10
ROW = (1 << SIZE) - 1  # every column
CANNON, ALIEN, ALIEN_LEFT, ALIEN_RIGHT, FRIENDLY_BULLET, ENEMY_BULLET = range(6)
LEFT, RIGHT, FIRE = 1, 3, 5  # in MinAtar's full action set
MINIMAL = np.array([0, 1, 3, 5], dtype=np.int64)  # MinAtar's minimal_action_set()
SHOT_COOL_DOWN = 5
ENEMY_MOVE_INTERVAL = 12
ENEMY_SHOT_INTERVAL = 10
FASTEST_WAVE = 6  # the move interval ramping stops at
WAVE_ROWS = 4
WAVE = 0b0011111100  # columns 2 to 7 of the wave's four rows

# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True

FIELDS = [
    ("pos", np.int64),  # the cannon's column
    ("alien_dir", np.int64),  # -1 left, 1 right
    ("enemy_move_interval", np.int64),
    ("alien_move_timer", np.int64),
    ("alien_shot_timer", np.int64),
    ("ramp_index", np.int64),
    ("shot_timer", np.int64),
    ("last_action", np.int64),
    ("aliens", np.int64, (SIZE,)),
    ("f_bullets", np.int64, (SIZE,)),
    ("e_bullets", np.int64, (SIZE,)),
]

STATE_BOUNDS = {
    "pos": (0, SIZE - 1),
    "alien_dir": (-1, 1),
    "enemy_move_interval": (FASTEST_WAVE, ENEMY_MOVE_INTERVAL),
    "alien_move_timer": (0, ENEMY_MOVE_INTERVAL),
    "alien_shot_timer": (0, ENEMY_SHOT_INTERVAL),
    "ramp_index": (0, 2**31),
    "shot_timer": (0, SHOT_COOL_DOWN),
    "last_action": (0, 5),
    "aliens": (0, ROW),
    "f_bullets": (0, ROW),
    "e_bullets": (0, ROW),
}


def check_state(records, config):
    """What the bounds cannot say: the aliens move left or right, and some are left (a wave is
    replaced within the step that clears it; MinAtar fails to aim at an empty map)."""
    if (records["alien_dir"] == 0).any():
        return "state field 'alien_dir' must be -1 or 1"
    if (records["aliens"] == 0).all(axis=-1).any():
        return "state field 'aliens' must hold an alien"
    return None


@nb.njit(cache=True, error_model="numpy", inline="always")
def _count(v):
    """The set bits of a row (a 16-bit population count)."""
    v = v - ((v >> 1) & 0x5555)
    v = (v & 0x3333) + ((v >> 2) & 0x3333)
    v = (v + (v >> 4)) & 0x0F0F
    return (v + (v >> 8)) & 0x1F


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.pos = 5
    for y in range(SIZE):
        s.aliens[y] = WAVE if y < WAVE_ROWS else 0
        s.f_bullets[y] = 0
        s.e_bullets[y] = 0
    s.alien_dir = -1
    s.enemy_move_interval = ENEMY_MOVE_INTERVAL
    s.alien_move_timer = ENEMY_MOVE_INTERVAL
    s.alien_shot_timer = ENEMY_SHOT_INTERVAL
    s.ramp_index = 0
    s.shot_timer = 0


@nb.njit(cache=True, error_model="numpy", inline="always")
def _aim(s):
    """MinAtar's ``_nearest_alien``: the columns by distance from the cannon (the left one first
    at a tie), the lowest alien of the first column holding one; the aliens' bullet starts
    there."""
    for d in range(SIZE):
        for side in range(1 if d == 0 else 2):
            c = s.pos - d if side == 0 else s.pos + d
            if c < 0 or c > SIZE - 1:
                continue
            for y in range(SIZE - 1, -1, -1):
                if (s.aliens[y] >> c) & 1:
                    s.e_bullets[y] |= 1 << c
                    return


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    a = MINIMAL[actions[0]] if cfg.minimal_actions else actions[0]
    if uniform(s) < cfg.sticky_action_prob:  # drawn every step, as MinAtar draws it
        a = s.last_action
    s.last_action = a
    terminal = 0
    if a == FIRE and s.shot_timer == 0:
        s.f_bullets[SIZE - 1] |= 1 << s.pos
        s.shot_timer = SHOT_COOL_DOWN
    elif a == LEFT:
        s.pos = max(0, s.pos - 1)
    elif a == RIGHT:
        s.pos = min(SIZE - 1, s.pos + 1)
    # The cannon's bullets rise a row, the aliens' fall one (off the board past its edge).
    for y in range(SIZE - 1):
        s.f_bullets[y] = s.f_bullets[y + 1]
    s.f_bullets[SIZE - 1] = 0
    for y in range(SIZE - 1, 0, -1):
        s.e_bullets[y] = s.e_bullets[y - 1]
    s.e_bullets[0] = 0
    cannon = 1 << s.pos
    if s.e_bullets[SIZE - 1] & cannon:
        terminal = 1
    if s.aliens[SIZE - 1] & cannon:
        terminal = 1
    if s.alien_move_timer == 0:
        count = 0
        columns = 0
        for y in range(SIZE):
            count += _count(s.aliens[y])
            columns |= s.aliens[y]
        s.alien_move_timer = min(count, s.enemy_move_interval)
        if (columns & 1 and s.alien_dir < 0) or (columns >> (SIZE - 1) and s.alien_dir > 0):
            s.alien_dir = -s.alien_dir
            if s.aliens[SIZE - 1]:
                terminal = 1
            # Down a row, np.roll's way: the bottom row comes back at the top.
            bottom = s.aliens[SIZE - 1]
            for y in range(SIZE - 1, 0, -1):
                s.aliens[y] = s.aliens[y - 1]
            s.aliens[0] = bottom
        elif s.alien_dir > 0:
            for y in range(SIZE):
                s.aliens[y] = ((s.aliens[y] << 1) | (s.aliens[y] >> (SIZE - 1))) & ROW
        else:
            for y in range(SIZE):
                s.aliens[y] = (s.aliens[y] >> 1) | ((s.aliens[y] & 1) << (SIZE - 1))
        if s.aliens[SIZE - 1] & cannon:
            terminal = 1
    if s.alien_shot_timer == 0:
        s.alien_shot_timer = ENEMY_SHOT_INTERVAL
        _aim(s)
    reward = 0
    left = 0
    for y in range(SIZE):
        hit = s.aliens[y] & s.f_bullets[y]
        reward += _count(hit)
        s.aliens[y] ^= hit
        s.f_bullets[y] ^= hit
        left |= s.aliens[y]
    if s.shot_timer > 0:
        s.shot_timer -= 1
    s.alien_move_timer -= 1
    s.alien_shot_timer -= 1
    if left == 0:
        if s.enemy_move_interval > FASTEST_WAVE and cfg.difficulty_ramping:
            s.enemy_move_interval -= 1
            s.ramp_index += 1
        for y in range(WAVE_ROWS):
            s.aliens[y] = WAVE
    rewards[0] = np.float64(reward)
    return terminal


@nb.njit(cache=True, error_model="numpy", inline="always")
def _draw(out, y, row, channel, also):
    """Row ``y``'s bits of ``row`` in ``channel`` (and in ``also`` where that is >= 0), written
    without a branch per cell (which cells hold something is a coin flip to the predictor)."""
    if row:
        for x in range(SIZE):
            bit = (row >> x) & 1 != 0
            out[y, x, channel] = bit
            if also >= 0:
                out[y, x, also] = bit


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0][i, 0]
    out[:, :, :] = False  # then only the few cells that hold something: most rows are empty
    out[SIZE - 1, s.pos, CANNON] = True
    heading = ALIEN_LEFT if s.alien_dir < 0 else ALIEN_RIGHT
    for y in range(SIZE):
        _draw(out, y, s.aliens[y], ALIEN, heading)
        _draw(out, y, s.f_bullets[y], FRIENDLY_BULLET, -1)
        _draw(out, y, s.e_bullets[y], ENEMY_BULLET, -1)
