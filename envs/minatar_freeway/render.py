"""MinAtar Freeway frames: each cell coloured by its top channel, the highest-numbered as MinAtar's
display draws it, in MinAtar's palette (cubehelix over its 7 channels, on black), and text with
one character per cell (the trail's digit: how many steps its car waits between moves)."""

import numpy as np

CELL = 16
COLOURS = np.array(
    [
        (0, 0, 0),
        (27, 30, 59),
        (22, 83, 76),
        (68, 119, 49),
        (161, 121, 74),
        (212, 132, 169),
        (198, 180, 238),
        (203, 232, 240),
    ],
    dtype=np.uint8,
)  # empty, chicken, car, trails of speeds 1 to 5
SYMBOLS = ".C#12345"


def channels(state):
    """MinAtar's (10, 10, 7) observation of the record ``state``."""
    out = np.zeros((10, 10, 7), dtype=bool)
    out[int(state["pos"]), 4, 0] = True
    trail = None
    for k in range(8):
        x, speed = int(state["car_x"][k]), int(state["car_speed"][k])
        out[k + 1, x, 1] = True
        if speed:
            trail = 1 + abs(speed)
        if trail is not None:
            out[k + 1, (x - 1 if speed > 0 else x + 1) % 10, trail] = True
    return out


def _cells(state):
    """(10, 10) codes: 0 empty, else 1 + the top channel."""
    return np.max(channels(state) * np.arange(1, 8), axis=2)


def ansi(state, config):
    return "\n".join("".join(SYMBOLS[c] for c in row) for row in _cells(state))


def rgb_array(state, config):
    return np.repeat(np.repeat(COLOURS[_cells(state)], CELL, axis=0), CELL, axis=1)
