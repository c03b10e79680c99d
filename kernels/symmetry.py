"""A board's symmetries as permutations of its cells, for a game's ``board.py`` (what AlphaZero's
replay buffer applies to the positions it samples: docs/own-game/protocol.md).

Each is an index array over the row-major cells: the image's cell i is the original's
``cells[i]``. ``mirror`` is the left-right reflection of a rows x columns board; ``square`` the
seven rotations and reflections of an n x n board besides the identity.
"""

import numpy as np


def mirror(rows, columns):
    """The left-right reflection of a rows x columns board's cells."""
    return np.arange(rows * columns).reshape(rows, columns)[:, ::-1].ravel()


def square(n):
    """The seven symmetries of an n x n board's cells besides the identity: the rotations by a
    quarter, a half and three quarters, and each of the four with the board transposed."""
    grid = np.arange(n * n).reshape(n, n)
    images = [np.rot90(grid, k) for k in range(4)]
    images += [image.T for image in images]
    return [image.ravel().copy() for image in images[1:]]
