"""Othello's board as AlphaZero's network reads it (``vecenv.alphazero.network.Board``): the
8 x 8 ``board`` and its seven rotations and reflections (the rules are the same under each, so a
position's image is worth what it is), each moving the square actions with the cells and keeping
the pass (64)."""

import numpy as np

from vecenv.kernels import symmetry

FIELD = "board"


def shape(config):
    return 8, 8


def symmetries(config):
    return [(cells, np.append(cells, 64)) for cells in symmetry.square(8)]
