"""Chess frames: the board as text (python-chess's layout: rank 8 on top, white in capitals, "."
for an empty square) and a picture of it, the pieces drawn as simple shapes
(``vecenv.render.pieces``)."""

from vecenv.render.pieces import board_picture, board_text

SIZE = 8  # files and ranks
CELL = 24  # pixels a square


def ansi(state, config):
    return board_text(state["board"], SIZE)


def rgb_array(state, config):
    return board_picture(state["board"], SIZE, CELL)
