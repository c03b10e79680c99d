"""Gardner chess frames: the board as text (rank 5 on top, white in capitals, "." for an empty
square, as chess's frames) and a picture of it, the pieces drawn as chess's shapes
(``vecenv.render.pieces``)."""

from vecenv.render.pieces import board_picture, board_text

SIZE = 5  # files and ranks
CELL = 32  # pixels a square


def ansi(state, config):
    return board_text(state["board"], SIZE)


def rgb_array(state, config):
    return board_picture(state["board"], SIZE, CELL)
