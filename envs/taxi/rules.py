"""CSuite's continuing Taxi over one episode's record.

The grid, (x, y) with (0, 0) the top-left square and y growing southwards::

    +---------+
    |R: | : :G|
    | : | : : |
    | : : : : |
    | | : | : |
    |Y| : |B: |
    +---------+

A ``|`` inside the grid is a wall between two squares of a row; ``:`` is open.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer

FIELDS = [
    ("taxi_x", np.int64),
    ("taxi_y", np.int64),
    ("passenger_loc", np.int64),  # 0-3: waiting on that coloured square; 4: in the taxi
    ("destination", np.int64),  # 0-3: a coloured square
]

NUM_ROWS = 5
NUM_COLUMNS = 5
NUM_POSITIONS = 5  # the four coloured squares and the taxi
NUM_DEST = 4
NUM_STATES = NUM_COLUMNS * NUM_ROWS * NUM_POSITIONS * NUM_DEST
IN_TAXI = 4

NORTH, WEST, SOUTH, EAST, PICKUP, DROPOFF = range(6)

# The coloured squares: 0 Red, 1 Green, 2 Yellow, 3 Blue.
COLOR_X = np.array([0, 4, 0, 3], dtype=np.int64)
COLOR_Y = np.array([0, 0, 4, 4], dtype=np.int64)

# WALL_EAST[y, x]: a wall between (x, y) and (x + 1, y).
WALL_EAST = np.zeros((NUM_ROWS, NUM_COLUMNS), dtype=np.bool_)
for _x, _y in [(1, 0), (1, 1), (0, 3), (0, 4), (2, 3), (2, 4)]:
    WALL_EAST[_y, _x] = True

REWARD_DELIVERED = 20.0
REWARD_ILLEGAL = -10.0

# Error messages, as csuite's Taxi.set_state words them.
INVALID_TAXI_LOC = "Invalid state: expected taxi coordinates in range [0,4]."
INVALID_PASS_LOC = "Invalid state: expected passenger location as an integerin [0,4]."
INVALID_DEST = "Invalid state: expected destination location as an integerin [0,3]."


def check_state(records, config):
    """csuite's checks, in its order: taxi on the grid, passenger in [0, 4], destination in
    [0, 3]."""
    x, y = records["taxi_x"], records["taxi_y"]
    if ((x < 0) | (x >= NUM_COLUMNS) | (y < 0) | (y >= NUM_ROWS)).any():
        return INVALID_TAXI_LOC
    p = records["passenger_loc"]
    if ((p < 0) | (p >= NUM_POSITIONS)).any():
        return INVALID_PASS_LOC
    d = records["destination"]
    if ((d < 0) | (d >= NUM_DEST)).any():
        return INVALID_DEST
    return None


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.taxi_x = integer(s, NUM_COLUMNS)
    s.taxi_y = integer(s, NUM_ROWS)
    s.passenger_loc = integer(s, NUM_POSITIONS - 1)
    s.destination = integer(s, NUM_DEST)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    a = actions[0]
    x = s.taxi_x
    y = s.taxi_y
    reward = 0.0
    if a == NORTH:
        if y > 0:
            y -= 1
    elif a == SOUTH:
        if y < NUM_ROWS - 1:
            y += 1
    elif a == EAST:
        if x < NUM_COLUMNS - 1 and not WALL_EAST[y, x]:
            x += 1
    elif a == WEST:
        if x > 0 and not WALL_EAST[y, x - 1]:
            x -= 1
    elif a == PICKUP:
        p = s.passenger_loc
        if p == IN_TAXI or COLOR_X[p] != x or COLOR_Y[p] != y:
            reward = REWARD_ILLEGAL
        else:
            s.passenger_loc = IN_TAXI
    else:  # DROPOFF
        d = s.destination
        if s.passenger_loc != IN_TAXI or COLOR_X[d] != x or COLOR_Y[d] != y:
            reward = REWARD_ILLEGAL
        else:
            reward = REWARD_DELIVERED
            s.passenger_loc = integer(s, NUM_POSITIONS - 1)
            s.destination = integer(s, NUM_DEST)
    s.taxi_x = x
    s.taxi_y = y
    rewards[0] = reward
    return 0


@nb.njit(cache=True, error_model="numpy", inline="always")
def index(x, y, passenger, destination):
    """csuite's observation: the position of (x, y, passenger, destination) in row-major order."""
    return ((x * NUM_COLUMNS + y) * NUM_POSITIONS + passenger) * NUM_DEST + destination


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    obs[0][i, 0] = index(s.taxi_x, s.taxi_y, s.passenger_loc, s.destination)
