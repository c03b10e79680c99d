"""Tic-tac-toe's board as AlphaZero's network reads it (``vecenv.alphazero.network.Board``): the
3 x 3 ``board`` and its seven rotations and reflections, each moving the actions (the cells)
with the cells."""

from vecenv.kernels import symmetry

FIELD = "board"


def shape(config):
    return 3, 3


def symmetries(config):
    return [(cells, cells) for cells in symmetry.square(3)]
