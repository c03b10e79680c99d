"""Gardner chess frames: the board as text (rank 5 on top, white in capitals, "." for an empty
square, as chess's frames) and a picture of it, the pieces drawn as chess's shapes."""

import numpy as np

from vecenv.render import draw
from vecenv.render.pieces import chessman

CELL = 32
LIGHT = (0xF0, 0xD9, 0xB5)
DARK = (0xB5, 0x88, 0x63)
EDGE = (0x5D, 0x40, 0x37)
WHITE = (0xFA, 0xFA, 0xFA)
BLACK = (0x21, 0x21, 0x21)
LETTERS = ".pnbrqk"


def ansi(state, config):
    board = np.asarray(state["board"])
    rows = []
    for rank in range(4, -1, -1):
        cells = []
        for file in range(5):
            code = int(board[5 * file + rank])
            letter = LETTERS[abs(code)]
            cells.append(letter.upper() if code > 0 else letter)
        rows.append(" ".join(cells))
    return "\n".join(rows)


def rgb_array(state, config):
    side = 5 * CELL + 2
    img = draw.canvas(side, side, EDGE)
    board = np.asarray(state["board"])
    for file in range(5):
        for rank in range(5):
            left, top = 1 + file * CELL, 1 + (4 - rank) * CELL
            img[top : top + CELL, left : left + CELL] = DARK if (file + rank) % 2 == 0 else LIGHT
            code = int(board[5 * file + rank])
            if code:
                fill, line = (WHITE, BLACK) if code > 0 else (BLACK, WHITE)
                chessman(img, abs(code), left + CELL / 2, top + CELL / 2, fill, line, CELL)
    return img
