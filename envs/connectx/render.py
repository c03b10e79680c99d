"""ConnectX frames: Kaggle's text board, and a picture of a blue board whose cells are discs,
white when empty, red for mark 1 and yellow for mark 2 (the replay's colours)."""

import numpy as np

CELL = 32  # pixels per cell
RADIUS = 0.4 * CELL
BLUE = (0x15, 0x65, 0xC0)
FILLS = np.array([(0xFF, 0xFF, 0xFF), (0xE5, 0x39, 0x35), (0xFD, 0xD8, 0x35)], dtype=np.uint8)


def _board(state, config):
    """The (rows, columns) board of one record, top row first."""
    return np.asarray(state["board"]).reshape(config["rows"], config["columns"])


def _text(cells, rows, columns):
    bar = "+" + "+".join(["---"] * columns) + "+\n"
    out = bar
    for r in range(rows):
        row = cells[r * columns : (r + 1) * columns]
        out += "| " + " | ".join(str(v) for v in row) + " |\n" + bar
    return out


def ansi(state, config):
    """The board as Kaggle's connectx renderer writes it: rows of ``| v | v |`` between
    ``+---+---+`` bars, every line ending in a newline."""
    return _text(np.asarray(state["board"]).tolist(), config["rows"], config["columns"])


def ansi_episode(steps, config):
    """Kaggle's text of an episode's last state: the board as the first agent's state holds it
    (a position given without one, before its first step, prints rows of nothing as Kaggle's)."""
    board = list(steps[-1][0]["observation"].get("board", []))
    return _text(board, config["rows"], config["columns"])


def _disc():
    """The (CELL, CELL) mask of a cell's disc, tested at pixel centres."""
    centre = np.arange(CELL) + 0.5 - CELL / 2
    return centre[:, None] ** 2 + centre[None, :] ** 2 <= RADIUS * RADIUS


def rgb_array(state, config):
    """(rows * CELL, columns * CELL, 3) uint8: a disc per cell on the blue board."""
    board = _board(state, config)
    rows, columns = board.shape
    # Values outside 0..2 cannot be set (the state's bounds); draw them as empty cells.
    fills = FILLS[np.where((board >= 0) & (board <= 2), board, 0)]
    cells = np.repeat(np.repeat(fills, CELL, axis=0), CELL, axis=1)
    disc = np.tile(_disc(), (rows, columns))
    return np.where(disc[:, :, None], cells, np.array(BLUE, dtype=np.uint8)).astype(np.uint8)
