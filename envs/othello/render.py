"""Othello frames: the board as text (OpenSpiel's layout: x black, o white) and a picture of a
green board with black and white discs."""

import numpy as np

from vecenv.render import draw

CELL = 24
GREEN = (0x2E, 0x7D, 0x32)
LINE = (0x1B, 0x5E, 0x20)
DISCS = {1: (0x21, 0x21, 0x21), 2: (0xFA, 0xFA, 0xFA)}
SYMBOLS = ("-", "x", "o")
COLUMNS = "  a b c d e f g h  "


def ansi(state, config):
    board = np.asarray(state["board"]).reshape(8, 8)
    rows = [COLUMNS]
    for r in range(8):
        rows.append(f"{r + 1} " + " ".join(SYMBOLS[v] for v in board[r]) + f" {r + 1}")
    rows.append(COLUMNS)
    return "\n".join(rows)


def rgb_array(state, config):
    side = 8 * CELL + 1
    img = draw.canvas(side, side, LINE)
    board = np.asarray(state["board"])
    for square in range(64):
        left, top = 1 + (square % 8) * CELL, 1 + (square // 8) * CELL
        img[top : top + CELL - 1, left : left + CELL - 1] = GREEN
        if board[square] in DISCS:
            centre = CELL / 2 - 0.5
            draw.circle(img, left + centre, top + centre, CELL * 0.4, DISCS[int(board[square])])
    return img
