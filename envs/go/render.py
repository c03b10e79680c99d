"""Go frames: the board as text (X black, O white, columns lettered A-T without I, rows numbered
from the bottom, as Go programs print them) and a picture of a wooden board with its stones."""

import numpy as np

from vecenv.render import draw

from .rules import points_of

CELL = 24
WOOD = (0xDC, 0xB3, 0x5C)
LINE = (0x3E, 0x2C, 0x14)
STONES = {1: (0x1A, 0x1A, 0x1A), 2: (0xF5, 0xF5, 0xF5)}
OUTLINE = (0x60, 0x60, 0x60)
SYMBOLS = (".", "X", "O")
LETTERS = "ABCDEFGHJKLMNOPQRST"


def _points(state, config):
    size = config["size"]
    return points_of(state, size)[0].reshape(size, size)


def ansi(state, config):
    board = _points(state, config)
    size = board.shape[0]
    letters = "   " + " ".join(LETTERS[:size])
    rows = [letters]
    for r in range(size):
        stones = " ".join(SYMBOLS[v] for v in board[r])
        rows.append(f"{size - r:2d} {stones} {size - r}")
    rows.append(letters)
    return "\n".join(rows)


def rgb_array(state, config):
    board = _points(state, config)
    size = board.shape[0]
    side = size * CELL
    img = draw.canvas(side, side, WOOD)
    low, high = CELL // 2, side - CELL // 2  # the lines run through the points' centres
    for k in range(size):
        at = CELL // 2 + k * CELL
        img[at, low : high + 1] = LINE
        img[low : high + 1, at] = LINE
    for (r, c), v in np.ndenumerate(board):
        if v in STONES:
            x, y = c * CELL + CELL / 2, r * CELL + CELL / 2
            draw.circle(img, x, y, CELL * 0.46, OUTLINE)
            draw.circle(img, x, y, CELL * 0.42, STONES[int(v)])
    return img
