"""Chess frames: the board as text (python-chess's layout: rank 8 on top, white in capitals, "."
for an empty square) and a picture of it, the pieces drawn as simple shapes."""

import numpy as np

from vecenv.render import draw

CELL = 24
LIGHT = (0xF0, 0xD9, 0xB5)
DARK = (0xB5, 0x88, 0x63)
EDGE = (0x5D, 0x40, 0x37)
WHITE = (0xFA, 0xFA, 0xFA)
BLACK = (0x21, 0x21, 0x21)
LETTERS = ".pnbrqk"


def ansi(state, config):
    board = np.asarray(state["board"])
    rows = []
    for rank in range(7, -1, -1):
        cells = []
        for file in range(8):
            code = int(board[8 * file + rank])
            letter = LETTERS[abs(code)]
            cells.append(letter.upper() if code > 0 else letter)
        rows.append(" ".join(cells))
    return "\n".join(rows)


def _piece(img, kind, cx, cy, fill, line):
    """One piece centred on (cx, cy): a shape per kind, outlined so either colour shows."""
    r = CELL * 0.36
    if kind == 1:  # pawn: a head on a cone
        base = [(cx - r * 0.6, cy + r), (cx + r * 0.6, cy + r), (cx, cy - r * 0.1)]
        draw.polygon(img, base, fill)
        draw.polyline(img, base + [base[0]], line, width=1.2)
        draw.circle(img, cx, cy - r * 0.3, r * 0.45, line)
        draw.circle(img, cx, cy - r * 0.3, r * 0.32, fill)
        return
    if kind == 2:  # knight: a leaning head
        shape = [
            (cx - r * 0.7, cy + r),
            (cx + r * 0.7, cy + r),
            (cx + r * 0.5, cy - r),
            (cx - r * 0.8, cy - r * 0.2),
        ]
    elif kind == 3:  # bishop: a diamond
        shape = [(cx, cy - r), (cx + r * 0.6, cy), (cx, cy + r), (cx - r * 0.6, cy)]
    elif kind == 4:  # rook: a square tower
        shape = [
            (cx - r * 0.7, cy - r),
            (cx + r * 0.7, cy - r),
            (cx + r * 0.7, cy + r),
            (cx - r * 0.7, cy + r),
        ]
    elif kind == 5:  # queen: a crown of three points
        shape = [
            (cx - r, cy - r),
            (cx - r * 0.4, cy),
            (cx, cy - r),
            (cx + r * 0.4, cy),
            (cx + r, cy - r),
            (cx + r * 0.7, cy + r),
            (cx - r * 0.7, cy + r),
        ]
    else:  # king: a cross on a block
        shape = [
            (cx - r * 0.2, cy - r),
            (cx + r * 0.2, cy - r),
            (cx + r * 0.2, cy - r * 0.5),
            (cx + r * 0.7, cy - r * 0.5),
            (cx + r * 0.7, cy + r),
            (cx - r * 0.7, cy + r),
            (cx - r * 0.7, cy - r * 0.5),
            (cx - r * 0.2, cy - r * 0.5),
        ]
    draw.polygon(img, shape, fill)
    draw.polyline(img, shape + [shape[0]], line, width=1.2)


def rgb_array(state, config):
    side = 8 * CELL + 2
    img = draw.canvas(side, side, EDGE)
    board = np.asarray(state["board"])
    for file in range(8):
        for rank in range(8):
            left, top = 1 + file * CELL, 1 + (7 - rank) * CELL
            img[top : top + CELL, left : left + CELL] = DARK if (file + rank) % 2 == 0 else LIGHT
            code = int(board[8 * file + rank])
            if code:
                fill, line = (WHITE, BLACK) if code > 0 else (BLACK, WHITE)
                _piece(img, abs(code), left + CELL / 2, top + CELL / 2, fill, line)
    return img
