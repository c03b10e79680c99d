"""WindyCatch frames as csuite draws them: one pixel per cell, white where the paddle or a ball is,
and under the board two header rows, white but for the three wind cells in the middle of the first
(one white among black: no wind, left, right)."""

import numpy as np

from .rules import NO_BALL


def board(state, config):
    """The rows x columns board: 1 where the paddle or a ball is."""
    cells = np.zeros((config["rows"], config["columns"]), dtype=np.uint8)
    cells[int(state["paddle_y"]), int(state["paddle_x"])] = 1
    for y, x in enumerate(np.asarray(state["balls"]).tolist()):
        if x != NO_BALL:
            cells[y, x] = 1
    return cells


def rgb_array(state, config):
    cells = board(state, config)
    # csuite's header spans the board's width and needs three cells for the wind; narrower boards
    # are padded with empty columns on the right.
    width = max(cells.shape[1], 3)
    if width > cells.shape[1]:
        cells = np.pad(cells, ((0, 0), (0, width - cells.shape[1])))
    header = np.ones((2, width), dtype=np.uint8)
    center = width // 2
    header[0, center - 1 : center + 2] = np.asarray(state["wind_direction"]) != 0
    frame = np.concatenate([cells, header]) * np.uint8(255)
    return np.repeat(frame[:, :, None], 3, axis=2)


WIND_NAMES = ("none", "left", "right")


def ansi(state, config):
    """One line per row ('o' a ball, '=' the paddle, '.' an empty cell), then the wind."""
    cells = board(state, config)
    paddle_y = int(state["paddle_y"])
    lines = []
    for row in range(cells.shape[0]):
        mark = "=" if row == paddle_y else "o"
        lines.append("".join(mark if c else "." for c in cells[row]))
    wind = int(np.argmax(np.asarray(state["wind_direction"])))
    lines.append(f"wind: {WIND_NAMES[wind]}")
    return "\n".join(lines)
