"""Shogi frames: the board as text (rank a on top, file 9 on the left, as shogi diagrams are
drawn from sente's side; USI's letters, sente's in capitals, "+" before a promoted piece; gote's
hand on the first line, sente's on the last) and a picture of it: each piece a pentagon pointing
at its owner's opponent, coloured by its kind, a red band on a promoted piece; the hands beside
the board."""

import numpy as np

from vecenv.render import draw

CELL = 22
HAND = 16  # the strips above and below the board where the hands are drawn
WOOD = (0xE8, 0xC7, 0x7D)
LINE = (0x5D, 0x40, 0x37)
LETTERS = ".PLNSBRGK"  # codes 1-8; 9-14 are the promoted pawn, lance, knight, silver, bishop, rook
KINDS = {  # the fill of each unpromoted kind (a promoted piece keeps its kind's fill)
    1: (0xFF, 0xF5, 0x9D),
    2: (0xFF, 0xCC, 0x80),
    3: (0xA5, 0xD6, 0xA7),
    4: (0xB0, 0xBE, 0xC5),
    5: (0xCE, 0x93, 0xD8),
    6: (0x90, 0xCA, 0xF9),
    7: (0xFF, 0xD5, 0x4F),
    8: (0xF5, 0xF5, 0xF5),
}
OWNERS = ((0x21, 0x21, 0x21), (0x8E, 0x24, 0xAA))  # sente's outline, gote's
PROMOTED = (0xD3, 0x2F, 0x2F)
HAND_ORDER = "PLNSBRG"


def _name(code):
    kind = abs(int(code))
    if kind == 0:
        return " ."
    base = kind - 8 if kind > 8 else kind
    letter = LETTERS[base]
    text = ("+" if kind > 8 else " ") + letter
    return text if code > 0 else text.lower()


def _hand(hand, lower):
    pieces = "".join(f"{HAND_ORDER[k]}{int(hand[k])}" for k in range(7) if hand[k])
    return "hand: " + ((pieces.lower() if lower else pieces) or "-")


def ansi(state, config):
    board = np.asarray(state["board"])
    hands = np.asarray(state["hands"])
    rows = [_hand(hands[1], lower=True)]
    for rank in range(9):
        rows.append("".join(_name(board[9 * x + rank]) for x in range(8, -1, -1)))
    rows.append(_hand(hands[0], lower=False))
    return "\n".join(rows)


def _piece(img, code, cx, cy, size):
    kind, owner = abs(int(code)), 0 if code > 0 else 1
    base = kind - 8 if kind > 8 else kind
    up = -1 if owner == 0 else 1  # sente's point towards the top of the picture
    w, h = size * 0.36, size * 0.44
    shape = [
        (cx, cy + up * h),
        (cx + w * 0.8, cy + up * h * 0.55),
        (cx + w, cy - up * h),
        (cx - w, cy - up * h),
        (cx - w * 0.8, cy + up * h * 0.55),
    ]
    draw.polygon(img, shape, KINDS[base])
    draw.polyline(img, shape + [shape[0]], OWNERS[owner], width=1.2)
    if kind > 8:
        band = cy - up * h * 0.45
        draw.line(img, cx - w * 0.7, band, cx + w * 0.7, band, PROMOTED, width=size * 0.12)
    if base == 8:
        draw.circle(img, cx, cy, size * 0.1, OWNERS[owner])


def rgb_array(state, config):
    board = np.asarray(state["board"])
    hands = np.asarray(state["hands"])
    width, height = 9 * CELL + 2, 9 * CELL + 2 * HAND + 2
    img = draw.canvas(width, height, LINE)
    top = HAND + 1
    img[top : top + 9 * CELL, 1 : 1 + 9 * CELL] = WOOD
    for k in range(1, 9):
        img[top : top + 9 * CELL, 1 + k * CELL] = LINE
        img[top + k * CELL, 1 : 1 + 9 * CELL] = LINE
    for sq in range(81):
        if board[sq]:
            x, rank = divmod(sq, 9)
            cx = 1 + (8 - x) * CELL + CELL / 2
            cy = top + rank * CELL + CELL / 2
            _piece(img, board[sq], cx, cy, CELL)
    for player, y in ((1, HAND / 2), (0, height - HAND / 2)):
        x = HAND / 2 + 1
        for kind in range(7):
            for _ in range(int(hands[player, kind])):
                if x < width - HAND / 2:
                    _piece(img, (kind + 1) * (1 - 2 * player), x, y, HAND)
                    x += HAND * 0.6
    return img
