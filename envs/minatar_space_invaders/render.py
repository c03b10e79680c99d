"""MinAtar Space Invaders frames: each cell coloured by its top channel, the highest-numbered as
MinAtar's display draws it, in MinAtar's palette (cubehelix over its 6 channels, on black), and
text with one character per cell."""

import numpy as np

CELL = 16
COLOURS = np.array(
    [
        (0, 0, 0),
        (26, 36, 65),
        (27, 97, 69),
        (105, 123, 48),
        (200, 123, 124),
        (205, 162, 224),
        (198, 225, 241),
    ],
    dtype=np.uint8,
)  # empty, cannon, alien, alien moving left, alien moving right, cannon's bullet, alien's bullet
SYMBOLS = ".A@<>|!"


def bits(rows):
    """(10, 10) booleans of ten rows of bits (bit x: column x)."""
    return (np.asarray(rows, dtype=np.int64)[:, None] >> np.arange(10)) & 1 != 0


def channels(state):
    """MinAtar's (10, 10, 6) observation of the record ``state``."""
    out = np.zeros((10, 10, 6), dtype=bool)
    out[9, int(state["pos"]), 0] = True
    aliens = bits(state["aliens"])
    out[:, :, 1] = aliens
    out[:, :, 2 if state["alien_dir"] < 0 else 3] = aliens
    out[:, :, 4] = bits(state["f_bullets"])
    out[:, :, 5] = bits(state["e_bullets"])
    return out


def _cells(state):
    """(10, 10) codes: 0 empty, else 1 + the top channel."""
    return np.max(channels(state) * np.arange(1, 7), axis=2)


def ansi(state, config):
    return "\n".join("".join(SYMBOLS[c] for c in row) for row in _cells(state))


def rgb_array(state, config):
    return np.repeat(np.repeat(COLOURS[_cells(state)], CELL, axis=0), CELL, axis=1)
