"""Catch frames as csuite draws them: the board itself, one pixel per cell, white where the paddle
or a ball is and black elsewhere; and a text board. WindyCatch and DancingCatch draw theirs from
``board`` and ``text_rows``."""

import numpy as np

from .rules import NO_BALL


def board(state, config):
    """The (rows, columns) 0/1 board of one record, as the observation holds it."""
    out = np.zeros((config["rows"], config["columns"]), dtype=np.int64)
    out[int(state["paddle_y"]), int(state["paddle_x"])] = 1
    for row, column in enumerate(np.asarray(state["balls"]).tolist()):
        if column != NO_BALL:
            out[row, column] = 1
    return out


def rgb_array(state, config):
    cells = board(state, config).astype(np.uint8) * 255
    return np.repeat(cells[:, :, None], 3, axis=2)


def text_rows(state, config):
    """One line per row: 'o' a ball, '=' the paddle, '.' an empty cell."""
    cells = board(state, config)
    paddle_y = int(state["paddle_y"])
    lines = []
    for row in range(cells.shape[0]):
        mark = "=" if row == paddle_y else "o"
        lines.append("".join(mark if c else "." for c in cells[row]))
    return lines


def ansi(state, config):
    return "\n".join(text_rows(state, config))
