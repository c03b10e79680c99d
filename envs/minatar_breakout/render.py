"""MinAtar Breakout frames: each cell coloured by its top channel, in MinAtar's cubehelix-like
palette order (paddle, ball, trail, brick on black), and text with one character per cell."""

import numpy as np

CELL = 16
COLOURS = np.array(
    [(0, 0, 0), (0x1A, 0x1A, 0x3A), (0x1E, 0x88, 0xE5), (0x4C, 0xAF, 0x50), (0xE5, 0x39, 0x35)],
    dtype=np.uint8,
)  # empty, paddle, ball, trail, brick
SYMBOLS = ".=o*#"


def _cells(state):
    """(10, 10) codes: 0 empty, else 1 + the channel drawn (the ball over its trail)."""
    cells = np.where(np.asarray(state["bricks"]) != 0, 4, 0)
    cells[int(state["last_y"]), int(state["last_x"])] = 3
    cells[int(state["ball_y"]), int(state["ball_x"])] = 2
    cells[9, int(state["pos"])] = 1
    return cells


def ansi(state, config):
    return "\n".join("".join(SYMBOLS[c] for c in row) for row in _cells(state))


def rgb_array(state, config):
    return np.repeat(np.repeat(COLOURS[_cells(state)], CELL, axis=0), CELL, axis=1)
