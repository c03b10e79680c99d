"""MinAtar's Seaquest over one episode's record, step for step as
``minatar.environments.seaquest`` behind MinAtar's ``Environment`` (its sticky actions included).

MinAtar keeps five Python lists (the submarine's bullets, the enemies' bullets, fish, enemy
submarines, divers) and walks them backwards, removing items as it goes: ``list.remove`` takes
out the first item *equal* to the one at hand, and ``reversed`` stops early once its index passes
the shrunken list's end. Both are kept: each list is a fixed block of rows (columns ``X``, ``Y``,
``DIR``: 1 moving right, the move ``TIMER``, a submarine's ``SHOT`` timer) and a count, rows
removed by value with the rest moving up. A removed enemy submarine still fires if its shot was
due, as in MinAtar (its bullet leaves the board at once). The blocks hold more than play fills:
one spawn a step at most, each enemy living at most 33 steps at the fastest ramp, bounds the
enemies at 34 (MinAtar's own game at its fastest, its submarine made invulnerable, peaked at 26
enemies and 7 of their bullets in 600,000 steps); ``check_state`` refuses a state that could
overflow them in a step, and a step drops what would not fit.

Randomness is drawn in MinAtar's order from the record's stream: an enemy spawn draws its side,
its kind and its row; a diver its side and row. MinAtar's quirk is kept: surfacing with six
divers leaves the count at -1 (so later surfacing needs no diver, and counts further down). The
previous action (``last_action``, in MinAtar's full numbering) outlives the episode, as
MinAtar's ``Environment.last_action`` does.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer, uniform

SIZE = 10
LEFT, UP, RIGHT, DOWN, FIRE = 1, 2, 3, 4, 5  # in MinAtar's full action set
MINIMAL = np.array([0, 1, 2, 3, 4, 5], dtype=np.int64)  # MinAtar's minimal_action_set(): all
# Channels of the observation.
SUB_FRONT, SUB_BACK, FRIENDLY_BULLET, TRAIL, ENEMY_BULLET = 0, 1, 2, 3, 4
ENEMY_FISH, ENEMY_SUB, OXYGEN_GAUGE, DIVER_GAUGE, DIVER = 5, 6, 7, 8, 9
# Columns of the lists' rows.
X, Y, DIR, TIMER, SHOT = 0, 1, 2, 3, 4
MAX_OXYGEN = 200
INIT_SPAWN_SPEED = 20
DIVER_SPAWN_SPEED = 30
INIT_MOVE_INTERVAL = 5
SLOWEST_RAMP = 2  # the move interval ramping stops at
SHOT_COOL_DOWN = 5
ENEMY_SHOT_INTERVAL = 10
DIVER_MOVE_INTERVAL = 5
MAX_DIVERS = 6
# Rows of each list.
F_BULLETS = 4  # one shot every 5 steps lives at most 10: 2
E_BULLETS = 64
ENEMIES = 64  # fish and enemy submarines together
DIVERS = 8  # one every 30 steps lives at most 66: 3

# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True

FIELDS = [
    ("oxygen", np.int64),
    ("diver_count", np.int64),
    ("sub_x", np.int64),
    ("sub_y", np.int64),
    ("sub_or", np.uint8),  # facing right
    ("e_spawn_speed", np.int64),
    ("e_spawn_timer", np.int64),
    ("d_spawn_timer", np.int64),
    ("move_speed", np.int64),
    ("ramp_index", np.int64),
    ("shot_timer", np.int64),
    ("surface", np.uint8),
    ("last_action", np.int64),
    ("n_f_bullets", np.int64),
    ("n_e_bullets", np.int64),
    ("n_fish", np.int64),
    ("n_subs", np.int64),
    ("n_divers", np.int64),
    ("f_bullets", np.int8, (F_BULLETS, 3)),  # x, y, right
    ("e_bullets", np.int8, (E_BULLETS, 3)),  # x, y, right
    ("fish", np.int8, (ENEMIES, 4)),  # x, y, right, move timer
    ("subs", np.int8, (ENEMIES, 5)),  # x, y, right, move timer, shot timer
    ("divers", np.int8, (DIVERS, 4)),  # x, y, right, move timer
]

STATE_BOUNDS = {
    "oxygen": (-1, MAX_OXYGEN),  # below 1 the episode ends (-1: it ran out below the surface)
    "diver_count": (-(2**31), MAX_DIVERS),  # below 0 after surfacing with six (MinAtar's)
    "sub_x": (0, SIZE - 1),
    "sub_y": (0, SIZE - 2),
    "sub_or": (0, 1),
    "e_spawn_speed": (1, INIT_SPAWN_SPEED),
    "e_spawn_timer": (0, INIT_SPAWN_SPEED),
    "d_spawn_timer": (0, DIVER_SPAWN_SPEED),
    "move_speed": (SLOWEST_RAMP, INIT_MOVE_INTERVAL),
    "ramp_index": (0, 2**31),
    "shot_timer": (0, SHOT_COOL_DOWN),
    "surface": (0, 1),
    "last_action": (0, 5),
    "n_f_bullets": (0, F_BULLETS - 1),
    "n_e_bullets": (0, E_BULLETS),
    "n_fish": (0, ENEMIES - 1),
    "n_subs": (0, ENEMIES - 1),
    "n_divers": (0, DIVERS - 1),
    "f_bullets": (0, SIZE - 1),
    "e_bullets": (0, SIZE - 1),
    "fish": (0, SIZE - 1),
    "subs": (0, ENEMY_SHOT_INTERVAL),
    "divers": (0, SIZE - 1),
}

# The largest value of each column but x and y (0 to 9 everywhere): right is 0 or 1.
_COLUMN_MAX = {
    "f_bullets": (1,),
    "e_bullets": (1,),
    "fish": (1, INIT_MOVE_INTERVAL),
    "subs": (1, INIT_MOVE_INTERVAL, ENEMY_SHOT_INTERVAL),
    "divers": (1, DIVER_MOVE_INTERVAL),
}


def check_state(records, config):
    """What the bounds cannot say: room in the lists for a step's additions, each column in its
    range, and a submarine facing away from the wall it touches (its back on the board; play
    never turns it otherwise)."""
    if (records["n_fish"] + records["n_subs"] > ENEMIES - 1).any():
        return f"state fields 'n_fish' + 'n_subs' must be at most {ENEMIES - 1}"
    if (records["n_e_bullets"] + records["n_subs"] > E_BULLETS).any():
        return f"state fields 'n_e_bullets' + 'n_subs' must be at most {E_BULLETS}"
    for name, highs in _COLUMN_MAX.items():
        for column, high in enumerate(highs, start=DIR):
            if (records[name][..., column] > high).any():
                return f"state field {name!r}: column {column} must be in [0, {high}]"
    back = records["sub_x"] + np.where(records["sub_or"] != 0, -1, 1)
    if ((back < 0) | (back > SIZE - 1)).any():
        return "state fields 'sub_x', 'sub_or': the submarine's back must be on the board"
    return None


@nb.njit(cache=True, error_model="numpy")
def _remove(rows, n, k):
    """``list.remove(item)`` for the item at row ``k`` of the first ``n``: the first row equal to
    it goes, the rest moving up. Returns (the new count, the row that went)."""
    gone = k
    for j in range(k):
        same = True
        for c in range(rows.shape[1]):
            if rows[j, c] != rows[k, c]:
                same = False
                break
        if same:
            gone = j
            break
    for j in range(gone, n - 1):
        for c in range(rows.shape[1]):
            rows[j, c] = rows[j + 1, c]
    for c in range(rows.shape[1]):
        rows[n - 1, c] = 0
    return n - 1, gone


@nb.njit(cache=True, error_model="numpy", inline="always")
def _at(rows, n, x, y):
    """The first of the ``n`` rows at (``x``, ``y``), else -1."""
    for j in range(n):
        if rows[j, X] == x and rows[j, Y] == y:
            return j
    return -1


@nb.njit(cache=True, error_model="numpy", inline="always")
def _step_x(rows, k):
    """Row ``k`` one cell along its direction; its new x."""
    x = rows[k, X] + (1 if rows[k, DIR] else -1)
    rows[k, X] = x
    return x


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.oxygen = MAX_OXYGEN
    s.diver_count = 0
    s.sub_x = 5
    s.sub_y = 0
    s.sub_or = 0
    s.n_f_bullets = s.n_e_bullets = s.n_fish = s.n_subs = s.n_divers = 0
    s.f_bullets[:, :] = 0
    s.e_bullets[:, :] = 0
    s.fish[:, :] = 0
    s.subs[:, :] = 0
    s.divers[:, :] = 0
    s.e_spawn_speed = INIT_SPAWN_SPEED
    s.e_spawn_timer = INIT_SPAWN_SPEED
    s.d_spawn_timer = DIVER_SPAWN_SPEED
    s.move_speed = INIT_MOVE_INTERVAL
    s.ramp_index = 0
    s.shot_timer = 0
    s.surface = 1


@nb.njit(cache=True, error_model="numpy")
def _spawn_enemy(s):
    """MinAtar's ``_spawn_enemy``: a side, a kind and a row; nothing where an enemy heading the
    other way is in that row."""
    right = uniform(s) < 0.5
    is_sub = uniform(s) < 1.0 / 3.0
    y = 1 + integer(s, 8)
    for j in range(s.n_subs):
        if s.subs[j, Y] == y and s.subs[j, DIR] != right:
            return
    for j in range(s.n_fish):
        if s.fish[j, Y] == y and s.fish[j, DIR] != right:
            return
    x = 0 if right else SIZE - 1
    if is_sub and s.n_subs < ENEMIES:  # always, from any state check_state accepts
        k = s.n_subs
        s.subs[k, X], s.subs[k, Y], s.subs[k, DIR] = x, y, right
        s.subs[k, TIMER], s.subs[k, SHOT] = s.move_speed, ENEMY_SHOT_INTERVAL
        s.n_subs += 1
    elif not is_sub and s.n_fish < ENEMIES:  # the same
        k = s.n_fish
        s.fish[k, X], s.fish[k, Y], s.fish[k, DIR], s.fish[k, TIMER] = x, y, right, s.move_speed
        s.n_fish += 1


@nb.njit(cache=True, error_model="numpy")
def _spawn_diver(s):
    """MinAtar's ``_spawn_diver``: a side and a row."""
    right = uniform(s) < 0.5
    y = 1 + integer(s, 8)
    if s.n_divers < DIVERS:  # always, from any state check_state accepts
        k = s.n_divers
        s.divers[k, X], s.divers[k, Y] = 0 if right else SIZE - 1, y
        s.divers[k, DIR], s.divers[k, TIMER] = right, DIVER_MOVE_INTERVAL
        s.n_divers += 1


@nb.njit(cache=True, error_model="numpy")
def _surface(s, cfg):
    """MinAtar's ``_surface``: oxygen back, a diver fewer (all six: a reward for the oxygen
    left), and the difficulty ramping up. Returns the reward."""
    s.surface = 1
    reward = 0
    if s.diver_count == MAX_DIVERS:
        s.diver_count = 0
        reward = s.oxygen * 10 // MAX_OXYGEN
    s.oxygen = MAX_OXYGEN
    s.diver_count -= 1
    if cfg.difficulty_ramping and (s.e_spawn_speed > 1 or s.move_speed > SLOWEST_RAMP):
        if s.move_speed > SLOWEST_RAMP and s.ramp_index % 2:
            s.move_speed -= 1
        if s.e_spawn_speed > 1:
            s.e_spawn_speed -= 1
        s.ramp_index += 1
    return reward


# MinAtar's walks over its lists, in the order it takes them; each walks its list backwards as
# ``reversed`` walks one: until its index leaves the list. What runs for every item of every step
# is inlined (a call of a function of its own made steps several times slower); what runs
# rarely (a removal, a spawn, surfacing) is a function of its own, compiled once (inlined at its
# dozen call sites, it made the game's first compile half as long again).


@nb.njit(cache=True, error_model="numpy", inline="always")
def _walk_torpedoes(s, bullets, fish, subs):
    """The submarine's bullets move; each leaves the board or hits the first fish, else the first
    enemy submarine, in its new cell. Returns the hits."""
    hits = 0
    i = s.n_f_bullets - 1
    while 0 <= i < s.n_f_bullets:
        x = _step_x(bullets, i)
        y = bullets[i, Y]
        if x < 0 or x > SIZE - 1:
            s.n_f_bullets, _ = _remove(bullets, s.n_f_bullets, i)
        else:
            hit = _at(fish, s.n_fish, x, y)
            if hit >= 0:
                s.n_fish, _ = _remove(fish, s.n_fish, hit)
                s.n_f_bullets, _ = _remove(bullets, s.n_f_bullets, i)
                hits += 1
            else:
                hit = _at(subs, s.n_subs, x, y)
                if hit >= 0:
                    s.n_subs, _ = _remove(subs, s.n_subs, hit)
                    s.n_f_bullets, _ = _remove(bullets, s.n_f_bullets, i)
                    hits += 1
        i -= 1
    return hits


@nb.njit(cache=True, error_model="numpy", inline="always")
def _walk_divers(s, divers):
    """Divers on the submarine come aboard (six at most); the others move when their timer is
    up, leaving the board or coming aboard."""
    i = s.n_divers - 1
    while 0 <= i < s.n_divers:
        if divers[i, X] == s.sub_x and divers[i, Y] == s.sub_y and s.diver_count < MAX_DIVERS:
            s.n_divers, _ = _remove(divers, s.n_divers, i)
            s.diver_count += 1
        elif divers[i, TIMER] == 0:
            divers[i, TIMER] = DIVER_MOVE_INTERVAL
            x = _step_x(divers, i)
            if x < 0 or x > SIZE - 1:
                s.n_divers, _ = _remove(divers, s.n_divers, i)
            elif x == s.sub_x and divers[i, Y] == s.sub_y and s.diver_count < MAX_DIVERS:
                s.n_divers, _ = _remove(divers, s.n_divers, i)
                s.diver_count += 1
        else:
            divers[i, TIMER] -= 1
        i -= 1


@nb.njit(cache=True, error_model="numpy", inline="always")
def _walk_subs(s, subs, f_bullets, e_bullets):
    """Enemy submarines meet the submarine, move when their timer is up (leaving the board,
    meeting the submarine or a bullet) and fire when their shot timer is. Returns (hits,
    whether one met the submarine)."""
    hits = 0
    met = 0
    i = s.n_subs - 1
    while 0 <= i < s.n_subs:
        # The submarine at hand, followed through removals (``at``: its row, -1 once removed):
        # MinAtar counts down its shot, and fires, after removing it too.
        at = i
        x, y, right, shot = subs[i, X], subs[i, Y], subs[i, DIR], subs[i, SHOT]
        if x == s.sub_x and y == s.sub_y:
            met = 1
        if subs[i, TIMER] == 0:
            subs[i, TIMER] = s.move_speed
            x = _step_x(subs, i)
            if x < 0 or x > SIZE - 1:
                s.n_subs, gone = _remove(subs, s.n_subs, i)
                at = -1 if gone == i else i - 1
            elif x == s.sub_x and y == s.sub_y:
                met = 1
            else:
                hit = _at(f_bullets, s.n_f_bullets, x, y)
                if hit >= 0:
                    s.n_subs, gone = _remove(subs, s.n_subs, i)
                    at = -1 if gone == i else i - 1
                    s.n_f_bullets, _ = _remove(f_bullets, s.n_f_bullets, hit)
                    hits += 1
        else:
            subs[i, TIMER] -= 1
        if shot == 0:
            shot = ENEMY_SHOT_INTERVAL
            k = s.n_e_bullets
            if k < E_BULLETS:  # always, from any state check_state accepts
                e_bullets[k, X], e_bullets[k, Y], e_bullets[k, DIR] = x, y, right
                s.n_e_bullets += 1
        else:
            shot -= 1
        if at >= 0:
            subs[at, SHOT] = shot
        i -= 1
    return hits, met


@nb.njit(cache=True, error_model="numpy", inline="always")
def _walk_enemy_bullets(s, bullets):
    """Enemy bullets meet the submarine, move, and leave the board or meet it. Returns whether
    one met it."""
    met = 0
    i = s.n_e_bullets - 1
    while 0 <= i < s.n_e_bullets:
        if bullets[i, X] == s.sub_x and bullets[i, Y] == s.sub_y:
            met = 1
        x = _step_x(bullets, i)
        if x < 0 or x > SIZE - 1:
            s.n_e_bullets, _ = _remove(bullets, s.n_e_bullets, i)
        elif x == s.sub_x and bullets[i, Y] == s.sub_y:
            met = 1
        i -= 1
    return met


@nb.njit(cache=True, error_model="numpy", inline="always")
def _walk_fish(s, fish, f_bullets):
    """Fish meet the submarine, and move when their timer is up (leaving the board, meeting the
    submarine or a bullet). Returns (hits, whether one met the submarine)."""
    hits = 0
    met = 0
    i = s.n_fish - 1
    while 0 <= i < s.n_fish:
        y = fish[i, Y]
        if fish[i, X] == s.sub_x and y == s.sub_y:
            met = 1
        if fish[i, TIMER] == 0:
            fish[i, TIMER] = s.move_speed
            x = _step_x(fish, i)
            if x < 0 or x > SIZE - 1:
                s.n_fish, _ = _remove(fish, s.n_fish, i)
            elif x == s.sub_x and y == s.sub_y:
                met = 1
            else:
                hit = _at(f_bullets, s.n_f_bullets, x, y)
                if hit >= 0:
                    s.n_fish, _ = _remove(fish, s.n_fish, i)
                    s.n_f_bullets, _ = _remove(f_bullets, s.n_f_bullets, hit)
                    hits += 1
        else:
            fish[i, TIMER] -= 1
        i -= 1
    return hits, met


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    a = MINIMAL[actions[0]] if cfg.minimal_actions else actions[0]
    if uniform(s) < cfg.sticky_action_prob:  # drawn every step, as MinAtar draws it
        a = s.last_action
    s.last_action = a
    # The lists as plain 2-d arrays: one type for all five (a record's fields have one type per
    # shape), so that ``_remove`` compiles once, not once per list.
    f_bullets, e_bullets = s.f_bullets[:, :], s.e_bullets[:, :]
    fish, subs, divers = s.fish[:, :], s.subs[:, :], s.divers[:, :]
    if s.e_spawn_timer == 0:
        _spawn_enemy(s)
        s.e_spawn_timer = s.e_spawn_speed
    if s.d_spawn_timer == 0:
        _spawn_diver(s)
        s.d_spawn_timer = DIVER_SPAWN_SPEED

    if a == FIRE and s.shot_timer == 0:
        if s.n_f_bullets < F_BULLETS:  # always, from any state check_state accepts
            k = s.n_f_bullets
            f_bullets[k, X], f_bullets[k, Y], f_bullets[k, DIR] = s.sub_x, s.sub_y, s.sub_or
            s.n_f_bullets += 1
        s.shot_timer = SHOT_COOL_DOWN
    elif a == LEFT:
        s.sub_x = max(0, s.sub_x - 1)
        s.sub_or = 0
    elif a == RIGHT:
        s.sub_x = min(SIZE - 1, s.sub_x + 1)
        s.sub_or = 1
    elif a == UP:
        s.sub_y = max(0, s.sub_y - 1)
    elif a == DOWN:
        s.sub_y = min(SIZE - 2, s.sub_y + 1)

    reward = _walk_torpedoes(s, f_bullets, fish, subs)
    _walk_divers(s, divers)
    hits, terminal = _walk_subs(s, subs, f_bullets, e_bullets)
    reward += hits
    terminal |= _walk_enemy_bullets(s, e_bullets)
    hits, met = _walk_fish(s, fish, f_bullets)
    reward += hits
    terminal |= met

    if s.e_spawn_timer > 0:
        s.e_spawn_timer -= 1
    if s.d_spawn_timer > 0:
        s.d_spawn_timer -= 1
    if s.shot_timer > 0:
        s.shot_timer -= 1
    if s.oxygen <= 0:
        terminal = 1
    if s.sub_y > 0:
        s.oxygen -= 1
        s.surface = 0
    elif not s.surface:
        if s.diver_count == 0:
            terminal = 1
        else:
            reward += _surface(s, cfg)
    rewards[0] = np.float64(reward)
    return terminal


@nb.njit(cache=True, error_model="numpy", inline="always")
def _draw(out, rows, n, channel):
    """Each of the ``n`` rows in ``channel``, and where it came from in the trail channel."""
    for j in range(n):
        x, y = rows[j, X], rows[j, Y]
        out[y, x, channel] = True
        back = x - 1 if rows[j, DIR] else x + 1
        if 0 <= back < SIZE:
            out[y, back, TRAIL] = True


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    out = obs[0][i, 0]
    out[:, :, :] = False
    out[s.sub_y, s.sub_x, SUB_FRONT] = True
    out[s.sub_y, s.sub_x - 1 if s.sub_or else s.sub_x + 1, SUB_BACK] = True
    for x in range(min(max(0, s.oxygen) * 10 // MAX_OXYGEN, SIZE)):
        out[SIZE - 1, x, OXYGEN_GAUGE] = True
    for x in range(max(0, SIZE - 1 - s.diver_count), SIZE - 1):
        out[SIZE - 1, x, DIVER_GAUGE] = True
    for j in range(s.n_f_bullets):
        out[s.f_bullets[j, Y], s.f_bullets[j, X], FRIENDLY_BULLET] = True
    for j in range(s.n_e_bullets):
        out[s.e_bullets[j, Y], s.e_bullets[j, X], ENEMY_BULLET] = True
    _draw(out, s.fish[:, :], s.n_fish, ENEMY_FISH)
    _draw(out, s.subs[:, :], s.n_subs, ENEMY_SUB)
    _draw(out, s.divers[:, :], s.n_divers, DIVER)
