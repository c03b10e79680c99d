"""MinAtar Asterix frames: each cell coloured by its top channel, the highest-numbered as MinAtar's
display draws it, in MinAtar's palette (cubehelix over its 4 channels, on black), and text with
one character per cell."""

import numpy as np

CELL = 16
COLOURS = np.array(
    [(0, 0, 0), (22, 61, 78), (84, 121, 47), (208, 126, 147), (193, 202, 243)], dtype=np.uint8
)  # empty, player, enemy, trail, gold
SYMBOLS = ".@X-$"


def channels(state):
    """MinAtar's (10, 10, 4) observation of the record ``state``."""
    out = np.zeros((10, 10, 4), dtype=bool)
    out[int(state["player_y"]), int(state["player_x"]), 0] = True
    for k in np.flatnonzero(np.asarray(state["alive"])):
        x = int(state["x"][k])
        out[k + 1, x, 3 if state["gold"][k] else 1] = True
        back = x - 1 if state["right"][k] else x + 1
        if 0 <= back < 10:
            out[k + 1, back, 2] = True
    return out


def _cells(state):
    """(10, 10) codes: 0 empty, else 1 + the top channel."""
    return np.max(channels(state) * np.arange(1, 5), axis=2)


def ansi(state, config):
    return "\n".join("".join(SYMBOLS[c] for c in row) for row in _cells(state))


def rgb_array(state, config):
    return np.repeat(np.repeat(COLOURS[_cells(state)], CELL, axis=0), CELL, axis=1)
