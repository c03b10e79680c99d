"""DancingCatch frames as csuite draws them: the shuffled observation laid out as the board, one
pixel per cell, white where the entry is 1 and black elsewhere."""

import numpy as np

from vecenv.envs.catch.render import board


def observation(state, config):
    """The observation of ``state``: Catch's row-major board read through ``shuffle_idx``."""
    return board(state, config).astype(np.uint8).ravel()[np.asarray(state["shuffle_idx"])]


def rgb_array(state, config):
    frame = observation(state, config).reshape(config["rows"], config["columns"]) * np.uint8(255)
    return np.repeat(frame[:, :, None], 3, axis=2)


def ansi(state, config):
    """The shuffled observation as the board's rows: '#' an entry 1, '.' an entry 0."""
    cells = observation(state, config).reshape(config["rows"], config["columns"])
    return "\n".join("".join("#" if c else "." for c in row) for row in cells)
