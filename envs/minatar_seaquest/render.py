"""MinAtar Seaquest frames: each cell coloured by its top channel, the highest-numbered as
MinAtar's display draws it, in MinAtar's palette (cubehelix over its 10 channels, on black), and
text with one character per cell."""

import numpy as np

CELL = 16
COLOURS = np.array(
    [
        (0, 0, 0),
        (25, 18, 43),
        (23, 52, 76),
        (24, 91, 72),
        (60, 118, 50),
        (126, 122, 54),
        (188, 121, 103),
        (212, 134, 175),
        (202, 169, 231),
        (194, 210, 243),
        (214, 240, 239),
    ],
    dtype=np.uint8,
)  # empty, then MinAtar's channels in order (see channels)
SYMBOLS = ".Ss-*!fXod&"


def channels(state):
    """MinAtar's (10, 10, 10) observation of the record ``state``: submarine front, back,
    torpedo, trail, enemy bullet, fish, enemy submarine, oxygen gauge, diver gauge, diver."""
    out = np.zeros((10, 10, 10), dtype=bool)
    x, y = int(state["sub_x"]), int(state["sub_y"])
    out[y, x, 0] = True
    out[y, x - 1 if state["sub_or"] else x + 1, 1] = True
    out[9, : max(0, int(state["oxygen"])) * 10 // 200, 7] = True
    out[9, max(0, 9 - int(state["diver_count"])) : 9, 8] = True
    for name, channel in (("f_bullets", 2), ("e_bullets", 4)):
        for bx, by, _ in state[name][: int(state["n_" + name])]:
            out[by, bx, channel] = True
    for name, channel in (("fish", 5), ("subs", 6), ("divers", 9)):
        for row in state[name][: int(state["n_" + name])]:
            ex, ey, right = int(row[0]), int(row[1]), row[2]
            out[ey, ex, channel] = True
            back = ex - 1 if right else ex + 1
            if 0 <= back < 10:
                out[ey, back, 3] = True
    return out


def _cells(state):
    """(10, 10) codes: 0 empty, else 1 + the top channel."""
    return np.max(channels(state) * np.arange(1, 11), axis=2)


def ansi(state, config):
    return "\n".join("".join(SYMBOLS[c] for c in row) for row in _cells(state))


def rgb_array(state, config):
    return np.repeat(np.repeat(COLOURS[_cells(state)], CELL, axis=0), CELL, axis=1)
