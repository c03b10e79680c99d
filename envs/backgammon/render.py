"""Backgammon frames, from agent 0's side: its checkers X (light in the picture), agent 1's O
(dark). Agent 0 travels from point 0 (bottom right) along the bottom row to point 11, then from
point 12 (top left) along the top row to point 23, its home board top right; agent 1 the other
way. The text shows each point's count and owner, the bars, the checkers borne off, the dice still
to play and the mover; the picture the points, stacked checkers (a count past five), the bar with
the checkers on it, the trays and the dice."""

import numpy as np

from vecenv.render import draw

from .rules import BAR, OFF, OTHER_BAR, OTHER_OFF, POINTS

W = 26  # a point's width, in pixels
H = 120  # a point's height
R = 11.0  # a checker's radius
BAR_W = 30
TRAY_W = 30
MARGIN = 8
BOARD_H = 2 * H + 40
FELT = (0x2E, 0x6B, 0x4F)
FRAME = (0x6D, 0x4C, 0x41)
POINT_COLOURS = ((0xE8, 0xD5, 0xA3), (0xA8, 0x3B, 0x32))
CHECKERS = ((0xF5, 0xF5, 0xF0), (0x26, 0x26, 0x26))  # agent 0's, agent 1's
RIMS = ((0x9E, 0x9E, 0x9E), (0x75, 0x75, 0x75))
DIE = (0xFA, 0xFA, 0xFA)
PIP = (0x21, 0x21, 0x21)


def _absolute(state):
    """The board as agent 0 sees it (the record keeps the mover's view)."""
    board = np.asarray(state["board"]).astype(np.int64)
    if int(state["mover"]) == 0:
        return board
    seen = board.copy()
    seen[:POINTS] = -board[:POINTS][::-1]
    seen[POINTS:] = -board[[OTHER_BAR, BAR, OTHER_OFF, OFF]]
    return seen


def _running(state):
    return bool((np.asarray(state["status"]) == 1).any())


def _cell(count):
    if count == 0:
        return " . "
    return f"{abs(count):2d}{'X' if count > 0 else 'O'}"


def ansi(state, config):
    board = _absolute(state)
    top = range(12, 24)
    bottom = range(11, -1, -1)
    rows = [
        " ".join(f"{p:3d}" for p in top[:6]) + " |" + " ".join(f"{p:3d}" for p in top[6:]),
        " ".join(_cell(board[p]) for p in top[:6])
        + " |"
        + " ".join(_cell(board[p]) for p in top[6:]),
        " ".join(_cell(board[p]) for p in bottom[:6])
        + " |"
        + " ".join(_cell(board[p]) for p in bottom[6:]),
        " ".join(f"{p:3d}" for p in bottom[:6]) + " |" + " ".join(f"{p:3d}" for p in bottom[6:]),
    ]
    rows.append(
        f"bar X {board[BAR]} O {-board[OTHER_BAR]}   off X {board[OFF]} O {-board[OTHER_OFF]}"
    )
    dice = [int(d) + 1 for d in state["dice"]]
    left = sorted((int(d) + 1 for d in state["playable"] if d >= 0), reverse=True)
    mover = "XO"[int(state["mover"])]
    if _running(state):
        rows.append(
            f"dice {dice[0]} {dice[1]}, to play {' '.join(map(str, left))}; {mover} to move"
        )
    else:
        rows.append(f"dice {dice[0]} {dice[1]}; game over")
    return "\n".join(rows)


def _x(column):
    """The left edge of column 0-11 of a row, the bar between columns 5 and 6."""
    return MARGIN + column * W + (BAR_W if column >= 6 else 0)


def _stack(img, x, y0, count, owner, down):
    """``count`` checkers of ``owner`` stacked from y0 (down or up), five drawn at most, the
    count written on the last where there are more."""
    shown = min(count, 5)
    for k in range(shown):
        cy = y0 + (R + 2 * R * k) * (1 if down else -1)
        draw.circle(img, x, cy, R, RIMS[owner])
        draw.circle(img, x, cy, R - 1.5, CHECKERS[owner])
    if count > 5:
        cy = y0 + (R + 2 * R * 4) * (1 if down else -1)
        label = str(count)
        draw.text(img, label, x - 3 * len(label) + 1, cy - 3, 1, CHECKERS[1 - owner])


def _die(img, x, y, face, size=18):
    draw.polygon(img, [(x, y), (x + size, y), (x + size, y + size), (x, y + size)], DIE)
    spots = {
        1: [(0, 0)],
        2: [(-1, -1), (1, 1)],
        3: [(-1, -1), (0, 0), (1, 1)],
        4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
        5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
        6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
    }
    for dx, dy in spots[face]:
        draw.circle(img, x + size / 2 + dx * size / 4, y + size / 2 + dy * size / 4, 1.8, PIP)


def rgb_array(state, config):
    board = _absolute(state)
    width = 2 * MARGIN + 12 * W + BAR_W + TRAY_W
    height = BOARD_H + 2 * MARGIN
    img = draw.canvas(width, height, FRAME)
    top, bottom = MARGIN, MARGIN + BOARD_H
    right = MARGIN + 12 * W + BAR_W
    draw.polygon(img, [(MARGIN, top), (right, top), (right, bottom), (MARGIN, bottom)], FELT)
    bar_x = _x(6) - BAR_W
    draw.polygon(
        img, [(bar_x, top), (bar_x + BAR_W, top), (bar_x + BAR_W, bottom), (bar_x, bottom)], FRAME
    )
    for p in range(POINTS):
        upper = p >= 12
        column = p - 12 if upper else 11 - p
        x = _x(column)
        base, tip = (top, top + H) if upper else (bottom, bottom - H)
        draw.polygon(img, [(x, base), (x + W, base), (x + W / 2, tip)], POINT_COLOURS[p % 2])
        count = int(board[p])
        if count:
            _stack(img, x + W / 2, base, abs(count), 0 if count > 0 else 1, down=upper)
    centre = bar_x + BAR_W / 2
    if board[BAR]:  # agent 0's checkers on the bar wait to enter at the bottom right
        _stack(img, centre, top + BOARD_H / 2 + 4, int(board[BAR]), 0, down=True)
    if board[OTHER_BAR]:
        _stack(img, centre, top + BOARD_H / 2 - 4, int(-board[OTHER_BAR]), 1, down=False)
    tray = right + TRAY_W / 2
    for owner, count, y0, down in (
        (0, int(board[OFF]), top, True),
        (1, int(-board[OTHER_OFF]), bottom, False),
    ):
        if count:
            _stack(img, tray, y0, count, owner, down)
    if _running(state):
        left = MARGIN + 3 * W - 20 if int(state["mover"]) == 0 else MARGIN + 9 * W + BAR_W - 20
        for k, face in enumerate(state["dice"]):
            _die(img, left + 24 * k, top + BOARD_H / 2 - 9, int(face) + 1)
    return img
