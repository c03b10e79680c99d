"""Animal shogi frames: the board as text (row 0 on top, column 0 on the right as Pgx draws it,
agent 0's pieces in capitals: C chick, E elephant, G giraffe, L lion, H hen; "." empty; each hand
on its own line) and a picture of it, each piece a tile with a dot towards every square it may
step to, as the real game's pieces show them, turned towards its owner's opponent."""

import numpy as np

from vecenv.render import draw

from .rules import CAN, DX, DY

CELL = 40
HAND = 24  # the strips above and below the board where the hands are drawn
BOARD_COLOR = (0xE8, 0xD5, 0xA3)
LINE = (0x6D, 0x4C, 0x41)
TILES = {  # chick, elephant, giraffe, lion, hen
    1: (0xFF, 0xE0, 0x82),
    2: (0xCE, 0x93, 0xD8),
    3: (0xA5, 0xD6, 0xA7),
    4: (0xFF, 0xAB, 0x91),
    5: (0xF4, 0x8F, 0xB1),
}
OWNERS = ((0x21, 0x21, 0x21), (0xC6, 0x28, 0x28))  # agent 0's outline, agent 1's
LETTERS = ".CEGLH"


def ansi(state, config):
    board = np.asarray(state["board"])
    hands = np.asarray(state["hands"])
    rows = [_hand_text(hands[1], lower=True)]
    for row in range(4):
        cells = []
        for column in (2, 1, 0):
            code = int(board[4 * column + row])
            letter = LETTERS[abs(code)]
            cells.append(letter.lower() if code < 0 else letter)
        rows.append(" ".join(cells))
    rows.append(_hand_text(hands[0], lower=False))
    return "\n".join(rows)


def _hand_text(hand, lower):
    pieces = "".join("CEG"[k] * int(hand[k]) for k in range(3))
    return "hand: " + ((pieces.lower() if lower else pieces) or "-")


def _tile(img, code, cx, cy, size):
    """Piece ``code`` centred on (cx, cy): a tile of its kind's colour, its owner's outline, a
    dot towards each square it steps to (towards the top of the picture for agent 0)."""
    kind, owner = abs(code), 0 if code > 0 else 1
    half = size * 0.42
    corners = [(cx - half, cy - half), (cx + half, cy - half), (cx + half, cy + half)]
    corners.append((cx - half, cy + half))
    draw.polygon(img, corners, OWNERS[owner])
    inner = half - 2
    draw.polygon(
        img,
        [(cx - inner, cy - inner), (cx + inner, cy - inner), (cx + inner, cy + inner)]
        + [(cx - inner, cy + inner)],
        TILES[kind],
    )
    turn = 1 if owner == 0 else -1  # agent 1's forward is down the picture
    for d in range(8):
        if CAN[kind, d]:
            # Pgx's direction d steps (column, row) by (DX, DY); column 0 is drawn on the right.
            x, y = -DX[d] * turn, DY[d] * turn
            draw.circle(img, cx + x * half * 0.7, cy + y * half * 0.7, size * 0.06, OWNERS[owner])
    if kind == 4:
        draw.circle(img, cx, cy, size * 0.14, OWNERS[owner])


def rgb_array(state, config):
    board = np.asarray(state["board"])
    hands = np.asarray(state["hands"])
    width, height = 3 * CELL + 2, 4 * CELL + 2 * HAND + 2
    img = draw.canvas(width, height, LINE)
    top = HAND + 1
    img[top : top + 4 * CELL, 1 : 1 + 3 * CELL] = BOARD_COLOR
    for k in range(1, 3):
        img[top : top + 4 * CELL, 1 + k * CELL] = LINE
    for k in range(1, 4):
        img[top + k * CELL, 1 : 1 + 3 * CELL] = LINE
    for sq in range(12):
        code = int(board[sq])
        if code:
            column, row = divmod(sq, 4)
            cx = 1 + (2 - column) * CELL + CELL / 2
            cy = top + row * CELL + CELL / 2
            _tile(img, code, cx, cy, CELL)
    for player, y in ((1, HAND / 2), (0, height - HAND / 2)):
        x = HAND / 2 + 1
        for kind in range(3):
            for _ in range(int(hands[player, kind])):
                _tile(img, (kind + 1) * (1 - 2 * player), x, y, HAND)
                x += HAND
    return img
