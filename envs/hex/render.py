"""Hex frames: the rhombus as text (each row shifted half a cell right of the one above, columns
lettered, rows numbered; X black, O white) and a picture of its hexagons, black's sides (top and
bottom) and white's (left and right) edged in their colours."""

import math

import numpy as np

from vecenv.render import draw

SYMBOLS = (".", "X", "O")
LETTERS = "abcdefghijklmnopqrs"
R = 9.0  # a hexagon's circumradius, in pixels
BACK = (0x5A, 0x7D, 0x8C)
CELL = (0xD9, 0xC4, 0x9A)
LINE = (0x8D, 0x6E, 0x3F)
STONES = {1: (0x1A, 0x1A, 0x1A), 2: (0xF5, 0xF5, 0xF5)}
EDGES = {1: (0x1A, 0x1A, 0x1A), 2: (0xE8, 0xE8, 0xE8)}


def _board(state, config):
    size = config["size"]
    return np.asarray(state["board"])[: size * size].reshape(size, size)


def ansi(state, config):
    board = _board(state, config)
    size = board.shape[0]
    rows = ["   " + " ".join(LETTERS[:size])]
    for r in range(size):
        cells = " ".join(SYMBOLS[v] for v in board[r])
        rows.append(" " * r + f"{r + 1:2d} {cells}")
    return "\n".join(rows)


def _centre(r, c):
    """A cell's centre: pointy-top hexagons, each row half a cell right of the one above."""
    w = math.sqrt(3) * R
    return 2 * R + w * (c + r / 2), 2 * R + 1.5 * R * r


def _hexagon(x, y, radius):
    return [
        (
            x + radius * math.cos(math.pi / 6 + k * math.pi / 3),
            y + radius * math.sin(math.pi / 6 + k * math.pi / 3),
        )
        for k in range(6)
    ]


def rgb_array(state, config):
    board = _board(state, config)
    size = board.shape[0]
    width = int(_centre(size - 1, size - 1)[0] + 2 * R)
    height = int(_centre(size - 1, 0)[1] + 2 * R)
    img = draw.canvas(width, height, BACK)
    for r in range(size):  # the sides: black's rows, white's columns, edged beyond the board
        for c in range(size):
            x, y = _centre(r, c)
            if r in (0, size - 1):
                draw.polygon(img, _hexagon(x, y + (-0.5 if r == 0 else 0.5) * R, R + 1.5), EDGES[1])
            if c in (0, size - 1):
                draw.polygon(img, _hexagon(x + (-0.6 if c == 0 else 0.6) * R, y, R + 1.5), EDGES[2])
    for r in range(size):
        for c in range(size):
            x, y = _centre(r, c)
            draw.polygon(img, _hexagon(x, y, R), LINE)
            draw.polygon(img, _hexagon(x, y, R - 1), CELL)
            if board[r, c] in STONES:
                draw.circle(img, x, y, R * 0.6, STONES[int(board[r, c])])
    return img
