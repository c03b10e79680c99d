"""Chess pieces drawn as simple shapes on numpy canvases, and the chess games' frames (``chess``,
``gardner_chess``): a square board of ``size`` files and ranks, squares numbered ``size * file +
rank``, a piece's code its kind (1 pawn .. 6 king), positive for white."""

import numpy as np

from . import draw

LIGHT = (0xF0, 0xD9, 0xB5)
DARK = (0xB5, 0x88, 0x63)
EDGE = (0x5D, 0x40, 0x37)
WHITE = (0xFA, 0xFA, 0xFA)
BLACK = (0x21, 0x21, 0x21)
LETTERS = ".pnbrqk"


def board_text(board, size):
    """The board as text: the last rank on top, white in capitals, "." for an empty square
    (python-chess's layout)."""
    board = np.asarray(board)
    rows = []
    for rank in range(size - 1, -1, -1):
        cells = []
        for file in range(size):
            code = int(board[size * file + rank])
            letter = LETTERS[abs(code)]
            cells.append(letter.upper() if code > 0 else letter)
        rows.append(" ".join(cells))
    return "\n".join(rows)


def board_picture(board, size, cell):
    """The board as an RGB picture: squares of ``cell`` pixels in a one-pixel frame, the first
    rank at the bottom, each piece drawn by ``chessman``."""
    side = size * cell + 2
    img = draw.canvas(side, side, EDGE)
    board = np.asarray(board)
    for file in range(size):
        for rank in range(size):
            left, top = 1 + file * cell, 1 + (size - 1 - rank) * cell
            img[top : top + cell, left : left + cell] = DARK if (file + rank) % 2 == 0 else LIGHT
            code = int(board[size * file + rank])
            if code:
                fill, line = (WHITE, BLACK) if code > 0 else (BLACK, WHITE)
                chessman(img, abs(code), left + cell / 2, top + cell / 2, fill, line, cell)
    return img


def chessman(img, kind, cx, cy, fill, line, cell):
    """Piece ``kind`` (1 pawn, 2 knight, 3 bishop, 4 rook, 5 queen, 6 king) centred on (cx, cy)
    in a square of side ``cell``: a shape per kind, outlined so either colour shows."""
    r = cell * 0.36
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
