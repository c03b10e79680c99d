"""ConnectX's board as AlphaZero's network reads it (``vecenv.alphazero.network.Board``): the
``board`` field's rows x columns, and the left-right mirror, which maps column c to
``columns - 1 - c``."""

import numpy as np

from vecenv.kernels import symmetry

FIELD = "board"


def shape(config):
    return config["rows"], config["columns"]


def symmetries(config):
    rows, columns = shape(config)
    return [(symmetry.mirror(rows, columns), np.arange(columns)[::-1].copy())]
