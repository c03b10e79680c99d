"""DancingCatch frames as csuite draws them: the shuffled observation laid out as the board, one
pixel per cell, white where the entry is 1 and black elsewhere."""

import numpy as np

from .rules import NO_BALL


def observation(state, config):
    """The observation of ``state``: the row-major board read through ``shuffle_idx``."""
    columns = config["columns"]
    cells = np.zeros(config["rows"] * columns, dtype=np.uint8)
    cells[int(state["paddle_y"]) * columns + int(state["paddle_x"])] = 1
    for y, x in enumerate(np.asarray(state["balls"]).tolist()):
        if x != NO_BALL:
            cells[y * columns + x] = 1
    return cells[np.asarray(state["shuffle_idx"])]


def rgb_array(state, config):
    frame = observation(state, config).reshape(config["rows"], config["columns"]) * np.uint8(255)
    return np.repeat(frame[:, :, None], 3, axis=2)


def ansi(state, config):
    """The shuffled observation as the board's rows: '#' an entry 1, '.' an entry 0."""
    cells = observation(state, config).reshape(config["rows"], config["columns"])
    return "\n".join("".join("#" if c else "." for c in row) for row in cells)
