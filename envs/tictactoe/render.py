"""Tic Tac Toe frames: the text board Kaggle's tictactoe renderer prints, and a small picture in
the colours of the replay (white cells on a slate grid, X a blue cross, O a red disc)."""

import numpy as np

from vecenv.render import draw

MARKS = (" ", "X", "O")
ROW_BAR = "\n---+---+---\n"

CELL = 24  # pixels per cell, grid lines included
GAP = 2  # the grid line between cells, and the border
GRID = (0x45, 0x5A, 0x64)
X_COLOR = (0x1E, 0x88, 0xE5)
O_COLOR = (0xE5, 0x39, 0x35)


def _board(state):
    return np.asarray(state["board"]).tolist()


def ansi(state, config):
    """Three rows of `` X | O |   `` between ``---+---+---`` bars, as Kaggle prints the board."""
    board = _board(state)
    rows = ("|".join(f" {MARKS[board[3 * r + c]]} " for c in range(3)) for r in range(3))
    return ROW_BAR.join(rows)


def rgb_array(state, config):
    side = 3 * CELL + GAP
    img = draw.canvas(side, side, GRID)
    for pos, value in enumerate(_board(state)):
        left = GAP + (pos % 3) * CELL
        top = GAP + (pos // 3) * CELL
        inner = CELL - GAP
        img[top : top + inner, left : left + inner] = draw.WHITE
        cx, cy = left + inner / 2, top + inner / 2
        if value == 1:
            arm = inner * 0.3
            width = inner * 0.14
            draw.line(img, cx - arm, cy - arm, cx + arm, cy + arm, X_COLOR, width)
            draw.line(img, cx + arm, cy - arm, cx - arm, cy + arm, X_COLOR, width)
        elif value == 2:
            draw.circle(img, cx, cy, inner * 0.32, O_COLOR)
    return img
