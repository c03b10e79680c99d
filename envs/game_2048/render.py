"""2048 frames: the board as OpenSpiel writes it (each value right-aligned in five characters, a
line per row) and a picture with a colour per tile value."""

import numpy as np

CELL = 24
EMPTY = (0xCD, 0xC1, 0xB4)
# Light to dark as the tiles grow, as the original game's palette goes.
SHADES = np.array(
    [
        EMPTY,
        (0xEE, 0xE4, 0xDA),
        (0xED, 0xE0, 0xC8),
        (0xF2, 0xB1, 0x79),
        (0xF5, 0x95, 0x63),
        (0xF6, 0x7C, 0x5F),
        (0xF6, 0x5E, 0x3B),
        (0xED, 0xCF, 0x72),
        (0xED, 0xCC, 0x61),
        (0xED, 0xC8, 0x50),
        (0xED, 0xC5, 0x3F),
        (0xED, 0xC2, 0x2E),
    ],
    dtype=np.uint8,
)


def _values(state):
    exponents = np.asarray(state["board"]).astype(np.int64)
    return np.where(exponents > 0, 1 << exponents, 0).reshape(4, 4)


def ansi(state, config):
    return "".join("".join(f"{v:5d}" for v in row) + "\n" for row in _values(state).tolist())


def rgb_array(state, config):
    exponents = np.minimum(np.asarray(state["board"]).astype(np.int64), len(SHADES) - 1)
    cells = SHADES[exponents.reshape(4, 4)]
    frame = np.repeat(np.repeat(cells, CELL, axis=0), CELL, axis=1)
    frame[::CELL, :] = (0xBB, 0xAD, 0xA0)  # grid lines
    frame[:, ::CELL] = (0xBB, 0xAD, 0xA0)
    return frame
