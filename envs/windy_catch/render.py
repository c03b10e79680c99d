"""WindyCatch frames as csuite draws them: Catch's board, one pixel per cell, white where the paddle
or a ball is, and under the board two header rows, white but for the three wind cells in the
middle of the first (one white among black: no wind, left, right)."""

import numpy as np

from vecenv.envs.catch.render import board, text_rows


def rgb_array(state, config):
    cells = board(state, config).astype(np.uint8)
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
    """Catch's text board ('o' a ball, '=' the paddle, '.' an empty cell), then the wind."""
    wind = int(np.argmax(np.asarray(state["wind_direction"])))
    return "\n".join(text_rows(state, config) + [f"wind: {WIND_NAMES[wind]}"])
